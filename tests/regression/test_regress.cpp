// `dfsim regress`, `dfsim diff` and `dfsim accuracy` run as a user runs them: every exit path
// (pass, regression, bad input, missing file), --update round trips, --jobs does not change
// the output, the JUnit XML has the common shape, diff of a run against itself is clean.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <functional>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>

#include "cli_helpers.h"

namespace fs = std::filesystem;
using cli_test::dfsim;
using cli_test::Result;
using cli_test::slurp;
using Catch::Contains;
using Catch::StartsWith;
using nlohmann::json;
using ojson = nlohmann::ordered_json;  // keeps the members in the order written

namespace {

// A created temporary directory whose files are named by `d / "name"`.
struct TempDir : cli_test::TempDir {
  explicit TempDir(const std::string& tag) : cli_test::TempDir("regress_" + tag) { fs::create_directories(path); }
  std::string operator/(const std::string& name) const { return (path / name).string(); }
};

void write(const std::string& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

std::string repo(const std::string& rel) { return (fs::current_path() / rel).string(); }

// A two-case suite on the spyre config whose expectations are those of today's model:
// add_2048x1024 (12 MiB through off-chip memory, memory-bound) and matmul_1024.
ojson small_suite() {
  return {{"format", "dfsim.suite"},
          {"version", 1},
          {"name", "cli-test"},
          {"defaults", {{"config", repo("configs/spyre.json")}, {"checks", {"roofline", "offchip_peak"}}}},
          {"cases",
           {{{"name", "add"},
             {"workload", repo("workloads/add_2048x1024.json")},
             {"expect",
              {{"offchip.bytes_read", {{"value", 8388608}, {"exact", true}}},  // a, b: 2 x 2048*1024*2 B
               {"offchip.bytes_written", {{"value", 4194304}, {"exact", true}}},
               {"sim_time_ns", {{"value", 1}, {"relative_pct", 2}}}}},
             {"kernels", {{"add_y", {{"duration_ns", {{"value", 1}, {"relative_pct", 2}}}}}}}},
            {{"name", "matmul"},
             {"workload", repo("workloads/matmul_1024.json")},
             {"compile", {{"cores", 8}}},
             {"expect",
              {{"compute.macs", {{"value", 1073741824}, {"exact", true}}},  // 1024^3
               {"sim_time_ns", {{"value", 1}, {"relative_pct", 2}}}}}}}}};
}

// Writes the suite and fills in its times with --update.
std::string updated_suite(const TempDir& d) {
  std::string f = d / "s.suite.json";
  write(f, small_suite().dump(2));
  Result r = dfsim("regress " + f + " --update");
  REQUIRE(r.code == 0);
  return f;
}

}  // namespace

TEST_CASE("regress: --update fills in the values, keeps order and tolerances, then the suite passes", "[regress]") {
  TempDir d("update");
  std::string f = updated_suite(d);
  json s = json::parse(slurp(f));
  auto& add = s["cases"][0]["expect"];
  CHECK(add["sim_time_ns"]["relative_pct"] == 2);
  CHECK(add["sim_time_ns"]["value"].get<double>() > 1000);
  CHECK(add["offchip.bytes_read"]["value"] == 8388608);  // was right: unchanged
  // Member order of the file is kept (nlohmann's default would sort "compile" before "name").
  std::string text = slurp(f);
  CHECK(text.find("\"name\": \"matmul\"") < text.find("\"compile\""));
  Result r = dfsim("regress " + f);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Contains("2 case(s): 2 passed, 0 failed, 0 error(s)"));
  // A second --update changes nothing.
  std::string before = slurp(f);
  CHECK(dfsim("regress " + f + " --update").code == 0);
  CHECK(slurp(f) == before);
}

TEST_CASE("regress: --set memory.ideal=true fails a suite that assumes real memory (exit 1), with JUnit", "[regress]") {
  TempDir d("ideal");
  std::string f = updated_suite(d);
  Result r = dfsim("regress " + f + " --set memory.ideal=true --junit " + (d / "j.xml"));
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Contains("FAIL"));
  std::string x = slurp(d / "j.xml");
  // The common JUnit shape: testsuites > testsuite > testcase > failure.
  CHECK(std::regex_search(x, std::regex(R"(^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="dfsim" tests="2" failures="2" errors="0">\n  <testsuite name="cli-test" tests="2" failures="2" errors="0" skipped="0">\n    <testcase classname="cli-test" name="add">\n      <failure message="[0-9]+ metric\(s\) out of tolerance" type="regression">)")));
  CHECK_THAT(x, Contains("sim_time_ns: expected"));
  CHECK_THAT(x, Contains("</failure>\n    </testcase>"));
  CHECK_THAT(x, Contains("</testsuite>\n</testsuites>\n"));
}

TEST_CASE("regress: two suites of one name are two JUnit testsuites, and ideal memory has no bandwidth bound", "[regress]") {
  // They merged into one testsuite with each case name twice; under memory.ideal the
  // offchip_peak check printed "<= 204.8 GB/s" beside a figure above it, and "pass".
  TempDir d("two");
  std::string f = updated_suite(d);
  fs::create_directories(d.path / "b");
  std::string g = d / "b/s.suite.json";
  write(g, slurp(f));
  Result r = dfsim("regress " + f + " " + g + " --only add --junit " + (d / "j.xml"));
  CHECK(r.code == 0);
  std::string x = slurp(d / "j.xml");
  CHECK_THAT(x, Contains("<testsuite name=\"cli-test (" + f + ")\""));
  CHECK_THAT(x, Contains("<testsuite name=\"cli-test (" + g + ")\""));
  json s = json::parse(slurp(f));
  s["cases"][0]["checks"] = {"offchip_peak"};
  write(f, s.dump(2));
  r = dfsim("regress " + f + " --only add --set memory.ideal=true");
  CHECK(std::regex_search(r.out, std::regex(R"(check offchip_peak +none \(memory\.ideal\) +[0-9.]+ GB/s)")));
}

