// dfsim serve on bad input, run as a user runs it: outputs that collide with each other or with
// the inputs, stale outputs of an earlier run, out-of-range distribution parameters, the KV
// pool against memory, --set keys a step table makes moot, messages that name what is wrong,
// and paths too long. Each is exit 2 with one line before any work, or a clean directory.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/regression/cli_run.h"

namespace fs = std::filesystem;
using Catch::Contains;
using nlohmann::json;
using namespace cli_test;

namespace {

const std::string kTable = "workloads/serving/llama-3.1-8b_spyre_steps.csv";
std::string serve(const std::string& extra) { return "serve -q --model llama-3.1-8b --step-table " + kTable + " " + extra; }

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

// Exit 2 and exactly one line on stderr holding each of `expect`.
std::string expect_refused(const std::string& args, const std::vector<std::string>& expect) {
  INFO("dfsim " << args);
  Result r = dfsim(args, "2>&1 >/dev/null");
  INFO("stderr: " << r.out);
  CHECK(r.code == 2);
  CHECK(lines(r.out).size() == 1);
  CHECK_THAT(r.out, !Contains("internal error"));
  for (const auto& e : expect) CHECK_THAT(r.out, Contains(e));
  return r.out;
}

std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace

TEST_CASE("serve cli: --export-step-table naming a file serve writes into --out is refused up front", "[cli][serve]") {
  TempDir t("serve_clash");
  const std::string o = t.str() + "/s";
  for (const char* name : {"steps.csv", "summary.json", "requests.jsonl", "trace.json", ".steps.csv.tmp"})
    expect_refused(serve("--rate 1 -n 20 -o " + o + " --export-step-table " + o + "/" + name),
                   {"--export-step-table " + o + "/" + name, "--out " + o});
  expect_refused(serve("--rate 1,2 -n 20 -o " + o + " --export-step-table " + o + "/sweep.csv"), {o + "/sweep.csv"});
  expect_refused(serve("--rate 1,2 -n 20 -o " + o + " --export-step-table " + o + "/rate-2/summary.json"),
                 {o + "/rate-2/summary.json"});
  expect_refused(serve("--rate 1,2 -n 20 -o " + o + " --export-step-table " + o + "/rate-2"), {o + "/rate-2", "directory"});
  CHECK_FALSE(fs::exists(o));  // nothing made
  // A run into an existing directory: the clash is refused and the first run's files stay whole.
  REQUIRE(dfsim(serve("--rate 1 -n 20 -o " + o)).code == 0);
  expect_refused(serve("--rate 1 -n 30 -o " + o + " --export-step-table " + o + "/steps.csv"), {o + "/steps.csv"});
  CHECK(read_json(t.path / "s/summary.json")["completed"] == 20);
  CHECK(lines(slurp(t.path / "s/requests.jsonl")).size() == 20);
  CHECK(fs::exists(t.path / "s/trace.json"));
  // The same with --no-trace: trace.json would be removed as stale after the table was written.
  expect_refused(serve("--rate 1 -n 20 --no-trace -o " + o + " --export-step-table " + o + "/trace.json"),
                 {o + "/trace.json", "earlier run"});
  // A table beside the outputs is fine.
  CHECK(dfsim(serve("--rate 1 -n 20 -o " + o + " --export-step-table " + o + "/used.csv")).code == 0);
}

TEST_CASE("serve cli: rates alike to six digits get a directory each", "[cli][serve]") {
  TempDir t("serve_rates");
  for (const auto& [rates, a, b] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"0.1234567,0.1234568", "rate-0.1234567", "rate-0.1234568"},
           {"1.00000000001,1.00000000002", "rate-1.00000000001", "rate-1.00000000002"}}) {
    fs::path o = t.path / rates;
    Result r = dfsim(serve("--rate " + rates + " -n 5 --no-trace -o " + o.string()));
    INFO(r.out);
    REQUIRE(r.code == 0);
    CHECK(entries(o) == std::vector<std::string>{a, b, "sweep.csv"});
    auto rows = lines(slurp(o / "sweep.csv"));
    REQUIRE(rows.size() == 3);
    CHECK(split(rows[1], ',')[0] + "," + split(rows[2], ',')[0] == a.substr(5) + "," + b.substr(5));
  }
  // A rate %g writes exactly keeps its short name.
  fs::path o = t.path / "short";
  REQUIRE(dfsim(serve("--rate 0.5,2 -n 5 --no-trace -o " + o.string())).code == 0);
  CHECK(entries(o) == std::vector<std::string>{"rate-0.5", "rate-2", "sweep.csv"});
}

