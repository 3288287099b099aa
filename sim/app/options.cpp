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
  } catch (const po::error& e) {
    throw UsageError(e.what());
  }
  return true;
}

}  // namespace dfsim