TEST_CASE("regress: --jobs 1 and --jobs 4 print the same table and write the same JUnit", "[regress]") {
  TempDir d("jobs");
  std::string f = updated_suite(d);
  Result one = dfsim("regress " + f + " --jobs 1 --junit " + (d / "1.xml"));
  Result four = dfsim("regress " + f + " --jobs 4 --junit " + (d / "4.xml"));
  CHECK(one.code == 0);
  CHECK(one.out == four.out);
  CHECK(slurp(d / "1.xml") == slurp(d / "4.xml"));
  CHECK_THAT(slurp(d / "1.xml"), Contains("<testcase classname=\"cli-test\" name=\"matmul\"/>"));
}

TEST_CASE("regress: bad suites exit 2 with one line naming the file and JSON path, before any run", "[regress]") {
  TempDir d("bad");
  std::string f = d / "bad.suite.json";
  ojson s = small_suite();
  s["cases"][0]["expect"]["sim_time_ns"] = {{"value", 1}, {"relative_pct", 2}, {"exact", true}};
  write(f, s.dump());
  Result r = dfsim("regress " + f);
  CHECK(r.code == 2);
  CHECK(r.out == f + ": /cases/0/expect/sim_time_ns: expected exactly one of relative_pct, absolute or exact\n");

  s = small_suite();
  s["cases"][1]["workload"] = "nope.json";
  write(f, s.dump());
  r = dfsim("regress " + f);
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains(": /cases/1/workload: no such file: "));

  s = small_suite();
  s["cases"][0]["checks"] = {"littles"};
  write(f, s.dump());
  CHECK(dfsim("regress " + f).out ==
        f + ": /cases/0/checks/0: unknown check \"littles\", expected roofline, offchip_peak or determinism\n");
  s["cases"][0]["checks"] = {"roofline", "roofline"};
  write(f, s.dump());
  CHECK(dfsim("regress " + f).out == f + ": /cases/0/checks/1: check \"roofline\" given twice\n");

  // A metric that summary.json does not have is a suite error too, found after the run: one
  // line on stderr, no table on stdout, and --update and --junit write nothing.
  s = small_suite();
  s["cases"][0]["expect"]["offchip.bytes_rd"] = {{"value", 1}, {"exact", true}};
  write(f, s.dump());
  const std::string before = slurp(f);
  r = dfsim("regress " + f + " --update --junit " + (d / "j.xml"), "2>/dev/null");
  CHECK(r.code == 2);
  CHECK(r.out.empty());  // stdout: no table, no totals
  r = dfsim("regress " + f + " --update --junit " + (d / "j.xml"));
  CHECK(r.out == f + ": /cases/0/expect/offchip.bytes_rd: no metric \"offchip.bytes_rd\" in the run's summary.json\n");
  CHECK(slurp(f) == before);
  CHECK_FALSE(fs::exists(d / "j.xml"));
  // An object of summary.json is no metric: the message names one of its values.
  s = small_suite();
  s["cases"][0]["expect"]["offchip"] = {{"value", 1}, {"exact", true}};
  write(f, s.dump());
  r = dfsim("regress " + f);
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains(f + ": /cases/0/expect/offchip: no metric \"offchip\" in the run's summary.json: \"offchip\" is "
                                 "an object there, expected a value such as \"offchip."));

  r = dfsim("regress " + (d / "missing.json"));
  CHECK(r.code == 2);
  CHECK(r.out == (d / "missing.json") + ": no such file\n");
  CHECK(dfsim("regress " + f + " --only zzz").code == 2);
}

// Found before any run: the case's workload is compiled as its run will compile it, so a kernel
// the compiled graph does not have and compile options the run would reject are one line, exit
// 2, at the suite's JSON path (they used to be a row of the table after all the runs).
TEST_CASE("regress: a kernel the compiled workload lacks and a rejected compile option fail before any run", "[regress]") {
  TempDir d("kernels");
  std::string f = d / "s.json";
  ojson s = small_suite();
  s["cases"][0]["kernels"] = {{"add_z", {{"duration_ns", {{"value", 1}, {"relative_pct", 1}}}}}};
  write(f, s.dump());
  Result r = dfsim("regress " + f);
  CHECK(r.code == 2);
  CHECK(r.out == f + ": /cases/0/kernels/add_z: no kernel \"add_z\" in " + repo("workloads/add_2048x1024.json") +
                     " as compiled for this case (did you mean \"add_y\"?)\n");
  s = small_suite();
  s["cases"][1]["compile"] = {{"cores", 64}};  // the spyre card has 32
  write(f, s.dump());
  r = dfsim("regress " + f);
  CHECK(r.code == 2);
  REQUIRE(cli_test::lines(r.out).size() == 1);
  CHECK_THAT(r.out, Contains(f + ": /cases/1/compile: --cores: the program asks for 64 cores"));
}

TEST_CASE("regress: a determinism case runs twice and compares summary.json and trace.json", "[regress]") {
  TempDir d("det");
  ojson s = small_suite();
  s["cases"] = {s["cases"][0]};
  s["cases"][0]["checks"] = {"determinism"};
  std::string f = d / "s.json";
  write(f, s.dump());
  Result r = dfsim("regress " + f + " --update");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Contains("check determinism"));
  CHECK_THAT(r.out, Contains("identical"));
}

