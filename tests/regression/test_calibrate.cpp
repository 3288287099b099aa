// `dfsim calibrate`: runs the microbenchmarks on the spyre preset and prints published
// against simulated figures. Checks the table and the physical properties the issue asks
// for: off-chip bandwidth never above the nominal peak, and non-decreasing in core count.
#include <catch2/catch.hpp>

#include <cstdio>
#include <regex>
#include <sstream>
#include <string>
#include <vector>
#include <sys/wait.h>

namespace {

struct Output {
  int code = -1;
  std::string text;
};

Output run(const std::string& args) {
  Output o;
  FILE* p = popen((std::string(DFSIM_BINARY) + " " + args + " 2>&1").c_str(), "r");
  REQUIRE(p);
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) o.text += buf;
  int rc = pclose(p);
  o.code = WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
  return o;
}

// The simulated column of the row whose figure starts with `name`.
double simulated(const std::string& text, const std::string& name) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(name, 0) == 0) {
      std::smatch m;
      std::string rest = line.substr(name.size());
      REQUIRE(std::regex_search(rest, m, std::regex(R"(\s+([-0-9.]+)\s+([-0-9.]+)\s+([-0-9.]+))")));
      return std::stod(m[2]);
    }
  FAIL("no row " << name << " in:\n" << text);
  return 0;
}

}  // namespace

TEST_CASE("calibrate: the table compares every figure and the bandwidths are physical") {
  Output o = run("calibrate --config configs/spyre.json");
  REQUIRE(o.code == 0);
  CHECK(o.text.find("figures within 10 %") != std::string::npos);
  // Never above the nominal 204.8 GB/s.
  for (const char* f : {"read stream 1:0, 32 cores", "mix 3:1, 32 cores", "copy 1:1, 32 cores", "mix 1:3, 32 cores",
                        "write stream 0:1, 32 cores"}) {
    double g = simulated(o.text, f);
    CHECK(g > 0);
    CHECK(g <= 204.8);
  }
  // Read bandwidth as a share of 32 cores: non-decreasing in core count, at most 100 %.
  double prev = 0;
  for (int cores : {1, 2, 4, 8, 16}) {
    double pct = simulated(o.text, "read bandwidth, " + std::to_string(cores) + " of 32 cores");
    CHECK(pct >= prev);
    CHECK(pct <= 100.0 + 1e-9);
    prev = pct;
  }
  // One core cannot fill the bus: the DMA request rate limits it (card: ~11 %).
  CHECK(simulated(o.text, "read bandwidth, 1 of 32 cores") < 25.0);
}

TEST_CASE("calibrate: a bad --set is rejected before anything runs") {
  Output o = run("calibrate --set memory.lpddr5.trcdd=3");
  CHECK(o.code == 2);
  CHECK(o.text.find("--set") != std::string::npos);
  CHECK(o.text.find("figure") == std::string::npos);
}

TEST_CASE("calibrate: one-direction bandwidth is at least 1.25 times balanced and the mix is V-shaped") {
  // The card: ~150 GB/s one way, ~105 balanced (x1.43). The dip needs loads and stores of the
  // cores to meet at the controllers and the bus to turn around between them; with one DMA
  // queue per core (core.dma.queues = 1) or long batches (min_batch) it is gone.
  Output o = run("calibrate --config configs/spyre.json");
  REQUIRE(o.code == 0);
  double r = simulated(o.text, "read stream 1:0, 32 cores"), r3 = simulated(o.text, "mix 3:1, 32 cores"),
         b = simulated(o.text, "copy 1:1, 32 cores"), w3 = simulated(o.text, "mix 1:3, 32 cores"),
         w = simulated(o.text, "write stream 0:1, 32 cores");
  CHECK(r >= 1.25 * b);
  CHECK(w >= 1.25 * b);
  // V: each side falls towards the balanced mix.
  CHECK(r > r3);
  CHECK(r3 >= b);
  CHECK(w3 >= b);
  CHECK(w > w3);
}

TEST_CASE("calibrate: with one DMA queue per core the balanced dip disappears") {
  // The mechanism check: the same chip with a single DMA queue per core runs a core's loads and
  // stores one after the other; the bus turns rarely and copy runs near the one-way rate.
  Output o = run("calibrate --config configs/spyre.json --set core.dma.queues=1");
  REQUIRE(o.code == 0);
  double r = simulated(o.text, "read stream 1:0, 32 cores"), b = simulated(o.text, "copy 1:1, 32 cores");
  CHECK(b > 0.9 * r);
}

