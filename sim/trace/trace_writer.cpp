#include "sim/trace/trace_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "sim/stats/analysis.h"

namespace dfsim {

namespace {

// Trace times are whole picoseconds: a slice's start and end are both rounded from their
// femtosecond endpoints, so slices that touch in simulated time never overlap in the trace.
using Ps = std::uint64_t;
Ps ps(Tick t) { return (t + 500) / 1000; }
// Microseconds with picosecond digits, from the integer: deterministic text, without trailing
// zeros (113.5 rather than 113.500000).
std::string us(Ps p) {
  Ps frac = p % 1000000;
  if (frac == 0) return fmt::format("{}", p / 1000000);
  int digits = 6;
  for (; frac % 10 == 0; frac /= 10) --digits;
  return fmt::format("{}.{:0{}}", p / 1000000, frac, digits);
}

// Nanoseconds with femtosecond digits, from the integer (as summary.json gives them).
std::string ns(Tick t) { return us(t); }

std::string quoted(const std::string& s) { return nlohmann::json(s).dump(); }

// Emits one event per line, separated by commas; processes and threads are numbered in order
// of first appearance.
class Events {
 public:
  explicit Events(std::ostream& o) : out_(o) {}
  void add(const std::string& ev) {
    out_ << (first_ ? "\n" : ",\n") << ev;
    first_ = false;
  }
  // A process per group, sorted: workloads (a placement's), kernels, the cores in core order, then memory, ring, the rest;
  // with several cards ("card 2 core 3"), card by card in that order, then the PCIe fabric.
  int process(const std::string& group) {
    auto [it, fresh] = pid_.try_emplace(group, static_cast<int>(pid_.size()) + 1);
    if (fresh) {
      add(fmt::format(R"({{"ph":"M","name":"process_name","pid":{},"args":{{"name":{}}}}})", it->second, quoted(group)));
      std::string rest = group;
      int card = 0;
      if (group.rfind("card ", 0) == 0 && group.find(' ', 5) != std::string::npos) {
        card = std::stoi(group.substr(5)) + 1;
        rest = group.substr(group.find(' ', 5) + 1);
      }
      int sort = group == "workloads"              ? -2
                 : group == "kernels"              ? -1
                 : rest.rfind("core ", 0) == 0 ? card * 1000000 + std::stoi(rest.substr(5))
                                               : card * 1000000 + 100000 + it->second;
      add(fmt::format(R"({{"ph":"M","name":"process_sort_index","pid":{},"args":{{"sort_index":{}}}}})", it->second, sort));
    }
    return it->second;
  }
  int thread(int pid, const std::string& name) {
    int tid = ++last_tid_;
    add(fmt::format(R"({{"ph":"M","name":"thread_name","pid":{},"tid":{},"args":{{"name":{}}}}})", pid, tid, quoted(name)));
    add(fmt::format(R"({{"ph":"M","name":"thread_sort_index","pid":{},"tid":{},"args":{{"sort_index":{}}}}})", pid, tid, tid));
    return tid;
  }
  void slice(int pid, int tid, const std::string& name, const char* cat, Ps s, Ps e, const std::string& args = "") {
    add(fmt::format(R"({{"ph":"X","name":{},"cat":"{}","pid":{},"tid":{},"ts":{},"dur":{}{}{}}})", quoted(name), cat, pid,
                    tid, us(s), us(e - s), args.empty() ? "" : ",\"args\":", args.empty() ? "" : "{" + args + "}"));
  }
  void count(int pid, const std::string& name, Ps t, const std::string& arg) {
    add(fmt::format(R"({{"ph":"C","name":{},"pid":{},"ts":{},"args":{{{}}}}})", quoted(name), pid, us(t), arg));
  }

 private:
  std::ostream& out_;
  bool first_ = true;
  std::map<std::string, int> pid_;
  int last_tid_ = 0;
};

// A slice to place on one of several lanes so that none overlap on a lane.
struct Span {
  Ps s = 0, e = 0;
  int item = 0;  // the caller's index
};

// Lane of each span (greedy, spans in start order): the first lane free at its start.
std::vector<int> assign_lanes(std::vector<Span>& spans, int* lanes) {
  std::stable_sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.s < b.s; });
  std::vector<Ps> free_at;
  std::vector<int> lane(spans.size());
  for (std::size_t i = 0; i < spans.size(); ++i) {
    std::size_t l = 0;
    while (l < free_at.size() && free_at[l] > spans[i].s) ++l;
    if (l == free_at.size()) free_at.push_back(0);
    free_at[l] = spans[i].e;
    lane[i] = static_cast<int>(l);
  }
  *lanes = static_cast<int>(free_at.size());
  return lane;
}

