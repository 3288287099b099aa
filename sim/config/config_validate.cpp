// Walks a merged config against the parameter registry, then checks cross-parameter rules.
#include "sim/config/config_validate.h"

#include <algorithm>
#include <set>

#include "sim/common/error.h"
#include "sim/config/params.h"

namespace dfsim {

namespace {

// Next path segments below a dotted group ("" = top level), from the registry.
std::vector<std::string> children_of(const std::string& group) {
  std::set<std::string> out;
  std::string prefix = group.empty() ? "" : group + ".";
  for (const auto& p : chip_params()) {
    if (p.path.compare(0, prefix.size(), prefix) != 0) continue;
    std::string rest = p.path.substr(prefix.size());
    out.insert(rest.substr(0, rest.find('.')));
  }
  if (group.empty()) out.insert("description");
  return {out.begin(), out.end()};
}

bool is_group(const std::string& dotted) {
  std::string prefix = dotted + ".";
  return std::any_of(chip_params().begin(), chip_params().end(),
                     [&](const Param& p) { return p.path.compare(0, prefix.size(), prefix) == 0; });
}

// Validation context: where values came from.
struct Walker {
  const Origins& origins;
  const std::string& fallback;

  std::string file(const std::string& ptr) const {
    std::string f = origins.file_of(ptr);
    return f.empty() ? fallback : f;
  }

  void map_entries(const Param& p, const Json& node, const std::string& ptr) const {
    JsonView(node, file(ptr), ptr).expect_object();
    for (const auto& [k, v] : node.items()) {
      std::string eptr = json_path_join(ptr, k);
      if (std::find(p.choices.begin(), p.choices.end(), k) == p.choices.end()) {
        std::string h = closest_match(k, p.choices);
        throw InputError(file(eptr), eptr, "unknown key" + (h.empty() ? "" : " (did you mean \"" + h + "\"?)"));
      }
      p.check_map_value(JsonView(v, file(eptr), eptr));
    }
  }

  void group(const Json& node, const std::string& dotted, const std::string& ptr) const {
    for (const auto& [k, v] : node.items()) {
      std::string child = dotted.empty() ? k : dotted + "." + k;
      std::string cptr = json_path_join(ptr, k);
      JsonView view(v, file(cptr), cptr);
      if (dotted.empty() && k == "description") {
        view.as_string();
      } else if (const Param* p = find_param(child)) {
        if (p->is_map()) map_entries(*p, v, cptr);
        else p->check(view);
      } else if (is_group(child)) {
        view.expect_object();
        group(v, child, cptr);
      } else {
        throw InputError(file(cptr), cptr, "unknown key" + unknown_key_hint(dotted, k));
      }
    }
  }
};

}  // namespace

std::string unknown_key_hint(const std::string& group, const std::string& key) {
  // A key that belongs elsewhere ("cores" at the top level) gets its full path.
  for (const auto& p : chip_params()) {
    auto dot = p.path.rfind('.');
    std::string parent = dot == std::string::npos ? "" : p.path.substr(0, dot);
    if (parent != group && p.path.substr(dot == std::string::npos ? 0 : dot + 1) == key)
      return " (did you mean \"" + p.path + "\"?)";
  }
  std::string h = closest_match(key, children_of(group));
  return h.empty() ? "" : " (did you mean \"" + h + "\"?)";
}

void validate_config_tree(const Json& merged, const Origins& origins, const std::string& fallback_file) {
  Walker w{origins, fallback_file};
  JsonView(merged, fallback_file, "").expect_object();
  w.group(merged, "", "");
}

void check_config_relations(const ChipConfig& c, const Origins& origins, const std::string& fallback_file) {
  // Blames whichever of `ptr` and `other` was set last (a child over its parent, --set over
  // files; `ptr` on a tie), with the matching detail. Overrides are named by their dotted key.
  auto fail = [&](std::string ptr, const std::string& detail, const std::string& other = "",
                  const std::string& other_detail = "") {
    std::string f = origins.set_by(ptr), d = detail;
    if (!other.empty() && origins.rank(origins.set_by(other)) > origins.rank(f)) {
      ptr = other;
      f = origins.set_by(other);
      d = other_detail;
    }
    if (f == "--set") {
      std::string dotted = ptr.substr(1);
      std::replace(dotted.begin(), dotted.end(), '/', '.');
      throw InputError(f, dotted, d);
    }
    throw InputError(f.empty() ? fallback_file : f, ptr, d);
  };
  auto num = [](auto v) { return std::to_string(v); };
  const auto& lx = c.core.lx;
  if (lx.usable_bytes > lx.bytes)
    fail("/core/lx/usable_bytes", "expected at most core.lx.bytes (" + num(lx.bytes) + "), got " + num(lx.usable_bytes),
         "/core/lx/bytes",
         "expected at least core.lx.usable_bytes (" + num(lx.usable_bytes) + "), got " + num(lx.bytes));
  if (c.memory.bus_bits % 8 != 0) fail("/memory/bus_bits", "expected a multiple of 8, got " + num(c.memory.bus_bits));
  const auto stick = static_cast<std::uint64_t>(c.core.dma.stick_bytes);
  if (c.memory.interleave_bytes % stick != 0)
    fail("/memory/interleave_bytes",
         "expected a multiple of core.dma.stick_bytes (" + num(stick) + "), got " + num(c.memory.interleave_bytes),
         "/core/dma/stick_bytes",
         "expected a divisor of memory.interleave_bytes (" + num(c.memory.interleave_bytes) + "), got " + num(stick));
  const auto& l5 = c.memory.lpddr5;
  if (l5.write_low >= l5.write_high)
    fail("/memory/lpddr5/write_low",
         "expected less than memory.lpddr5.write_high (" + num(l5.write_high) + "), got " + num(l5.write_low),
         "/memory/lpddr5/write_high",
         "expected more than memory.lpddr5.write_low (" + num(l5.write_low) + "), got " + num(l5.write_high));
  if (l5.write_high > l5.queue_depth)
    fail("/memory/lpddr5/write_high",
         "expected at most memory.lpddr5.queue_depth (" + num(l5.queue_depth) + "), got " + num(l5.write_high),
         "/memory/lpddr5/queue_depth",
         "expected at least memory.lpddr5.write_high (" + num(l5.write_high) + "), got " + num(l5.queue_depth));
  const auto& stops = c.memory.ring_stops;
  if (!stops.empty() && stops.size() != static_cast<std::size_t>(c.memory.channels))
    fail("/memory/ring_stops",
         "expected one ring stop per channel (" + num(c.memory.channels) + "), got " + num(stops.size()),
         "/memory/channels",
         "expected one channel per entry of memory.ring_stops (" + num(stops.size()) + "), got " +
             num(c.memory.channels));
  for (std::size_t i = 0; i < stops.size(); ++i)
    if (stops[i] >= c.cores)
      fail(json_path_join("/memory/ring_stops", i),
           "expected a ring stop < card.cores (" + num(c.cores) + "), got " + num(stops[i]), "/card/cores",
           "expected more than the largest memory.ring_stops entry (" + num(stops[i]) + "), got " + num(c.cores));
}

}  // namespace dfsim
