#pragma once
// Parses a subcommand's options with Boost.program_options; --help prints them with an example.
#include <boost/program_options.hpp>
#include <string>
#include <vector>

namespace dfsim {

namespace po = boost::program_options;

// Returns false if --help was given (help already printed). Throws UsageError on misuse.
bool parse_options(const std::string& cmd, const std::string& synopsis, const std::string& example,
                   po::options_description& opts, po::positional_options_description* pos,
                   const std::vector<std::string>& args, po::variables_map& vm);

// A limit option (--timeout, --max-events, ...) given as 0, a negative number or NaN is a
// usage error: leaving the option out is how to say "no limit".
// With `max` > 0, a limit above it (or infinite) is refused too, `max_text` saying it with its
// unit ("1e9 s, 31 years"): `--timeout 1e300` overflowed the timer and silently meant no limit.
void check_limit_option(const po::variables_map& vm, const std::string& name, double value,
                        double max = 0, const std::string& max_text = "");

}  // namespace dfsim
