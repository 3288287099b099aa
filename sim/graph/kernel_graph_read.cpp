// Parser of the "dfsim.kernels" format into KernelGraph (syntax and name resolution).
#include <algorithm>
#include <limits>
#include <unordered_map>

#include "sim/common/error.h"
#include "sim/common/names.h"
#include "sim/common/text_file.h"
#include "sim/graph/kernel_graph_io.h"
#include "sim/graph/op_graph.h"
#include "sim/graph/size_limits.h"
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
  v.only_keys({"name", "space", "bytes", "dtype", "preloaded", "after", "layout", "description"});
  Buffer b;
  b.name = read_name(v.at("name"));
  std::string sp = v.at("space").as_string();
  auto s = space_from_name(sp);
  if (!s) v.at("space").fail("unknown space \"" + sp + "\", expected hbm or lx");
  b.space = *s;
  b.bytes = count(v.at("bytes"), 1);
  b.dtype = v.has("dtype") ? v.at("dtype").as_dtype() : Dtype::fp16;
  b.preloaded = v.get_bool("preloaded", false);
  if (v.has("layout")) {
    const std::string l = v.at("layout").as_string();
    if (l != "stick" && l != "row_major") v.at("layout").fail("unknown layout \"" + l + "\", expected stick or row_major");
    if (b.space != Space::hbm) v.at("layout").fail("a layout is an HBM buffer's; this buffer is in LX");
    b.stick_layout = l == "stick";
  }
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
  // Its bytes and its span from its first byte, within 64 bits (a product that wrapped read as
  // 0 bytes moved, and passed later checks for the wrong reason).
  if (mul_sat(a.rows, a.bytes) == std::numeric_limits<std::uint64_t>::max() ||
      add_sat(mul_sat(a.rows - 1, a.stride), a.bytes) == std::numeric_limits<std::uint64_t>::max())
    v.fail("rows x bytes or rows x stride overflows 64 bits (rows " + std::to_string(a.rows) + ", stride " +
           std::to_string(a.stride) + ", bytes " + std::to_string(a.bytes) + ")");
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

// The "buffers" array into g.buffers and `names`.
void read_buffers(const JsonView& bufs, KernelGraph& g, BufferNames& names) {
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
}

}  // namespace

std::string detect_format(const Json& j) {
  if (!j.is_object()) return "";
  auto it = j.find("format");
  if (it == j.end() || !it->is_string()) return "";
  std::string f = it->get<std::string>();
  return f == "dfsim.ops" || f == "dfsim.kernels" ? f : "";
}

namespace {
// A version-1 graph uses none of what version 2 added to tasks: the link unit, a task's cards
// and a collective's algorithm (checked on the tasks read, so also on a large file's).
void check_version_1_tasks(const KernelGraph& g, const JsonView& kernels) {
  for (std::size_t k = 0; k < g.kernels.size(); ++k)
    for (std::size_t i = 0; i < g.kernels[k].tasks.size(); ++i) {
      const Task& t = g.tasks[static_cast<std::size_t>(g.kernels[k].tasks[i])];
      const char* what = t.unit == UnitKind::link ? "unit" : !t.cards.empty() ? "cards" : !t.algorithm.empty() ? "algorithm" : nullptr;
      if (!what) continue;
      const std::string at = json_path_join(json_path_join(json_path_join(json_path_join(kernels.path(), k), "tasks"), i), what);
      throw InputError(g.file, at,
                       std::string(t.unit == UnitKind::link ? "the link unit" : "a task's \"" + std::string(what) + "\"") +
                           " needs \"version\": 2");
    }
}
}  // namespace

