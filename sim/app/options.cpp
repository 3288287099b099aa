#include "sim/app/options.h"

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "sim/app/cli.h"
#include "sim/common/json_io.h"

namespace dfsim {

namespace {

// `-o ''` or `-c ""` (an unset shell variable) is a mistake, not "the default": the run
// would silently use configs/spyre.json or out/..., or write somewhere unexpected.
void reject_empty_values(const po::options_description& opts, const po::variables_map& vm,
                         const po::positional_options_description* pos) {
  for (const auto& [name, v] : vm) {
    if (v.defaulted() || v.empty()) continue;
    const po::option_description* d = opts.find_nothrow(name, false);
    if (!d || d->semantic()->max_tokens() == 0) continue;  // a switch (--quiet) holds no value
    bool empty = false;
    if (const auto* s = boost::any_cast<std::string>(&v.value())) empty = s->empty();
    if (const auto* l = boost::any_cast<std::vector<std::string>>(&v.value()))
      for (const auto& s : *l) empty = empty || s.empty();
    if (!empty) continue;
    bool positional = false;
    if (pos)
      for (unsigned i = 0; i < std::min(pos->max_total_count(), 8u); ++i) positional = positional || pos->name_for_position(i) == name;
    throw UsageError(positional ? "an argument is an empty string" : "--" + name + ": expected a value, got an empty string");
  }
}

// `-o=out` gives a short option the value "=out" (Boost, as getopt): `dfsim run -o=out` wrote
// into a directory named "=out" and `-j=2` said "the argument ('=2') is invalid". Refused
// before parsing, with the two forms that work.
void reject_short_option_equals(const po::options_description& opts, const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--") return;
    if (a.size() < 3 || a[0] != '-' || a[1] == '-' || a[2] != '=') continue;
    for (const auto& d : opts.options())
      if (d->semantic()->max_tokens() > 0 &&
          d->canonical_display_name(po::command_line_style::allow_dash_for_short) == a.substr(0, 2))
        throw UsageError(a + ": a short option takes its value after a space: " + a.substr(0, 2) + " " + a.substr(3) +
                         " or --" + d->long_name() + "=" + a.substr(3));
  }
}

// " (did you mean --workload?)" for an option this command does not have: a typo of one it has,
// or the spelling another subcommand uses (serve's --no-trace is run's --trace off); else "".
std::string unknown_option_hint(const po::options_description& opts, const std::string& given) {
  const std::size_t start = given.find_first_not_of('-');
  if (start == std::string::npos || start == 1) return "";  // "-x": a short option, too short to guess from
  const std::string name = given.substr(start, given.find('=') == std::string::npos ? std::string::npos
                                                                                   : given.find('=') - start);
  std::vector<std::string> names;
  for (const auto& o : opts.options())
    if (!o->long_name().empty()) names.push_back(o->long_name());
  auto has = [&](const char* n) { return std::find(names.begin(), names.end(), n) != names.end(); };
  std::string hint;
  if (name == "no-trace" && has("trace")) hint = "--trace off";
  else if (name == "trace" && has("no-trace")) hint = "--no-trace";
  else if (std::string m = closest_match(name, names); !m.empty()) hint = "--" + m;
  return hint.empty() ? "" : " (did you mean " + hint + "?)";
}

}  // namespace

bool parse_options(const std::string& cmd, const std::string& synopsis, const std::string& example,
                   po::options_description& opts, po::positional_options_description* pos,
                   const std::vector<std::string>& args, po::variables_map& vm) {
  opts.add_options()("help,h", "print this help");
  try {
    reject_short_option_equals(opts, args);
    auto parser = po::command_line_parser(args).options(opts);
    // A command without positional arguments refuses a stray one (it was silently ignored:
    // `dfsim info configs/small.json` reported on the default config).
    po::positional_options_description none;
    parser.positional(pos ? *pos : none);
    po::store(parser.run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: dfsim " << cmd << " " << synopsis << "\n\n" << opts << "\nexample:\n  " << example << "\n";
      return false;
    }
    po::notify(vm);
    reject_empty_values(opts, vm, pos);
  } catch (const po::required_option& e) {
    // A positional argument has an internal option name ("--files"): say what to type instead.
    std::string name = e.get_option_name();
    if (name.rfind("--", 0) == 0) name = name.substr(2);
    if (pos && pos->max_total_count() > 0 && pos->name_for_position(0) == name)
      throw UsageError("missing argument: usage: dfsim " + cmd + " " + synopsis);
    throw UsageError(e.what());
  } catch (const po::too_many_positional_options_error&) {
    throw UsageError("unexpected argument: usage: dfsim " + cmd + " " + synopsis);
  } catch (const po::unknown_option& e) {
    throw UsageError(std::string(e.what()) + unknown_option_hint(opts, e.get_option_name()));
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return true;
}

void check_limit_option(const po::variables_map& vm, const std::string& name, double value, double max,
                        const std::string& max_text) {
  if (!vm.count(name) || vm[name].defaulted()) return;
  if (!(value > 0)) throw UsageError("--" + name + " must be > 0 (leave it out for no limit)");
  if (max > 0 && !(value <= max))
    throw UsageError("--" + name + " must be at most " + max_text + " (leave it out for no limit)");
}

}  // namespace dfsim
