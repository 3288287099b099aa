#pragma once
// The requests a serving run replays: read from a trace file (JSONL or CSV) or generated at a
// rate (Poisson or gamma arrivals, token lengths from a distribution), seeded and deterministic.
#include <cstdint>
#include <string>
#include <vector>

namespace dfsim::serve {

using Ns = std::int64_t;  // serving time, integer nanoseconds (exact sums of step times)

struct Request {
  std::int64_t id = 0;
  Ns arrival = 0;
  int prompt_tokens = 0;
  int output_tokens = 0;
};

// A token-length distribution: "200" (fixed), "uniform:100,300", "normal:200,50" (rounded,
// clamped to [1, 1e6]) or "hist:FILE" (CSV lines "tokens,weight"). `option` names the flag in
// errors.
struct LengthDist {
  enum class Kind { fixed, uniform, normal, histogram } kind = Kind::fixed;
  double a = 0, b = 0;
  std::vector<int> values;      // histogram
  std::vector<double> cumulative;
};
LengthDist parse_length_dist(const std::string& text, const std::string& option);

struct GeneratorSpec {
  double rate = 1;               // requests per second
  std::string arrival = "poisson";  // poisson | gamma
  double burstiness = 1;         // gamma shape (1 = Poisson), as `vllm bench serve --burstiness`
  std::int64_t num_requests = 100;
  LengthDist prompt, output;
  std::uint64_t seed = 0;
};
std::vector<Request> generate_requests(const GeneratorSpec& spec);

// A trace file: .jsonl (one object a line: arrival_ms, prompt_tokens, output_tokens, optional
// id) or .csv (header naming those columns). Sorted by arrival (stable). InputError naming the
// file, the line and the field on anything malformed.
std::vector<Request> read_request_file(const std::string& file);

constexpr std::int64_t kMaxRequests = 10'000'000;
constexpr int kMaxTokens = 1'000'000;

}  // namespace dfsim::serve
