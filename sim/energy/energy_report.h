#pragma once
// The energy of one simulated run: counts gathered from the models, joules per component and
// per kernel, power over time and the budget check. Written to summary.json ("energy"), the
// terminal, trace.json (a power counter per card) and utilization.csv (a power column).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/energy/energy_model.h"
#include "sim/runtime/simulation.h"

namespace dfsim {

// A kernel's dynamic energy: its task instances' share of each component but static.
struct KernelEnergy {
  std::string name;
  ComponentEnergy j;
};

struct EnergyReport {
  EnergyCounts counts;
  ComponentEnergy by_component;
  DramEnergy dram;
  StaticEnergy stat;
  double total_j = 0, average_w = 0, peak_w = 0;
  double static_w = 0;            // the idle floor of this run: card + active cores
  PowerProfile profile;           // energy per utilization bucket (all the run's cards)
  double budget_w = 0;            // card.power_budget_w
  Tick window = 0;                // card.power_window_ns
  double max_window_w = 0;        // highest sliding-window mean power
  Tick max_window_start = 0;
  bool over_budget() const { return max_window_w > budget_w; }
  std::vector<KernelEnergy> kernels;
};

// Gathers the counts of a run (completed task instances and the models' counters) and
// applies the config's coefficients.
EnergyReport compute_energy(Simulation& sim, const RunResult& res);

// summary.json "energy" section (docs/outputs.md).
nlohmann::ordered_json energy_json(const EnergyReport& e);
// The terminal line, from a summary's "energy" section ("" when it has none).
std::string energy_text(const nlohmann::ordered_json& summary);
// The budget warning line, or "" when the run stayed within card.power_budget_w.
std::string power_budget_warning(const EnergyReport& e);
// The power counter: a series of the recorder (trace counter, utilization column), process
// "card 0" for a one-card run, "system" for the summed power of several cards.
void record_power(Recorder& rec, const EnergyReport& e, int cards);

// For model runs (dfsim gen graphs): adds "j_per_token" and "tokens_per_j" to an "energy"
// section for the step's `tokens` (decode: one per sequence; prefill: the prompt tokens).
void add_energy_per_token(nlohmann::ordered_json& energy, std::uint64_t tokens);

}  // namespace dfsim
