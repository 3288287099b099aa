// Reading a sweep file: every check names the file and the JSON path; axes, "set" keys and
// metrics keep the order they are written in (it is the order of the results columns).
#include <algorithm>
#include <cctype>
#include <limits>
#include <set>

#include "sim/common/error.h"
#include "sim/common/names.h"
#include "sim/common/text_file.h"
#include "sim/config/params.h"
#include "sim/graph/size_limits.h"
#include "sim/sweep/sweep_spec.h"

namespace dfsim {

namespace {

using Ordered = nlohmann::ordered_json;

// The member names of the object at `pointer` of the file, in file order.
std::vector<std::string> keys_in_order(const Ordered& doc, const std::string& pointer) {
  std::vector<std::string> keys;
  for (const auto& [k, _] : doc.at(Ordered::json_pointer(pointer)).items()) keys.push_back(k);
  return keys;
}

void only_names(const JsonView& v, const std::vector<std::string>& allowed, const std::string& what) {
  for (const auto& [k, _] : v.json().items()) {
    if (std::find(allowed.begin(), allowed.end(), k) != allowed.end()) continue;
    std::string hint = closest_match(k, allowed);
    std::string list;
    for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
    v.fail_at(k, "unknown " + what + (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)") + "; expected " + list);
  }
}

// Checks one value of `option` or of the input ("set" values are checked per key by the caller).
Json check_option(const BaseKind& kind, const std::string& option, const JsonView& v) {
  if (option != kind.input) return kind.option(option)->check(v);
  std::string path = v.as_string();
  if (path.empty()) v.fail("expected a file path");
  return path;
}

// A "set" key must name a config parameter or one entry of a map parameter: an unknown key is
// a mistake in the sweep file (exit 2), while a value the config refuses is a failed point.
void check_set_key(const JsonView& set, const std::string& key) {
  if (find_param(key)) return;
  auto dot = key.rfind('.');
  if (dot != std::string::npos) {
    const Param* map = find_param(key.substr(0, dot));
    if (map && map->is_map() &&
        std::find(map->choices.begin(), map->choices.end(), key.substr(dot + 1)) != map->choices.end())
      return;
  }
  std::string hint = closest_match(key, param_paths_with_map_keys());
  set.fail_at(key, "unknown config parameter" + (hint.empty() ? "" : " (did you mean \"" + hint + "\"?)") +
                       "; `dfsim info --params` lists them");
}

class Reader {
 public:
  Reader(const std::string& file, const Json& j, const Ordered& doc, std::size_t max_points)
      : root_(j, file), doc_(doc), max_points_(max_points) {
    spec_.file = file;
  }

  SweepSpec read() {
    root_.expect_format("dfsim.sweep");
    root_.only_keys({"$schema", "format", "version", "name", "description", "base", "axes", "combine", "points", "metrics"});
    if (root_.at("version").as_int() != 1) root_.at("version").fail("expected 1 (this dfsim reads dfsim.sweep version 1)");
    read_name();
    read_base();
    spec_.combine = root_.get_string("combine", "grid");
    if (spec_.combine == "points") {
      if (root_.has("axes")) root_.at("axes").fail("not used with \"combine\": \"points\" (each point names its own values)");
      read_points();
    } else if (spec_.combine == "grid" || spec_.combine == "zip") {
      if (root_.has("points")) root_.at("points").fail("used only with \"combine\": \"points\"");
      read_axes();
    } else {
      root_.at("combine").fail("expected \"grid\", \"zip\" or \"points\", got \"" + spec_.combine + "\"");
    }
    read_metrics();
    for (std::size_t i = 0; i < spec_.rows.size(); ++i) spec_.numbers.push_back(i);
    return std::move(spec_);
  }

 private:
  void read_name() {
    JsonView v = root_.at("name");
    spec_.name = v.as_string();
    bool ok = !spec_.name.empty() && spec_.name[0] != '.';
    for (char c : spec_.name) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.');
    if (!ok) v.fail("expected a name of letters, digits, '_', '-' and '.' (it names the output directory)");
  }

  void read_base() {
    JsonView base = root_.at("base");
    base.expect_object();
    std::vector<std::string> inputs;
    for (const auto& k : base_kinds()) inputs.push_back(k.input);
    std::string inputs_text;
    for (const auto& i : inputs) inputs_text += (inputs_text.empty() ? "\"" : ", \"") + i + "\"";
    for (const auto& p : planned_base_inputs())
      if (base.has(p))
        base.fail_at(p, "sweeps over `dfsim " + p + "` are not available in this version of dfsim (a base names one of " +
                            inputs_text + ")");
    for (const auto& k : base_kinds()) {
      if (!base.has(k.input)) continue;
      if (spec_.kind) base.fail_at(k.input, "a base names one input; it already names \"" + spec_.kind->input + "\"");
      spec_.kind = &k;
    }
    if (!spec_.kind) base.fail("expected the input every point runs: one of " + inputs_text);
    std::vector<std::string> allowed{"config", spec_.kind->input};
    for (const auto& o : spec_.kind->option_names())
      if (o != spec_.kind->input && !spec_.kind->is_input_option(o)) allowed.push_back(o);
    for (const auto& o : spec_.kind->input_options)
      if (base.has(o)) base.fail_at(o, "a " + spec_.kind->input + " option: it belongs in \"" + spec_.kind->input + "\" (or on an axis)");
    only_names(base, allowed, "base key");
    spec_.config = base.get_string("config", "");
    spec_.base_options = Json::object();
    if (spec_.kind->input_options.empty()) {
      spec_.input = check_option(*spec_.kind, spec_.kind->input, base.at(spec_.kind->input));
    } else {  // "gen": {"model": ..., "batch": 1}: the input's options, each also an axis
      JsonView in = base.at(spec_.kind->input);
      in.expect_object();
      only_names(in, spec_.kind->input_options, spec_.kind->input + " option");
      for (const auto& [k, _] : in.json().items()) spec_.base_options[k] = check_option(*spec_.kind, k, in.at(k));
    }
    for (const auto& [k, _] : base.json().items()) {
      if (k == "config" || k == spec_.kind->input) continue;
      if (k == "set") {
        JsonView set = base.at("set");
        set.expect_object();
        for (const auto& [key, __] : set.json().items()) {
          check_set_key(set, key);
          spec_.base_options["set"][key] = check_set_value(set.at(key));
        }
      } else {
        spec_.base_options[k] = check_option(*spec_.kind, k, base.at(k));
      }
    }
  }

  // A column for `option` (or the "set" key `set_key`); names must not repeat.
  std::size_t column(const std::string& option, const std::string& set_key, const JsonView& where) {
    std::string name = option == "set" ? set_key : option;
    for (std::size_t i = 0; i < spec_.columns.size(); ++i)
      if (spec_.columns[i].name == name) {
        if (spec_.columns[i].option == option) return i;
        where.fail("column \"" + name + "\" would appear twice (a \"set\" key named like an option)");
      }
    spec_.columns.push_back({name, option, set_key});
    return spec_.columns.size() - 1;
  }

  // Axis lists in file order: (column, its checked values).
  void read_axes() {
    JsonView axes = root_.at("axes");
    axes.expect_object();
    if (axes.size() == 0) axes.fail("expected at least one axis");
    only_names(axes, spec_.kind->option_names(), "axis");
    std::vector<std::vector<Json>> lists;
    std::vector<std::string> paths;
    auto add_list = [&](const JsonView& list, const std::string& option, const std::string& set_key) {
      list.expect_array();
      if (list.size() == 0) list.fail("expected at least one value");
      std::size_t c = column(option, set_key, list);
      lists.resize(spec_.columns.size());
      paths.resize(spec_.columns.size());
      for (std::size_t i = 0; i < list.size(); ++i)
        lists[c].push_back(option == "set" ? check_set_value(list.at(i)) : check_option(*spec_.kind, option, list.at(i)));
      paths[c] = list.path();
    };
    for (const auto& k : keys_in_order(doc_, "/axes")) {
      if (k != "set") {
        add_list(axes.at(k), k, "");
        continue;
      }
      JsonView set = axes.at("set");
      set.expect_object();
      if (set.size() == 0) set.fail("expected at least one config key");
      for (const auto& key : keys_in_order(doc_, "/axes/set")) {
        check_set_key(set, key);
        add_list(set.at(key), "set", key);
      }
    }
    if (spec_.combine == "zip") {
      for (std::size_t c = 1; c < lists.size(); ++c)
        if (lists[c].size() != lists[0].size())
          JsonView(root_.json(), spec_.file, paths[c])
              .fail("\"zip\" pairs the i-th values of every axis: expected " + std::to_string(lists[0].size()) +
                    " values like " + paths[0] + ", got " + std::to_string(lists[c].size()));
      if (lists[0].size() > max_points_) too_many(lists[0].size());
      for (std::size_t i = 0; i < lists[0].size(); ++i) {
        spec_.rows.emplace_back();
        for (const auto& l : lists) spec_.rows.back().push_back(l[i]);
      }
      return;
    }
    std::uint64_t n = 1;  // the product, saturating (a dozen axes of 1000 values overflow 64 bits)
    for (const auto& l : lists) n = mul_sat(n, l.size());
    if (n > max_points_) too_many(n);
    // The first axis varies slowest, like nested loops written in file order.
    for (std::size_t p = 0; p < n; ++p) {
      std::vector<std::optional<Json>> row(lists.size());
      std::size_t rest = p;
      for (std::size_t c = lists.size(); c-- > 0;) {
        row[c] = lists[c][rest % lists[c].size()];
        rest /= lists[c].size();
      }
      spec_.rows.push_back(std::move(row));
    }
  }

  [[noreturn]] void too_many(std::uint64_t n) {
    root_.at("axes").fail("the sweep has " +
                          (n == std::numeric_limits<std::uint64_t>::max() ? std::string("more than 2^64") : std::to_string(n)) +
                          " points, more than the limit of " + std::to_string(max_points_) +
                          " (each is a simulation; split it into several sweep files)");
  }

  void read_points() {
    JsonView points = root_.at("points");
    points.expect_array();
    if (points.size() == 0) points.fail("expected at least one point");
    if (points.size() > max_points_) points.fail("more than the limit of " + std::to_string(max_points_) + " points");
    std::vector<std::vector<std::pair<std::size_t, Json>>> cells(points.size());
    for (std::size_t i = 0; i < points.size(); ++i) {
      JsonView p = points.at(i);
      p.expect_object();
      only_names(p, spec_.kind->option_names(), "option");
      std::string ptr = "/points/" + std::to_string(i);
      for (const auto& k : keys_in_order(doc_, ptr)) {
        if (k != "set") {
          cells[i].emplace_back(column(k, "", p.at(k)), check_option(*spec_.kind, k, p.at(k)));
          continue;
        }
        JsonView set = p.at("set");
        set.expect_object();
        for (const auto& key : keys_in_order(doc_, ptr + "/set")) {
          check_set_key(set, key);
          cells[i].emplace_back(column("set", key, set.at(key)), check_set_value(set.at(key)));
        }
      }
    }
    for (const auto& c : cells) {
      spec_.rows.emplace_back(spec_.columns.size());
      for (const auto& [col, v] : c) spec_.rows.back()[col] = v;
    }
  }

  void read_metrics() {
    JsonView metrics = root_.at("metrics");
    metrics.expect_object();
    if (metrics.size() == 0) metrics.fail("expected at least one metric (column name: path into " + spec_.kind->metric_file + ")");
    std::set<std::string> taken{"point", "status", "message", "exit_code", "id", "host_s"};  // results.jsonl members
    for (const auto& c : spec_.columns) taken.insert(c.name);
    for (const auto& name : keys_in_order(doc_, "/metrics")) {
      JsonView v = metrics.at(name);
      std::string path = v.as_string();
      if (path.empty()) v.fail("expected a path into " + spec_.kind->metric_file + " like \"offchip.bytes_read\"");
      if (std::string why = name_problem(name); !why.empty()) v.fail("a column name: " + why);
      if (!taken.insert(name).second) v.fail("the column name \"" + name + "\" is already an axis or status column");
      spec_.metrics.emplace_back(name, path);
    }
  }

  JsonView root_;
  const Ordered& doc_;
  std::size_t max_points_;
  SweepSpec spec_;
};

}  // namespace

SweepSpec read_sweep_file(const std::string& file, std::size_t max_points) {
  // Read once (a pipe, `<(...)`, cannot be read again): every syntax error is reported by the
  // first parse, with line and column; the second keeps the order the file gives its keys.
  const std::string text = read_input_file(file, "a JSON file", true);
  Json j = parse_json_text(text, file);
  Ordered doc = Ordered::parse(text, nullptr, false, true);
  if (doc.is_discarded()) throw InputError(file, "", "cannot be read twice the same way");
  SweepSpec spec = Reader(file, j, doc, max_points).read();
  spec.text = text;
  return spec;
}

Json point_options(const SweepSpec& spec, const std::vector<std::optional<Json>>& row) {
  Json opts = spec.base_options;
  for (std::size_t c = 0; c < row.size(); ++c) {
    if (!row[c]) continue;
    const SweepColumn& col = spec.columns[c];
    if (col.option == "set")
      opts["set"][col.set_key] = *row[c];
    else
      opts[col.option] = *row[c];
  }
  return opts;
}

}  // namespace dfsim
