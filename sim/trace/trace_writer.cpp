#include "sim/trace/trace_writer.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>

#include "models/chip/card.h"
#include "sim/stats/analysis.h"

namespace dfsim {

namespace {

// Microseconds with picosecond digits: deterministic text for the same time.
std::string us(Tick t) { return fmt::format("{:.6f}", static_cast<double>(t) / 1e9); }

std::string quoted(const std::string& s) { return nlohmann::json(s).dump(); }

// Emits one event per line, separated by commas.
class EventList {
 public:
  explicit EventList(std::ostream& o) : out_(o) {}
  void add(const std::string& ev) {
    out_ << (first_ ? "\n" : ",\n") << ev;
    first_ = false;
  }

 private:
  std::ostream& out_;
  bool first_ = true;
};

constexpr std::size_t kMaxResourceSpans = 200000;

// Spans with gaps of at most `gap` joined.
std::vector<std::pair<Tick, Tick>> merged_spans(const std::vector<std::pair<Tick, Tick>>& in, Tick gap) {
  std::vector<std::pair<Tick, Tick>> out;
  for (auto [s, e] : in) {
    if (!out.empty() && s <= out.back().second + gap)
      out.back().second = std::max(out.back().second, e);
    else
      out.emplace_back(s, e);
  }
  return out;
}

}  // namespace

void write_trace(std::ostream& out, Simulation& sim, const RunResult& res) {
  const Recorder& rec = sim.recorder();
  const KernelGraph& g = sim.graph();
  const ExpandedGraph& x = sim.expanded();
  out << "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"workload\": " << quoted(g.name)
      << ", \"config\": " << quoted(sim.config().name) << "},\n\"traceEvents\": [";
  EventList ev(out);

  // Processes and threads, numbered in order of first appearance.
  std::map<std::string, int> pid;
  std::vector<int> track_pid(rec.tracks().size()), track_tid(rec.tracks().size());
  auto pid_of = [&](const std::string& group) {
    auto [it, fresh] = pid.try_emplace(group, static_cast<int>(pid.size()) + 1);
    if (fresh) {
      ev.add(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"args":{{"name":{}}}}})", it->second, quoted(group)));
      // Cores first, in core order; then memory, ring and the rest in order of appearance.
      int sort = group.rfind("core ", 0) == 0 ? std::stoi(group.substr(5)) : 100000 + it->second;
      ev.add(fmt::format(R"({{"ph":"M","name":"process_sort_index","pid":{},"args":{{"sort_index":{}}}}})", it->second, sort));
    }
    return it->second;
  };
  for (std::size_t i = 0; i < rec.tracks().size(); ++i) {
    const Track& t = rec.tracks()[i];
    if (t.items == 0) continue;
    track_pid[i] = pid_of(t.group);
    track_tid[i] = static_cast<int>(i) + 1;
    ev.add(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})", track_pid[i],
                       track_tid[i], quoted(t.name)));
    ev.add(fmt::format(R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})",
                       track_pid[i], track_tid[i], track_tid[i]));
  }

  // Task slices: one per task instance (on each corelet it occupied).
  for (std::size_t i = 0; i < rec.tasks().size(); ++i) {
    const TaskRecord& r = rec.tasks()[i];
    if (r.track < 0 || !r.done) continue;  // only completed instances have a duration
    const TaskInstance& ti = x.instances[i];
    const Task& t = g.tasks[ti.task];
    std::string args = fmt::format(R"("kernel":{},"op":{},"core":{},"instance":{},"ready_us":{},"lx_wait_us":{})",
                                   quoted(t.kernel >= 0 ? g.kernels[t.kernel].name : ""), quoted(t.op), ti.core, i,
                                   us(r.ready), us(r.lx_wait));
    if (t.unit == UnitKind::pt) args += fmt::format(R"(,"macs":{})", t.m * t.n * t.k);
    if (t.unit == UnitKind::sfp) args += fmt::format(R"(,"elements":{})", t.elements);
    if (t.unit == UnitKind::dma || t.unit == UnitKind::ring) {
      std::uint64_t b = 0;
      for (const Region& rg : ti.reads) b += rg.total_bytes();
      args += fmt::format(R"(,"bytes":{})", b);
    }
    int first = r.track, count = (t.unit == UnitKind::pt || t.unit == UnitKind::sfp) && t.corelet < 0
                                     ? sim.config().core.corelets : 1;
    for (int c = 0; c < count; ++c) {
      int tr = first + c;
      ev.add(fmt::format(R"({{"ph":"X","name":{},"cat":"{}","pid":{},"tid":{},"ts":{},"dur":{},"args":{{{}}}}})",
                         quoted(t.name), unit_name(t.unit), track_pid[tr], track_tid[tr], us(r.start),
                         us(r.end - r.start), args));
    }
  }

  // Busy spans of resources that serve bursts rather than tasks (DRAM channels, ring links).
  // Long runs have millions of them: gaps are bridged, doubling the bridged gap from the
  // recorder's, until all tracks together fit the span budget.
  std::vector<std::size_t> resource_tracks;
  for (std::size_t i = 0; i < rec.tracks().size(); ++i) {
    const Track& t = rec.tracks()[i];
    if (t.items > 0 && (t.kind == "dram" || t.kind == "ring")) resource_tracks.push_back(i);
  }
  Tick gap = 0;
  for (;;) {
    std::size_t n = 0;
    for (std::size_t i : resource_tracks) n += merged_spans(rec.tracks()[i].spans, gap).size();
    if (n <= kMaxResourceSpans) break;
    gap = gap == 0 ? rec.bucket() / 50 + 1 : gap * 2;
  }
  for (std::size_t i : resource_tracks) {
    const Track& t = rec.tracks()[i];
    for (auto [s, e] : merged_spans(t.spans, gap))
      ev.add(fmt::format(R"({{"ph":"X","name":"busy","cat":"{}","pid":{},"tid":{},"ts":{},"dur":{}}})", t.kind,
                         track_pid[i], track_tid[i], us(s), us(e - s)));
  }

  // Counters: LX occupancy per core, off-chip bandwidth per bucket.
  for (const Counter& c : rec.counters()) {
    if (c.points.size() <= 1) continue;
    int p = pid_of(c.group);
    for (auto [t, v] : c.points)
      ev.add(fmt::format(R"({{"ph":"C","name":{},"pid":{},"ts":{},"args":{{"bytes":{}}}}})", quoted(c.name), p, us(t),
                         static_cast<std::uint64_t>(v)));
  }
  const auto& bb = sim.system().card().memory().bytes_per_bucket();
  if (!bb.empty()) {
    int p = pid_of("memory");
    Tick b = rec.bucket();
    for (std::size_t i = 0; i < bb.size(); ++i)
      ev.add(fmt::format(R"({{"ph":"C","name":"off-chip GB/s","pid":{},"ts":{},"args":{{"GB/s":{:.3f}}}}})", p,
                         us(i * b), static_cast<double>(bb[i]) / ticks_to_ns(b)));
    ev.add(fmt::format(R"({{"ph":"C","name":"off-chip GB/s","pid":{},"ts":{},"args":{{"GB/s":0}}}})", p, us(bb.size() * b)));
  }
  // Per-bucket series (the card's power): a counter with the bucket's mean, back to 0 at the end.
  for (const BucketSeries& se : rec.series()) {
    int p = pid_of(se.group);
    std::string name = quoted(se.name + " " + se.unit), unit = quoted(se.unit);
    for (std::size_t i = 0; i < se.values.size(); ++i)
      ev.add(fmt::format(R"({{"ph":"C","name":{},"pid":{},"ts":{},"args":{{{}:{:.3f}}}}})", name, p,
                         us(i * rec.bucket()), unit, se.values[i]));
    if (!se.values.empty())
      ev.add(fmt::format(R"({{"ph":"C","name":{},"pid":{},"ts":{},"args":{{{}:0}}}})", name, p, us(res.end), unit));
  }
  out << "\n]}\n";
}

}  // namespace dfsim
