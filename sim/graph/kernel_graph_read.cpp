// Parser of the "dfsim.kernels" format into KernelGraph (syntax and name resolution).
#include <algorithm>
#include <unordered_map>

#include "sim/common/error.h"
#include "sim/common/names.h"
#include "sim/graph/kernel_graph_io.h"
#include "sim/graph/op_graph.h"
#include "sim/graph/unit_ops.h"

namespace dfsim {

namespace {

// A non-negative integer (as_int: accepts integers stored signed or unsigned).
std::uint64_t count(const JsonView& v, std::int64_t min) { return static_cast<std::uint64_t>(v.as_int(min)); }

// An integer or {"alpha": a, "beta": b}.
Affine read_affine(const JsonView& v) {
  if (v.json().is_object()) {
    v.only_keys({"alpha", "beta"});
    return Affine{v.get_int("alpha", 0), v.get_int("beta", 0)};
  }
  return Affine{0, v.as_int()};
}

// Resolves buffer names to indices, with "did you mean" hints.
struct BufferNames {
  std::unordered_map<std::string, int> index;
  std::vector<std::string> names;
  int find(const JsonView& v) const {
    std::string n = v.as_string();
    auto it = index.find(n);
    if (it != index.end()) return it->second;
    std::string hint = closest_match(n, names);
    v.fail("unknown buffer \"" + n + "\"" + (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)"));
  }
};

Buffer read_buffer(const JsonView& v) {
  v.only_keys({"name", "space", "bytes", "dtype", "preloaded", "after", "description"});
  Buffer b;
  b.name = read_name(v.at("name"));
  std::string sp = v.at("space").as_string();
  auto s = space_from_name(sp);
  if (!s) v.at("space").fail("unknown space \"" + sp + "\", expected hbm or lx");
  b.space = *s;
  b.bytes = count(v.at("bytes"), 1);
  b.dtype = v.has("dtype") ? v.at("dtype").as_dtype() : Dtype::fp16;
  b.preloaded = v.get_bool("preloaded", false);
  return b;
}

Access read_access(const JsonView& v, const BufferNames& names) {
  v.only_keys({"buffer", "offset", "bytes", "rows", "stride", "core", "streaming"});
  Access a;
  a.buffer = names.find(v.at("buffer"));
  a.offset = v.has("offset") ? read_affine(v.at("offset")) : Affine{};
  a.bytes = count(v.at("bytes"), 1);
  a.rows = v.has("rows") ? count(v.at("rows"), 1) : 1;
  a.stride = v.has("stride") ? count(v.at("stride"), 0) : 0;
  if (v.has("core")) a.core = read_affine(v.at("core"));
  a.streaming = v.get_bool("streaming", false);
  return a;
}

Task read_task(const JsonView& v, const BufferNames& names, const std::vector<Buffer>& bufs) {
  v.only_keys({"name", "unit", "op", "core", "cores", "corelet", "dtype", "m", "n", "k",
               "elements", "reads", "writes", "description", "cards", "algorithm", "root"});
  Task t;
  t.name = read_name(v.at("name"));
  std::string un = v.at("unit").as_string();
  auto u = unit_from_name(un);
  if (!u) v.at("unit").fail("unknown unit \"" + un + "\", expected one of pt, sfp, dma, ring, link");
  t.unit = *u;
  t.op = v.at("op").as_string();
  if (!unit_accepts(t.unit, t.op)) {
    std::string list, hint = closest_match(t.op, unit_ops(t.unit));
    for (const auto& o : unit_ops(t.unit)) list += (list.empty() ? "" : ", ") + o;
    v.at("op").fail("unknown op \"" + t.op + "\" for unit " + un + ", expected one of " + list +
                    (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)"));
  }
  if (v.has("core") == v.has("cores"))
    v.fail("a task needs exactly one of \"core\" (one explicit task) or \"cores\" (SPMD template)");
  if (v.has("core")) {
    t.first_core = static_cast<int>(v.at("core").as_int(0, 1 << 20));
  } else {
    JsonView c = v.at("cores");
    c.only_keys({"first", "count"});
    t.first_core = static_cast<int>(c.at("first").as_int(0, 1 << 20));
    t.core_count = static_cast<int>(c.at("count").as_int(1, 1 << 20));
  }
  t.corelet = static_cast<int>(v.get_int("corelet", -1, 0, 64));
  t.m = v.has("m") ? count(v.at("m"), 1) : 0;
  t.n = v.has("n") ? count(v.at("n"), 1) : 0;
  t.k = v.has("k") ? count(v.at("k"), 1) : 0;
  t.elements = v.has("elements") ? count(v.at("elements"), 1) : 0;
  for (const char* key : {"reads", "writes"}) {
    if (!v.has(key)) continue;
    JsonView list = v.at(key);
    list.expect_array();
    auto& out = std::string(key) == "reads" ? t.reads : t.writes;
    for (std::size_t i = 0; i < list.size(); ++i) out.push_back(read_access(list.at(i), names));
  }
  if (v.has("cards")) t.cards = v.at("cards").as_distinct_ints(0, 63, "card");
  if (v.has("algorithm")) {
    t.algorithm = v.at("algorithm").as_string();
    if (t.algorithm != "ring" && t.algorithm != "tree") v.at("algorithm").fail("expected \"ring\" or \"tree\"");
  }
  t.root = static_cast<int>(v.get_int("root", 0, 0, 63));
  if (v.has("dtype")) t.dtype = v.at("dtype").as_dtype();
  else if (!t.writes.empty()) t.dtype = bufs[t.writes[0].buffer].dtype;
  return t;
}

}  // namespace

std::string detect_format(const Json& j) {
  if (!j.is_object()) return "";
  auto it = j.find("format");
  if (it == j.end() || !it->is_string()) return "";
  std::string f = it->get<std::string>();
  return f == "dfsim.ops" || f == "dfsim.kernels" ? f : "";
}

KernelGraph read_kernel_graph(const Json& j, const std::string& file) {
  JsonView root(j, file);
  root.only_keys({"format", "version", "name", "description", "cores", "cards", "model", "buffers", "kernels"});
  if (root.at("format").as_string() != "dfsim.kernels")
    root.at("format").fail("expected \"dfsim.kernels\", got \"" + root.at("format").as_string() + "\"");
  root.at("version").as_int(1, kKernelGraphVersion);
  KernelGraph g;
  g.file = file;
  g.name = read_name(root.at("name"));
  g.description = root.get_string("description", "");
  g.cores = static_cast<int>(root.at("cores").as_int(1, 1 << 20));
  g.cards = static_cast<int>(root.get_int("cards", 1, 1, 64));
  if (root.has("model")) g.model = read_model_step(root.at("model"));

  BufferNames names;
  JsonView bufs = root.at("buffers");
  bufs.expect_array();
  for (std::size_t i = 0; i < bufs.size(); ++i) {
    Buffer b = read_buffer(bufs.at(i));
    if (names.index.count(b.name)) bufs.at(i).at("name").fail("duplicate buffer name \"" + b.name + "\"");
    names.index[b.name] = static_cast<int>(i);
    names.names.push_back(b.name);
    if (bufs.at(i).has("after")) {  // an earlier LX buffer, so that no chain of them loops
      const JsonView a = bufs.at(i).at("after");
      const std::string an = a.as_string();
      if (b.space != Space::lx) a.fail("only an LX buffer takes over another's space; \"" + b.name + "\" is in HBM");
      auto it = names.index.find(an);
      if (an == b.name || it == names.index.end())
        a.fail("expected the name of an LX buffer listed before \"" + b.name + "\", got \"" + an + "\"");
      if (g.buffers[static_cast<std::size_t>(it->second)].space != Space::lx)
        a.fail("expected an LX buffer; \"" + an + "\" is in HBM");
      b.after = it->second;
    }
    g.buffers.push_back(std::move(b));
  }

  std::unordered_map<std::string, int> task_names, kernel_names;
  JsonView kernels = root.at("kernels");
  kernels.expect_array();
  for (std::size_t k = 0; k < kernels.size(); ++k) {
    JsonView kv = kernels.at(k);
    kv.only_keys({"name", "tasks", "description"});
    Kernel kern;
    kern.name = read_name(kv.at("name"));
    if (!kernel_names.emplace(kern.name, static_cast<int>(k)).second)  // summaries and suites find kernels by name
      kv.at("name").fail("duplicate kernel name \"" + kern.name + "\"");
    JsonView tasks = kv.at("tasks");
    tasks.expect_array();
    for (std::size_t t = 0; t < tasks.size(); ++t) {
      Task task = read_task(tasks.at(t), names, g.buffers);
      if (!task_names.emplace(task.name, static_cast<int>(g.tasks.size())).second)
        tasks.at(t).at("name").fail("duplicate task name \"" + task.name + "\"");
      task.kernel = static_cast<int>(k);
      kern.tasks.push_back(static_cast<int>(g.tasks.size()));
      g.tasks.push_back(std::move(task));
    }
    g.kernels.push_back(std::move(kern));
  }
  check_kernel_graph(g);
  return g;
}

KernelGraph load_kernel_graph(const std::string& path) {
  return read_kernel_graph(load_json_file(path), path);
}

}  // namespace dfsim
