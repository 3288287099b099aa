#include "sim/serve/requests.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "sim/app/cli.h"
#include "sim/common/decimal.h"
#include "sim/common/error.h"
#include "sim/common/json_io.h"
#include "sim/common/text_file.h"
#include "sim/serve/rng.h"

namespace dfsim::serve {

namespace {

double parse_number(const std::string& s, const std::string& option, const std::string& what) {
  double v = 0;
  // Plain decimals only: not 0x40, inf or nan, nor 1e400 (beyond a double: read as inf).
  if (parse_decimal(s, v) && std::isfinite(v)) return v;
  throw UsageError(option + ": expected " + what + ", got \"" + s + "\"");
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string f; std::getline(ss, f, sep);) out.push_back(f);
  if (!s.empty() && s.back() == sep) out.emplace_back();
  return out;
}

std::string trim(const std::string& s) {
  auto b = s.find_first_not_of(" \t\r"), e = s.find_last_not_of(" \t\r");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

LengthDist read_histogram(const std::string& file) {
  std::istringstream in(read_csv_input_file(file, "a length histogram: lines \"tokens,weight\""));
  LengthDist d;
  d.kind = LengthDist::Kind::histogram;
  double total = 0;
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    line = trim(line);
    if (line.empty() || line[0] == '#' || line.rfind("tokens", 0) == 0) continue;
    auto f = split(line, ',');
    std::string where = fmt::format("line {}", line_no);
    if (f.size() != 2) throw InputError(file, where, "expected \"tokens,weight\"");
    char* end = nullptr;
    long tokens = std::strtol(f[0].c_str(), &end, 10);
    if (*end || tokens < 1 || tokens > kMaxTokens) throw InputError(file, where, "tokens: expected an integer in [1, 1000000]");
    double w = 0;
    if (!parse_decimal(f[1], w) || !(w >= 0) || !std::isfinite(w)) throw InputError(file, where, "weight: expected a number >= 0");
    total += w;
    d.values.push_back(static_cast<int>(tokens));
    d.cumulative.push_back(total);
  }
  if (!(total > 0)) throw InputError(file, "", "a length histogram needs at least one line with a weight > 0");
  return d;
}

int draw(const LengthDist& d, Rng& rng) {
  auto clamp = [](double v) { return static_cast<int>(std::clamp(std::llround(v), 1ll, static_cast<long long>(kMaxTokens))); };
  switch (d.kind) {
    case LengthDist::Kind::fixed: return clamp(d.a);
    case LengthDist::Kind::uniform: return clamp(std::floor(d.a + rng.uniform() * (d.b - d.a + 1)));
    case LengthDist::Kind::normal: return clamp(rng.normal(d.a, d.b));
    case LengthDist::Kind::histogram: {
      double u = rng.uniform() * d.cumulative.back();
      auto it = std::upper_bound(d.cumulative.begin(), d.cumulative.end(), u);
      return d.values[std::min<std::size_t>(it - d.cumulative.begin(), d.values.size() - 1)];
    }
  }
  return 1;
}

}  // namespace

