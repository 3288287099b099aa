// dfsim run --placement (issue 15): several workloads on one system. Two independent workloads
// on separate cards each take their solo time; on one shared card each takes at least its solo
// time; on disjoint core ranges of one card they use only their cores; "after" waits for the
// other's end and "start_ns" delays the first task exactly; bad placements exit 2 with one line.
// --solo reports each one's time alone (exactly a plain run's) and its slowdown; held_by_others_ns
// the time its ready instances waited for a unit another workload held; the trace draws each
// workload from its start to its end and its waits on the others, with the summary's figures.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <set>

#include "cli_helpers.h"

using namespace cli_test;
using nlohmann::json;
using Catch::Contains;

namespace {

const std::string kDrawer = " -c configs/spyre-drawer.json --trace off ";
// card.kernel_launch_ns of the spyre presets: a workload's first task fires this long after its
// release, and its duration (from that first task) is a plain run's sim_time_ns minus it.
constexpr double kLaunch = 1500;

double solo_ns(const TempDir& d, const std::string& workload, const std::string& tag) {
  REQUIRE(dfsim("run -q -w " + workload + kDrawer + "-o " + (d.path / tag).string()).code == 0);
  return read_json(d.path / tag / "summary.json")["sim_time_ns"].get<double>();
}

// Writes a placement of add_2048x1024 and matmul_1024 on the given cards; returns its "placement" section.
json place(const TempDir& d, const std::string& tag, const std::string& add_cards, const std::string& mm_cards,
           const std::string& extra = "") {
  fs::path f = d.path / (tag + ".json");
  std::ofstream(f) << R"({"format": "dfsim.placement", "version": 1, "name": ")" << tag << R"(", "workloads": [
      {"name": "add", "workload": ")" << fs::absolute("workloads/add_2048x1024.json").string() << R"(", "cards": )" << add_cards << R"(},
      {"name": "mm", "workload": ")" << fs::absolute("workloads/matmul_1024.json").string() << R"(", "cards": )" << mm_cards << "}" << extra << "]}";
  Result r = dfsim("run -q --placement " + f.string() + kDrawer + "-o " + (d.path / tag).string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  return read_json(d.path / tag / "summary.json")["placement"];
}

double dur(const json& w) { return w["duration_ns"].get<double>(); }

// Writes a placement of the given workload entries and runs it; returns the run's directory.
fs::path run_placement(const TempDir& d, const std::string& tag, const std::string& workloads,
                       const std::string& trace = "--trace off") {
  fs::path f = d.path / (tag + ".json");
  std::ofstream(f) << R"({"format": "dfsim.placement", "version": 1, "name": ")" << tag << R"(", "workloads": [)"
                   << workloads << "]}";
  Result r = dfsim("run -q --placement " + f.string() + " -c configs/spyre-drawer.json " + trace + " -o " +
                   (d.path / tag).string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  return d.path / tag;
}

std::string entry(const std::string& name, const std::string& file, const std::string& more) {
  return R"({"name": ")" + name + R"(", "workload": ")" + fs::absolute(file).string() + R"(", )" + more + "}";
}

}  // namespace

TEST_CASE("placement: two workloads on separate cards take their solo times and on one card at least theirs", "[placement][cli]") {
  TempDir d("placement");
  fs::create_directories(d.path);
  double add = solo_ns(d, "workloads/add_2048x1024.json", "solo_add");
  double mm = solo_ns(d, "workloads/matmul_1024.json", "solo_mm");
  json apart = place(d, "apart", "[0]", "[1]");
  REQUIRE(apart.size() == 2);
  CHECK(apart[0]["start_ns"] == kLaunch);
  CHECK(apart[1]["start_ns"] == kLaunch);
  // Nothing is shared but the simulation: each takes its solo time, within 1 %. Not exactly:
  // the other card's events change the order in which SystemC runs processes due at the same
  // instant (its timed-event queue is a heap, not first-in first-out, as far as we can tell),
  // and the DMA engines book memory and ring in the order they run. Measured: the add 106.414
  // us against 106.861 alone (-0.4 %), the matmul 68.907 against 68.821 (+0.1 %).
  CHECK(dur(apart[0]) == Approx(add - kLaunch).epsilon(1e-2));
  CHECK(dur(apart[1]) == Approx(mm - kLaunch).epsilon(1e-2));
  // On one card they share its memory, ring and cores: each is slower than alone.
  json shared = place(d, "shared", "[0]", "[0]");
  CHECK(dur(shared[0]) >= add);
  CHECK(dur(shared[1]) >= mm);
  // "after": the add on card 2 starts when the matmul on card 1 has ended.
  json after = place(d, "after", "[2]", "[1]", R"(, {"name": "add2", "workload": ")" +
                                                 fs::absolute("workloads/add_2048x1024.json").string() +
                                                 R"(", "cards": [2], "after": "mm"})");
  REQUIRE(after.size() == 3);
  CHECK(after[2]["start_ns"].get<double>() >= after[1]["end_ns"].get<double>());
  CHECK(after[2]["after"] == "mm");
}

