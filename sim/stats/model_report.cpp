// Model report: a model step's kernels grouped by op family and by layer, with the time of
// each attributed so that the shares add up to the whole step.
#include "sim/stats/model_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>

namespace dfsim {

namespace {

using OJson = nlohmann::ordered_json;

double round6(double v) { return std::round(v * 1e6) / 1e6; }
double ratio(double a, double b) { return b > 0 ? a / b : 0.0; }

// "l<digits>." at the start: the layer's index, and where the rest begins; -1 otherwise.
int layer_of(const std::string& t, std::size_t* rest) {
  if (t.size() < 3 || t[0] != 'l') return -1;
  std::size_t i = 1;
  while (i < t.size() && std::isdigit(static_cast<unsigned char>(t[i]))) ++i;
  if (i == 1 || i > 10 || i >= t.size() || t[i] != '.') return -1;
  *rest = i + 1;
  return std::atoi(t.c_str() + 1);
}

bool follows_convention(const std::string& t) {
  std::size_t rest = 0;
  if (layer_of(t, &rest) >= 0) return rest < t.size();
  for (const char* p : {"embed.", "head.", "pool."})
    if (t.starts_with(p) && t.size() > std::string(p).size()) return true;
  return t == "final_norm" || t.starts_with("final_norm.");
}

// Dot-separated parts of a tensor name.
std::vector<std::string> parts_of(const std::string& s) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (true) {
    std::size_t dot = s.find('.', pos);
    out.push_back(s.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos));
    if (dot == std::string::npos) return out;
    pos = dot + 1;
  }
}

// Figures of one group of kernels.
struct Group {
  double time_ns = 0;
  std::uint64_t offchip_bytes = 0, macs = 0, pcie_bytes = 0;
  std::map<Dtype, std::uint64_t> macs_by_precision;
  std::vector<std::uint64_t> pcie_link_bytes;  // per fabric link
  int kernels = 0;
  void add(double t, const KernelBreakdown& k) {
    time_ns += t;
    offchip_bytes += k.offchip_bytes + k.link_bytes;  // the DMA tasks' and the PCIe ports' DMAs'
    macs += k.macs;
    pcie_bytes += k.pcie_bytes;
    for (const auto& [d, n] : k.macs_by_precision) macs_by_precision[d] += n;
    if (pcie_link_bytes.size() < k.pcie_link_bytes.size()) pcie_link_bytes.resize(k.pcie_link_bytes.size(), 0);
    for (std::size_t l = 0; l < k.pcie_link_bytes.size(); ++l) pcie_link_bytes[l] += k.pcie_link_bytes[l];
    ++kernels;
  }
};

bool is_weight_buffer(const std::string& name) { return name.ends_with(".w") || name.ends_with(".b"); }

}  // namespace

const char* op_family_name(OpFamily f) {
  switch (f) {
    case OpFamily::attention: return "attention";
    case OpFamily::projections: return "projections";
    case OpFamily::mlp: return "mlp";
    case OpFamily::norms: return "norms";
    case OpFamily::embedding: return "embedding";
    case OpFamily::head: return "head";
    case OpFamily::communication: return "communication";
    case OpFamily::other: return "other";
  }
  return "?";
}

KernelPlace place_kernel(const std::string& name) {
  KernelPlace k;
  // The op names contain underscores too (kv_write, linear_epilogue): the tensor is the first
  // suffix after an underscore that follows the naming convention.
  for (std::size_t p = name.find('_'); p != std::string::npos; p = name.find('_', p + 1))
    if (follows_convention(name.substr(p + 1))) {
      k.op = name.substr(0, p);
      k.tensor = name.substr(p + 1);
      break;
    }
  if (k.tensor.empty()) {
    k.op = name;
    return k;
  }
  std::size_t rest = 0;
  k.layer = layer_of(k.tensor, &rest);
  for (const char* c : {"all_reduce", "all_gather", "reduce_scatter", "broadcast", "from_host", "to_host"})
    if (k.op == c) {
      k.family = OpFamily::communication;
      return k;
    }
  std::vector<std::string> parts = parts_of(k.layer >= 0 ? k.tensor.substr(rest) : k.tensor);
  // A norm's output, or a weight of it (clone_l0.attn_norm.w).
  for (const std::string& p : parts)
    if (p.ends_with("norm")) {
      k.family = OpFamily::norms;
      return k;
    }
  if (k.layer < 0) {
    if (k.tensor.starts_with("embed.")) k.family = OpFamily::embedding;
    if (k.tensor.starts_with("head.") || k.tensor.starts_with("pool.")) k.family = OpFamily::head;
    return k;
  }
  if (parts[0] == "mlp") {
    k.family = OpFamily::mlp;
  } else if (parts[0] == "attn") {
    static const std::array<const char*, 6> proj = {"q", "k", "v", "o", "o_scaled", "residual"};
    bool is_proj = parts.size() > 1 && std::find(proj.begin(), proj.end(), parts[1]) != proj.end();
    k.family = is_proj || k.op.starts_with("linear") || k.op.starts_with("matmul") ? OpFamily::projections
                                                                                      : OpFamily::attention;
  }
  return k;
}