// Serving configurations are pinned as kernels are: a case names a `dfsim serve` run instead of
// a workload (since 2026-12-07; before, `diff` of two serve runs was the only gate).
TEST_CASE("regress: a serve case runs dfsim serve and compares its summary metrics", "[regress][serve]") {
  TempDir d("serve");
  fs::copy_file(repo("workloads/serving/llama-3.1-8b_spyre_steps.csv"), d.path / "steps.csv");
  ojson s = small_suite();
  s["cases"] = {s["cases"][0],
                {{"name", "llama"},
                 {"serve", {{"model", "llama-3.1-8b"}, {"step_table", "steps.csv"}, {"rate", 1}, {"num_requests", 40}}},
                 {"expect",
                  {{"completed", {{"value", 40}, {"exact", true}}},  // every generated request finishes
                   {"ttft_ms.p50", {{"value", 1}, {"relative_pct", 1}}}}}}};
  s["defaults"]["checks"] = {"roofline", "determinism"};  // the serve case takes determinism only
  std::string f = d / "s.suite.json";
  write(f, s.dump(2));
  Result r = dfsim("regress " + f + " --update --jobs 2");
  REQUIRE(r.code == 0);
  CHECK(std::regex_search(r.out, std::regex(R"(\nllama +completed +40 +40 +0 +exact +pass\n)")));
  CHECK(std::regex_search(r.out, std::regex(R"(\nllama +check determinism +identical +identical +bound +pass\n)")));
  CHECK_THAT(r.out, !Contains("llama                        check roofline"));
  CHECK_THAT(r.out, Contains("add                          check roofline"));
  // The value --update wrote is what `dfsim serve` itself gives for those options.
  REQUIRE(dfsim("serve -q --model llama-3.1-8b --step-table " + (d / "steps.csv") + " --rate 1 -n 40 --no-trace -o " +
                (d / "direct")).code == 0);
  json direct = json::parse(slurp(d / "direct/summary.json"));
  json updated = json::parse(slurp(f));
  CHECK(updated["cases"][1]["expect"]["ttft_ms.p50"]["value"] == direct["ttft_ms"]["p50"]);
  r = dfsim("regress " + f + " --only llama");
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Contains("1 case(s): 1 passed, 0 failed, 0 error(s)"));
  // A scheduler change moves the latencies: a regression, exit 1.
  ojson o = ojson::parse(slurp(f));
  o["cases"][1]["serve"]["max_num_seqs"] = 4;
  write(f, o.dump(2));
  r = dfsim("regress " + f + " --only llama -q");
  CHECK(r.code == 1);
  CHECK(std::regex_search(r.out, std::regex(R"(\nllama +ttft_ms\.p50 +[0-9.]+ +[0-9.]+ +\+[0-9.]+ % +±1 % +FAIL\n)")));
}

TEST_CASE("regress: a serve case refuses what a serve run cannot give, before any run (exit 2, one line)", "[regress][serve]") {
  TempDir d("serve_bad");
  const std::string table = repo("workloads/serving/llama-3.1-8b_spyre_steps.csv");
  auto suite = [&](const std::function<void(ojson&)>& edit) {
    ojson s = small_suite();
    s["cases"] = {{{"name", "llama"},
                   {"serve", {{"model", "llama-3.1-8b"}, {"step_table", table}, {"rate", 1}, {"num_requests", 10}}},
                   {"expect", {{"completed", {{"value", 10}, {"exact", true}}}}}}};
    edit(s["cases"][0]);
    std::string f = d / "s.json";
    write(f, s.dump());
    return f;
  };
  auto refused = [&](const std::function<void(ojson&)>& edit, const std::string& extra, const std::string& line) {
    std::string f = suite(edit);
    Result r = dfsim("regress " + f + extra);
    CHECK(r.code == 2);
    CHECK(r.out == (line.rfind("--", 0) == 0 ? line : f + ": " + line) + "\n");
  };
  refused([](ojson& c) { c["serve"]["rat"] = 2; }, "", "/cases/0/serve/rat: unknown serve option (did you mean \"rate\"?)");
  refused([](ojson& c) { c["serve"].erase("rate"); }, "",
          "/cases/0/serve: expected one of \"rate\" (requests per second, one number) and \"requests\" (a trace file)");
  refused([&](ojson& c) { c["workload"] = repo("workloads/add_2048x1024.json"); }, "",
          "/cases/0: expected one of \"workload\", \"gen\" and \"serve\", got more");
  refused([](ojson& c) { c["checks"] = {"determinism", "offchip_peak"}; }, "",
          "/cases/0/checks/1: offchip_peak checks a workload run; a serve case has only determinism");
  refused([](ojson& c) { c["compile"] = {{"cores", 2}}; }, "",
          "/cases/0/compile: a serve case compiles whole model steps itself; compile options are for workload cases");
  refused([](ojson& c) { c["serve"]["step_table"] = "nope.csv"; }, "",
          "/cases/0/serve/step_table: no such file: " + (d / "nope.csv"));
  // A config key the step table makes inert, from the case or from the command line.
  const std::string inert = "cannot change the results: --step-table gives the step times; with a table (without "
                            "energy_mj) only memory.capacity_bytes, system.cards, name, sim.trace matter";
  refused([](ojson& c) { c["set"] = {"sim.trace=false", "core.clock_mhz=500"}; }, "", "/cases/0/set/1: core.clock_mhz: " + inert);
  refused([](ojson&) {}, " --set core.clock_mhz=500",
          "--set: core.clock_mhz: case llama of " + (d / "s.json") + ": " + inert);
}