TEST_CASE("serve cli: an output that is one of the run's inputs is refused", "[cli][serve]") {
  TempDir t("serve_inputs");
  const std::string trace = "arrival_ms,prompt_tokens,output_tokens\n0,100,5\n10,50,5\n";
  write(t.path / "r.csv", trace);
  const std::string r = (t.path / "r.csv").string();
  expect_refused(serve("--requests " + r + " -o " + t.str() + "/o --export-step-table " + r),
                 {"--export-step-table " + r, "--requests " + r});
  CHECK(slurp(r) == trace);
  fs::create_hard_link(r, t.path / "link.csv");  // the same file under another name
  expect_refused(serve("--requests " + r + " -o " + t.str() + "/o --export-step-table " + t.str() + "/link.csv"),
                 {"--requests " + r});
  fs::copy_file(kTable, t.path / "t.csv");
  const std::string table = (t.path / "t.csv").string(), before = slurp(table);
  expect_refused("serve -q --model llama-3.1-8b --step-table " + table + " --rate 1 -n 5 -o " + t.str() +
                     "/o --export-step-table " + t.str() + "/./t.csv",
                 {"--step-table " + table});
  CHECK(slurp(table) == before);
  // An input inside --out that the run writes over, or removes as an earlier sweep's output.
  const std::string jl = "{\"arrival_ms\": 0, \"prompt_tokens\": 100, \"output_tokens\": 5}\n";
  write(t.path / "d/requests.jsonl", jl);
  expect_refused(serve("--requests " + t.str() + "/d/requests.jsonl -o " + t.str() + "/d"),
                 {"--out " + t.str() + "/d", "--requests " + t.str() + "/d/requests.jsonl"});
  write(t.path / "e/rate-1/requests.jsonl", jl);
  expect_refused(serve("--requests " + t.str() + "/e/rate-1/requests.jsonl -o " + t.str() + "/e"), {"earlier run", "removes"});
  write(t.path / "d/steps.csv", "100,1\n");  // a length histogram where the run writes its step log
  expect_refused(serve("--rate 1 -n 5 --prompt-len hist:" + t.str() + "/d/steps.csv -o " + t.str() + "/d"),
                 {"--prompt-len " + t.str() + "/d/steps.csv"});
  CHECK(slurp(t.path / "d/requests.jsonl") == jl);
  CHECK(slurp(t.path / "e/rate-1/requests.jsonl") == jl);
  CHECK_FALSE(fs::exists(t.path / "o"));
}

TEST_CASE("serve cli: a rerun removes the earlier run's outputs that it does not write", "[cli][serve]") {
  TempDir t("serve_stale");
  const std::string d = t.str() + "/d";
  REQUIRE(dfsim(serve("--rate 1 -n 5 -o " + d)).code == 0);
  REQUIRE(fs::exists(d + "/trace.json"));
  REQUIRE(dfsim(serve("--rate 1 -n 5 --no-trace -o " + d)).code == 0);
  CHECK(entries(d) == std::vector<std::string>{"requests.jsonl", "steps.csv", "summary.json"});
  // A sweep after a single run: the top-level run files go; a single run after a sweep: the
  // rate directories and sweep.csv go. Files serve never writes stay, and their directory.
  REQUIRE(dfsim(serve("--rate 1,2 -n 5 -o " + d)).code == 0);
  CHECK(entries(d) == std::vector<std::string>{"rate-1", "rate-2", "sweep.csv"});
  write(d + "/notes.txt", "mine\n");
  write(d + "/rate-2/notes.txt", "mine\n");
  REQUIRE(dfsim(serve("--rate 1,4 -n 5 -o " + d)).code == 0);  // rate-2 is stale now
  CHECK(entries(d) == std::vector<std::string>{"notes.txt", "rate-1", "rate-2", "rate-4", "sweep.csv"});
  CHECK(entries(d + "/rate-2") == std::vector<std::string>{"notes.txt"});
  REQUIRE(dfsim(serve("--rate 1 -n 5 -o " + d)).code == 0);
  CHECK(entries(d) == std::vector<std::string>{"notes.txt", "rate-2", "requests.jsonl", "steps.csv", "summary.json", "trace.json"});
  CHECK(entries(d + "/rate-2") == std::vector<std::string>{"notes.txt"});
}