TEST_CASE("placement: bad placements exit 2 with one line naming the path", "[placement][cli]") {
  TempDir d("placement_bad");
  fs::create_directories(d.path);
  auto bad = [&](const std::string& workloads, const std::string& says) {
    fs::path f = d.path / "p.json";
    std::ofstream(f) << R"({"format": "dfsim.placement", "version": 1, "name": "p", "workloads": [)" << workloads << "]}";
    Result r = dfsim("run --placement " + f.string() + kDrawer + "-o " + (d.path / "out").string(), "2>&1 >/dev/null");
    INFO(workloads);
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Contains(says));
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
    CHECK_FALSE(fs::exists(d.path / "out" / "summary.json"));
  };
  const std::string add = fs::absolute("workloads/add_2048x1024.json").string();
  bad(R"({"name": "a", "workload": ")" + add + R"(", "cards": [0, 1]})", "/workloads/0/cards: " + add + " runs on 1 card(s)");
  bad(R"({"name": "a", "workload": ")" + add + R"(", "cards": [0], "after": "b"})", "/workloads/0/after");
  bad(R"({"name": "a", "workload": ")" + add + R"(", "cards": [9]})",
      "/workloads/0/cards/0: card 9 is beyond the system's 8 card(s), 0..7 (system.cards)");
  // validate checks the same against the config it is given.
  fs::path f = d.path / "p9.json";
  std::ofstream(f) << R"({"format": "dfsim.placement", "version": 1, "name": "p", "workloads": [{"name": "a", "workload": ")"
                   << add << R"(", "cards": [0, 8]}]})";
  Result v = dfsim("validate " + f.string() + " -c configs/spyre-drawer.json", "2>&1 >/dev/null");
  CHECK(v.code == 2);
  CHECK_THAT(v.out, Contains("/workloads/0/cards/1: card 8 is beyond the system's 8 card(s)"));
  bad(R"({"name": "a/b", "workload": ")" + add + R"(", "cards": [0]})", "/workloads/0/name");
  bad(R"({"name": "a", "workload": ")" + add + R"(", "cards": [3, 3]})", "/workloads/0/cards/1: card 3 listed twice");
  // Who waited on whom is a square table: 3 000 small workloads on one card took 70 s and 2 GB
  // after a 0.02 s simulation. At most 1 024, refused before any is loaded.
  std::string many;
  for (int i = 0; i < 1025; ++i)
    many += (i ? ", " : "") + std::string(R"({"name": "w)") + std::to_string(i) + R"(", "workload": ")" + add + R"(", "cards": [0]})";
  bad(many, "/workloads: 1025 workloads, more than 1024 in one placement");
}

TEST_CASE("placement: two workloads on disjoint core ranges of one card use only their cores", "[placement][cli]") {
  TempDir d("placement_cores");
  fs::create_directories(d.path);
  // Alone on 16 cores (the op graph asks for 32; a range of 16 compiles it for 16).
  REQUIRE(dfsim("run -q -w workloads/add_2048x1024.json --cores 16" + kDrawer + "-o " + (d.path / "solo").string()).code == 0);
  double solo = read_json(d.path / "solo" / "summary.json")["sim_time_ns"].get<double>();
  const std::string add = "workloads/add_2048x1024.json";
  fs::path out = run_placement(d, "halves",
                               entry("lo", add, R"("cards": [0], "cores": {"first": 0, "count": 16})") + ", " +
                                   entry("hi", add, R"("cards": [0], "cores": {"first": 16, "count": 16})"),
                               "--trace units");
  json pl = read_json(out / "summary.json")["placement"];
  REQUIRE(pl.size() == 2);
  CHECK(pl[1]["cores"]["first"] == 16);
  CHECK(pl[1]["cores"]["count"] == 16);
  // They share the card's DRAM and ring, not cores: each at least its solo time on 16 cores.
  CHECK(dur(pl[0]) >= solo);
  CHECK(dur(pl[1]) >= solo);
  // Every slice of "lo" is on a track of cores 0..15, every one of "hi" on cores 16..31, and
  // each workload ran on all 16 of its cores.
  json trace = read_json(out / "trace.json")["traceEvents"];
  std::map<int, std::string> process;
  for (const json& e : trace)
    if (e["ph"] == "M" && e["name"] == "process_name") process[e["pid"].get<int>()] = e["args"]["name"].get<std::string>();
  std::set<int> lo_cores, hi_cores;
  for (const json& e : trace) {
    if (e["ph"] != "X") continue;
    const std::string name = e["name"].get<std::string>(), where = process[e["pid"].get<int>()];
    if (where.rfind("core ", 0) != 0) continue;
    int core = std::stoi(where.substr(5));
    if (name.rfind("lo/", 0) == 0) lo_cores.insert(core);
    if (name.rfind("hi/", 0) == 0) hi_cores.insert(core);
  }
  REQUIRE(lo_cores.size() == 16);
  REQUIRE(hi_cores.size() == 16);
  CHECK(*lo_cores.begin() == 0);
  CHECK(*lo_cores.rbegin() == 15);
  CHECK(*hi_cores.begin() == 16);
  CHECK(*hi_cores.rbegin() == 31);
}

