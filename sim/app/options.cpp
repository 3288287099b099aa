#include "sim/app/options.h"

#include <iostream>

#include "sim/app/cli.h"

namespace dfsim {

bool parse_options(const std::string& cmd, const std::string& synopsis, const std::string& example,
                   po::options_description& opts, po::positional_options_description* pos,
                   const std::vector<std::string>& args, po::variables_map& vm) {
  opts.add_options()("help,h", "print this help");
  try {
    auto parser = po::command_line_parser(args).options(opts);
    if (pos) parser.positional(*pos);
    po::store(parser.run(), vm);
    if (vm.count("help")) {
      std::cout << "usage: dfsim " << cmd << " " << synopsis << "\n\n" << opts << "\nexample:\n  " << example << "\n";
      return false;
    }
    po::notify(vm);
  } catch (const po::required_option& e) {
    // A positional argument has an internal option name ("--files"): say what to type instead.
    std::string name = e.get_option_name();
    if (name.rfind("--", 0) == 0) name = name.substr(2);
    if (pos && pos->max_total_count() > 0 && pos->name_for_position(0) == name)
      throw UsageError("missing argument: usage: dfsim " + cmd + " " + synopsis);
    throw UsageError(e.what());
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return true;
}

void check_limit_option(const po::variables_map& vm, const std::string& name, double value) {
  if (vm.count(name) && !vm[name].defaulted() && !(value > 0))
    throw UsageError("--" + name + " must be > 0 (leave it out for no limit)");
}

}  // namespace dfsim
