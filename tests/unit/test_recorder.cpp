// The recorder's footprint rules: utilization buckets stay bounded (their width doubles and
// totals are kept), counters keep a point only on a change, spans only at the full level.
#include <catch2/catch.hpp>

#include <numeric>

#include "sim/stats/analysis.h"
#include "sim/stats/recorder.h"

using namespace dfsim;

namespace {
Tick total(const std::vector<Tick>& v) { return std::accumulate(v.begin(), v.end(), Tick(0)); }
}  // namespace

TEST_CASE("recorder: a long run doubles the bucket width and keeps every busy tick", "[recorder]") {
  Recorder rec(1000);  // 1000 fs buckets
  int t = rec.add_track("core 0", "pt.0", "pt");
  int s = rec.add_series("memory", "off-chip GB/s");
  rec.busy(t, 0, 1500);            // buckets 0 and 1
  rec.add(s, 500, 64);
  // Ends at 10^7 fs = 10^4 initial buckets > 4096: the width doubles twice (4000 fs, 2500
  // buckets), since 10^7 / 2000 = 5000 is still too many.
  rec.busy(t, 9'999'000, 10'000'000);
  rec.add(s, 9'999'999, 32);
  CHECK(rec.bucket() == 4000);
  const Track& tr = rec.tracks()[t];
  CHECK(tr.bucket_busy.size() <= Recorder::kMaxBuckets);
  CHECK(total(tr.bucket_busy) == 1500 + 1000);  // every busy tick, in some bucket
  CHECK(tr.bucket_busy[0] == 1500);             // [0, 1500) lies in the first 4000 fs bucket
  CHECK(tr.bucket_busy[2499] == 1000);          // [9 999 000, 10^7) in the last one
  const auto& b = rec.series()[s].per_bucket;
  CHECK(b[0] == 64);
  CHECK(b[2499] == 32);
  CHECK(tr.busy == 2500);
}

TEST_CASE("recorder: busy_imbalance is the busiest unit's busy time over the mean, bucket by bucket", "[recorder]") {
  Recorder rec(100);  // 100 fs buckets
  int a = rec.add_track("memory", "ch 0", "dram"), b = rec.add_track("memory", "ch 1", "dram");
  rec.busy(a, 0, 100);    // bucket 0: a 100, b 0
  rec.busy(a, 100, 150);  // bucket 1: a 50, b 50
  rec.busy(b, 100, 150);
  rec.flush_buckets();
  const std::vector<int> chans{a, b};
  // Both buckets: busiest 100 + 50 = 150, mean 100 / 2 + 100 / 2 = 100.
  CHECK(busy_imbalance(rec, chans, 0, 200) == Approx(1.5).epsilon(1e-12));
  // Bucket 0 alone: all of it on one of the 2 units.
  CHECK(busy_imbalance(rec, chans, 0, 100) == Approx(2.0).epsilon(1e-12));
  // Bucket 1 alone: even.
  CHECK(busy_imbalance(rec, chans, 100, 200) == Approx(1.0).epsilon(1e-12));
  // Half of each, weighted by the overlap: (0.5 x 100 + 0.5 x 50) / (0.5 x 50 + 0.5 x 50) = 75 / 50.
  CHECK(busy_imbalance(rec, chans, 50, 150) == Approx(1.5).epsilon(1e-12));
  CHECK(busy_imbalance(rec, chans, 200, 300) == 0.0);  // idle
  CHECK(busy_imbalance(rec, {}, 0, 200) == 0.0);
}

TEST_CASE("recorder: counters keep a point only when the value changes", "[recorder]") {
  Recorder rec(1000);
  int c = rec.add_counter("core 0", "lx bytes", "bytes");
  for (Tick t = 0; t < 100; ++t) rec.counter(c, t * 10, 7);  // one value: one point
  rec.counter(c, 2000, 8);
  rec.counter(c, 2000, 9);  // same time: replaced
  REQUIRE(rec.counters()[c].points.size() == 2);
  CHECK(rec.counters()[c].points[1] == std::make_pair(Tick(2000), 9.0));
}