TEST_CASE("placement: start_ns delays a workload's first task exactly, and with after the later of the two", "[placement][cli]") {
  TempDir d("placement_start");
  fs::create_directories(d.path);
  const std::string add = "workloads/add_2048x1024.json", mm = "workloads/matmul_1024.json";
  // Alone on its card: released at 7.5 us, its first task fires after the kernel's launch.
  json pl = read_json(run_placement(d, "late", entry("a", add, R"("cards": [0], "start_ns": 7500)")) / "summary.json")["placement"];
  CHECK(pl[0]["start_ns"] == 7500.0 + kLaunch);
  CHECK(pl[0]["not_before_ns"] == 7500.0);
  // after "mm" (about 65 us) and not before 1 us: the end of mm wins; not before 200 us: that wins.
  json early = read_json(run_placement(d, "early", entry("mm", mm, R"("cards": [1])") + ", " +
                                                       entry("a", add, R"("cards": [2], "after": "mm", "start_ns": 1000)")) /
                         "summary.json")["placement"];
  CHECK(early[1]["start_ns"].get<double>() >= early[0]["end_ns"].get<double>());
  CHECK(early[0]["end_ns"].get<double>() > 1000);
  json later = read_json(run_placement(d, "later", entry("mm", mm, R"("cards": [1])") + ", " +
                                                       entry("a", add, R"("cards": [2], "after": "mm", "start_ns": 200000)")) /
                         "summary.json")["placement"];
  REQUIRE(later[0]["end_ns"].get<double>() < 200000);
  CHECK(later[1]["start_ns"] == 200000.0 + kLaunch);
}

TEST_CASE("placement: bad core ranges and start times exit 2 with one line naming the path", "[placement][cli]") {
  TempDir d("placement_bad_cores");
  fs::create_directories(d.path);
  const std::string add = fs::absolute("workloads/add_2048x1024.json").string();
  auto bad = [&](const std::string& more, const std::string& says, const std::string& flags = "") {
    fs::path f = d.path / "p.json";
    std::ofstream(f) << R"({"format": "dfsim.placement", "version": 1, "name": "p", "workloads": [{"name": "a", "workload": ")"
                     << add << R"(", "cards": [0])" << more << "}]}";
    Result r = dfsim("run --placement " + f.string() + kDrawer + flags + " -o " + (d.path / "out").string(), "2>&1 >/dev/null");
    INFO(more);
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Contains(says));
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
    CHECK_FALSE(fs::exists(d.path / "out" / "summary.json"));
  };
  bad(R"(, "start_ns": -1)", "/workloads/0/start_ns");
  bad(R"(, "cores": {"first": 16, "count": 17})", "/workloads/0/cores: cores 16..32 go beyond the card's 32 cores");
  bad(R"(, "cores": {"first": -1, "count": 4})", "/workloads/0/cores/first");
  bad(R"(, "cores": {"first": 0, "count": 0})", "/workloads/0/cores/count");
  bad(R"(, "cores": {"first": 0})", "/workloads/0/cores");
  bad(R"(, "cores": [0, 4])", "/workloads/0/cores");
  // --cores 32 fixes the op graph's cores: more than the range gives it.
  bad(R"(, "cores": {"first": 8, "count": 16})", "/workloads/0/cores: " + add + " runs on 32 cores, more than the 16 of cores 8..23",
      " --cores 32");
  // A compiled kernel graph fixes its cores too.
  REQUIRE(dfsim("compile " + add + " --cores 8 -o " + (d.path / "k8.json").string()).code == 0);
  fs::path f = d.path / "k.json";
  std::ofstream(f) << R"({"format": "dfsim.placement", "version": 1, "name": "p", "workloads": [{"name": "a", "workload": ")"
                   << (d.path / "k8.json").string() << R"(", "cards": [0], "cores": {"first": 0, "count": 4}}]})";
  Result r = dfsim("run --placement " + f.string() + kDrawer + "-o " + (d.path / "out").string(), "2>&1 >/dev/null");
  CHECK(r.code == 2);
  CHECK_THAT(r.out, Contains("/workloads/0/cores: ") && Contains("runs on 8 cores, more than the 4 of cores 0..3"));
}

