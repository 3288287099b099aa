#include "sim/runtime/scheduler.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <queue>

#include "models/common/task_unit.h"
#include "models/lx/lx_scratchpad.h"
#include "sim/common/error.h"
#include "sim/graph/region_index.h"

namespace dfsim {

Scheduler::Scheduler(const KernelGraph& g, const ExpandedGraph& x, Recorder& rec)
    : g_(g), x_(x), rec_(rec) {
  const std::size_t n = x.instances.size();
  unit_of_.assign(n, nullptr);
  missing_.resize(n);
  stream_unfired_.assign(n, 0);
  stream_open_.assign(n, 0);
  done_.assign(n, 0);
  rec_.tasks().assign(n, TaskRecord{});

  // LX scratchpads are numbered card by card: slot = card x the graph's cores + core (the
  // loader checked both ranges). LxBufs are numbered in order of first use; the index from
  // (buffer, slot) is a block of `slots` entries per LX buffer (no map node per instance).
  const std::size_t slots = static_cast<std::size_t>(g.cards) * static_cast<std::size_t>(g.cores);
  std::vector<std::size_t> block(g.buffers.size(), SIZE_MAX);  // per buffer: its block in index
  std::vector<int> index;                                        // -> LxBuf, -1 if none yet
  auto lx_of = [&](const Region& r) {
    const int slot = r.card * g.cores + r.core;
    std::size_t& base = block[static_cast<std::size_t>(r.buffer)];
    if (base == SIZE_MAX) {
      base = index.size();
      index.resize(index.size() + slots, -1);
    }
    int& b = index.at(base + static_cast<std::size_t>(slot));
    if (b < 0) {
      b = static_cast<int>(lxbufs_.size());
      lxbufs_.push_back(LxBuf{r.buffer, slot, g.buffers[r.buffer].bytes});
    }
    return b;
  };
  // The index (a block per LX buffer) and the LX reads and writes of all instances, counted
  // from the templates, are allocated once at their size: grown by doubling and shrunk
  // afterwards, a graph of millions of instances would hold two copies at its peak of memory.
  {
    std::size_t lx_buffers = 0, lx_reads = 0, lx_writes = 0;
    for (const Buffer& b : g.buffers) lx_buffers += b.space == Space::lx;
    index.reserve(lx_buffers * slots);
    for (const Task& t : g.tasks) {
      const std::size_t copies = g.instances_of(t);
      for (const Access& a : t.reads) lx_reads += copies * (g.buffers[a.buffer].space == Space::lx);
      for (const Access& a : t.writes) lx_writes += copies * (g.buffers[a.buffer].space == Space::lx);
    }
    reads_lx_.reserve(n, lx_reads);
    writes_lx_.reserve(n, lx_writes);
  }
  std::vector<int> reads_lx, writes_lx;  // of one instance, reused
  auto append = [](IdLists& lists, std::vector<int>& v) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    for (int b : v) lists.push(b);
    lists.end_list();
  };
  for (std::size_t i = 0; i < n; ++i) {
    const TaskInstance& t = x.instances[i];
    const IdLists::Span deps = x.deps[i];
    missing_[i] = static_cast<int>(deps.size());
    reads_lx.clear();
    writes_lx.clear();
    for (const Region& r : writes_of(g, t))
      if (g.buffers[r.buffer].space == Space::lx) writes_lx.push_back(lx_of(r));
    for (const Region& r : reads_of(g, t)) {
      if (g.buffers[r.buffer].space == Space::lx) reads_lx.push_back(lx_of(r));
      // A read is satisfiable only if the data was preloaded or some dependency writes it.
      if (g.buffers[r.buffer].preloaded) continue;
      // (The template's buffer ids first: a dependency's regions are computed only for its
      // writes of this buffer.)
      bool produced = std::any_of(deps.begin(), deps.end(), [&](int d) {
        const TaskInstance& di = x.instances[static_cast<std::size_t>(d)];
        const std::vector<Access>& writes = g.tasks[static_cast<std::size_t>(di.task)].writes;
        for (const Access& a : writes) {
          if (a.buffer != r.buffer) continue;
          const Region w = instance_region(g, a, di.core, di.card);
          if (w.core == r.core && w.card == r.card) return true;
        }
        return false;
      });
      if (!produced && may_fire(static_cast<int>(i)))
        never_ready_[static_cast<int>(i)] = "reads buffer \"" + g.buffers[r.buffer].name + "\"" +
                          (r.core >= 0 ? " (LX of core " + std::to_string(r.core) + ")" : "") +
                          ", which no task writes and which is not preloaded";
    }
    append(reads_lx_, reads_lx);
    append(writes_lx_, writes_lx);
    for (int b : writes_lx) ++lxbufs_[b].writers;
    for (int b : reads_lx) ++lxbufs_[b].readers;
  }
  // A buffer that takes over another's space waits for that one's instance on the same
  // scratchpad (none there: no wait).
  if (std::any_of(g.buffers.begin(), g.buffers.end(), [](const Buffer& b) { return b.after >= 0; })) {
    after_.assign(lxbufs_.size(), -1);
    released_at_.assign(lxbufs_.size(), 0);
    for (std::size_t i = 0; i < lxbufs_.size(); ++i) {
      const int a = g.buffers[static_cast<std::size_t>(lxbufs_[i].buffer)].after;
      if (a >= 0 && block[static_cast<std::size_t>(a)] != SIZE_MAX)
        after_[i] = index[block[static_cast<std::size_t>(a)] + static_cast<std::size_t>(lxbufs_[i].core)];
    }
  }
  link_streaming();
  build_allocation_order();
}