constexpr std::size_t kMaxResourceSpans = 200000;

// Spans (in start order) with gaps of at most `gap` joined, clipped to `stop`.
std::vector<BusySpan> merged_spans(const std::vector<BusySpan>& in, Tick gap, Tick stop) {
  std::vector<BusySpan> out;
  for (BusySpan b : in) {
    if (b.start >= stop) break;
    if (b.end > stop) {
      b.busy = std::min(b.busy, stop - b.start);
      b.end = stop;
    }
    out.push_back(b);
  }
  merge_spans(out, gap);
  return out;
}

// Everything the writer needs, and the run's stop time: nothing is drawn past it.
struct Ctx {
  const Recorder& rec;
  const KernelGraph& g;
  const ExpandedGraph& x;
  const ChipConfig& cfg;
  Tick stop;
  Events& ev;
  // Span of an instance that fired, its end clipped to the stop time; false if it never fired.
  bool span_of(std::size_t i, Tick* s, Tick* e) const {
    const TaskRecord& r = rec.tasks()[i];
    if (!r.fired || r.start > stop) return false;
    *s = r.start;
    *e = r.done ? std::min(r.end, stop) : stop;
    return true;
  }
};

// Kernels level: one track of kernel slices (lanes where kernels run at once), and per core
// one track of its kernels' spans there.
void write_kernels(const Ctx& c) {
  const KernelGraph& g = c.g;
  struct Agg {
    Tick s = ~Tick(0), e = 0;
    std::uint64_t instances = 0, bytes = 0, macs = 0;
  };
  std::vector<Agg> kern(g.kernels.size());
  std::map<std::pair<int, int>, Agg> per_core;  // (card x cores + core, kernel)
  for (std::size_t i = 0; i < c.x.instances.size(); ++i) {
    const TaskInstance& ti = c.x.instances[i];
    int k = g.tasks[ti.task].kernel;
    Tick s, e;
    if (k < 0 || !c.span_of(i, &s, &e)) continue;
    // A link task runs on its card's PCIe port, not on a core.
    const bool on_core = g.tasks[ti.task].unit != UnitKind::link;
    for (Agg* a : {&kern[k], on_core ? &per_core[{ti.card * g.cores + ti.core, k}] : nullptr}) {
      if (!a) continue;
      a->s = std::min(a->s, s);
      a->e = std::max(a->e, e);
      ++a->instances;
      a->bytes += offchip_bytes_of(g, ti);
      a->macs += macs_of(g, ti);
    }
  }
  auto args_of = [&](int k, const Agg& a) {
    std::set<std::string> ops;
    for (int t : g.kernels[k].tasks) ops.insert(g.tasks[t].op);
    std::string list;
    for (const auto& o : ops) list += fmt::format("{}{}", list.empty() ? "" : ",", quoted(o));
    return fmt::format(R"("kernel":{},"ops":[{}],"instances":{},"offchip_bytes":{},"macs":{})", quoted(g.kernels[k].name),
                       list, a.instances, a.bytes, a.macs);
  };
  auto draw = [&](const std::string& group, const std::string& name, std::vector<Span> spans, auto&& args) {
    if (spans.empty()) return;
    int pid = c.ev.process(group), lanes = 0;
    std::vector<int> lane = assign_lanes(spans, &lanes);
    std::vector<int> tid(lanes);
    for (int l = 0; l < lanes; ++l) tid[l] = c.ev.thread(pid, l == 0 ? name : name + " " + std::to_string(l + 1));
    for (std::size_t i = 0; i < spans.size(); ++i) {
      int k = spans[i].item;
      c.ev.slice(pid, tid[lane[i]], g.kernels[k].name, "kernel", spans[i].s, spans[i].e, args(spans[i]));
    }
  };
  std::vector<Span> top;
  for (std::size_t k = 0; k < kern.size(); ++k)
    if (kern[k].instances) top.push_back(Span{ps(kern[k].s), ps(kern[k].e), static_cast<int>(k)});
  draw("kernels", "kernels", top, [&](const Span& s) { return args_of(s.item, kern[s.item]); });
  std::map<int, std::vector<Span>> cores;
  for (auto& [key, a] : per_core) cores[key.first].push_back(Span{ps(a.s), ps(a.e), key.second});
  for (auto& [core, spans] : cores)
    draw((g.cards > 1 ? fmt::format("card {} core {}", core / g.cores, core % g.cores) : "core " + std::to_string(core)),
         "kernels", spans,
         [&, core = core](const Span& s) { return args_of(s.item, per_core.at({core, s.item})); });
}

