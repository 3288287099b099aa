#pragma once
// Collects what happened during a run: task records, busy time per track, counters and
// per-bucket totals. Outputs (summary, trace, utilization.csv) are written from it. Memory
// grows with the work simulated, not with simulated time: the number of utilization buckets
// is bounded (their width doubles as a run gets longer), counters keep a point only when
// their value changes, and per-span detail is kept only for the trace level that draws it.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "sim/common/time.h"

namespace dfsim {

// How much the trace shows (docs/outputs.md): off; kernels (a kernel track and one
// aggregated track per core); units (a track per PT/SFP/DMA/ring-port unit, LX and off-chip
// counters); full (ring links, DRAM channels and the controller queue counters as well).
enum class TraceLevel { off, kernels, units, full };
const char* trace_level_name(TraceLevel l);
bool parse_trace_level(const std::string& s, TraceLevel* out);  // false if unknown

// A busy interval of a resource as drawn in the trace: [start, end), of which `busy` was busy
// (less than end - start where idle gaps were bridged).
struct BusySpan {
  Tick start = 0, end = 0, busy = 0;
  bool operator<(const BusySpan& o) const { return start < o.start; }
};

// Joins spans (in start order) whose gap is at most `gap`, in place, summing their busy time.
void merge_spans(std::vector<BusySpan>& v, Tick gap);

// One horizontal lane in the trace (a PT of a corelet, a DMA engine, a DRAM channel, a link).
// What every busy interval updates comes first, in one cache line: a ring hop or a DRAM piece
// touches that line only (the hot bucket's time is summed in `hot_busy` and added to
// `bucket_busy` when the interval moves to another bucket, or by Recorder::flush_buckets).
struct alignas(64) Track {
  Tick busy = 0;            // total busy time
  Tick last_end = 0;        // end of the latest busy interval
  std::uint64_t items = 0;  // tasks or transfers served
  std::size_t hot = 0;      // bucket of the latest interval, and its bounds,
  Tick hot_lo = 0, hot_hi = 0;  // so that most updates need no division
  Tick hot_busy = 0;        // busy time in bucket `hot` not yet in bucket_busy
  bool keep_spans = false;  // resource tracks at TraceLevel::full
  std::string group;   // trace process: "core 3", "memory", "ring"
  std::string name;    // trace thread: "pt.0", "dma", "ch 2", "cw 4->5"
  std::string kind;    // pt, sfp, dma, ring_port (task units); dram, ring (resources)
  // Busy intervals for the trace (resource tracks at level full): exact until a track holds
  // Recorder::kMaxSpansPerTrack of them; then gaps up to `span_gap` (doubling) are bridged,
  // each span keeping how much of it was busy.
  std::vector<BusySpan> spans;       // booked in time order
  std::vector<BusySpan> fill_spans;  // served in an idle gap before the latest (busy_backfill)
  Tick span_gap = 0;
  std::vector<Tick> bucket_busy;             // busy time per utilization bucket (see hot_busy)
};

// A task instance as it ran (indexed by instance id).
struct TaskRecord {
  Tick ready = 0;      // all inputs present
  Tick start = 0;      // fired
  Tick end = 0;        // completed
  Tick lx_wait = 0;    // time ready but waiting for LX space
  std::int32_t track = -1;  // first track it occupied
  bool fired = false;  // started
  bool done = false;   // completed
};

// A sampled value over time (LX occupancy of a core, a DRAM controller queue): a point only
// when the value changes.
struct Counter {
  std::string group, name;
  std::string unit;  // the trace's argument name: "bytes", "requests"
  bool kept = true;  // false: the trace level does not draw it, points are not recorded
  std::vector<std::pair<Tick, double>> points;
};

// An amount summed per utilization bucket (off-chip bytes); drawn as a rate.
struct Series {
  std::string group, name;
  std::vector<std::uint64_t> per_bucket;
  std::size_t hot = 0;          // bucket of the latest amount, and its bounds (no division
  Tick hot_lo = 0, hot_hi = 0;  // for the next amount in the same bucket)
};

// A value per utilization bucket computed after the run (the card's power): a counter in the
// trace and a column of utilization.csv. The last bucket's value is its mean over the part
// before the run's end.
struct BucketSeries {
  std::string group, name, unit;  // "card 0", "power", "W"
  std::vector<double> values;
};

class Recorder {
 public:
  // At most this many utilization buckets per track: a longer run doubles the bucket width.
  static constexpr std::size_t kMaxBuckets = 4096;