LengthDist parse_length_dist(const std::string& text, const std::string& option) {
  LengthDist d;
  auto colon = text.find(':');
  std::string kind = colon == std::string::npos ? "" : text.substr(0, colon);
  std::string args = colon == std::string::npos ? text : text.substr(colon + 1);
  if (kind == "hist") {
    if (args.empty()) throw UsageError(option + ": expected a histogram file path after \"hist:\" (hist:FILE, lines \"tokens,weight\")");
    return read_histogram(args);
  }
  auto nums = split(args, ',');
  const char* expected = "200, uniform:100,300, normal:200,50 or hist:FILE";
  if (kind.empty()) {
    d.kind = LengthDist::Kind::fixed;
    d.a = parse_number(args, option, expected);
    if (d.a != std::floor(d.a) || d.a < 1 || d.a > kMaxTokens) throw UsageError(option + ": a fixed length must be an integer in [1, 1000000]");
    return d;
  }
  if (kind != "uniform" && kind != "normal") throw UsageError(option + ": unknown distribution \"" + kind + "\" (expected " + expected + ")");
  if (nums.size() != 2) throw UsageError(option + ": " + kind + " takes two numbers (expected " + expected + ")");
  d.a = parse_number(nums[0], option, "a number");
  d.b = parse_number(nums[1], option, "a number");
  if (kind == "uniform") {
    d.kind = LengthDist::Kind::uniform;
    if (d.a != std::floor(d.a) || d.b != std::floor(d.b) || d.a < 1 || d.b < d.a || d.b > kMaxTokens)
      throw UsageError(option + ": uniform:LO,HI needs integers 1 <= LO <= HI <= 1000000");
  } else {
    d.kind = LengthDist::Kind::normal;
    // Lengths are clamped to [1, 1000000]: a wider SD (1e30) made every length 1 or 1000000.
    if (d.a < 1 || d.a > kMaxTokens || d.b < 0 || d.b > kMaxTokens)
      throw UsageError(option + ": normal:MEAN,SD needs 1 <= MEAN <= 1000000 and 0 <= SD <= 1000000");
  }
  return d;
}

std::vector<Request> generate_requests(const GeneratorSpec& spec) {
  Rng rng(spec.seed);
  std::vector<Request> out;
  out.reserve(static_cast<std::size_t>(spec.num_requests));
  double t_s = 0;
  double mean_gap = 1.0 / spec.rate;
  for (std::int64_t i = 0; i < spec.num_requests; ++i) {
    if (i > 0) {
      t_s += spec.arrival == "gamma" ? rng.gamma(spec.burstiness, mean_gap / spec.burstiness) : rng.exponential(mean_gap);
    }
    // Arrivals as a trace may have them (arrival_ms <= 1e12): --rate 1e-300 made gaps of 1e300 s
    // that overflowed into negative arrival times and a run that "succeeded" with them.
    if (!(t_s <= 1e9))
      throw UsageError(fmt::format("--rate {:g}: request {} would arrive after {:g} s, beyond 1e9 s (10^12 ms); use a higher rate",
                                   spec.rate, i, t_s));
    Request r;
    r.id = i;
    r.arrival = static_cast<Ns>(std::llround(t_s * 1e9));
    r.prompt_tokens = draw(spec.prompt, rng);
    r.output_tokens = draw(spec.output, rng);
    out.push_back(r);
  }
  return out;
}

namespace {

// arrival_ms in [0, 1e12]; the value quoted as given (1000000000000.5 read "got 1e+12").
double arrival_ms(const JsonView& v) {
  if (!v.json().is_number()) v.as_number(0, 1e12);  // its "expected a number, got ..."
  double ms = v.json().get<double>();
  if (!(ms >= 0 && ms <= 1e12)) v.fail(fmt::format("expected a number in [0, 1e12] (ms), got {}", ms));
  return ms;
}

Request request_from_json(const Json& j, const std::string& file, int line_no, std::int64_t index) {
  JsonView v(j, file, fmt::format("line {}", line_no));
  v.expect_object();
  v.only_keys({"id", "arrival_ms", "prompt_tokens", "output_tokens"});
  Request r;
  r.id = v.has("id") ? v.at("id").as_int(0) : index;
  r.arrival = static_cast<Ns>(std::llround(arrival_ms(v.at("arrival_ms")) * 1e6));
  r.prompt_tokens = static_cast<int>(v.at("prompt_tokens").as_int(1, kMaxTokens));
  r.output_tokens = static_cast<int>(v.at("output_tokens").as_int(1, kMaxTokens));
  return r;
}

// A CSV cell as the JSON a .jsonl line would hold: the integer columns (id, prompt_tokens,
// output_tokens) plain digits read as 64-bit integers, as JSON reads them (2e2 and 200.0 are
// refused in both; an id of 2^53 accepted in both), arrival_ms a decimal.
Json csv_cell(const std::string& text, bool integer, const std::string& file, const std::string& where) {
  if (integer) {
    std::int64_t i = 0;
    const char* end = text.data() + text.size();
    auto [ptr, ec] = std::from_chars(text.data(), end, i);
    if (ec == std::errc() && ptr == end && !text.empty()) return i;
    bool digits = !text.empty() && text.find_first_not_of("-0123456789") == std::string::npos;
    throw InputError(file, where, digits ? "expected an integer of at most 64 bits, got \"" + text + "\""
                                         : "expected an integer (plain digits, as in .jsonl), got \"" + text + "\"");
  }
  double v = 0;
  if (!parse_decimal(text, v) || !std::isfinite(v)) throw InputError(file, where, "expected a number, got \"" + text + "\"");
  return v;
}

}  // namespace