KernelGraph read_kernel_graph(const Json& j, const std::string& file, StreamedTasks* streamed) {
  JsonView root(j, file);
  root.expect_format("dfsim.kernels");
  root.only_keys({"format", "version", "name", "description", "cores", "cards", "model", "buffers", "kernels"});
  const auto version = root.at("version").as_int(1, kKernelGraphVersion);
  KernelGraph g;
  g.file = file;
  g.name = read_name(root.at("name"));
  g.description = root.get_string("description", "");
  g.cores = static_cast<int>(root.at("cores").as_int(1, 1 << 20));
  if (version < 2 && root.has("cards")) root.at("cards").fail("\"cards\" needs \"version\": 2");
  g.cards = static_cast<int>(root.get_int("cards", 1, 1, 64));
  if (root.has("model")) g.model = read_model_step(root.at("model"));

  BufferNames names;
  read_buffers(root.at("buffers"), g, names);

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
    // Read while parsing (a large file, parse_workload_text): the document's list is empty.
    std::vector<Task>* read = streamed && streamed->active && k < streamed->per_kernel.size() ? &streamed->per_kernel[k] : nullptr;
    const std::size_t count = read ? read->size() : tasks.size();
    for (std::size_t t = 0; t < count; ++t) {
      Task task = read ? std::move((*read)[t]) : read_task(tasks.at(t), names, g.buffers);
      if (!task_names.emplace(task.name, static_cast<int>(g.tasks.size())).second)
        throw InputError(file, json_path_join(json_path_join(tasks.path(), t), "name"),
                         "duplicate task name \"" + task.name + "\"");
      task.kernel = static_cast<int>(k);
      kern.tasks.push_back(static_cast<int>(g.tasks.size()));
      g.tasks.push_back(std::move(task));
    }
    if (read) std::vector<Task>().swap(*read);
    g.kernels.push_back(std::move(kern));
  }
  if (version < 2) check_version_1_tasks(g, kernels);
  check_kernel_graph(g);
  return g;
}

KernelGraph load_kernel_graph(const std::string& path) {
  StreamedTasks streamed;
  Json j = parse_workload_text(read_input_file(path, "a JSON file", true), path, &streamed);
  return read_kernel_graph(j, path, &streamed);
}

Json parse_workload_text(const std::string& text, const std::string& file, StreamedTasks* streamed, std::size_t stream_bytes) {
  if (!streamed || text.size() < stream_bytes) return parse_json_text(text, file);
  // Events of nlohmann's parser callback: a root member's key at depth 1, a kernel at depth 2,
  // a task (an element of a kernel's "tasks") completes at depth 4. Tasks are read only once the
  // root's "format" said dfsim.kernels and "buffers" has been read (write_kernel_graph's order,
  // keys sorted); otherwise the document is kept whole and read as usual.
  using Event = Json::parse_event_t;
  std::string keys[4];
  std::string format;
  Json buffers;  // moved out of the document while parsing, put back after
  bool have_buffers = false;
  KernelGraph g;  // the buffers, for the tasks' names
  g.file = file;
  BufferNames names;
  bool names_read = false;
  std::size_t kernel = 0, task = 0;
  bool in_kernel = false, kernels_array = false, tasks_array = false;
  auto read_one = [&](const Json& value) {
    if (!names_read) {
      read_buffers(JsonView(buffers, file, "/buffers"), g, names);
      names_read = true;
    }
    const std::string path = "/kernels/" + std::to_string(kernel) + "/tasks/" + std::to_string(task++);
    if (streamed->per_kernel.size() <= kernel) streamed->per_kernel.resize(kernel + 1);
    streamed->per_kernel[kernel].push_back(read_task(JsonView(value, file, path), names, g.buffers));
  };
  auto callback = [&](int depth, Event event, Json& parsed) -> bool {
    if (event == Event::key) {
      if (depth < 4) keys[depth] = parsed.get<std::string>();
      return true;
    }
    if (depth == 1 && event == Event::value && keys[1] == "format" && parsed.is_string()) format = parsed.get<std::string>();
    if (depth == 1 && event == Event::array_end && keys[1] == "buffers") {
      buffers = std::move(parsed);
      have_buffers = true;
      return false;  // (put back below)
    }
    const bool starts = event == Event::object_start || event == Event::array_start || event == Event::value;
    // A container starting at `depth` has no key of its own yet: one left from the member
    // before (kernel 0's "tasks" when kernel 1 is an array) must not name its elements.
    if ((event == Event::object_start || event == Event::array_start) && depth + 1 < 4) keys[depth + 1].clear();
    if (depth == 1 && starts && keys[1] == "kernels") kernels_array = event == Event::array_start;
    const bool kernels = depth >= 2 && keys[1] == "kernels" && kernels_array && format == "dfsim.kernels" && have_buffers;
    if (kernels && depth == 2 && starts) {
      kernel += in_kernel ? 1 : 0;  // the next element of "kernels"
      in_kernel = true;
      task = 0;
      tasks_array = false;
    }
    if (kernels && depth == 3 && starts && keys[3] == "tasks") tasks_array = event == Event::array_start;
    if (kernels && tasks_array && depth == 4 && keys[3] == "tasks" &&
        (event == Event::object_end || event == Event::array_end || event == Event::value)) {
      streamed->active = true;
      read_one(parsed);
      return false;  // read: not kept in the document
    }
    return true;
  };
  Json j = parse_json_text(text, file, callback);
  if (have_buffers && j.is_object()) j["buffers"] = std::move(buffers);
  return j;
}

}  // namespace dfsim
