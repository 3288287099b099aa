#pragma once
// Collects what happened during a run: task spans, busy spans per track, counters and
// per-bucket utilization. Outputs (summary, trace, utilization.csv) are written from it.
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "sim/common/time.h"

namespace dfsim {

// One horizontal lane in the trace (a PT of a corelet, a DMA engine, a DRAM channel, a link).
struct Track {
  std::string group;   // trace process: "core 3", "memory", "ring"
  std::string name;    // trace thread: "pt.0", "dma", "ch 2", "cw 4->5"
  std::string kind;    // pt, sfp, dma, dram, ring
  Tick busy = 0;       // total busy time
  Tick last_end = 0;   // end of the latest busy interval
  std::uint64_t items = 0;  // tasks or transfers served
  std::vector<std::pair<Tick, Tick>> spans;  // busy intervals for the trace; gaps shorter than
                                             // the recorder's merge gap are bridged
  std::vector<Tick> bucket_busy;             // busy time per utilization bucket
  std::size_t hot = 0;                       // bucket of the latest interval, and its bounds,
  Tick hot_lo = 0, hot_hi = 0;               // so that most updates need no division
};

// A task instance as it ran.
struct TaskRecord {
  int instance = -1;
  int track = -1;      // first track it occupied
  Tick ready = 0;      // all inputs present
  Tick start = 0;      // fired
  Tick end = 0;        // completed
  Tick lx_wait = 0;    // time ready but waiting for LX space
  bool fired = false;  // started
  bool done = false;   // completed
};

// A sampled value over time (LX occupancy of a core, off-chip bandwidth).
struct Counter {
  std::string group, name;
  std::vector<std::pair<Tick, double>> points;
};

// A value per utilization bucket (the card's power): a counter in the trace and a column of
// utilization.csv. The last bucket's value is its mean over the part before the run's end.
struct BucketSeries {
  std::string group, name, unit;  // "card 0", "power", "W"
  std::vector<double> values;
};

class Recorder {
 public:
  explicit Recorder(Tick bucket) : bucket_(bucket), merge_gap_(bucket / 100) {}

  int add_track(std::string group, std::string name, std::string kind);
  int add_counter(std::string group, std::string name);

  // Marks [start, end) busy on a track. Busy time and buckets are exact; trace spans closer
  // than the merge gap (1 % of a bucket) are drawn as one.
  void busy(int track, Tick start, Tick end, bool new_item = true);
  void counter(int id, Tick t, double value);

  Tick bucket() const { return bucket_; }
  std::vector<Track>& tracks() { return tracks_; }
  const std::vector<Track>& tracks() const { return tracks_; }
  const std::vector<Counter>& counters() const { return counters_; }
  std::vector<TaskRecord>& tasks() { return tasks_; }
  void add_series(BucketSeries s) { series_.push_back(std::move(s)); }
  const std::vector<BucketSeries>& series() const { return series_; }
  const std::vector<TaskRecord>& tasks() const { return tasks_; }

  // Keep per-span detail for the trace (off: only totals and buckets).
  void set_keep_spans(bool keep) { keep_spans_ = keep; }

 private:
  Tick bucket_, merge_gap_;
  bool keep_spans_ = true;
  std::vector<Track> tracks_;
  std::vector<Counter> counters_;
  std::vector<TaskRecord> tasks_;
  std::vector<BucketSeries> series_;
};

}  // namespace dfsim
