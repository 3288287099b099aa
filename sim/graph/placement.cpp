#include "sim/graph/placement.h"

#include <algorithm>
#include <filesystem>

#include "sim/common/error.h"
#include "sim/common/names.h"
#include "sim/graph/kernel_graph_io.h"

namespace dfsim {

namespace {

// A placed workload must be a file: a missing one or a directory is the placement's mistake,
// named at its path (the workload's reader would name only the workload).
void check_workload_path(const JsonView& where, const std::string& file) {
  std::error_code ec;
  const auto st = std::filesystem::status(file, ec);
  if (!std::filesystem::exists(st)) where.fail(file + ": no such file");
  if (std::filesystem::is_directory(st)) where.fail(file + ": is a directory, expected a workload file");
}

}  // namespace

Placement read_placement(const Json& j, const std::string& file) {
  JsonView root(j, file);
  root.expect_format("dfsim.placement");
  root.only_keys({"$schema", "format", "version", "name", "description", "workloads"});
  root.at("version").as_int(kPlacementVersion, kPlacementVersion);
  Placement p;
  p.file = file;
  p.name = read_name(root.at("name"));
  p.description = root.get_string("description", "");
  JsonView ws = root.at("workloads");
  ws.expect_array();
  if (ws.size() == 0) ws.fail("expected at least one workload");
  // Who waited on whom is a table of workloads by workloads (summary.json's held_by): bounded
  // before anything is loaded.
  if (ws.size() > kMaxPlacedWorkloads)
    ws.fail(std::to_string(ws.size()) + " workloads, more than " + std::to_string(kMaxPlacedWorkloads) +
            " in one placement (split it into several runs)");
  const std::filesystem::path dir = std::filesystem::path(file).parent_path();
  for (std::size_t i = 0; i < ws.size(); ++i) {
    JsonView w = ws.at(i);
    w.only_keys({"name", "workload", "cards", "cores", "start_ns", "after", "description"});
    PlacedWorkload pw;
    pw.name = read_name(w.at("name"), /*path_safe=*/true);
    for (const auto& other : p.workloads)
      if (other.name == pw.name) w.at("name").fail("duplicate workload name \"" + pw.name + "\"");
    std::string f = w.at("workload").as_string();
    if (f.empty()) w.at("workload").fail("expected a file path, got an empty string");
    pw.file = std::filesystem::path(f).is_absolute() ? f : (dir / f).string();
    check_workload_path(w.at("workload"), pw.file);
    pw.cards = w.at("cards").as_distinct_ints(0, 63, "card");
    if (w.has("cores")) {
      JsonView r = w.at("cores");
      r.only_keys({"first", "count"});
      pw.first_core = static_cast<int>(r.at("first").as_int(0, 1023));
      pw.core_count = static_cast<int>(r.at("count").as_int(1, 1024));
    }
    if (w.has("start_ns")) pw.start_ns = w.at("start_ns").as_number(0, 3.6e12);
    if (w.has("after")) {
      std::string a = w.at("after").as_string();
      auto it = std::find_if(p.workloads.begin(), p.workloads.end(), [&](const PlacedWorkload& o) { return o.name == a; });
      if (it == p.workloads.end()) w.at("after").fail("no earlier workload is named \"" + a + "\" (\"after\" names one listed before)");
      pw.after = static_cast<int>(it - p.workloads.begin());
    }
    p.workloads.push_back(std::move(pw));
  }
  return p;
}

Placement load_placement(const std::string& path) { return read_placement(load_json_file(path), path); }

Placement solo_placement(const Placement& p, std::size_t w) {
  Placement solo = p;
  solo.workloads = {p.workloads.at(w)};
  solo.workloads[0].after = -1;
  return solo;
}

namespace {

// Moves a graph's cores 0, 1, ... to first, first + 1, ...: its task ranges, and the per-core
// affine offsets and LX instances of its accesses (value(c) at the new core c + first is the
// old value(c), plus first for a core number).
void shift_cores(KernelGraph& g, int first) {
  if (first == 0) return;
  for (Task& t : g.tasks) {
    t.first_core += first;
    for (auto* list : {&t.reads, &t.writes})
      for (Access& a : *list) {
        a.offset.beta -= a.offset.alpha * first;
        if (a.core) a.core->beta += first - a.core->alpha * first;
      }
  }
  g.cores += first;
}

}  // namespace

void check_placement_fits(const Placement& p, int card_cores, int system_cards) {
  for (std::size_t w = 0; w < p.workloads.size(); ++w) {
    const PlacedWorkload& pw = p.workloads[w];
    for (std::size_t i = 0; i < pw.cards.size(); ++i)
      if (pw.cards[i] >= system_cards)
        throw InputError(p.file, "/workloads/" + std::to_string(w) + "/cards/" + std::to_string(i),
                         "card " + std::to_string(pw.cards[i]) + " is beyond the system's " + std::to_string(system_cards) +
                             " card(s), 0.." + std::to_string(system_cards - 1) + " (system.cards)");
    if (pw.core_count > 0 && pw.first_core + pw.core_count > card_cores)
      throw InputError(p.file, "/workloads/" + std::to_string(w) + "/cores",
                       "cores " + std::to_string(pw.first_core) + ".." + std::to_string(pw.first_core + pw.core_count - 1) +
                           " go beyond the card's " + std::to_string(card_cores) + " cores (0.." +
                           std::to_string(card_cores - 1) + ")");
  }
}

KernelGraph merge_placement(const Placement& p, const std::vector<KernelGraph>& graphs, std::vector<int>* task_workload) {
  KernelGraph m;
  m.name = p.name;
  m.file = p.file;
  m.description = p.description.empty() ? "placement " + p.name : p.description;
  task_workload->clear();
  for (std::size_t w = 0; w < graphs.size(); ++w) {
    KernelGraph g = graphs[w];
    const PlacedWorkload& pw = p.workloads[w];
    const std::string at = "/workloads/" + std::to_string(w) + "/cards";
    if (static_cast<std::size_t>(g.cards) != pw.cards.size())
      throw InputError(p.file, at, pw.file + " runs on " + std::to_string(g.cards) + " card(s), the placement gives it " +
                                       std::to_string(pw.cards.size()));
    if (pw.core_count > 0) {
      const std::string cores_at = "/workloads/" + std::to_string(w) + "/cores";
      const std::string range = "cores " + std::to_string(pw.first_core) + ".." + std::to_string(pw.first_core + pw.core_count - 1);
      if (g.cores > pw.core_count)
        throw InputError(p.file, cores_at, pw.file + " runs on " + std::to_string(g.cores) + " cores, more than the " +
                                               std::to_string(pw.core_count) + " of " + range);
      shift_cores(g, pw.first_core);
    }
    m.cores = std::max(m.cores, g.cores);
    for (int c : pw.cards) m.cards = std::max(m.cards, c + 1);
    const int buffer_base = static_cast<int>(m.buffers.size()), task_base = static_cast<int>(m.tasks.size());
    const int kernel_base = static_cast<int>(m.kernels.size());
    const std::string prefix = pw.name + "/";
    for (Buffer b : g.buffers) {
      b.name = prefix + b.name;
      if (b.after >= 0) b.after += buffer_base;
      m.buffers.push_back(std::move(b));
    }
    for (Task t : g.tasks) {
      t.name = prefix + t.name;
      if (t.kernel >= 0) t.kernel += kernel_base;
      for (auto* list : {&t.reads, &t.writes})
        for (Access& a : *list) a.buffer += buffer_base;
      std::vector<int> cards;
      for (int c : g.cards_of(t)) cards.push_back(pw.cards[static_cast<std::size_t>(c)]);
      t.cards = cards;
      m.tasks.push_back(std::move(t));
      task_workload->push_back(static_cast<int>(w));
    }
    for (Kernel k : g.kernels) {
      k.name = prefix + k.name;
      for (int& t : k.tasks) t += task_base;
      m.kernels.push_back(std::move(k));
    }
  }
  check_kernel_graph(m);
  return m;
}

void add_placement_dependencies(const Placement& p, const std::vector<int>& task_workload, ExpandedGraph& x) {
  const auto workload_of = [&](int inst) { return task_workload[static_cast<std::size_t>(x.instances[inst].task)]; };
  const std::size_t n = x.instances.size();
  // The added edges, root -> its new dependencies (the sinks of the workload it follows). The
  // roots and sinks are those of the graph before any edge is added: an added edge only joins
  // a workload to the one it follows, so no workload's roots or sinks change.
  std::vector<std::pair<int, std::vector<int>>> added;
  for (std::size_t w = 0; w < p.workloads.size(); ++w) {
    const int before = p.workloads[w].after;
    const Tick start = ns_to_ticks(p.workloads[w].start_ns);
    if (before < 0 && start == 0) continue;
    std::vector<int> sinks, roots;
    for (std::size_t i = 0; i < n; ++i) {
      const int wl = workload_of(static_cast<int>(i));
      const IdLists::Span cons = x.consumers[i];
      if (wl == static_cast<int>(w) && x.deps[i].empty()) roots.push_back(static_cast<int>(i));
      if (before >= 0 && wl == before &&
          std::none_of(cons.begin(), cons.end(), [&](int c) { return workload_of(c) == before; }))
        sinks.push_back(static_cast<int>(i));
    }
    if (start > 0 && x.not_before.empty()) x.not_before.assign(n, 0);
    for (int r : roots) {
      if (!x.not_before.empty()) x.not_before[static_cast<std::size_t>(r)] = start;
      if (!sinks.empty()) added.emplace_back(r, sinks);
    }
  }
  if (added.empty()) return;
  std::sort(added.begin(), added.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  IdLists deps;
  deps.reserve(n, x.deps.total());
  std::vector<int> list;
  auto next = added.begin();
  for (std::size_t i = 0; i < n; ++i) {
    const IdLists::Span old = x.deps[i];
    list.assign(old.begin(), old.end());
    for (; next != added.end() && next->first == static_cast<int>(i); ++next)
      list.insert(list.end(), next->second.begin(), next->second.end());
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    for (int d : list) deps.push(d);
    deps.end_list();
  }
  deps.shrink_to_fit();
  x.deps = std::move(deps);
  x.consumers = x.deps.inverse(n);
}

}  // namespace dfsim