std::vector<Request> read_request_file(const std::string& file) {
  std::istringstream in(read_csv_input_file(file, "a request trace: .jsonl or .csv"));
  bool csv = file.size() >= 4 && file.compare(file.size() - 4, 4, ".csv") == 0;
  std::vector<Request> out;
  std::vector<std::string> header;
  std::vector<int> lines;  // of each request
  int line_no = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_no;
    std::string t = trim(line);
    if (t.empty() || t[0] == '#') continue;
    if (static_cast<std::int64_t>(out.size()) >= kMaxRequests)
      throw InputError(file, fmt::format("line {}", line_no), "more than 10000000 requests");
    if (!csv) {
      // A CSV trace piped through /dev/stdin or named .txt was reported as "malformed JSON"
      // with no word of how the format is chosen.
      if (t[0] != '{')
        throw InputError(file, fmt::format("line {}", line_no),
                         "expected a JSON object ({...}) per line: a request trace whose name does not end in .csv is "
                         "read as JSON lines");
      out.push_back(request_from_json(parse_json_text(t, file + ": line " + std::to_string(line_no)), file, line_no,
                                      static_cast<std::int64_t>(out.size())));
      lines.push_back(line_no);
      continue;
    }
    auto f = split(t, ',');
    for (auto& x : f) x = trim(x);
    if (header.empty()) {
      header = f;
      for (std::size_t c = 0; c < header.size(); ++c)
        if (std::find(header.begin(), header.begin() + static_cast<std::ptrdiff_t>(c), header[c]) != header.begin() + static_cast<std::ptrdiff_t>(c))
          throw InputError(file, "line 1", "header: column \"" + header[c] + "\" given twice");
      for (const std::string& h : header)
        if (h != "id" && h != "arrival_ms" && h != "prompt_tokens" && h != "output_tokens")
          throw InputError(file, "line 1", "header: unknown column \"" + h + "\" (columns: [id,]arrival_ms,prompt_tokens,output_tokens)");
      for (const char* need : {"arrival_ms", "prompt_tokens", "output_tokens"})
        if (std::find(header.begin(), header.end(), need) == header.end())
          throw InputError(file, "line 1", std::string("header: expected a column \"") + need +
                                               "\" (columns: [id,]arrival_ms,prompt_tokens,output_tokens)");
      continue;
    }
    std::string where = fmt::format("line {}", line_no);
    if (f.size() != header.size()) throw InputError(file, where, fmt::format("expected {} fields, got {}", header.size(), f.size()));
    Json j = Json::object();
    for (std::size_t c = 0; c < f.size(); ++c) j[header[c]] = csv_cell(f[c], header[c] != "arrival_ms", file, where + "/" + header[c]);
    out.push_back(request_from_json(j, file, line_no, static_cast<std::int64_t>(out.size())));
    lines.push_back(line_no);
  }
  if (out.empty()) throw InputError(file, "", "no requests (expected one per line: arrival_ms, prompt_tokens, output_tokens)");
  std::map<std::int64_t, int> first_line;  // id -> the line that gave it first
  for (std::size_t i = 0; i < out.size(); ++i)
    if (auto [it, fresh] = first_line.emplace(out[i].id, lines[i]); !fresh)
      throw InputError(file, fmt::format("line {}", lines[i]),
                       fmt::format("request id {} appears twice (also on line {})", out[i].id, it->second));
  std::stable_sort(out.begin(), out.end(), [](const Request& a, const Request& b) { return a.arrival < b.arrival; });
  return out;
}

}  // namespace dfsim::serve