std::vector<double> attribute_time_ns(const std::vector<std::pair<Tick, Tick>>& spans, Tick end, double* idle_ns) {
  // Sweep the span boundaries in time order; between two boundaries the running kernels share.
  std::vector<std::pair<Tick, int>> events;  // (time, +1 start / -1 end of kernel i) as (t, ±(i+1))
  for (std::size_t i = 0; i < spans.size(); ++i) {
    Tick a = std::min(spans[i].first, end), b = std::min(spans[i].second, end);
    if (b <= a) continue;
    events.emplace_back(a, static_cast<int>(i) + 1);
    events.emplace_back(b, -static_cast<int>(i) - 1);
  }
  std::sort(events.begin(), events.end());
  std::vector<double> out(spans.size(), 0.0);
  std::vector<int> running;
  Tick t = 0;
  double idle = 0;
  auto share = [&](Tick until) {
    if (until <= t) return;
    double len = ticks_to_ns(until - t);
    if (running.empty()) idle += len;
    for (int i : running) out[static_cast<std::size_t>(i)] += len / static_cast<double>(running.size());
    t = until;
  };
  for (const auto& [at, e] : events) {
    share(at);
    if (e > 0) running.push_back(e - 1);
    else running.erase(std::find(running.begin(), running.end(), -e - 1));
  }
  share(end);
  if (idle_ns) *idle_ns = idle;
  return out;
}