namespace {

// Runs a placement with --solo; returns its "placement" section and the terminal output.
std::pair<json, std::string> run_solo(const TempDir& d, const std::string& tag, const std::string& workloads) {
  fs::path f = d.path / (tag + ".json");
  std::ofstream(f) << R"({"format": "dfsim.placement", "version": 1, "name": ")" << tag << R"(", "workloads": [)"
                   << workloads << "]}";
  Result r = dfsim("run --solo --placement " + f.string() + kDrawer + "-o " + (d.path / tag).string());
  INFO(r.out);
  REQUIRE(r.code == 0);
  return {read_json(d.path / tag / "summary.json")["placement"], r.out};
}

double num(const json& w, const char* key) { return w[key].get<double>(); }

}  // namespace

TEST_CASE("placement --solo: what each workload loses against its run alone", "[placement][cli]") {
  TempDir d("placement_solo");
  fs::create_directories(d.path);
  const std::string add = "workloads/add_2048x1024.json", mm = "workloads/matmul_1024.json";
  const double add_alone = solo_ns(d, add, "plain_add"), mm_alone = solo_ns(d, mm, "plain_mm");

  // Separate cards: each solo run is exactly a plain `dfsim run` of it (the same loading, one
  // card-local workload: which card does not matter), and each loses nothing beyond the 1 % of
  // the first test case; no unit is shared, so none waited for another's.
  auto [apart, apart_out] = run_solo(d, "apart", entry("add", add, R"("cards": [0])") + ", " + entry("mm", mm, R"("cards": [1])"));
  REQUIRE(apart.size() == 2);
  CHECK(num(apart[0], "solo_ns") == add_alone - kLaunch);
  CHECK(num(apart[1], "solo_ns") == mm_alone - kLaunch);
  for (const json& w : apart) {
    CHECK(num(w, "slowdown") == Approx(1.0).epsilon(1e-2));
    CHECK(num(w, "slowdown") == Approx(num(w, "duration_ns") / num(w, "solo_ns")).epsilon(1e-6));
    CHECK(num(w, "held_by_others_ns") == 0);
    CHECK(w["held_by"].empty());
  }
  CHECK_THAT(apart_out, Contains(" against alone ("));

  // Disjoint core ranges of one card: alone on its 16 cores (from its start_ns) each is faster;
  // they share the card's DRAM and ring, not a unit.
  auto [halves, halves_out] =
      run_solo(d, "halves", entry("lo", add, R"("cards": [0], "cores": {"first": 0, "count": 16})") + ", " +
                                entry("hi", add, R"("cards": [0], "cores": {"first": 16, "count": 16}, "start_ns": 5000)"));
  REQUIRE(halves.size() == 2);
  for (const json& w : halves) {
    CHECK(num(w, "slowdown") >= 1.0);
    CHECK(num(w, "held_by_others_ns") == 0);
  }
  CHECK_THAT(halves_out, Contains("loses"));

  // The same cores (both from core 0): a unit serves the earlier-listed workload's ready
  // instances first, so the later one waits on units the other holds, and only it does: never
  // longer than from its release (0) to its end. (Both lose to the shared memory as well, so
  // which slows more depends on the pair: here the memory-bound add.)
  auto [same, same_out] = run_solo(d, "same", entry("a", add, R"("cards": [0])") + ", " + entry("m", mm, R"("cards": [0])"));
  REQUIRE(same.size() == 2);
  CHECK(num(same[0], "slowdown") >= 1.0);
  CHECK(num(same[1], "slowdown") > 1.0);
  CHECK(num(same[1], "held_by_others_ns") > num(same[0], "held_by_others_ns"));
  CHECK(num(same[1], "held_by_others_ns") <= num(same[1], "end_ns"));
  CHECK(same[1]["held_by"]["a"] == same[1]["held_by_others_ns"]);
  CHECK_THAT(same_out, Contains("on units others held (a "));

  // --only NAME runs one workload alone: the solo figure --solo reported.
  fs::path f = d.path / "same.json";
  REQUIRE(dfsim("run -q --only m --placement " + f.string() + kDrawer + "-o " + (d.path / "only").string()).code == 0);
  CHECK(read_json(d.path / "only" / "summary.json")["placement"][0]["duration_ns"] == same[1]["solo_ns"]);
  // Deterministic: the same run again reports the same figures.
  CHECK(run_solo(d, "same", entry("a", add, R"("cards": [0])") + ", " + entry("m", mm, R"("cards": [0])")).first.dump() ==
        same.dump());
}

