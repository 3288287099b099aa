#include "sim/stats/placement_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace dfsim {

namespace {

double round6(double v) { return std::round(v * 1e6) / 1e6; }

constexpr std::size_t kHoldersShown = 4;  // holders named on a workload's terminal line

}  // namespace

nlohmann::ordered_json placement_json(const Placement& p, const std::vector<WorkloadActivity>& activity,
                                      const std::vector<double>& solo_ns) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (std::size_t w = 0; w < p.workloads.size(); ++w) {
    const PlacedWorkload& pw = p.workloads[w];
    const WorkloadActivity& a = activity[w];
    nlohmann::ordered_json cores = nullptr;
    if (pw.core_count > 0) cores = {{"first", pw.first_core}, {"count", pw.core_count}};
    out.push_back({{"name", pw.name},
                   {"workload", pw.file},
                   {"cards", pw.cards},
                   {"cores", cores},
                   {"after", pw.after >= 0 ? p.workloads[static_cast<std::size_t>(pw.after)].name : ""},
                   {"not_before_ns", pw.start_ns},
                   {"start_ns", round6(ticks_to_ns(a.start))},
                   {"end_ns", round6(ticks_to_ns(a.end))},
                   {"duration_ns", round6(ticks_to_ns(a.end - a.start))},
                   {"instances_fired", a.instances}});
    // Appended without a lookup (ordered_json's operator[] searches the keys: quadratic in the
    // workloads); the names are unique and a.held_by has each workload once.
    nlohmann::ordered_json held_by = nlohmann::ordered_json::object();
    auto& entries = static_cast<std::vector<std::pair<const std::string, nlohmann::ordered_json>>&>(
        held_by.get_ref<nlohmann::ordered_json::object_t&>());
    entries.reserve(a.held_by.size());
    for (const auto& [o, t] : a.held_by)
      if (t > 0) entries.emplace_back(p.workloads[static_cast<std::size_t>(o)].name, round6(ticks_to_ns(t)));
    out.back()["held_by_others_ns"] = round6(ticks_to_ns(a.held_by_others));
    out.back()["held_by"] = held_by;
    if (!solo_ns.empty()) {
      const double duration = out.back()["duration_ns"].get<double>(), solo = solo_ns[w];
      out.back()["solo_ns"] = solo;
      out.back()["slowdown"] = solo > 0 ? round6(duration / solo) : 1.0;
    }
  }
  return out;
}

std::string placement_text(const nlohmann::ordered_json& s) {
  if (!s.contains("placement")) return "";
  std::string out;
  for (const auto& w : s["placement"]) {
    std::string cards;
    for (const auto& c : w["cards"]) cards += fmt::format("{}{}", cards.empty() ? "" : ",", c.get<int>());
    if (w["cores"].is_object())
      cards += fmt::format(" cores {}..{}", w["cores"]["first"].get<int>(),
                           w["cores"]["first"].get<int>() + w["cores"]["count"].get<int>() - 1);
    std::string why;
    if (!w["after"].get<std::string>().empty()) why = "after " + w["after"].get<std::string>();
    if (w["not_before_ns"].get<double>() > 0)
      why += fmt::format("{}not before {:.3f} us", why.empty() ? "" : ", ", w["not_before_ns"].get<double>() / 1000);
    std::string alone;  // --solo
    if (w.contains("slowdown")) {
      const double pct = (w["slowdown"].get<double>() - 1) * 100;
      alone = fmt::format("; {} {:.1f} % against alone ({:.3f} us)", pct < 0 ? "gains" : "loses", std::abs(pct),
                          w["solo_ns"].get<double>() / 1000);
    }
    if (w.contains("held_by_others_ns") && w["held_by_others_ns"].get<double>() > 0) {
      // The longest few (summary.json has them all).
      std::vector<std::pair<double, std::string>> holders;
      for (const auto& [name, ns] : w["held_by"].items()) holders.emplace_back(ns.get<double>(), name);
      std::stable_sort(holders.begin(), holders.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
      std::string by;
      for (std::size_t i = 0; i < holders.size() && i < kHoldersShown; ++i)
        by += fmt::format("{}{} {:.3f}", by.empty() ? "" : ", ", holders[i].second, holders[i].first / 1000);
      if (holders.size() > kHoldersShown) by += fmt::format(" and {} more", holders.size() - kHoldersShown);
      alone += fmt::format("; waited {:.3f} us on units others held ({})", w["held_by_others_ns"].get<double>() / 1000, by);
    }
    out += fmt::format("  workload  {:<16} cards {:<8} {:>12.3f} us from {:.3f} to {:.3f} us{}{}\n", w["name"].get<std::string>(),
                       cards, w["duration_ns"].get<double>() / 1000, w["start_ns"].get<double>() / 1000,
                       w["end_ns"].get<double>() / 1000, why.empty() ? "" : " (" + why + ")", alone);
  }
  return out;
}

}  // namespace dfsim
