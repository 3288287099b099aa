// Walks a merged config against the parameter registry, then checks cross-parameter rules.
#include "sim/config/config_validate.h"

#include <algorithm>
#include <cstdint>
#include <set>
#include <vector>

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

namespace {

// A parameter a broken relation may blame (JSON pointer), with what it should have been.
struct Blame {
  std::string ptr, detail;
};

// Throws for whichever of `candidates` was set last (a child over its parent, --set over
// files; the first on a tie). Overrides are named by their dotted key.
[[noreturn]] void fail_relation(const std::vector<Blame>& candidates, const Origins& origins,
                                const std::string& fallback_file) {
  const Blame* blamed = &candidates.front();
  for (const Blame& b : candidates)
    if (origins.rank(origins.set_by(b.ptr)) > origins.rank(origins.set_by(blamed->ptr))) blamed = &b;
  std::string f = origins.set_by(blamed->ptr);
  if (f == "--set") {
    std::string dotted = blamed->ptr.substr(1);
    std::replace(dotted.begin(), dotted.end(), '/', '.');
    throw InputError(f, dotted, blamed->detail);
  }
  throw InputError(f.empty() ? fallback_file : f, blamed->ptr, blamed->detail);
}

// The address map of the "lpddr5" and "bandwidth" models (Lpddr5AddressMap::init): an
// interleave block is whole column accesses (burst_length x bus_bits / 8 bytes) and a row is
// whole blocks. Checked only when one of them is chosen: "simple" does not read these.
void check_lpddr5_geometry(const ChipConfig& c, const Origins& origins, const std::string& fallback_file) {
  if (c.memory.impl != "lpddr5" && c.memory.impl != "bandwidth") return;
  auto num = [](auto v) { return std::to_string(v); };
  const auto& l5 = c.memory.lpddr5;
  const std::uint64_t column = static_cast<std::uint64_t>(l5.burst_length) * static_cast<std::uint64_t>(c.memory.bus_bits) / 8;
  const std::uint64_t block = l5.interleave_bytes;
  const auto row = static_cast<std::uint64_t>(l5.row_bytes);
  if (block % column != 0) {
    const std::string access = "a column access (memory.lpddr5.burst_length " + num(l5.burst_length) +
                               " x memory.bus_bits " + num(c.memory.bus_bits) + " / 8 = " + num(column) + " B)";
    const std::string divides = " that divides memory.lpddr5.interleave_bytes (" + num(block) + "), got ";
    fail_relation({{"/memory/lpddr5/interleave_bytes", "expected a multiple of " + access + ", got " + num(block)},
                   {"/memory/lpddr5/burst_length", "expected " + access + divides + num(l5.burst_length)},
                   {"/memory/bus_bits", "expected " + access + divides + num(c.memory.bus_bits)}},
                  origins, fallback_file);
  }
  if (row % block != 0)
    fail_relation({{"/memory/lpddr5/row_bytes",
                    "expected a multiple of memory.lpddr5.interleave_bytes (" + num(block) + "), got " + num(row)},
                   {"/memory/lpddr5/interleave_bytes",
                    "expected a divisor of memory.lpddr5.row_bytes (" + num(row) + "), got " + num(block)}},
                  origins, fallback_file);
}

}  // namespace

void check_config_relations(const ChipConfig& c, const Origins& origins, const std::string& fallback_file) {
  // Blames whichever of `ptr` and `other` was set last, with the matching detail.
  auto fail = [&](const std::string& ptr, const std::string& detail, const std::string& other = "",
                  const std::string& other_detail = "") {
    if (other.empty()) fail_relation({{ptr, detail}}, origins, fallback_file);
    fail_relation({{ptr, detail}, {other, other_detail}}, origins, fallback_file);
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
  check_lpddr5_geometry(c, origins, fallback_file);
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
  if (l5.min_batch > l5.queue_depth)  // a batch of one direction is taken from one queue
    fail("/memory/lpddr5/min_batch",
         "expected at most memory.lpddr5.queue_depth (" + num(l5.queue_depth) + "), got " + num(l5.min_batch),
         "/memory/lpddr5/queue_depth",
         "expected at least memory.lpddr5.min_batch (" + num(l5.min_batch) + "), got " + num(l5.queue_depth));
  const bool timed = c.memory.impl == "lpddr5" || c.memory.impl == "bandwidth";  // the models using the timings
  if (timed && l5.trefi > 0 && l5.trfc >= l5.trefi)  // a refresh would not end before the next is due
    fail("/memory/lpddr5/trfc",
         "expected less than memory.lpddr5.trefi (" + num(l5.trefi) + "), got " + num(l5.trfc),
         "/memory/lpddr5/trefi",
         "expected more than memory.lpddr5.trfc (" + num(l5.trfc) + ") or 0 (no refresh), got " + num(l5.trefi));
  if (timed && l5.tras < l5.trcd)  // a row is open at least until its first column command
    fail("/memory/lpddr5/tras",
         "expected at least memory.lpddr5.trcd (" + num(l5.trcd) + "), got " + num(l5.tras),
         "/memory/lpddr5/trcd",
         "expected at most memory.lpddr5.tras (" + num(l5.tras) + "), got " + num(l5.trcd));
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