TEST_CASE("placement --solo and --only: misuse exits 2 with one line", "[placement][cli]") {
  TempDir d("placement_solo_bad");
  fs::create_directories(d.path);
  fs::path f = d.path / "p.json";
  std::ofstream(f) << R"({"format": "dfsim.placement", "version": 1, "name": "p", "workloads": [)"
                   << entry("a", "workloads/add_2048x1024.json", R"("cards": [0])") << "]}";
  auto bad = [&](const std::string& args, const std::string& says) {
    Result r = dfsim("run " + args + kDrawer + "-o " + (d.path / "out").string(), "2>&1 >/dev/null");
    INFO(args);
    CHECK(r.code == 2);
    CHECK_THAT(r.out, Contains(says));
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 1);
    CHECK_FALSE(fs::exists(d.path / "out" / "summary.json"));
  };
  bad("--only b --placement " + f.string(), "--only: " + f.string() + " has no workload \"b\"");
  bad("--solo -w workloads/add_2048x1024.json", "--solo and --only need --placement FILE");
  bad("--solo --only a --placement " + f.string(), "--solo and --only exclude each other");
}

namespace {

// summary.json's nanoseconds (6 decimals: femtosecond digits) as integer femtoseconds, and the
// trace's microseconds (6 decimals: picosecond digits) as integer picoseconds.
long long fs_of(const json& ns) { return std::llround(ns.get<double>() * 1e6); }
long long ps_of(const json& us) { return std::llround(us.get<double>() * 1e6); }
// The trace's rounding of a time to whole picoseconds (half up), as the writer does.
long long to_ps(long long fs) { return (fs + 500) / 1000; }

// The "workloads" process of a trace: its X events per track name (in trace order), or none.
std::map<std::string, std::vector<json>> workload_tracks(const json& trace) {
  int pid = -1;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "workloads") pid = e["pid"];
  std::map<std::string, std::vector<json>> out;
  if (pid < 0) return out;
  std::map<int, std::string> thread;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == pid) {
      thread[e["tid"].get<int>()] = e["args"]["name"].get<std::string>();
      out[e["args"]["name"].get<std::string>()];
    }
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == pid) out[thread.at(e["tid"].get<int>())].push_back(e);
  return out;
}

}  // namespace