TEST_CASE("serve cli: length distributions refuse numbers beyond a double and an SD beyond 1000000", "[cli][serve]") {
  expect_refused(serve("--rate 1 -n 5 --prompt-len normal:100,1e30"), {"--prompt-len", "0 <= SD <= 1000000"});
  expect_refused(serve("--rate 1 -n 5 --output-len normal:100,1e30"), {"--output-len", "0 <= SD <= 1000000"});
  expect_refused(serve("--rate 1 -n 5 --prompt-len normal:100,1e400"), {"--prompt-len", "got \"1e400\""});
  expect_refused(serve("--rate 1 -n 5 --prompt-len normal:1e400,1"), {"--prompt-len", "got \"1e400\""});
  // SD 1000000 is read; its lengths then meet --max-model-len.
  expect_refused(serve("--rate 1 -n 5 --prompt-len normal:100,1000000"), {"--max-model-len 3072"});
}

TEST_CASE("serve cli: --num-blocks keeps the weights check and is bounded by the memory", "[cli][serve]") {
  expect_refused(serve("--rate 1 -n 5 --num-blocks 48 --set memory.capacity_bytes=1073741824"), {"--model llama-3.1-8b", "do not fit"});
  expect_refused(serve("--rate 1 -n 5 --num-blocks 9223372036854775807"),
                 {"--num-blocks 9223372036854775807: only 12421 blocks of 64 tokens fit"});
  expect_refused(serve("--rate 1 -n 5 --num-blocks 12422"), {"only 12421 blocks"});
  TempDir t("serve_blocks");
  REQUIRE(dfsim(serve("--rate 1 -n 5 --num-blocks 12421 -o " + t.str())).code == 0);
  CHECK(read_json(t.path / "summary.json")["kv_blocks"]["total"] == 12421);
}

TEST_CASE("serve cli: with --step-table a --set that cannot change the results is refused", "[cli][serve]") {
  expect_refused(serve("--rate 1 -n 5 --set core.clock_mhz=1"),
                 {"--set: core.clock_mhz: cannot change the results", "memory.capacity_bytes", "system.cards"});
  expect_refused(serve("--rate 1 -n 5 --set energy.static.card_w=10"), {"--set: energy.static.card_w", "without energy_mj"});
  TempDir t("serve_sets");
  REQUIRE(dfsim(serve("--rate 1 -n 5 --set memory.capacity_bytes=68719476736 -o " + t.str() + "/a")).code == 0);
  // sim.trace=false (every sweep point has it) means no trace.json, as for run.
  REQUIRE(dfsim(serve("--rate 1 -n 5 --set sim.trace=false -o " + t.str() + "/b")).code == 0);
  CHECK_FALSE(fs::exists(t.path / "b/trace.json"));
  // A table with energy: the idle power's keys matter.
  std::string text = slurp(kTable), out;
  for (const auto& l : split(text, '\n')) {
    if (l.empty()) continue;
    out += l + (l[0] == '#' ? "" : l.rfind("phase,", 0) == 0 ? ",energy_mj" : ",1") + "\n";
  }
  write(t.path / "e.csv", out);
  Result r = dfsim("serve -q --model llama-3.1-8b --step-table " + t.str() + "/e.csv --rate 1 -n 5 --set energy.static.card_w=10 -o " +
                   t.str() + "/c");
  INFO(r.out);
  CHECK(r.code == 0);
  expect_refused("serve -q --model llama-3.1-8b --step-table " + t.str() + "/e.csv --rate 1 -n 5 --set core.clock_mhz=1",
                 {"--set: core.clock_mhz", "energy.static.card_w"});
}

