// Strided-region overlap test and the sorted writer index used by graph expansion.
#include "sim/graph/region_index.h"

#include <algorithm>

namespace dfsim {

namespace {

std::int64_t floor_div(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return -floor_div(-a, b); }

}  // namespace

std::uint64_t region_begin(const Region& r) { return r.offset; }

std::uint64_t region_end(const Region& r) {
  return r.offset + (r.rows > 1 ? (r.rows - 1) * r.stride : 0) + r.bytes;
}

bool regions_overlap(const Region& a, const Region& b) {
  if (region_begin(a) >= region_end(b) || region_begin(b) >= region_end(a)) return false;
  if (a.rows <= 1 && b.rows <= 1) return true;  // two contiguous runs whose bounds meet
  std::uint64_t s = a.rows > 1 ? a.stride : b.stride;
  if (a.rows > 1 && b.rows > 1 && a.stride != b.stride) {
    // Two strides: each row of the pattern with fewer rows that lies within the other's
    // bounding range against the other, as one run (the card's stick layout makes patterns of
    // single sticks with different strides interleave, e.g. two cores' stores of one batched
    // tensor). Past kMaxRows such rows the answer is the bounding ranges' (conservative).
    constexpr std::uint64_t kMaxRows = 4096;
    const Region& few = a.rows <= b.rows ? a : b;
    const Region& many = a.rows <= b.rows ? b : a;
    if (few.stride == 0) return true;
    const std::uint64_t lo = region_begin(many), hi = region_end(many);
    const std::uint64_t first = few.offset + few.bytes > lo ? 0 : (lo - few.offset - few.bytes) / few.stride + 1;
    const std::uint64_t last = std::min(few.rows - 1, (hi - 1 - std::min(hi - 1, few.offset)) / few.stride);
    if (last >= first && last - first >= kMaxRows) return true;
    for (std::uint64_t i = first; i <= last; ++i) {
      Region row = few;
      row.offset = few.offset + i * few.stride;
      row.rows = 1;
      row.stride = 0;
      if (regions_overlap(row, many)) return true;
    }
    return false;
  }
  if (s == 0) return true;
  // Row i of a: [oa + i*s, oa + i*s + ba); row j of b: [ob + j*s, ob + j*s + bb).
  // They meet iff d + t*s lies in (-ba, bb) with d = oa - ob, t = i - j.
  auto sd = static_cast<std::int64_t>(s);
  std::int64_t d = static_cast<std::int64_t>(a.offset) - static_cast<std::int64_t>(b.offset);
  std::int64_t lo = -static_cast<std::int64_t>(a.bytes) - d;  // t*s > lo
  std::int64_t hi = static_cast<std::int64_t>(b.bytes) - d;   // t*s < hi
  std::int64_t tmin = floor_div(lo, sd) + 1, tmax = ceil_div(hi, sd) - 1;
  tmin = std::max<std::int64_t>(tmin, -static_cast<std::int64_t>(b.rows - 1));
  tmax = std::min<std::int64_t>(tmax, static_cast<std::int64_t>(a.rows - 1));
  return tmin <= tmax;
}

void RegionIndex::add(const Region& r, int inst, int slot) {
  entries_.push_back(Entry{key_of(r), region_begin(r), region_end(r), inst, slot});
}

void RegionIndex::build() {
  // Added in (inst, slot) order: a stable sort on (key, begin) keeps it for ties.
  std::stable_sort(entries_.begin(), entries_.end(), [](const Entry& x, const Entry& y) {
    return x.key < y.key || (x.key == y.key && x.begin < y.begin);
  });
  entries_.shrink_to_fit();
  max_end_.resize(entries_.size());
  keys_.clear();
  key_first_.clear();
  std::uint64_t m = 0;
  for (std::size_t i = 0; i < entries_.size(); ++i) {
    if (i == 0 || entries_[i].key != entries_[i - 1].key) {
      m = 0;
      keys_.push_back(entries_[i].key);
      key_first_.push_back(i);
    }
    m = std::max(m, entries_[i].end);
    max_end_[i] = m;
  }
  key_first_.push_back(entries_.size());
  hint_.assign(g_.buffers.size(), 0);
}

std::pair<std::size_t, std::size_t> RegionIndex::starting_before(std::uint64_t key, std::uint64_t end) const {
  const std::size_t buffer = static_cast<std::size_t>(key >> 32);
  std::size_t j = buffer < hint_.size() ? hint_[buffer] : 0;
  if (!(j < keys_.size() && keys_[j] == key)) {
    if (j + 1 < keys_.size() && keys_[j + 1] == key) {
      ++j;
    } else {
      auto k = std::lower_bound(keys_.begin(), keys_.end(), key);
      if (k == keys_.end() || *k != key) return {0, 0};
      j = static_cast<std::size_t>(k - keys_.begin());
    }
  }
  if (buffer < hint_.size()) hint_[buffer] = j;
  auto first = entries_.begin() + static_cast<std::ptrdiff_t>(key_first_[j]);
  auto last = entries_.begin() + static_cast<std::ptrdiff_t>(key_first_[j + 1]);
  auto it = std::partition_point(first, last, [&](const Entry& e) { return e.begin < end; });
  return {key_first_[j], static_cast<std::size_t>(it - entries_.begin())};
}

Region RegionIndex::region_of(const Entry& e) const {
  const TaskInstance& w = instances_[static_cast<std::size_t>(e.inst)];
  return writes_of(g_, w)[static_cast<std::size_t>(e.slot)];
}

}  // namespace dfsim