OJson model_report_json(const KernelGraph& g, const ExpandedGraph& x, const std::vector<KernelBreakdown>& kernels,
                        Tick end, const ChipConfig& cfg, const std::vector<double>& pcie_link_gbps) {
  const ModelStep& m = *g.model;
  // Not rounded further: step_ms is sim_time_ns / 1e6 and tokens/s is batch × 1000 / step_ms,
  // exactly as the JSON numbers read back.
  const double step_ns = round6(ticks_to_ns(end)), step_ms = step_ns / 1e6;
  const double peak_gbps = cfg.memory_peak_gbps() * g.cards;  // every card's memory
  bool any_pcie = false;
  for (const KernelBreakdown& k : kernels) any_pcie = any_pcie || k.pcie_bytes > 0;
  // The summary's roofline, for one group: its bytes at peak bandwidth, its MACs at peak rate
  // (each precision's at its own, on every card as the bytes are), or its busiest PCIe link's
  // bytes at that link's nominal rate.
  auto group_json = [&](const Group& grp) {
    double mem_ns = cfg.memory.ideal ? 0.0 : ratio(static_cast<double>(grp.offchip_bytes), peak_gbps);
    double pcie_ns = 0;
    for (std::size_t l = 0; l < grp.pcie_link_bytes.size() && l < pcie_link_gbps.size(); ++l)
      pcie_ns = std::max(pcie_ns, ratio(static_cast<double>(grp.pcie_link_bytes[l]), pcie_link_gbps[l]));
    double bound = std::max({mem_ns, pcie_ns, cfg.compute_bound_ns(grp.macs_by_precision, g.cores, g.cards)});
    OJson j{{"time_ns", round6(grp.time_ns)}, {"share", round6(ratio(grp.time_ns, step_ns))},
            {"offchip_bytes", grp.offchip_bytes}, {"macs", grp.macs}};
    if (any_pcie) j["pcie_bytes"] = grp.pcie_bytes;
    j["fraction_of_roofline"] = round6(ratio(bound, grp.time_ns));
    j["kernels"] = grp.kernels;
    return j;
  };

  std::vector<std::pair<Tick, Tick>> spans;
  for (const KernelBreakdown& k : kernels) spans.emplace_back(k.start, k.instances ? k.end : k.start);
  double idle_ns = 0;
  std::vector<double> times = attribute_time_ns(spans, end, &idle_ns);
  std::array<Group, kOpFamilies> families;
  std::map<int, Group> layers;  // by index: a graph may skip layers (names are free text)
  Group outside;
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    KernelPlace p = place_kernel(kernels[i].name);
    families[static_cast<std::size_t>(p.family)].add(times[i], kernels[i]);
    if (p.layer < 0) {
      outside.add(times[i], kernels[i]);
      continue;
    }
    layers[p.layer].add(times[i], kernels[i]);
  }

  // Weight bytes read: what the DMAs read of the weight tensors (dfsim gen names them *.w, *.b).
  std::uint64_t weights_read = 0;
  for (const TaskInstance& t : x.instances)
    if (g.tasks[static_cast<std::size_t>(t.task)].unit == UnitKind::dma)
      for (const Region& r : reads_of(g, t)) {
        const Buffer& b = g.buffers[static_cast<std::size_t>(r.buffer)];
        if (b.space == Space::hbm && is_weight_buffer(b.name)) weights_read += r.total_bytes();
      }

  OJson j;
  j["name"] = m.name;
  j["phase"] = m.phase;
  j["batch"] = m.batch;
  j["tokens"] = m.tokens;
  j["context"] = m.context;
  j["layers"] = m.layers;
  j["model_layers"] = m.model_layers;
  j["step_ms"] = step_ms;
  if (m.decode()) {
    j["ms_per_token"] = step_ms;
    j["tokens_per_s"] = ratio(static_cast<double>(m.batch) * 1000.0, step_ms);
  } else {
    j["ttft_ms"] = step_ms;
  }
  double weight_gbps = ratio(static_cast<double>(weights_read), step_ns);
  // A tensor-parallel graph is one card's shard: every card holds its own.
  j["weights"] = {{"bytes", m.weight_bytes * static_cast<std::uint64_t>(g.cards)}, {"bytes_read", weights_read}, {"achieved_gbps", round6(weight_gbps)},
                  {"peak_gbps", round6(peak_gbps)}, {"fraction_of_peak", round6(ratio(weight_gbps, peak_gbps))}};
  OJson fam = OJson::object();
  for (int f = 0; f < kOpFamilies; ++f) {
    const auto& grp = families[static_cast<std::size_t>(f)];
    // embedding, head and communication only in steps that have them (communication: that cross cards)
    const auto family = static_cast<OpFamily>(f);
    bool optional = family == OpFamily::embedding || family == OpFamily::head || family == OpFamily::communication;
    if (optional && grp.kernels == 0) continue;
    fam[op_family_name(family)] = group_json(grp);
  }
  j["families"] = fam;
  j["idle"] = {{"time_ns", round6(idle_ns)}, {"share", round6(ratio(idle_ns, step_ns))}};

  std::vector<double> lt;
  std::vector<int> index;
  OJson per_layer = OJson::array();
  for (const auto& [i, grp] : layers) {
    OJson l = {{"layer", i}};
    l.update(group_json(grp));
    per_layer.push_back(std::move(l));
    lt.push_back(grp.time_ns);
    index.push_back(i);
  }
  OJson stats = OJson::object();
  if (!lt.empty()) {
    int slowest = index[static_cast<std::size_t>(std::max_element(lt.begin(), lt.end()) - lt.begin())];
    std::vector<double> sorted = lt;
    std::sort(sorted.begin(), sorted.end());
    std::size_t n = sorted.size();
    double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    double sum = 0;
    for (double v : lt) sum += v;
    stats = {{"count", n}, {"min_ns", round6(sorted.front())}, {"median_ns", round6(median)},
             {"max_ns", round6(sorted.back())}, {"slowest", slowest}, {"time_ns", round6(sum)},
             {"share", round6(ratio(sum, step_ns))}};
  }
  j["by_layer"] = {{"layers", stats}, {"outside_layers", group_json(outside)}, {"per_layer", per_layer}};
  // A graph of some of the model's layers (dfsim gen --layers): the whole model's step,
  // extrapolated. The layers are identical, so each layer beyond the graph's adds what one of
  // the graph's layers takes: their mean, the first left out (it also fills the pipeline), and
  // the range the fastest and slowest of them give (docs/outputs.md, "whole_model").
  if (m.model_layers > m.layers && m.layers >= 2 && static_cast<std::int64_t>(lt.size()) == m.layers) {
    const std::vector<double> later(lt.begin() + 1, lt.end());
    double mean = 0;
    for (double v : later) mean += v;
    mean /= static_cast<double>(later.size());
    const double more = static_cast<double>(m.model_layers - m.layers);
    auto whole_ms = [&](double per_layer) { return round6((step_ns + more * per_layer) / 1e6); };
    const double ms = whole_ms(mean);
    OJson w = {{"layers", m.model_layers}, {"per_layer_ns", round6(mean)}, {"step_ms", ms},
               {"low_ms", whole_ms(*std::min_element(later.begin(), later.end()))},
               {"high_ms", whole_ms(*std::max_element(later.begin(), later.end()))}};
    if (m.decode()) w["tokens_per_s"] = round6(ratio(static_cast<double>(m.batch) * 1000.0, ms));
    j["whole_model"] = w;
  }
  return j;
}