// A model step pinned without committing its op graph: the case names `dfsim gen`'s options and
// regress generates the graph before the runs (since 2026-12-07).
TEST_CASE("regress: a gen case runs the model step dfsim gen makes, its kernels by name", "[regress][gen]") {
  TempDir d("gen");
  ojson s = small_suite();
  s["cases"] = {{{"name", "decode"},
                 {"gen", {{"model", "llama-3.1-8b"}, {"phase", "decode"}, {"context", 512}, {"layers", 1}}},
                 {"compile", {{"cores", 8}}},
                 {"expect", {{"sim_time_ns", {{"value", 1}, {"relative_pct", 1}}}}},
                 {"kernels", {{"linear_l0.attn.q", {{"duration_ns", {{"value", 1}, {"relative_pct", 1}}}}}}}}};
  std::string f = d / "s.suite.json";
  write(f, s.dump(2));
  Result r = dfsim("regress " + f + " --update");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Contains("decode                       check roofline"));  // a run: the defaults' checks apply
  // What --update wrote is the run of the graph `dfsim gen` writes for those options.
  REQUIRE(dfsim("gen llama-3.1-8b --phase decode --context 512 --layers 1 -q -o " + (d / "g.json")).code == 0);
  REQUIRE(dfsim("run -q -w " + (d / "g.json") + " --cores 8 --set sim.trace=false -o " + (d / "direct")).code == 0);
  json direct = json::parse(slurp(d / "direct/summary.json"));
  json updated = json::parse(slurp(f));
  CHECK(updated["cases"][0]["expect"]["sim_time_ns"]["value"] == direct["sim_time_ns"]);
  CHECK(updated["cases"][0]["kernels"]["linear_l0.attn.q"]["duration_ns"]["value"] ==
        direct["kernels"][2]["duration_ns"]);  // embedding, attn_norm, then q
  REQUIRE(direct["kernels"][2]["name"] == "linear_l0.attn.q");
  CHECK(dfsim("regress " + f).code == 0);
  // Bad steps are suite errors at their JSON path, before any run.
  ojson bad = ojson::parse(slurp(f));
  bad["cases"][0]["gen"].erase("context");
  write(f, bad.dump());
  r = dfsim("regress " + f);
  CHECK(r.code == 2);
  CHECK(r.out == f + ": /cases/0/gen: a decode step needs \"context\"\n");
  bad["cases"][0]["gen"]["context"] = 512;
  bad["cases"][0]["gen"]["layers"] = 99;
  write(f, bad.dump());
  CHECK(dfsim("regress " + f).out == f + ": /cases/0/gen/layers: expected 1 to 32 (the layers of llama-3.1-8b), got 99\n");
  bad["cases"][0]["gen"]["layers"] = 1;
  bad["cases"][0]["kernels"] = {{"linear_l0.attn.qq", {{"duration_ns", {{"value", 1}, {"relative_pct", 1}}}}}};
  write(f, bad.dump());
  CHECK(dfsim("regress " + f).out == f + ": /cases/0/kernels/linear_l0.attn.qq: no kernel \"linear_l0.attn.qq\" in the "
                                         "generated step as compiled for this case (did you mean \"linear_l0.attn.q\"?)\n");
  // A step the config cannot compile is the case's gen's error, naming the sets it was compiled with:
  // 16 KiB of LX leaves an 8 KiB tile budget, too small for any sdpa tile.
  bad["cases"][0].erase("kernels");
  write(f, bad.dump());
  r = dfsim("regress " + f + " --set core.lx.usable_bytes=16384");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, StartsWith(f + ": /cases/0/gen: the generated step with --set core.lx.usable_bytes=16384: sdpa: "));
  bad["cases"][0]["set"] = {"core.lx.usable_bytes=16384"};
  write(f, bad.dump());
  CHECK_THAT(dfsim("regress " + f + " --set memory.channels=4").out,
             StartsWith(f + ": /cases/0/gen: the generated step with the case's set core.lx.usable_bytes=16384 and "
                            "--set memory.channels=4: sdpa: "));
}

TEST_CASE("diff: a run against itself is clean, against ideal memory it is not", "[diff]") {
  TempDir d("diff");
  std::string w = repo("workloads/add_2048x1024.json");
  REQUIRE(dfsim("run -q -w " + w + " -o " + (d / "a") + " --set sim.trace=false").code == 0);
  REQUIRE(dfsim("run -q -w " + w + " -o " + (d / "b") + " --set sim.trace=false --set memory.ideal=true").code == 0);
  Result same = dfsim("diff " + (d / "a") + " " + (d / "a/summary.json"));
  CHECK(same.code == 0);
  CHECK(std::regex_search(same.out, std::regex(R"(([0-9]+) values compared \(1 kernels\): \1 identical, 0 within ±2 %, 0 beyond)")));
  Result moved = dfsim("diff " + (d / "a") + " " + (d / "b") + " --junit " + (d / "d.xml"));
  CHECK(moved.code == 1);
  CHECK(std::regex_search(moved.out, std::regex(R"(\nsim_time_ns +[0-9.]+ +[0-9.]+ +-[0-9.]+ % +MOVED\n)")));
  CHECK(std::regex_search(moved.out, std::regex(R"(kernels\[add_y\]\.duration_ns .*MOVED)")));
  CHECK_THAT(slurp(d / "d.xml"), Contains("<testcase classname=\"dfsim diff\" name=\"kernel add_y\">\n      <failure"));
  // No tolerance accepts a change from zero, a changed string or a metric only on one side.
  Result loose = dfsim("diff " + (d / "a") + " " + (d / "b") + " --tolerance 1e9%");
  CHECK(loose.code == 1);
  CHECK(std::regex_search(loose.out, std::regex(R"(\noffchip\.ideal +false +true +changed +MOVED\n)")));
  CHECK(std::regex_search(loose.out, std::regex(R"(\nunits\.by_kind\.dram\.busy_ns +[0-9.]+ +- +only in A\n)")));
  // Bad input: exit 2, one line.
  Result bad = dfsim("diff " + (d / "a") + " " + w);
  CHECK(bad.code == 2);
  CHECK(bad.out == w + ": /format: expected the summary.json of a dfsim run (\"format\": \"dfsim.summary\") or of a "
                       "dfsim serve run (\"dfsim.serve.summary\")\n");
  CHECK(dfsim("diff " + (d / "a") + " " + (d / "none")).code == 2);
  CHECK(dfsim("diff " + (d / "a") + " " + (d / "a") + " --tolerance lots").code == 2);
  // A plain decimal, at most one % after it: hex was read as 16 %, "2%%" as 2 %.
  for (const char* t : {"0x10%", "2%%", "nan", "-1"}) {
    INFO(t);
    Result r = dfsim("diff " + (d / "a") + " " + (d / "a") + " --tolerance " + t);
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Contains("--tolerance: expected a percentage >= 0 such as 2%, got \"" + std::string(t) + "\""));
  }
  CHECK(dfsim("diff " + (d / "a") + " " + (d / "a") + " --tolerance 0.5").code == 0);
  // Kernels are matched by name whatever their order (the first of a name on each side), and
  // one only in B is reported as such.
  json c = json::parse(slurp(d / "a/summary.json"));
  json add_y = c["kernels"][0], twice = add_y;
  twice["duration_ns"] = 1.0;
  c["kernels"] = json::array({json{{"name", "x"}, {"duration_ns", 5.0}}, add_y, twice});
  write(d / "c.json", c.dump());
  Result reordered = dfsim("diff " + (d / "a") + " " + (d / "c.json"));
  CHECK(reordered.code == 1);
  CHECK_THAT(reordered.out, !Contains("kernels[add_y]"));  // matched with its first namesake: identical
  CHECK(std::regex_search(reordered.out, std::regex(R"(\nkernels\[x\] +- +present +only in B\n)")));
  CHECK(std::regex_search(reordered.out, std::regex(R"(values compared \(2 kernels\): [0-9]+ identical, 0 within ±2 %, 1 beyond)")));
}