  // At most this many trace spans per resource track before gaps are bridged.
  static constexpr std::size_t kMaxSpansPerTrack = 32768;

  explicit Recorder(Tick bucket) : bucket_(bucket) {}

  // Before any track is added: what the trace will draw.
  void set_level(TraceLevel l) { level_ = l; }
  TraceLevel level() const { return level_; }

  // Prepended to the group of every track, counter and series added from now on ("card 1 ":
  // the models of card 1 of several).
  void set_group_prefix(std::string p) { prefix_ = std::move(p); }
  int add_track(std::string group, std::string name, std::string kind);
  // `detail`: the lowest trace level that draws the counter.
  int add_counter(std::string group, std::string name, std::string unit, TraceLevel detail = TraceLevel::units);
  int add_series(std::string group, std::string name);

  // Marks [start, end) busy on a track. Busy time and buckets are exact; so are trace spans,
  // until a track has kMaxSpansPerTrack of them (then close ones are joined).
  // Inline: one call per ring hop and per DRAM piece.
  void busy(int track, Tick start, Tick end, bool new_item = true) {
    Track& t = tracks_[track];
    if (new_item) ++t.items;
    // Only the part after the previous interval counts, so nothing is counted twice.
    start = std::max(start, t.last_end);
    if (end <= start) return;
    t.busy += end - start;
    t.last_end = end;
    if (t.keep_spans) keep_span(t, start, end);
    if (start >= t.hot_lo && end <= t.hot_hi) t.hot_busy += end - start;
    else add_to_buckets(t, start, end);
  }
  // The same for an interval booked before the latest one on the track (a closed-form model
  // filling an idle gap it left, a ring link serving a burst in arrival order): counted in the
  // totals and buckets, and kept aside for the trace (drawn merged with `spans`).
  void busy_backfill(int track, Tick start, Tick end);
  void counter(int id, Tick t, double value) {
    Counter& c = counters_[id];
    if (!c.kept) return;
    auto& pts = c.points;
    if (!pts.empty() && pts.back().first == t) {
      pts.back().second = value;
      return;
    }
    if (!pts.empty() && pts.back().second == value) return;
    pts.emplace_back(t, value);
  }
  void add(int series, Tick t, std::uint64_t amount) {
    Series& s = series_[series];
    if (t >= s.hot_lo && t < s.hot_hi) {
      s.per_bucket[s.hot] += amount;
      return;
    }
    std::size_t b = bucket_index(t);
    auto& v = s.per_bucket;
    if (v.size() <= b) v.resize(b + 1, 0);
    v[b] += amount;
    s.hot = b;
    s.hot_lo = b * bucket_;
    s.hot_hi = s.hot_lo + bucket_;
  }

  // Adds every track's pending hot-bucket time to its bucket_busy: before bucket_busy is read
  // (Simulation::run does it when the simulation ends).
  void flush_buckets() {
    for (Track& t : tracks_) flush_hot(t);
  }
  Tick bucket() const { return bucket_; }  // current width (grows with the run)
  std::vector<Track>& tracks() { return tracks_; }
  const std::vector<Track>& tracks() const { return tracks_; }
  const std::vector<Counter>& counters() const { return counters_; }
  const std::vector<Series>& series() const { return series_; }
  void add_series(BucketSeries s) { bucket_series_.push_back(std::move(s)); }
  const std::vector<BucketSeries>& bucket_series() const { return bucket_series_; }
  std::vector<TaskRecord>& tasks() { return tasks_; }
  const std::vector<TaskRecord>& tasks() const { return tasks_; }

 private:
  // Bucket of time t, doubling the bucket width first if t lies beyond the last bucket.
  std::size_t bucket_index(Tick t) {
    std::size_t b = t / bucket_;
    if (b >= kMaxBuckets) b = coarsen_for(t);
    return b;
  }
  std::size_t coarsen_for(Tick t);
  std::string prefix_;
  void add_to_buckets(Track& t, Tick start, Tick end);
  static void flush_hot(Track& t) {
    if (t.hot_busy == 0) return;
    t.bucket_busy[t.hot] += t.hot_busy;
    t.hot_busy = 0;
  }
  void keep_span(Track& t, Tick start, Tick end);

  Tick bucket_;
  TraceLevel level_ = TraceLevel::units;
  std::vector<Track> tracks_;
  std::vector<Counter> counters_;
  std::vector<Series> series_;
  std::vector<BucketSeries> bucket_series_;
  std::vector<TaskRecord> tasks_;
};

}  // namespace dfsim