Scheduler::~Scheduler() = default;

void Scheduler::build_allocation_order() {
  // Program order: a topological order of the instances, lowest index first among the ready
  // (for a graph written producer-first it is the index order). A buffer's place is that of
  // its first writer; buffers nobody writes come last.
  const auto& inst = x_.instances;
  const std::size_t n = inst.size();
  std::vector<int> indeg(n), rank(n, 0);
  for (std::size_t i = 0; i < n; ++i) indeg[i] = static_cast<int>(x_.deps[i].size());
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (std::size_t i = 0; i < n; ++i)
    if (indeg[i] == 0) ready.push(static_cast<int>(i));
  int next = 0;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    rank[i] = next++;
    for (int c : x_.consumers[static_cast<std::size_t>(i)])
      if (--indeg[c] == 0) ready.push(c);
  }
  const int last = std::numeric_limits<int>::max();
  std::vector<int> place(lxbufs_.size(), last);
  for (std::size_t i = 0; i < n; ++i)
    for (int b : writes_lx_[i]) place[b] = std::min(place[b], rank[i]);
  int cores = 0;
  for (const LxBuf& b : lxbufs_) cores = std::max(cores, b.core + 1);
  alloc_order_.assign(cores, {});
  alloc_next_.assign(cores, 0);
  for (std::size_t b = 0; b < lxbufs_.size(); ++b) alloc_order_[lxbufs_[b].core].push_back(static_cast<int>(b));
  for (auto& order : alloc_order_)
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return place[a] < place[b]; });
}

int Scheduler::allocation_blocker(int inst, int core) const {
  if (!in_order_) return -1;
  const IdLists::Span outs = writes_lx_[static_cast<std::size_t>(inst)];
  std::size_t want = 0;
  for (int b : outs)
    if (!lxbufs_[b].reserved && lxbufs_[b].core == core) ++want;
  const auto& order = alloc_order_[core];
  for (std::size_t j = alloc_next_[core]; want > 0 && j < order.size(); ++j) {
    int b = order[j];
    if (lxbufs_[b].reserved) continue;
    if (!std::binary_search(outs.begin(), outs.end(), b)) return b;
    --want;
  }
  return -1;
}