TEST_CASE("placement trace: a track per workload from the summary's figures, and its waits on the others", "[placement][trace][cli]") {
  TempDir d("placement_trace");
  fs::create_directories(d.path);
  const std::string add = "workloads/add_2048x1024.json", mm = "workloads/matmul_1024.json";
  // Three workloads on the same cores of card 0: the later-listed ones wait for units the
  // earlier ones hold (a unit serves the earlier-listed workload's ready instances first).
  const std::string three = entry("a", add, R"("cards": [0])") + ", " + entry("m", mm, R"("cards": [0])") + ", " +
                            entry("b", add, R"("cards": [0], "start_ns": 2000)");
  fs::path out = run_placement(d, "units", three, "--trace units");
  json pl = read_json(out / "summary.json")["placement"];
  json trace = read_json(out / "trace.json");
  auto tracks = workload_tracks(trace);
  REQUIRE(pl.size() == 3);
  int waiting = 0;
  for (const json& w : pl) {
    const std::string name = w["name"];
    INFO(name);
    // One slice, named after the workload, from its start to its end as the summary gives them
    // (rounded to picoseconds), with its placement[] entry as args.
    REQUIRE(tracks[name].size() == 1);
    const json& s = tracks[name][0];
    CHECK(s["name"] == name);
    CHECK(s["cat"] == "workload");
    CHECK(ps_of(s["ts"]) == to_ps(fs_of(w["start_ns"])));
    CHECK(ps_of(s["ts"]) + ps_of(s["dur"]) == to_ps(fs_of(w["end_ns"])));
    CHECK(s["args"] == w);
    // Its waits: a track only if it waited; disjoint slices in time order whose wait_ns sum
    // exactly to held_by_others_ns, and per other workload to held_by's figure.
    const long long held = fs_of(w["held_by_others_ns"]);
    if (held == 0) {
      CHECK(tracks.count(name + " waiting") == 0);
      continue;
    }
    ++waiting;
    REQUIRE(tracks.count(name + " waiting") == 1);
    const auto& waits = tracks[name + " waiting"];
    REQUIRE_FALSE(waits.empty());
    long long sum_fs = 0, sum_ps = 0, prev_end = -1;
    std::map<std::string, long long> by;
    json prev_on;
    for (const json& wt : waits) {
      const long long b = ps_of(wt["ts"]), e = b + ps_of(wt["dur"]), len = fs_of(wt["args"]["wait_ns"]);
      CHECK(wt["cat"] == "wait");
      CHECK(b >= prev_end);                                  // never overlapping
      CHECK_FALSE((b == prev_end && wt["args"]["on"] == prev_on));  // touching ones differ
      CHECK(std::llabs((e - b) * 1000 - len) <= 1000);       // each end rounded by at most 0.5 ps
      std::string names;
      for (const json& o : wt["args"]["on"]) {
        CHECK(o != name);
        by[o.get<std::string>()] += len;
        if (!names.empty()) names += ", ";
        names += o.get<std::string>();
      }
      CHECK(wt["name"] == "waiting on " + names);
      sum_fs += len;
      sum_ps += e - b;
      prev_end = e;
      prev_on = wt["args"]["on"];
    }
    CHECK(sum_fs == held);
    CHECK(std::llabs(sum_ps * 1000 - held) <= 1000 * static_cast<long long>(waits.size()));
    std::map<std::string, long long> expected;
    for (const auto& [o, ns] : w["held_by"].items()) expected[o] = fs_of(ns);
    CHECK(by == expected);
  }
  CHECK(waiting >= 1);  // else the waits above were not tested
  REQUIRE(pl[1]["held_by_others_ns"].get<double>() > 0);

  // The workloads tracks are drawn from level kernels up, the same at each level; the trace
  // level changes no figure of the run; off writes no trace. Deterministic to the byte.
  fs::path k = run_placement(d, "kernels", three, "--trace kernels");
  CHECK(read_json(k / "summary.json")["placement"] == pl);
  const std::string first = slurp(k / "trace.json");
  CHECK(workload_tracks(json::parse(first)) == tracks);
  CHECK(slurp(run_placement(d, "kernels", three, "--trace kernels") / "trace.json") == first);
  fs::path off = run_placement(d, "off", three, "--trace off");
  CHECK(read_json(off / "summary.json")["placement"] == pl);
  CHECK_FALSE(fs::exists(off / "trace.json"));

  // Stopped at 100 us (a alone takes 122 us): a's and m's slices say they did not finish, b
  // (its first task not yet started) has its track without a slice; nothing past the stop.
  Result r = dfsim("run -q --placement " + (d.path / "units.json").string() +
                   " -c configs/spyre-drawer.json --trace kernels --max-sim-time 100000 -o " + (d.path / "partial").string());
  REQUIRE(r.code == 1);
  auto partial = workload_tracks(read_json(d.path / "partial" / "trace.json"));
  json partial_pl = read_json(d.path / "partial" / "summary.json")["placement"];
  REQUIRE(partial["a"].size() == 1);
  CHECK(partial["a"][0]["args"]["unfinished"] == true);
  CHECK(partial["b"].empty());
  CHECK(partial_pl[2]["instances_fired"] == 0);
  for (const auto& [name, slices] : partial)
    for (const json& e : slices) CHECK(ps_of(e["ts"]) + ps_of(e["dur"]) <= 100000 * 1000LL);

  // Workloads on separate cards share no unit: a track each, no waiting track.
  auto apart = workload_tracks(read_json(
      run_placement(d, "apart", entry("a", add, R"("cards": [0])") + ", " + entry("m", mm, R"("cards": [1])"), "--trace kernels") /
      "trace.json"));
  CHECK(apart.size() == 2);
  CHECK(apart.count("a") == 1);
  CHECK(apart.count("m") == 1);
}