TEST_CASE("diff: two dfsim serve runs compare metric by metric, a serve run and a run do not", "[diff]") {
  // Until 2026-12-07 diff read run summaries only: serving configurations could not be compared.
  TempDir d("diff_serve");
  const std::string serve = "serve -q --model llama-3.1-8b --step-table " +
                            repo("workloads/serving/llama-3.1-8b_spyre_steps.csv") + " --no-trace -n 40 ";
  REQUIRE(dfsim(serve + "--rate 0.5 -o " + (d / "a")).code == 0);
  // The same run with the same table at another path: the table's path (in step_times) is
  // where the input was, not a result, and moves nothing (it was a changed string, exit 1).
  fs::copy_file(repo("workloads/serving/llama-3.1-8b_spyre_steps.csv"), d.path / "copy.csv");
  REQUIRE(dfsim("serve -q --model llama-3.1-8b --step-table " + (d / "copy.csv") + " --no-trace -n 40 --rate 0.5 -o " +
                (d / "a2")).code == 0);
  REQUIRE(dfsim(serve + "--rate 2 -o " + (d / "b")).code == 0);
  REQUIRE(json::parse(slurp(d / "a/summary.json"))["step_times"] != json::parse(slurp(d / "a2/summary.json"))["step_times"]);
  Result same = dfsim("diff " + (d / "a") + " " + (d / "a2"));  // deterministic: nothing moves
  CHECK(same.code == 0);
  CHECK(std::regex_search(same.out, std::regex(R"(([0-9]+) values compared \(0 kernels\): \1 identical, 0 within ±2 %, 0 beyond)")));
  Result moved = dfsim("diff " + (d / "a") + " " + (d / "b") + " --junit " + (d / "s.xml"));
  CHECK(moved.code == 1);
  CHECK(std::regex_search(moved.out, std::regex(R"(\noffered_rate +0\.5 +2(\.0)? +\+300\.00 % +MOVED\n)")));
  CHECK(std::regex_search(moved.out, std::regex(R"(\nttft_ms\.p50 +[0-9.]+ +[0-9.]+ +\+[0-9.]+ % +MOVED\n)")));
  CHECK_THAT(slurp(d / "s.xml"), Contains("<testcase classname=\"dfsim diff\" name=\"summary\">\n      <failure"));
  // A run's summary against a serve run's: exit 2, one line naming both.
  REQUIRE(dfsim("run -q -w " + repo("workloads/add_2048x1024.json") + " -o " + (d / "r") + " --set sim.trace=false").code == 0);
  Result mixed = dfsim("diff " + (d / "a") + " " + (d / "r"));
  CHECK(mixed.code == 2);
  CHECK(mixed.out == (d / "r/summary.json") + ": /format: a dfsim run summary, and A (" + (d / "a/summary.json") +
                         ") is a dfsim serve one: compare two runs of one kind\n");
}

TEST_CASE("accuracy: a file of which no record can be simulated fails (exit 1) and says so", "[accuracy]") {
  // It printed an empty table, "0 simulated", and exited 0.
  TempDir d("acc_none");
  write(d / "r.csv", "id,op,cores,rows,cols,measured_kernel_us\nr1,frob,1,64,64,10\nr2,frob,1,64,64,12\n");
  Result r = dfsim("accuracy -q --records " + (d / "r.csv") + " --out " + (d / "o"));
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Contains("none of the 2 records could be simulated"));
  CHECK_THAT(slurp(d / "o/skipped.csv"), Contains("r2,frob,"));  // the reasons stay
}