void Scheduler::link_streaming() {
  // An edge producer -> consumer streams when every read of the consumer that overlaps what
  // the producer writes is a streaming read.
  // A consumer with no streaming read never streams: its edges need no overlap test.
  const auto& inst = x_.instances;
  stream_edge_.assign(x_.consumers.total(), 0);
  std::vector<char> streams(g_.tasks.size(), 0);
  for (std::size_t t = 0; t < g_.tasks.size(); ++t)
    streams[t] = std::any_of(g_.tasks[t].reads.begin(), g_.tasks[t].reads.end(), [](const Access& a) { return a.streaming; });
  for (std::size_t p = 0; p < inst.size(); ++p) {
    const IdLists::Span cons = x_.consumers[p];
    for (std::size_t k = 0; k < cons.size(); ++k) {
      int c = cons[k];
      if (!streams[static_cast<std::size_t>(inst[c].task)]) continue;
      bool any = false, all = true;
      for (const Region& r : reads_of(g_, inst[c]))
        for (const Region& w : writes_of(g_, inst[p]))
          if (r.buffer == w.buffer && r.core == w.core && r.card == w.card && regions_overlap(r, w)) {
            any = true;
            all = all && r.streaming;
          }
      if (any && all) {
        stream_edge_[x_.consumers.first(p) + k] = 1;
        --missing_[c];
        ++stream_unfired_[c];
        ++stream_open_[c];
      }
    }
  }
}

void Scheduler::set_lx(int core, LxScratchpad* lx) {
  if (static_cast<int>(lx_.size()) <= core) lx_.resize(core + 1, nullptr);
  lx_[core] = lx;
}

void Scheduler::start() {
  check_takeovers();
  for (LxBuf& b : lxbufs_) {
    if (!g_.buffers[b.buffer].preloaded) continue;
    // Preloaded data occupies LX from the start. The loader checked it fits; if several
    // preloaded buffers together do not, the run cannot start.
    if (!lx_[b.core]->try_reserve(b.bytes))
      throw InputError(g_.file, "/buffers", "preloaded LX buffers on core " + std::to_string(b.core) +
                                                " need more than its " + std::to_string(lx_[b.core]->capacity()) +
                                                " usable bytes (at \"" + g_.buffers[b.buffer].name + "\")");
    b.reserved = true;
    b.writers_done = b.writers;
  }
  if (loop_iteration_ > 0 && !after_.empty())
    wake_timer_ = std::make_unique<ReleaseTimer>("loop_iteration_timer", [this](int slot, Tick) { lx_[slot]->wake_waiters(); });
  if (launch_ > 0 || std::any_of(x_.not_before.begin(), x_.not_before.end(), [](Tick t) { return t > 0; }))
    timer_ = std::make_unique<ReleaseTimer>("release_timer", [this](int inst, Tick now) { make_ready(inst, now); });
  if (launch_ > 0) launched_at_.assign(g_.kernels.size() * static_cast<std::size_t>(std::max(g_.cards, 1)), kNever);
  for (std::size_t i = 0; i < x_.instances.size(); ++i)
    if (missing_[i] == 0 && stream_unfired_[i] == 0 && may_fire(static_cast<int>(i))) make_ready(static_cast<int>(i), 0);
}

void Scheduler::fired(int inst, Tick now) {
  const IdLists::Span cons = x_.consumers[static_cast<std::size_t>(inst)];
  const char* streams = stream_edge_.data() + x_.consumers.first(static_cast<std::size_t>(inst));
  for (std::size_t k = 0; k < cons.size(); ++k) {
    if (!streams[k]) continue;
    int c = cons[k];
    if (--stream_unfired_[c] == 0 && missing_[c] == 0 && may_fire(c)) make_ready(c, now);
  }
}

bool Scheduler::may_complete(int inst, TaskUnit* unit) {
  if (stream_open_[inst] == 0) return true;
  deferred_[inst] = unit;
  return false;
}

std::size_t Scheduler::launch_slot(int inst) const {
  if (launch_ == 0) return kNoSlot;
  const TaskInstance& ti = x_.instances[static_cast<std::size_t>(inst)];
  const int kernel = g_.tasks[ti.task].kernel;
  if (kernel < 0) return kNoSlot;
  return static_cast<std::size_t>(kernel) * static_cast<std::size_t>(std::max(g_.cards, 1)) +
         static_cast<std::size_t>(ti.card);
}

