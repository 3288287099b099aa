// Writer of the "dfsim.kernels" format: canonical JSON that reads back to the same graph.
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

}  // namespace

Json write_kernel_graph(const KernelGraph& g) {
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
  Json bufs = Json::array();
  for (const auto& b : g.buffers) {
    Json jb{{"name", b.name}, {"space", space_name(b.space)}, {"bytes", b.bytes},
            {"dtype", std::string(dtype_name(b.dtype))}, {"preloaded", b.preloaded}};
    if (b.after >= 0) jb["after"] = g.buffers[static_cast<std::size_t>(b.after)].name;
    bufs.push_back(std::move(jb));
  }
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

}  // namespace dfsim
