#include "sim/stats/utilization_csv.h"

#include <fmt/format.h>

#include <algorithm>

namespace dfsim {

void write_utilization_csv(std::ostream& out, const Recorder& rec, Tick end, std::size_t max_rows) {
  const Tick base = rec.bucket();
  std::size_t fine = end == 0 ? 0 : (end + base - 1) / base;
  std::size_t merge = std::max<std::size_t>(1, (fine + max_rows - 1) / max_rows);
  Tick width = base * merge;
  std::vector<const Track*> cols;
  out << "bucket_start_ns,bucket_end_ns";
  for (const Track& t : rec.tracks()) {
    if (t.items == 0) continue;
    cols.push_back(&t);
    out << ',' << t.group << '/' << t.name;
  }
  for (const BucketSeries& se : rec.bucket_series()) out << ',' << se.group << '/' << se.name << '_' << se.unit;
  out << '\n';
  std::size_t rows = (fine + merge - 1) / merge;
  for (std::size_t r = 0; r < rows; ++r) {
    Tick lo = r * width, hi = std::min<Tick>((r + 1) * width, end);
    out << fmt::format("{:.3f},{:.3f}", ticks_to_ns(lo), ticks_to_ns(hi));
    for (const Track* t : cols) {
      Tick busy = 0;
      for (std::size_t b = r * merge; b < (r + 1) * merge && b < t->bucket_busy.size(); ++b) busy += t->bucket_busy[b];
      out << fmt::format(",{:.4f}", hi > lo ? static_cast<double>(busy) / static_cast<double>(hi - lo) : 0.0);
    }
    // Series: the row's time-weighted mean of its buckets' values.
    for (const BucketSeries& se : rec.bucket_series()) {
      double sum = 0;
      for (std::size_t b = r * merge; b < (r + 1) * merge && b < se.values.size(); ++b) {
        Tick blo = b * base, bhi = std::min<Tick>((b + 1) * base, end);
        if (bhi > blo) sum += se.values[b] * static_cast<double>(bhi - blo);
      }
      out << fmt::format(",{:.3f}", hi > lo ? sum / static_cast<double>(hi - lo) : 0.0);
    }
    out << '\n';
  }
}

}  // namespace dfsim