Tick Scheduler::launch_of(int inst) const {
  const std::size_t slot = launch_slot(inst);
  return slot == kNoSlot ? kNever : launched_at_[slot];
}

void Scheduler::make_ready(int inst, Tick now) {
  if (Tick t = x_.not_before_of(static_cast<std::size_t>(inst)); t > now) {
    timer_->at(t, inst);
    return;
  }
  if (const std::size_t slot = launch_slot(inst); slot != kNoSlot) {
    Tick& at = launched_at_[slot];
    if (at == kNever) at = now + launch_;  // the kernel's first ready instance on this card
    if (at > now) {
      timer_->at(at, inst);
      return;
    }
  }
  rec_.tasks()[inst].ready = now;
  unit_of_[inst]->push_ready(inst);
}

bool Scheduler::reserve_outputs(int inst, TaskUnit* waiter) {
  const IdLists::Span outs = writes_lx_[static_cast<std::size_t>(inst)];
  // Space needed per core, so that a write to another core's LX (a ring copy) counts there;
  // in core order (a reused scratch list: no allocation per task).
  auto& need = need_;
  need.clear();
  for (int b : outs) {
    if (lxbufs_[b].reserved) continue;
    auto it = std::find_if(need.begin(), need.end(), [&](const auto& n) { return n.first == lxbufs_[b].core; });
    if (it == need.end()) need.emplace_back(lxbufs_[b].core, lxbufs_[b].bytes);
    else it->second += lxbufs_[b].bytes;
  }
  std::sort(need.begin(), need.end());
  for (int b : outs) {  // (woken when that one is released: its scratchpad wakes its waiters)
    const int a = after_of(b);
    if (lxbufs_[b].reserved || a < 0) continue;
    const LxBuf& taken = lxbufs_[a];
    const Tick due = released_at_[static_cast<std::size_t>(a)] + loop_iteration_;
    if (!taken.released || due > sim_now()) {
      lx_[lxbufs_[b].core]->add_waiter(waiter);
      if (taken.released) wake_timer_->at(due, lxbufs_[b].core);
      return false;
    }
  }
  for (auto [core, bytes] : need)
    if (bytes > lx_[core]->free() || allocation_blocker(inst, core) >= 0) {
      lx_[core]->add_waiter(waiter);
      return false;
    }
  for (auto [core, bytes] : need) lx_[core]->try_reserve(bytes);
  for (int b : outs) lxbufs_[b].reserved = true;
  for (auto [core, bytes] : need) {
    // The next buffers in line on this core may now take their turn.
    const auto& order = alloc_order_[core];
    std::size_t& j = alloc_next_[core];
    while (j < order.size() && lxbufs_[order[j]].reserved) ++j;
    if (in_order_) lx_[core]->wake_waiters();
  }
  return true;
}

void Scheduler::maybe_release(LxBuf& b, Tick now) {
  if (b.released || !b.reserved || b.writers_done < b.writers || b.readers_done < b.readers) return;
  b.released = true;
  if (!released_at_.empty()) released_at_[static_cast<std::size_t>(&b - lxbufs_.data())] = now;
  lx_[b.core]->release(b.bytes);
}

void Scheduler::complete(int inst, Tick now) {
  done_[inst] = 1;
  ++completed_;
  last_end_ = std::max(last_end_, now);
  const auto i = static_cast<std::size_t>(inst);
  for (int b : writes_lx_[i]) ++lxbufs_[b].writers_done;
  for (int b : reads_lx_[i]) ++lxbufs_[b].readers_done;
  for (int b : writes_lx_[i]) maybe_release(lxbufs_[b], now);
  for (int b : reads_lx_[i]) maybe_release(lxbufs_[b], now);
  const IdLists::Span cons = x_.consumers[i];
  const char* streams = stream_edge_.data() + x_.consumers.first(i);
  for (std::size_t k = 0; k < cons.size(); ++k) {
    int c = cons[k];
    if (streams[k]) {
      if (--stream_open_[c] == 0) {
        if (auto d = deferred_.find(c); d != deferred_.end()) {
          TaskUnit* u = d->second;
          deferred_.erase(d);
          u->resume(c);
        }
      }
    } else if (--missing_[c] == 0 && stream_unfired_[c] == 0 && may_fire(c)) {
      make_ready(c, now);
    }
  }
}