TEST_CASE("recorder: spans and full-level counters only at trace level full", "[recorder]") {
  for (TraceLevel level : {TraceLevel::off, TraceLevel::units, TraceLevel::full}) {
    Recorder rec(1000);
    rec.set_level(level);
    int dram = rec.add_track("memory", "ch 0", "dram"), pt = rec.add_track("core 0", "pt.0", "pt");
    int q = rec.add_counter("memory", "ch 0 queue", "requests", TraceLevel::full);
    rec.busy(dram, 0, 10);
    rec.busy(dram, 5000, 6000);
    rec.busy(pt, 0, 10);
    rec.counter(q, 0, 1);
    bool full = level == TraceLevel::full;
    CHECK(rec.tracks()[dram].spans.size() == (full ? 2u : 0u));
    rec.busy_backfill(dram, 100, 200);  // served in the idle gap [10, 5000): kept aside
    CHECK(rec.tracks()[dram].fill_spans.size() == (full ? 1u : 0u));
    CHECK(rec.tracks()[pt].spans.empty());  // task units are drawn from task records
    CHECK(rec.counters()[q].points.size() == (full ? 1u : 0u));
    CHECK(rec.tracks()[dram].busy == 1110);  // totals at every level
  }
}

TEST_CASE("recorder: intervals in the latest bucket reach bucket_busy when it changes or at flush_buckets", "[recorder]") {
  Recorder rec(1000);
  int t = rec.add_track("ring", "cw 0->1", "ring");
  rec.busy(t, 100, 200);  // opens bucket 0 (the first interval of a track takes the slow path)
  rec.busy(t, 300, 400);  // the same bucket: summed aside
  rec.busy(t, 500, 650);
  CHECK(rec.tracks()[t].bucket_busy[0] == 100);  // only the first interval so far
  rec.busy(t, 1200, 1300);  // another bucket: bucket 0's 100 + 100 + 150 are added first
  CHECK(rec.tracks()[t].bucket_busy[0] == 350);
  rec.busy(t, 1400, 1450);
  rec.flush_buckets();
  CHECK(rec.tracks()[t].bucket_busy[1] == 150);  // 100 + 50
  CHECK(rec.tracks()[t].busy == 500);  // 100 + 100 + 150 + 100 + 50
  CHECK(total(rec.tracks()[t].bucket_busy) == 500);
  rec.flush_buckets();  // twice: nothing is added twice
  CHECK(total(rec.tracks()[t].bucket_busy) == 500);
}

TEST_CASE("recorder: trace spans are exact up to the per-track cap, then bridge gaps and keep their busy time",
          "[recorder]") {
  Recorder rec(1000);  // 1000 fs buckets: the first bridged gap is 1000 / 100 + 1 = 11 fs
  rec.set_level(TraceLevel::full);
  int link = rec.add_track("ring", "cw 0->1", "ring");
  // Bookings of 5 fs every 20 fs: idle gaps of 15 fs, kept exact while they fit the cap.
  const Tick n = Recorder::kMaxSpansPerTrack;
  for (Tick i = 0; i < n; ++i) rec.busy(link, 20 * i, 20 * i + 5);
  const Track& t = rec.tracks()[link];
  CHECK(t.spans.size() == n);
  CHECK(t.span_gap == 0);
  CHECK(t.spans[1].start == 20);
  // One more: the cap is reached. Bridging 11 fs joins nothing (the gaps are 15), 22 fs joins
  // all of them into one span of [0, 20n + 5) holding n + 1 bookings' busy time.
  rec.busy(link, 20 * n, 20 * n + 5);
  REQUIRE(t.spans.size() == 1);
  CHECK(t.span_gap == 22);
  CHECK(t.spans[0].start == 0);
  CHECK(t.spans[0].end == 20 * n + 5);
  CHECK(t.spans[0].busy == 5 * (n + 1));
  CHECK(t.busy == 5 * (n + 1));
  // merge_spans on its own: gaps of at most `gap` join, busy time sums.
  std::vector<BusySpan> v{{0, 10, 10}, {12, 20, 8}, {30, 40, 10}};
  merge_spans(v, 2);
  REQUIRE(v.size() == 2);
  CHECK(v[0].end == 20);
  CHECK(v[0].busy == 18);
  CHECK(v[1].start == 30);
}