TEST_CASE("accuracy: rows run in child processes and rows that cannot run are listed with the reason and counted", "[accuracy]") {
  TempDir d("acc");
  write(d / "r.csv",
        "id,op,cores,rows,cols,N,params,measured_kernel_us,analytical_model_us\n"
        "r1,add,32,2048,1024,,,109.66,107.961\n"
        "r2,mmwd,32,1024,2048,2048,\"WD_M=8 WD_N=4 WD_K=1\",300,\n"
        "r3,frobnicate,32,64,64,,,10,\n");
  Result r = dfsim("accuracy --records " + (d / "r.csv") + " --jobs 2 --out " + (d / "o"));
  CHECK(r.code == 0);
  std::string csv = slurp(d / "o/accuracy.csv");
  // r1 moves a and b in, y out: 3 x 4 MiB = 12582912 bytes off-chip; the records give no hbm_bytes.
  CHECK(std::regex_search(csv, std::regex(R"(^id,op,category,cores,shape,measured_us,simulated_us,error_pct,analytical_model_us,record_hbm_bytes,simulated_offchip_bytes
r1,add,pointwise,32,2048x1024,109.66,[0-9.]+,-?[0-9.]+,107.961,,12582912
r2,mmwd,matmul,32,1024x2048x2048,300,[0-9.]+,-?[0-9.]+,,,[0-9]+
$)")));
  CHECK(slurp(d / "o/skipped.csv") ==
        "id,op,reason\nr3,frobnicate,\"op 'frobnicate' has no op graph builder (sim/regress/record_graph.cpp)\"\n");
  CHECK_THAT(r.out, Contains("3 records: 2 simulated, 1 skipped"));
  CHECK_THAT(r.out, Contains("1 row(s) of frobnicate: op \"frobnicate\" has no op graph builder"));
  // --jobs does not change the results; --keep-runs keeps each record's graph and run, named
  // by its line in the CSV and its op, and a later call replaces them all.
  CHECK(dfsim("accuracy --records " + (d / "r.csv") + " --jobs 1 -q --keep-runs --out " + (d / "p")).code == 0);
  CHECK(slurp(d / "p/accuracy.csv") == csv);
  CHECK(fs::exists(d / "p/runs/2-add/graph.json"));
  CHECK(fs::exists(d / "p/runs/3-mmwd/out/summary.json"));
  std::smatch r1_time;
  REQUIRE(std::regex_search(csv, r1_time, std::regex(R"(\nr1,add,pointwise,32,2048x1024,109.66,([0-9.]+),)")));
  // accuracy.csv has the kept run's time in us to 3 decimals (compared as numbers: a digit
  // string compare failed whenever the rounding carried, 108.859 against 108858.75 ns).
  const double kept_ns = ojson::parse(slurp(d / "p/runs/2-add/out/summary.json"))["sim_time_ns"].get<double>();
  CHECK(std::abs(kept_ns / 1000.0 - std::stod(r1_time[1].str())) <= 0.0005 + 1e-9);
  // A kept summary names its graph where it stays (it named a deleted temporary directory, a
  // different one each call).
  CHECK_THAT(slurp(d / "p/runs/2-add/out/summary.json"), Contains("\"file\": \"" + (d / "p") + "/runs/2-add/graph.json\""));
  Result again = dfsim("accuracy --records " + (d / "r.csv") + " --only add -q --keep-runs --out " + (d / "p"));
  CHECK(again.code == 0);
  CHECK_THAT(again.out, Contains("skipped.csv and " + (d / "p") + "/runs/"));
  CHECK(fs::exists(d / "p/runs/2-add/graph.json"));
  CHECK_FALSE(fs::exists(d / "p/runs/3-mmwd"));
  // The shipped records are found without --records; --only selects ops.
  Result shipped = dfsim("accuracy --only add,mm -q --jobs 2 --out " + (d / "s"));
  CHECK(shipped.code == 0);
  CHECK_THAT(shipped.out, Contains("4 records: 4 simulated, 0 skipped"));

  write(d / "bad.csv", "id,op,cores,rows,cols,measured_kernel_us\nx,add,32,2048,oops,100\n");
  Result bad = dfsim("accuracy --records " + (d / "bad.csv") + " --out " + (d / "q"));
  CHECK(bad.code == 2);
  CHECK(bad.out == (d / "bad.csv") + ": line 2, column cols: expected an integer >= 0, got \"oops\"\n");
  CHECK_FALSE(fs::exists(d / "q/accuracy.csv"));
  write(d / "bad.csv", "id,op,cores,rows,measured_kernel_us\nx,add,32,2048,100\n");
  CHECK(dfsim("accuracy --records " + (d / "bad.csv")).out ==
        (d / "bad.csv") + ": line 1: missing column \"cols\" (see bench-ops.md)\n");
  CHECK(dfsim("accuracy --records " + (d / "none.csv")).code == 2);
  // Every column dfsim reads is checked before any run: no silent default for a bad value.
  auto refused = [&](const std::string& csv, const std::string& says) {
    write(d / "bad.csv", csv);
    Result r = dfsim("accuracy --records " + (d / "bad.csv") + " --out " + (d / "q"));
    INFO(csv);
    CHECK(r.code == 2);
    CHECK(r.out == (d / "bad.csv") + ": " + says + "\n");
  };
  const std::string head = "id,op,cores,rows,cols,measured_kernel_us";
  refused(head + ",lx_planning\nx,add,32,2048,1024,100,abc\n", "line 2, column lx_planning: expected 0 or 1, got \"abc\"");
  refused(head + ",hbm_bytes\nx,add,32,2048,1024,100,abc\n", "line 2, column hbm_bytes: expected an integer >= 0, got \"abc\"");
  refused(head + "\nx,add,0,2048,1024,100\n", "line 2, column cores: expected a core count >= 1, got \"0\"");
  refused(head + ",cores\nx,add,32,2048,1024,100,8\n", "line 1: column \"cores\" given twice");
  // A size of 0 (its graph was refused as a skipped row, named by a generated graph's JSON
  // path) and a measurement's spread that is no percentage.
  refused(head + "\nx,add,32,0,1024,100\n", "line 2, column rows: expected a size >= 1, got \"0\"");
  refused(head + ",measured_cv_pct\nx,add,32,2048,1024,100,abc\n",
          "line 2, column measured_cv_pct: expected a percentage in [0, 1000], got \"abc\"");
  refused(head + ",measured_cv_pct\nx,add,32,2048,1024,100,-3\n",
          "line 2, column measured_cv_pct: expected a percentage in [0, 1000], got \"-3\"");
  CHECK_FALSE(fs::exists(d / "q/accuracy.csv"));
  // More cores than the config has: skipped, saying so (it ran on 32 and was labelled 33); with no
  // other record, nothing was simulated: exit 1.
  write(d / "big.csv", head + "\nx,add,33,2048,1024,100\n");
  Result big = dfsim("accuracy -q --records " + (d / "big.csv") + " --out " + (d / "q"));
  CHECK(big.code == 1);
  CHECK_THAT(big.out, Contains("add: measured on 33 cores, the config has 32 (card.cores)"));
}

namespace {

// A category's pinned count and RMS error % in `dfsim accuracy`'s table `out`: worse by more than
// half a point fails, and so does better (re-pin, and say so in docs/accuracy.md).
struct Pin {
  const char* category;
  int records;
  double rms_pct;
};
void check_pins(const std::string& out, std::initializer_list<Pin> pins) {
  for (const Pin& p : pins) {
    std::smatch m;
    REQUIRE(std::regex_search(out, m, std::regex(std::string("\n") + p.category + R"( +([0-9]+) +([0-9.]+) )")));
    INFO(p.category);
    CHECK(std::stoi(m[1]) == p.records);
    CHECK(std::stod(m[2]) <= p.rms_pct + 0.5);
    CHECK(std::stod(m[2]) >= p.rms_pct - 0.5);
  }
}

}  // namespace

// Issue 13: the per-category RMS error of the shipped records is pinned, so a change that
// worsens fidelity fails here. Today's values (2026-12-03, configs/spyre.json); a change that
// improves a category updates its pin and docs/accuracy.md together.
TEST_CASE("accuracy: per-category RMS error of the shipped records is pinned", "[accuracy][fidelity]") {
  TempDir d("pin");
  Result r = dfsim("accuracy --jobs 2 -q --out " + (d / "o"));
  REQUIRE(r.code == 0);
  // After issue 9 (transformer op set): 106 of 110 records run (softmax, bmm, fused chains and
  // coarse tiles now compile); the new records are the worst fits (docs/accuracy.md).
  // 2026-12-04: LX_PLANNING=0 maps to lx_planning "off" (a fused chain's intermediates go
  // through HBM, as on the card): pointwise 16.1 -> 9.8 (add6 8192x1024 -65.9 -> -15.6 %).
  // A forced coarse tile whose share of a tensor exceeds LX leaves the kernel's tensors in HBM:
  // softmax 21.1 -> 13.0 (1 core 2048x512 untiled -34.2 -> -6.2 %, 2 cores 4096x2048 -52.0 -> -32.3 %).
  // cat along a non-stick dim is a select over the output: transport 27.9 -> 16.9 (cat0 -53.6
  // and -50.6 -> -4.0 and +1.5 %).
  // 2026-12-05: the four skipped forced divisions are in (a batch split of a shared weight keeps
  // the batches; a division beyond SENCORES drops WD_M as the card did): bmm 18 -> 22 records,
  // 67.1 -> 65.0; all 106 -> 110, 30.8 -> 32.0 (the new records are -12 ... -65 %).
  // 2026-12-05: a kernel's launch (card.kernel_launch_ns 1.5 us): pointwise 9.8 -> 6.9, broadcast
  // 15.6 -> 13.3, reduction 17.4 -> 16.9, softmax 13.0 -> 12.8, matmul 18.0 -> 17.7, bmm 65.0 ->
  // 64.8, all 32.0 -> 31.6 (small kernels and chains of kernels).
  // 2026-12-05: the fold stream limit refitted to the facts' 74 % of peak (96 -> 64): matmul
  // 17.7 -> 16.0 (compute-bound records on 1-8 cores), bmm 64.8 -> 63.9, all 31.6 -> 31.0.
  // 2026-12-05: the tensors of batched matmuls in the card's layout (memory.hbm_layout
  // "batched"): bmm 63.9 -> 53.3, all 31.0 -> 26.7; no other category moves.
  // 2026-12-05: the matmul estimate reads the laid-out operands' device runs and counts a core's
  // DMA requests in flight: the compiler's own divisions of the 8 unforced bmm records run 2 %
  // faster in all, further from the card: bmm 53.3 -> 54.1, all 26.7 -> 27.0.
  // 2026-12-05: a matmul with a K split runs on one corelet of each core (the card's backend):
  // matmul 16.0 -> 15.8 (mmwd 4096x2048x4096 K=4 -15.0 -> -7.0 %, 2048x4096x2048 K=4 -16.7 ->
  // +18.5 %).
  // 2026-12-05: a coarse-tile loop's iterations run one after another on each core (iteration
  // k's loads take over the space of what iteration k - 1 stores): softmax 12.8 -> 11.7 (the
  // tiled 1- and 2-core records 4-5 points closer; the 32-core ones within 1 point); each
  // iteration 688 ns after the one before (card.loop_iteration_ns): softmax 11.7 -> 11.1.
  // 2026-12-05: the memory ports' request rate (the facts' 7.5 ns per request per port) on the
  // requests of tensors in the card's stick layout (memory.port_request_scope "stick_layout"),
  // and in the matmul estimate: bmm 54.1 -> 43.9 (bmm_wd_3d2d -27 ... -49 % -> -23 ... +2 %,
  // default-layout bmm_layout and bmm_wd closer, bmm_layout 2x1024x2048x1024 +4.5 -> +76.8 %),
  // all 27.0 -> 22.9; no other category moves (their tensors are row-major).
  // 2026-12-06: a batch of 1 (a first stored dim of 1) is in the card's layout too, its own
  // row-major bytes, and the rate charges its requests: bmm 43.9 -> 41.4 (bmm_wd 1x1024x2048x1024
  // and 1x2048x2048x1024 on 8 cores -57.1, -58.9 -> -29.3, -34.3 %), all 22.9 -> 22.0.
  // 2026-12-06: a shared operand tile reaches at most 8 cores per multicast (ring.
  // multicast_max_cores; more sharers, one load per group of 8): matmul 15.8 -> 14.0 (mmwd
  // 2048x1024x8192 2 x 16 -29.8 -> -13.4 %, 1024x2048x2048 16 x 2 -22.3 -> -14.0 %), bmm 41.4 ->
  // 40.9 (bmm_wd_3d2d on the compiler's own grids -16.2, -22.6 -> +2.5, -1.2 %), all 22.0 -> 21.6.
  // 2026-12-06: a reduction over the stick dim stores a 128-B stick per result (the records'
  // hbm_bytes count them): reduction 16.9 -> 14.9 (amax 8192x1024 -20.4 -> -13.1 %, 16384x2048
  // -23.9 -> -20.2 %, sumrow 8192x2048 -17.1 -> -13.3 %), all 21.6 -> 21.5.
  // 2026-12-06: a 2-D transpose that moves the stick runs in blocks over a grid of cores, runs
  // long on both sides: transport 16.9 -> 16.2 (transpose 4096x2048 +19.8 -> -3.8 %, 512x2048
  // +4.1 -> -11.6 %), all 21.5 -> 21.4.
  // 2026-12-06: a column sum whose kept split is short runs splits the reduced rows, partials
  // over the ring: reduction 14.9 -> 13.2 (ctsum 4096x2048 +27.5 -> -19.6 %), all 21.4 -> 21.3.
  // 2026-12-06: a share too small for the full pipelining tiles gets as many as keep 16 KiB
  // each, not one: pointwise 6.9 -> 6.5 (gelu 512x512 -16.7 -> -11.1 %), all 21.3.
  // 2026-12-06: transpose blocks cut for pipelining down to 512-B runs (a core's loads overlap
  // its stores): transport 16.2 (transpose 4096x2048 -3.8 -> +5.2 %, mean -12.2 -> -11.4).
  // 2026-12-07: ring links serve bursts in the order they arrive, not the order they are booked
  // (ring.link_order "arrival"; latencies no longer compound over the hops): pointwise 6.5 -> 6.3,
  // broadcast 13.3 -> 13.2, softmax 11.1 -> 11.0, matmul 14.0 -> 14.6 (mmwd 2048x1024x8192 2 x 16
  // -13.4 -> -24.5 %: its single-stick A loads waited on the ring; 2048x4096x2048 K=4 +18.5 ->
  // +11.6 %), bmm 40.9 -> 40.6, all 21.3 -> 21.2.
  // 2026-12-07 (twenty-eighth session): the LPDDR5 channel hash mixes the bits above the channel
  // (a digit sum sent some strides to one or two channels): matmul 14.6 -> 14.4 (mmwd
  // 4096x2048x4096 -5.4 -> -4.7 %, 1024x2048x2048 -15.5 -> -16.8 %), softmax 11.0 -> 11.1.
  check_pins(r.out, {{"pointwise", 25, 6.3}, {"broadcast", 11, 13.2}, {"reduction", 8, 13.2},
                     {"transport", 11, 16.2}, {"softmax", 10, 11.1}, {"matmul", 23, 14.4},
                     {"bmm", 22, 40.6}, {"all", 110, 21.2}});
}

// The coarse-tiled matmuls of torch-spyre's published cost-model notes
// (workloads/device-records/cost-model-notes.csv: 86 kernels, none in the shipped file) are
// pinned the same way. 2026-12-06: a coarse loop over K runs its parts one after another, the
// running sum through HBM: matmul 33.8 -> 31.7, bmm 64.8 -> 47.8, all 43.9 -> 36.5 (docs/accuracy.md).
// 2026-12-06 (twenty-first session): the matmul estimate counts side-by-side runs and fill and
// drain and searches K splits for one-batch problems (docs/compiler.md): the 32-core row-tiled
// matmuls choose other divisions, matmul 31.7 -> 25.6, all 36.5 -> 32.7.
// 2026-12-07: ring links serve bursts in the order they arrive: matmul 25.6 -> 25.5, bmm 47.8 ->
// 47.4, all 32.7 -> 32.5.
// 2026-12-07 (twenty-eighth session): the LPDDR5 channel hash mixes the bits above the channel:
// matmul 25.5 -> 25.8, all 32.5 -> 32.7.
TEST_CASE("accuracy: the RMS error of the records of torch-spyre's cost-model notes is pinned", "[accuracy][fidelity]") {
  TempDir d("pin-coarse");
  Result r = dfsim("accuracy --records workloads/device-records/cost-model-notes.csv --jobs 2 -q --out " + (d / "o"));
  REQUIRE(r.code == 0);
  check_pins(r.out, {{"matmul", 64, 25.8}, {"bmm", 22, 47.4}, {"all", 86, 32.7}});
}

TEST_CASE("validate: the shipped suites check, a bad one exits 2 with its JSON path", "[regress]") {
  Result ok = dfsim("validate tests/regression/workloads-spyre.suite.json tests/regression/workloads-small.suite.json");
  CHECK(ok.code == 0);
  CHECK_THAT(ok.out, Contains("tests/regression/workloads-spyre.suite.json: ok (dfsim.suite, 17 cases)"));
  TempDir d("validate");
  ojson s = small_suite();
  s["cases"][1]["name"] = "add";
  write(d / "s.json", s.dump());
  Result bad = dfsim("validate " + (d / "s.json"));
  CHECK(bad.code == 2);
  CHECK(bad.out == (d / "s.json") + ": /cases/1/name: duplicate case name \"add\"\n");
}

TEST_CASE("regress: a run that does not finish is a regression (exit 1, a JUnit error) and an unwritable --junit exits 2 first",
          "[regress]") {
  TempDir d("deadlock");
  ojson s = small_suite();
  s["cases"][1] = {{"name", "stuck"}, {"workload", repo("tests/data/deadlock.kernels.json")}};
  std::string f = d / "s.json";
  write(f, s.dump());
  Result r = dfsim("regress " + f + " --only stuck --junit " + (d / "j.xml"));
  CHECK(r.code == 1);
  CHECK_THAT(r.out, Contains("stuck                        the run did not finish (exit 1): dfsim: "));
  CHECK_THAT(slurp(d / "j.xml"), Contains("<testcase classname=\"cli-test\" name=\"stuck\">\n      <error message=\"the run did not finish (exit 1)"));
  // A missing directory is made (as for compile -o); a path through a file cannot be.
  Result w = dfsim("regress " + f + " --junit " + f + "/j.xml");
  CHECK(w.code == 2);
  CHECK(w.out == f + "/j.xml: cannot be written: " + f + ": output path exists and is not a directory (--junit)\n");  // before any run: no table
}

// An expected value of the wrong type ("x" for a cycle count) was a failed comparison (exit 1,
// "changed"), as if the simulator had regressed; it is a suite error, exit 2, at its JSON path.
TEST_CASE("regress: an expected value of the wrong type is a suite error (exit 2) naming its path", "[regress]") {
  TempDir d("wrong_type");
  std::string f = d / "s.json";
  ojson s = small_suite();
  s["cases"][0]["expect"]["sim_time_ns"] = {{"value", "fast"}, {"exact", true}};
  write(f, s.dump());
  Result r = dfsim("regress " + f + " --only add");
  CHECK(r.code == 2);
  REQUIRE(cli_test::lines(r.out).size() == 1);  // no table
  CHECK_THAT(r.out, Contains(f + ": /cases/0/expect/sim_time_ns/value: expected a number: the run's sim_time_ns is a number ("));
  CHECK_THAT(r.out, Contains("), got fast"));
}

// A bad "set" in the suite's "defaults" was reported at /cases/0/set, a place with no "set".
TEST_CASE("regress: a bad set in defaults is named at /defaults/set, one in a case at the case", "[regress]") {
  TempDir d("defaults_set");
  std::string f = d / "s.json";
  ojson s = small_suite();
  s["defaults"]["set"] = {"core.lx.nope=1"};
  write(f, s.dump());
  Result r = dfsim("regress " + f, "2>&1 >/dev/null");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains(f + ": /defaults/set: core.lx.nope: unknown parameter"));
  s["defaults"]["set"] = {"core.pt.rows=8"};
  s["cases"][1]["set"] = {"core.pt.rows=0"};
  write(f, s.dump());
  r = dfsim("regress " + f, "2>&1 >/dev/null");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains(f + ": /cases/1/set: core.pt.rows: expected an integer in [1, 4096], got 0"));
}