std::vector<std::string> Scheduler::blocked_report(std::size_t max_lines) const {
  std::vector<std::string> out;
  std::size_t blocked = 0;
  for (std::size_t i = 0; i < x_.instances.size(); ++i) {
    if (done_[i]) continue;
    ++blocked;
    if (out.size() >= max_lines) continue;
    const TaskInstance& t = x_.instances[i];
    auto where = [&](const TaskInstance& i) {
      return (g_.cards > 1 ? "card " + std::to_string(i.card) + " " : std::string()) + "core " + std::to_string(i.core);
    };
    std::string who = "task \"" + g_.tasks[t.task].name + "\" on " + where(t);
    std::string why;
    const TaskRecord& rr = rec_.tasks()[i];
    if (rr.fired && deferred_.count(static_cast<int>(i))) {
      why = "done with its part, waits for " + std::to_string(stream_open_[i]) + " streaming producer(s) to complete";
    } else if (rr.fired) {
      why = "running since " + std::to_string(ticks_to_ns(rr.start)) + " ns";
    } else if (!may_fire(static_cast<int>(i))) {
      why = never_ready_.at(static_cast<int>(i));
    } else if (missing_[i] == 0 && stream_unfired_[i] == 0 && rr.ready < x_.not_before_of(i)) {
      why = "waits for its start time, " + std::to_string(ticks_to_ns(x_.not_before_of(i))) + " ns";
    } else if (Tick at = launch_of(static_cast<int>(i));
               missing_[i] == 0 && stream_unfired_[i] == 0 && at != kNever && rr.ready < at) {
      why = "waits for its kernel's launch, done at " + std::to_string(ticks_to_ns(at)) + " ns";
    } else if (missing_[i] > 0 || stream_unfired_[i] > 0) {
      for (int d : x_.deps[i])
        if (!done_[d]) {
          why = "waits for task \"" + g_.tasks[x_.instances[d].task].name + "\" on " + where(x_.instances[d]) + " (" +
                std::to_string(missing_[i] + stream_unfired_[i]) + " input(s) missing)";
          break;
        }
    } else {
      // Per core: the unreserved outputs there; report the first core that holds it back.
      std::map<int, std::uint64_t> need;
      for (int b : writes_lx_[i])
        if (!lxbufs_[b].reserved) need[lxbufs_[b].core] += lxbufs_[b].bytes;
      why = "ready, waits for its " + std::string(unit_name(g_.tasks[t.task].unit)) + " unit, busy with other tasks";
      for (int b : writes_lx_[i])
        if (!lxbufs_[b].reserved && waits_for_space_of(b)) {
          need.clear();
          why = "waits for buffer \"" + g_.buffers[lxbufs_[after_of(b)].buffer].name + "\" on core " +
                std::to_string(lxbufs_[b].core) + " to be freed (\"" + g_.buffers[lxbufs_[b].buffer].name +
                "\" takes over its LX space)";
          break;
        }
      for (auto [core, bytes] : need) {
        if (bytes > lx_[core]->free()) {
          why = "waits for " + std::to_string(bytes) + " B of LX on core " + std::to_string(core) + " (" +
                std::to_string(lx_[core]->free()) + " B free of " + std::to_string(lx_[core]->capacity()) + ")";
          break;
        }
        if (int b = allocation_blocker(static_cast<int>(i), core); b >= 0) {
          why = "waits for its turn in LX allocation on core " + std::to_string(core) + " (buffer \"" +
                g_.buffers[lxbufs_[b].buffer].name + "\" comes first in program order)";
          break;
        }
      }
    }
    out.push_back(who + ": " + why);
  }
  if (blocked > out.size())
    out.push_back("... and " + std::to_string(blocked - out.size()) + " more blocked task instances");
  return out;
}

}  // namespace dfsim