// Consecutive tracks a task occupies from its first: every corelet's for a PT or SFP task
// not pinned to one corelet.
int tracks_of(const Task& t, const ChipConfig& cfg) {
  return (t.unit == UnitKind::pt || t.unit == UnitKind::sfp) && t.corelet < 0 ? cfg.core.corelets : 1;
}

// Units level: a slice per task instance on each unit track it occupied.
std::vector<int> write_units(const Ctx& c, std::vector<int>& track_tid) {
  const KernelGraph& g = c.g;
  const auto& tracks = c.rec.tracks();
  std::vector<int> track_pid(tracks.size(), 0);
  // Tracks with work, and those of instances still running when the run stopped.
  std::vector<char> used(tracks.size(), 0);
  for (std::size_t i = 0; i < tracks.size(); ++i) used[i] = tracks[i].items > 0;
  for (const TaskRecord& r : c.rec.tasks())
    if (r.fired && r.track >= 0) {
      const Task& t = g.tasks[c.x.instances[&r - c.rec.tasks().data()].task];
      for (int k = 0; k < tracks_of(t, c.cfg); ++k) used[r.track + k] = 1;
    }
  for (std::size_t i = 0; i < tracks.size(); ++i) {
    const Track& t = tracks[i];
    if (!used[i] || t.kind == "dram" || t.kind == "ring") continue;
    track_pid[i] = c.ev.process(t.group);
    track_tid[i] = c.ev.thread(track_pid[i], t.name);
  }
  for (std::size_t i = 0; i < c.x.instances.size(); ++i) {
    const TaskRecord& r = c.rec.tasks()[i];
    Tick s, e;
    if (r.track < 0 || !c.span_of(i, &s, &e)) continue;
    const TaskInstance& ti = c.x.instances[i];
    const Task& t = g.tasks[ti.task];
    // ready_us only when the instance waited (it differs from the start), lx_wait_us only when
    // not 0: most instances start when ready, and the trace is smaller without the repeats.
    // The core is the track's process ("core c"), not repeated in each slice; nor is the kernel
    // when the task's name already begins with it ("KERNEL/...", as the compiler names every
    // task: a tenth of a model step's trace).
    static const std::string kNoKernel;
    const std::string& kernel = t.kernel >= 0 ? g.kernels[t.kernel].name : kNoKernel;
    const bool named = !kernel.empty() && t.name.size() > kernel.size() && t.name[kernel.size()] == '/' &&
                       t.name.compare(0, kernel.size(), kernel) == 0;
    std::string args = named ? fmt::format(R"("op":{},"instance":{})", quoted(t.op), i)
                             : fmt::format(R"("kernel":{},"op":{},"instance":{})", quoted(kernel), quoted(t.op), i);
    if (ps(r.ready) != ps(s)) args += fmt::format(R"(,"ready_us":{})", us(ps(r.ready)));
    if (r.lx_wait != 0) args += fmt::format(R"(,"lx_wait_us":{})", us(ps(r.lx_wait)));
    if (g.cards > 1) args += fmt::format(R"(,"card":{})", ti.card);
    if (t.unit == UnitKind::link) {
      std::uint64_t b = 0;
      for (const InstanceRegions& list : {reads_of(g, ti), writes_of(g, ti)})
        for (const Region& rg : list) b = std::max(b, rg.total_bytes());
      args += fmt::format(R"(,"bytes":{},"cards":{})", b, g.cards_of(t).size());
    }
    if (t.unit == UnitKind::pt) args += fmt::format(R"(,"macs":{})", t.m * t.n * t.k);
    if (t.unit == UnitKind::sfp) args += fmt::format(R"(,"elements":{})", t.elements);
    if (t.unit == UnitKind::dma || t.unit == UnitKind::ring) {
      std::uint64_t b = 0;
      for (const Region& rg : reads_of(g, ti)) b += rg.total_bytes();
      args += fmt::format(R"(,"bytes":{})", b);
    }
    if (!r.done) args += R"(,"unfinished":true)";
    // The same instance on the other corelets' tracks: its id only (the rest is on the first).
    const std::string again = fmt::format(R"("instance":{}{})", i, r.done ? "" : R"(,"unfinished":true)");
    for (int k = 0; k < tracks_of(t, c.cfg); ++k) {
      int tr = r.track + k;
      c.ev.slice(track_pid[tr], track_tid[tr], t.name, unit_name(t.unit), ps(s), ps(e), k == 0 ? args : again);
    }
  }
  return track_pid;
}