TEST_CASE("calibrate: on a smaller chip it runs what fits and lists what it skips") {
  Output o = run("calibrate --config configs/small.json");
  REQUIRE(o.code == 0);
  // small.json has 2 cores: the 1- and 2-core read streams run (absolute GB/s, unscored).
  std::istringstream in(o.text);
  int rows = 0;
  for (std::string line; std::getline(in, line);) rows += line.rfind("read bandwidth, ", 0) == 0;
  CHECK(rows == 2);
  CHECK(simulated(o.text, "read bandwidth, 1 core") > 0);
  CHECK(simulated(o.text, "read bandwidth, 2 cores") > simulated(o.text, "read bandwidth, 1 core"));
  CHECK(o.text.find("skipped on this 2-core chip") != std::string::npos);
  CHECK(o.text.find("  matmul 4096^3 fp16, 32 cores\n") != std::string::npos);
  CHECK(o.text.find("  matmul 4096^3 fp16, 4 cores\n") != std::string::npos);
}

TEST_CASE("calibrate: every simulated figure stays within 1 % of its pinned value") {
  // Pinned from `dfsim calibrate` on 2026-12-03 (before the speed work of issue 11). A speed
  // change must keep each within 1 %; a fidelity change updates the pins and says why.
  // matmul 4096^3: 1151.3 -> 1219.2 with the compiler work of issue 9 (the work-division
  // estimate picks 8 x 4 over the former fixed 4 x 8 grid; docs/calibration.md).
  // Issue 13 (row reductions limited by the SFP's cross-lane tree, DMA word rate 12 -> 7
  // cycles, row reductions pipelined in 8 tiles): read stream 149.6 -> 144.9 (the last tile's
  // reduction is exposed), mix 3:1 118.0 -> 129.7 (its sum over the middle dim is now an
  // elementwise accumulate), read shares 10.6/21.2/42.1/53.8/53.8 -> 10.9/21.5/41.1/51.7/53.7 %
  // (the SFP's rate, not the DMA's), matmul 4096^3 1219.2 -> 1225.3.
  // Issue 13, PT folds that pay their fill and drain (core.pt.fold_stream_limit 96): matmul
  // 4096^3 1225.3 -> 1053.6 (the card: 1140).
  // Issue 13, a kernel's launch (card.kernel_launch_ns 1.5 us): every kernel 1.5 us longer;
  // add 106.8 -> 108.2 us (the card: 108.0), read stream 144.9 -> 143.8 GB/s, copy 2048x4096
  // 299.4 -> 300.8 us; the rest move by under 1 %.
  // Issue 13, the fold stream limit refitted to the facts' 74 % (96 -> 64) and the compute
  // figure scored where the card is compute-bound: matmul 4096^3 on 4 cores 1141.4 (the card:
  // 1140); on 32 cores 1053.4 -> 1002.1, shown unscored (the card's 32-core records run at
  // 400-800 MAC/ns per core).
  // Issue 13, row sums stored stick-sparse (a 128-B stick per row, as the card's records count
  // them): micro/read_sum writes 1 MiB instead of 16 KiB, its stores breaking the read stream:
  // read stream 143.8 -> 141.9 GB/s; the read shares, over that, 10.9/21.6/41.3/51.9/53.9 ->
  // 11.4/22.5/43.1/54.2/56.3 % (the card: 11/22/43/54/54).
  // Issue 13, ring links serve bursts in the order they arrive (ring.link_order): add 108.2 ->
  // 108.9 us, read stream 141.9 -> 141.7, write stream 148.7 -> 148.8, 2-core share 22.5 ->
  // 22.6 %; the rest move by under 0.05 %.
  const std::vector<std::pair<const char*, double>> pinned = {
      {"read stream 1:0, 32 cores", 141.7},       {"mix 3:1, 32 cores", 129.4},
      {"copy 1:1, 32 cores", 111.7},              {"mix 1:3, 32 cores", 128.3},
      {"write stream 0:1, 32 cores", 148.8},      {"copy 2048x4096 fp16, 32 cores", 300.8},
      {"copy 16384x4096 fp16, 32 cores", 2531.1}, {"read bandwidth, 1 of 32 cores", 11.4},
      {"read bandwidth, 2 of 32 cores", 22.6},    {"read bandwidth, 4 of 32 cores", 43.1},
      {"read bandwidth, 8 of 32 cores", 54.2},    {"read bandwidth, 16 of 32 cores", 56.3},
      {"add 2048x1024 fp16, 32 cores", 108.9},    {"matmul 4096^3 fp16, 4 cores", 1141.4},
      {"matmul 4096^3 fp16, 32 cores", 1002.1},
  };
  Output o = run("calibrate --config configs/spyre.json");
  REQUIRE(o.code == 0);
  for (auto [name, value] : pinned) {
    INFO(name);
    CHECK(simulated(o.text, name) == Approx(value).epsilon(0.01));
  }
}