std::string model_report_text(const OJson& s) {
  if (!s.contains("model")) return "";
  const OJson& m = s["model"];
  std::string out;
  std::string what = fmt::format("{} {} step, batch {}", m["name"].get<std::string>(), m["phase"].get<std::string>(),
                                 m["batch"].get<std::int64_t>());
  if (m["phase"] == "prefill") what += fmt::format(", {} tokens", m["tokens"].get<std::int64_t>());
  if (m["phase"] == "decode" || m["context"].get<std::int64_t>() > 0)
    what += fmt::format(", context {}", m["context"].get<std::int64_t>());
  std::int64_t layers = m["layers"].get<std::int64_t>(), all = m["model_layers"].get<std::int64_t>();
  if (layers > 0 && all > layers) what += fmt::format(", {} of {} layers", layers, all);
  if (m["phase"] == "decode")
    out += fmt::format("  model     {}: {:.3f} ms per token, {:.1f} tokens/s\n", what, m["ms_per_token"].get<double>(),
                       m["tokens_per_s"].get<double>());
  else
    out += fmt::format("  model     {}: {:.3f} ms per step (time to first token on an idle card)\n", what,
                       m["ttft_ms"].get<double>());
  const OJson& w = m["weights"];
  out += fmt::format("  weights   {:.3f} GB read of the graph's {:.3f} GB, {:.1f} GB/s of {:.1f} peak ({:.0f}%)\n",
                     w["bytes_read"].get<double>() / 1e9, w["bytes"].get<double>() / 1e9, w["achieved_gbps"].get<double>(),
                     w["peak_gbps"].get<double>(), 100 * w["fraction_of_peak"].get<double>());
  out += fmt::format("  {:<14} {:>10} {:>7} {:>13} {:>9} {:>9}\n", "by family", "time", "share", "off-chip", "MACs",
                     "roofline");
  auto row = [](const std::string& label, const OJson& g) {
    std::string r = fmt::format("    {:<12} {:>7.3f} ms {:>6.1f}% {:>9.1f} MiB {:>9.3g} {:>8.0f}%", label,
                                g["time_ns"].get<double>() / 1e6, 100 * g["share"].get<double>(),
                                g["offchip_bytes"].get<double>() / (1 << 20), g["macs"].get<double>(),
                                100 * g["fraction_of_roofline"].get<double>());
    if (g.contains("pcie_bytes") && g["pcie_bytes"].get<std::uint64_t>() > 0)
      r += fmt::format("  {:.1f} MiB on PCIe", g["pcie_bytes"].get<double>() / (1 << 20));
    return r + "\n";
  };
  for (const auto& [name, g] : m["families"].items())  // ("other" is in summary.json even when empty)
    if (g["kernels"].get<std::int64_t>() > 0) out += row(name == "communication" ? "comm (pcie)" : name, g);
  if (m["idle"]["time_ns"].get<double>() > 0)
    out += fmt::format("    {:<12} {:>7.3f} ms {:>6.1f}%  no kernel running\n", "idle",
                       m["idle"]["time_ns"].get<double>() / 1e6, 100 * m["idle"]["share"].get<double>());
  const OJson& l = m["by_layer"]["layers"];
  const OJson& o = m["by_layer"]["outside_layers"];
  if (!l.empty())
    out += fmt::format("  by layer  {} layers, {:.1f}% of the step: {:.3f} ms min, {:.3f} median, {:.3f} max (layer {})\n",
                       l["count"].get<std::size_t>(), 100 * l["share"].get<double>(), l["min_ns"].get<double>() / 1e6,
                       l["median_ns"].get<double>() / 1e6, l["max_ns"].get<double>() / 1e6, l["slowest"].get<int>());
  out += fmt::format("            outside the layers: {:.3f} ms, {:.1f}%\n",
                     o["time_ns"].get<double>() / 1e6, 100 * o["share"].get<double>());
  if (m.contains("whole_model")) {
    const OJson& w = m["whole_model"];
    const bool decode = m["phase"] == "decode";
    out += fmt::format("  whole     {} layers, extrapolated: {:.3f} ms per {}", w["layers"].get<std::int64_t>(),
                       w["step_ms"].get<double>(), decode ? "token" : "step");
    if (decode) out += fmt::format(", {:.1f} tokens/s", w["tokens_per_s"].get<double>());
    if (m["layers"].get<std::int64_t>() > 2)
      out += fmt::format(" ({:.3f} to {:.3f} by the fastest and slowest layer after the first)\n", w["low_ms"].get<double>(),
                         w["high_ms"].get<double>());
    else
      out += " (from the second layer alone: 3 or more layers give a range)\n";
  }
  return out;
}

}  // namespace dfsim