// Dependency arrows into and out of the instances of one kernel.
void write_flows(const Ctx& c, const std::string& kernel, const std::vector<int>& track_pid,
                 const std::vector<int>& track_tid) {
  const KernelGraph& g = c.g;
  int id = 0;
  auto arrow = [&](int from, int to) {
    Tick fs, fe, ts, te;
    const TaskRecord &a = c.rec.tasks()[from], &b = c.rec.tasks()[to];
    if (a.track < 0 || b.track < 0 || !c.span_of(from, &fs, &fe) || !c.span_of(to, &ts, &te)) return;
    ++id;
    c.ev.add(fmt::format(R"({{"ph":"s","id":{},"name":"dependency","cat":"flow","pid":{},"tid":{},"ts":{}}})", id,
                         track_pid[a.track], track_tid[a.track], us(ps(fs))));
    c.ev.add(fmt::format(R"({{"ph":"f","bp":"e","id":{},"name":"dependency","cat":"flow","pid":{},"tid":{},"ts":{}}})", id,
                         track_pid[b.track], track_tid[b.track], us(ps(ts))));
  };
  auto in_kernel = [&](int inst) {
    int k = g.tasks[c.x.instances[inst].task].kernel;
    return k >= 0 && g.kernels[k].name == kernel;
  };
  for (std::size_t i = 0; i < c.x.instances.size(); ++i) {
    if (!in_kernel(static_cast<int>(i))) continue;
    for (int d : c.x.deps[i]) arrow(d, static_cast<int>(i));
    for (int k : c.x.consumers[i])
      if (!in_kernel(k)) arrow(static_cast<int>(i), k);  // edges inside the kernel are drawn once, above
  }
}

// A track's busy intervals in start order: those booked in time order and, merged in, those
// served in idle gaps they left (ring links in arrival order, the coarse memory's channels).
// Points at `spans` itself when nothing was served in a gap; else fills `merged`.
const std::vector<BusySpan>* busy_intervals(const Track& t, std::vector<BusySpan>& merged) {
  if (t.fill_spans.empty()) return &t.spans;
  std::vector<BusySpan> fills = t.fill_spans;
  std::sort(fills.begin(), fills.end());
  merged.resize(t.spans.size() + fills.size());
  std::merge(t.spans.begin(), t.spans.end(), fills.begin(), fills.end(), merged.begin());
  return &merged;
}

// Full level: busy spans of the resources that serve bursts (DRAM channels, ring links).
// Long runs have millions of them: each track bridges gaps, doubling the bridged gap, until
// it fits its share of the span budget; a span that bridged idle time is named by how busy
// it was ("busy ~20%") and gives the figure (`busy_pct`).
void write_resources(const Ctx& c) {
  const auto& tracks = c.rec.tracks();
  std::vector<std::size_t> res;
  for (std::size_t i = 0; i < tracks.size(); ++i)
    if (tracks[i].items > 0 && tracks[i].keep_spans) res.push_back(i);
  if (res.empty()) return;
  const std::size_t share = kMaxResourceSpans / res.size();
  std::vector<BusySpan> merged;
  for (std::size_t r : res) {
    const Track& t = tracks[r];
    const std::vector<BusySpan>& all = *busy_intervals(t, merged);
    std::vector<BusySpan> spans;
    for (Tick gap = 0;; gap = gap == 0 ? c.rec.bucket() / 50 + 1 : gap * 2) {
      spans = merged_spans(all, gap, c.stop);
      if (spans.size() <= share) break;
    }
    int pid = c.ev.process(t.group), tid = c.ev.thread(pid, t.name);
    Ps last = 0;
    for (const BusySpan& m : spans) {
      Ps a = std::max(ps(m.start), last), b = ps(m.end);
      if (b <= a) continue;
      if (m.busy >= m.end - m.start) {
        c.ev.slice(pid, tid, "busy", t.kind.c_str(), a, b);
      } else {
        double pct = 100.0 * static_cast<double>(m.busy) / static_cast<double>(m.end - m.start);
        c.ev.slice(pid, tid, fmt::format("busy ~{}%", std::lround(pct / 10) * 10), t.kind.c_str(), a, b,
                   fmt::format(R"("busy_pct":{:.1f})", pct));
      }
      last = b;
    }
  }
}

