// `dfsim info`: a config's derived figures, and with --params the whole parameter table.
#include <fmt/format.h>

#include <iostream>

#include "models/memory/memory.h"
#include "sim/app/cli.h"
#include "sim/app/options.h"
#include "sim/config/params.h"
#include "sim/energy/energy_model.h"

namespace dfsim {

int cmd_info(const std::vector<std::string>& args) {
  po::options_description opts("options");
  std::string config;
  std::vector<std::string> sets;
  opts.add_options()
      ("config,c", po::value(&config), "chip config (default configs/spyre.json)")
      ("set,s", po::value(&sets)->composing(), "override a config value: key.path=value")
      ("params", "list every config parameter: path, type, default, unit, range, meaning");
  po::variables_map vm;
  if (!parse_options("info", "[--config FILE] [--set key=value ...] [--params]",
                     "dfsim info --config configs/spyre.json --set core.pt.rows=16", opts, nullptr, args, vm))
    return 0;
  // A config or overrides given with --params are checked too (they were ignored).
  if (vm.count("params") && (vm.count("config") || vm.count("set")))
    load_chip_config(config.empty() ? default_config_path() : config, sets);
  if (vm.count("params")) {
    std::cout << params_text();
    return 0;
  }
  if (config.empty()) config = default_config_path();
  ChipConfig c = load_chip_config(config, sets);
  std::cout << fmt::format("{} ({})\n", c.name, c.file);
  std::cout << fmt::format("  cores            {} x {} corelets, core clock {} MHz\n", c.cores, c.core.corelets, c.core.clock_mhz);
  std::cout << fmt::format("  PT per corelet   {}x{} PEs, dataflow {}\n", c.core.pt.rows, c.core.pt.cols,
                           c.core.pt.dataflow == Dataflow::os ? "os" : c.core.pt.dataflow == Dataflow::ws ? "ws" : "is");
  std::cout << "  PT peak          precision  MAC/cycle/core  MAC/ns/core  MAC/ns/card  TFLOPS(TOPS)/card\n";
  for (auto [d, ways] : c.core.pt.simd) {
    double core = c.peak_macs_per_ns(d);
    std::cout << fmt::format("                   {:<9}  {:>14.0f}  {:>11.1f}  {:>11.1f}  {:>17.1f}\n", dtype_name(d),
                             c.pt_macs_per_cycle(d), core, core * c.cores, 2 * core * c.cores / 1000);
  }
  std::cout << fmt::format("  SFP per corelet  {} lanes\n", c.core.sfp.lanes);
  std::cout << fmt::format("  LX per core      {} B ({:.2f} MiB), {} B usable by programs, allocated {}\n",
                           c.core.lx.bytes, c.core.lx.bytes / 1048576.0, c.core.lx.usable_bytes,
                           c.core.lx.allocation == "program_order" ? "in program order" : "first come first served");
  std::cout << fmt::format("  off-chip         {} model, {} channels x {}-bit x {} MT/s = {:.1f} GB/s peak{}\n",
                           c.memory.impl, c.memory.channels, c.memory.bus_bits, c.memory.data_rate_mtps,
                           c.memory_peak_gbps(), c.memory.ideal ? " (ideal: no time)" : "");
  const std::string& hbm = c.memory.hbm_layout;
  std::cout << fmt::format("  tensor layout    {}\n",
                           hbm == "stick"     ? "the card's stick layout for every off-chip tensor (hbm_layout stick)"
                           : hbm == "batched" ? "the card's stick layout for the tensors of batched matmuls, the rest "
                                                "row-major (hbm_layout batched)"
                                              : "row-major (hbm_layout row_major)");
  std::cout << fmt::format("  ring             {} B/cycle per direction per link = {:.1f} GB/s, {} cycles per hop\n",
                           c.ring.bytes_per_cycle, c.ring_gbps_per_direction(), c.ring.hop_cycles);
  if (c.memory.ports > 0)
    std::cout << fmt::format("  memory ports     {}, one per {} of the ring, {:.1f} GB/s per direction each\n",
                             c.memory.ports, c.memory.ports == 2 ? "half" : "part",
                             c.memory.port_bytes_per_cycle * c.core.clock_mhz / 1000.0);
  const DmaConfig& d = c.core.dma;
  std::cout << fmt::format("  DMA              {} per core ({}), {} B sticks, bursts of up to {} sticks,\n"
                           "                   {} requests in flight per queue, {} cycles per request + {} per stick\n",
                           d.queues == 2 ? "2 queues" : "1 queue",
                           d.queues == 2 ? "loads; stores and LX copies" : "every transfer", d.stick_bytes,
                           d.burst_sticks, d.max_outstanding, d.issue_cycles, d.stick_issue_cycles);
  const PcieConfig& pc = c.system.pcie;
  std::cout << fmt::format("  system           {} card{} in {} drawer{}; PCIe {:.1f} GB/s per direction per card "
                           "({:g} nominal x {:g} efficiency, placeholder), {:g} ns per transfer\n",
                           c.system.cards, c.system.cards == 1 ? "" : "s", c.system.drawers(),
                           c.system.drawers() == 1 ? "" : "s", pc.link_gbps * pc.efficiency, pc.link_gbps, pc.efficiency,
                           pc.latency_ns);
  double pt_peak_w = pt_energy_j(c.energy, Dtype::fp16, 1) * c.peak_macs_per_ns(Dtype::fp16) * c.cores * 1e9;
  std::cout << fmt::format("  power            budget {:g} W over {:g} us; idle floor {:.1f} W with {} cores; "
                           "PT at the fp16 peak {:.1f} W\n",
                           c.energy.power_budget_w, c.energy.power_window_ns / 1000, static_power_w(c, c.cores),
                           c.cores, pt_peak_w);
  return 0;
}

}  // namespace dfsim
