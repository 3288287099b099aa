// Writer of the "dfsim.kernels" format: canonical JSON that reads back to the same graph.
#include <functional>
#include <map>
#include <ostream>

#include "sim/graph/kernel_graph_io.h"
#include "sim/graph/op_graph.h"

namespace dfsim {

namespace {

Json affine_json(const Affine& a) {
  if (a.alpha == 0) return a.beta;
  return Json{{"alpha", a.alpha}, {"beta", a.beta}};
}

Json access_json(const KernelGraph& g, const Access& a) {
  Json j = Json::object();
  j["buffer"] = g.buffers.at(a.buffer).name;
  j["offset"] = affine_json(a.offset);
  j["bytes"] = a.bytes;
  if (a.rows != 1) j["rows"] = a.rows;
  if (a.stride != 0) j["stride"] = a.stride;
  if (a.core) j["core"] = affine_json(*a.core);
  if (a.streaming) j["streaming"] = true;
  return j;
}

Json task_json(const KernelGraph& g, const Task& t) {
  Json j = Json::object();
  j["name"] = t.name;
  j["unit"] = unit_name(t.unit);
  j["op"] = t.op;
  if (t.core_count == 1) j["core"] = t.first_core;
  else j["cores"] = Json{{"first", t.first_core}, {"count", t.core_count}};
  if (t.corelet >= 0) j["corelet"] = t.corelet;
  j["dtype"] = std::string(dtype_name(t.dtype));
  if (t.m) j["m"] = t.m;
  if (t.n) j["n"] = t.n;
  if (t.k) j["k"] = t.k;
  if (t.elements) j["elements"] = t.elements;
  if (!t.cards.empty()) j["cards"] = t.cards;
  if (!t.algorithm.empty()) j["algorithm"] = t.algorithm;
  if (t.op == "broadcast") j["root"] = t.root;
  Json reads = Json::array(), writes = Json::array();
  for (const auto& a : t.reads) reads.push_back(access_json(g, a));
  for (const auto& a : t.writes) writes.push_back(access_json(g, a));
  j["reads"] = reads;
  j["writes"] = writes;
  return j;
}

// The top-level members other than "buffers" and "kernels" (small).
Json head_json(const KernelGraph& g) {
  Json j = Json::object();
  j["format"] = "dfsim.kernels";
  bool v2 = g.cards > 1;
  for (const Task& t : g.tasks) v2 = v2 || t.unit == UnitKind::link || !t.cards.empty();
  j["version"] = v2 ? kKernelGraphVersion : 1;
  j["name"] = g.name;
  if (!g.description.empty()) j["description"] = g.description;
  j["cores"] = g.cores;
  if (g.cards > 1) j["cards"] = g.cards;
  if (g.model) j["model"] = model_step_json(*g.model);
  return j;
}

Json buffer_json(const KernelGraph& g, const Buffer& b) {
  Json jb{{"name", b.name}, {"space", space_name(b.space)}, {"bytes", b.bytes},
          {"dtype", std::string(dtype_name(b.dtype))}, {"preloaded", b.preloaded}};
  if (b.after >= 0) jb["after"] = g.buffers[static_cast<std::size_t>(b.after)].name;
  if (b.stick_layout) jb["layout"] = "stick";
  return jb;
}

// `j` as j.dump(1) prints it nested `depth` levels deep (its first line not indented).
void dump_at(std::ostream& os, const Json& j, int depth) {
  const std::string s = j.dump(1);
  const std::string pad(static_cast<std::size_t>(depth), ' ');
  std::size_t from = 0;
  for (std::size_t nl; (nl = s.find('\n', from)) != std::string::npos; from = nl + 1) {
    os.write(s.data() + from, static_cast<std::streamsize>(nl + 1 - from));
    os << pad;
  }
  os.write(s.data() + from, static_cast<std::streamsize>(s.size() - from));
}

// An array of `n` items nested `depth` deep, as dump(1) prints it; item(i, depth + 1) prints one.
template <class Item>
void array_at(std::ostream& os, std::size_t n, int depth, Item&& item) {
  if (n == 0) {
    os << "[]";
    return;
  }
  const std::string pad(static_cast<std::size_t>(depth) + 1, ' ');
  os << "[\n";
  for (std::size_t i = 0; i < n; ++i) {
    if (!os) return;  // a failed or stopped stream (Ctrl-C while writing): nothing more to print
    if (i) os << ",\n";
    os << pad;
    item(i, depth + 1);
  }
  os << "\n" << std::string(static_cast<std::size_t>(depth), ' ') << "]";
}

}  // namespace

Json write_kernel_graph(const KernelGraph& g) {
  Json j = head_json(g);
  Json bufs = Json::array();
  for (const auto& b : g.buffers) bufs.push_back(buffer_json(g, b));
  j["buffers"] = bufs;
  Json kernels = Json::array();
  for (const auto& k : g.kernels) {
    Json tasks = Json::array();
    for (int t : k.tasks) tasks.push_back(task_json(g, g.tasks.at(t)));
    kernels.push_back(Json{{"name", k.name}, {"tasks", tasks}});
  }
  j["kernels"] = kernels;
  return j;
}

void write_kernel_graph(const KernelGraph& g, std::ostream& os) {
  // The members in the order Json's sorted keys give them, each printed as dump(1) would.
  const Json head = head_json(g);
  std::map<std::string, std::function<void()>> members;
  for (auto it = head.begin(); it != head.end(); ++it) {
    const Json& value = it.value();
    members[it.key()] = [&os, &value] { dump_at(os, value, 1); };
  }
  members["buffers"] = [&] {
    array_at(os, g.buffers.size(), 1, [&](std::size_t i, int d) { dump_at(os, buffer_json(g, g.buffers[i]), d); });
  };
  members["kernels"] = [&] {
    array_at(os, g.kernels.size(), 1, [&](std::size_t ki, int d) {
      const Kernel& k = g.kernels[ki];
      const std::string pad(static_cast<std::size_t>(d) + 1, ' ');
      os << "{\n" << pad << "\"name\": " << Json(k.name).dump() << ",\n" << pad << "\"tasks\": ";
      array_at(os, k.tasks.size(), d + 1, [&](std::size_t ti, int dt) { dump_at(os, task_json(g, g.tasks.at(k.tasks[ti])), dt); });
      os << "\n" << std::string(static_cast<std::size_t>(d), ' ') << "}";
    });
  };
  os << "{\n";
  bool first = true;
  for (const auto& [key, print] : members) {
    if (!first) os << ",\n";
    first = false;
    os << ' ' << Json(key).dump() << ": ";
    print();
  }
  os << "\n}";
}

}  // namespace dfsim