// Counters kept at this level, points clipped to the stop time; then the per-bucket series
// as rates (a point only where the rate changes).
void write_counters(const Ctx& c) {
  for (const Counter& k : c.rec.counters()) {
    if (!k.kept || k.points.size() <= 1) continue;
    int pid = c.ev.process(k.group);
    for (auto [t, v] : k.points) {
      if (t > c.stop) break;
      c.ev.count(pid, k.name, ps(t), fmt::format(R"({}:{})", quoted(k.unit), static_cast<std::uint64_t>(v)));
    }
  }
  const Tick b = c.rec.bucket();
  for (const Series& s : c.rec.series()) {
    if (s.per_bucket.empty()) continue;
    int pid = c.ev.process(s.group);
    std::string prev;
    for (std::size_t i = 0; i < s.per_bucket.size() && i * b < c.stop; ++i) {
      std::string v = fmt::format(R"("GB/s":{:.3f})", static_cast<double>(s.per_bucket[i]) / ticks_to_ns(b));
      if (v != prev) c.ev.count(pid, s.name, ps(i * b), v);
      prev = std::move(v);
    }
    c.ev.count(pid, s.name, ps(std::min<Tick>(s.per_bucket.size() * b, c.stop)), R"("GB/s":0)");
  }
  // Values computed per bucket after the run (the card's power), back to 0 at the end.
  for (const BucketSeries& se : c.rec.bucket_series()) {
    if (se.values.empty()) continue;
    int pid = c.ev.process(se.group);
    std::string name = se.name + " " + se.unit, prev;
    for (std::size_t i = 0; i < se.values.size() && i * b < c.stop; ++i) {
      std::string v = fmt::format(R"({}:{:.3f})", quoted(se.unit), se.values[i]);
      if (v != prev) c.ev.count(pid, name, ps(i * b), v);
      prev = std::move(v);
    }
    c.ev.count(pid, name, ps(c.stop), fmt::format(R"({}:0)", quoted(se.unit)));
  }
}

// A placement's workloads: in process "workloads", per workload a track with one slice from
// its first task's start to its last one's end (args: its summary.json placement[] entry, and
// "unfinished" if the run stopped before all its tasks ended), then
// when it waited on others a "<name> waiting" track with a slice per wait.
void write_workloads(const Ctx& c, const std::vector<WorkloadActivity>& act, const nlohmann::ordered_json& entries) {
  if (act.empty()) return;
  const int pid = c.ev.process("workloads");
  for (std::size_t w = 0; w < act.size(); ++w) {
    const WorkloadActivity& a = act[w];
    const std::string name = entries[w]["name"].get<std::string>();
    const int tid = c.ev.thread(pid, name);
    if (a.instances > 0 && a.start <= c.stop) {
      const std::string args = entries[w].dump();
      c.ev.slice(pid, tid, name, "workload", ps(a.start), ps(std::min(a.end, c.stop)),
                 args.substr(1, args.size() - 2) + (a.finished ? "" : R"(,"unfinished":true)"));
    }
    if (a.waits.empty()) continue;
    const int wait_tid = c.ev.thread(pid, name + " waiting");
    for (const WorkloadWait& wt : a.waits) {
      std::string on, names;
      for (int o : wt.on) {
        const std::string other = entries[static_cast<std::size_t>(o)]["name"].get<std::string>();
        on += fmt::format("{}{}", on.empty() ? "" : ",", quoted(other));
        names += fmt::format("{}{}", names.empty() ? "" : ", ", other);
      }
      c.ev.slice(pid, wait_tid, "waiting on " + names, "wait", ps(wt.begin), ps(wt.end),
                 fmt::format(R"("on":[{}],"wait_ns":{})", on, ns(wt.end - wt.begin)));
    }
  }
}

}  // namespace

void write_trace(std::ostream& out, Simulation& sim, const RunResult& res, const TraceOptions& opt) {
  const Recorder& rec = sim.recorder();
  const KernelGraph& g = sim.graph();
  out << "{\"displayTimeUnit\": \"ns\", \"otherData\": {\"workload\": " << quoted(g.name)
      << ", \"config\": " << quoted(sim.config().name) << ", \"level\": \"" << trace_level_name(opt.level)
      << "\", \"end_us\": " << us(ps(res.end)) << "},\n\"traceEvents\": [";
  Events ev(out);
  Ctx c{rec, g, sim.expanded(), sim.config(), res.end, ev};
  if (opt.level >= TraceLevel::kernels && opt.workloads && opt.placement) write_workloads(c, *opt.workloads, *opt.placement);
  if (opt.level >= TraceLevel::kernels) write_kernels(c);
  if (opt.level >= TraceLevel::units) {
    std::vector<int> track_tid(rec.tracks().size(), 0);
    std::vector<int> track_pid = write_units(c, track_tid);
    if (!opt.flows_kernel.empty()) write_flows(c, opt.flows_kernel, track_pid, track_tid);
  }
  if (opt.level >= TraceLevel::full) write_resources(c);
  if (opt.level >= TraceLevel::kernels) write_counters(c);
  out << "\n]}\n";
}

}  // namespace dfsim