TEST_CASE("serve cli: messages name what is wrong and CSV and JSONL traces read numbers alike", "[cli][serve]") {
  std::string e = expect_refused(serve("--rate 1 -n 5 --block-size 4096 --max-num-batched-tokens 4096"),
                                 {"--block-size 4096", "default prefill chunk", "= 512 tokens"});
  CHECK_THAT(e, !Contains("--prefill-chunk 0"));
  TempDir t("serve_msgs");
  auto trace = [&](const std::string& name, const std::string& text) {
    write(t.path / name, text);
    return "--requests " + (t.path / name).string() + " -o " + t.str() + "/o-" + name;
  };
  const std::string head = "id,arrival_ms,prompt_tokens,output_tokens\n";
  // Ids are 64-bit integers in both (2^53 was "a number 9.007199254740992e+15" in CSV only).
  CHECK(dfsim(serve(trace("a.csv", head + "9007199254740992,0,10,5\n"))).code == 0);
  CHECK(dfsim(serve(trace("a.jsonl", "{\"id\": 9007199254740992, \"arrival_ms\": 0, \"prompt_tokens\": 10, \"output_tokens\": 5}\n")))
            .code == 0);
  CHECK(read_json(t.path / "o-a.csv/summary.json")["completed"] == 1);
  // Exponents and fractions are refused for the integer columns in both (CSV took 2e2 as 200).
  expect_refused(serve(trace("b.csv", head + "0,0,2e2,5\n")), {"b.csv: line 2/prompt_tokens: expected an integer", "\"2e2\""});
  expect_refused(serve(trace("c.csv", head + "0,0,200.0,5\n")), {"c.csv: line 2/prompt_tokens: expected an integer"});
  expect_refused(serve(trace("b.jsonl", "{\"arrival_ms\": 0, \"prompt_tokens\": 1e2, \"output_tokens\": 5}\n")),
                 {"b.jsonl: line 1/prompt_tokens: expected an integer"});
  expect_refused(serve(trace("d.csv", head + "99999999999999999999,0,10,5\n")), {"d.csv: line 2/id", "64 bits"});
  // An arrival out of range is quoted as given, not rounded to 1e+12.
  expect_refused(serve(trace("e.csv", head + "0,1000000000000.5,10,5\n")), {"e.csv: line 2/arrival_ms", "got 1000000000000.5"});
  expect_refused(serve(trace("e.jsonl", "{\"arrival_ms\": 1000000000000.5, \"prompt_tokens\": 10, \"output_tokens\": 5}\n")),
                 {"e.jsonl: line 1/arrival_ms", "got 1000000000000.5"});
  expect_refused(serve(trace("f.csv", head + "0,1e400,10,5\n")), {"f.csv: line 2/arrival_ms", "got \"1e400\""});
}

TEST_CASE("serve cli: an output path too long is exit 2 naming it and nothing is made", "[cli][serve]") {
  TempDir t("serve_long");
  const std::string z(300, 'z');
  fs::create_directories(t.path / "out");  // (a parent that does not exist hid the error: ENOENT comes first)
  expect_refused(serve("--rate 1 -n 5 -o " + t.str() + "/" + z), {t.str() + "/" + z, "name too long"});
  CHECK(entries(t.path) == std::vector<std::string>{"out"});
  // A model named with 260 characters and no -o: the default directory out/serve-NAME-spyre.
  std::string model = slurp("workloads/models/llama-3.1-8b.json");
  model.replace(model.find("\"llama-3.1-8b\""), 14, "\"" + std::string(260, 'm') + "\"");
  write(t.path / "m.json", model);
  std::string table;
  for (const auto& l : split(slurp(kTable), '\n'))
    if (l.rfind("# model:", 0) != 0) table += l + "\n";
  write(t.path / "t.csv", table);
  Result r = shell("cd " + t.str() + " && " + DFSIM_BINARY + " serve -q --model m.json --step-table t.csv --rate 1 -n 5",
                   "2>&1 >/dev/null");
  INFO(r.out);
  CHECK(r.code == 2);
  CHECK(lines(r.out).size() == 1);
  CHECK_THAT(r.out, Contains("out/serve-mmmm") && Contains("name too long"));
  CHECK(fs::is_empty(t.path / "out"));
}
