// The parts of `dfsim regress` and `dfsim accuracy` on their own: metric lookup, tolerances,
// Spearman's rank correlation, the device-record CSV and the per-record op graph builder.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include "sim/regress/accuracy_stats.h"
#include "sim/regress/device_records.h"
#include "sim/regress/evaluate.h"
#include "sim/regress/metrics.h"
#include "sim/regress/record_graph.h"

using namespace dfsim;

TEST_CASE("metrics: dotted paths, kernels by name, tolerances", "[regress]") {
  Json s = Json::parse(R"({"sim_time_ns": 100.0, "offchip": {"bytes_read": 64, "channels": [{"max_queue": 3}]},
                          "kernels": [{"name": "add_y", "duration_ns": 90.0}], "host": {"wall_seconds": 1}})");
  REQUIRE(find_metric(s, "offchip.bytes_read"));
  CHECK(*find_metric(s, "offchip.bytes_read") == 64);
  CHECK(*find_metric(s, "offchip.channels.0.max_queue") == 3);
  CHECK(find_metric(s, "offchip") == nullptr);  // not a scalar
  CHECK(find_metric(s, "offchip.bytes_rd") == nullptr);
  CHECK(find_metric(*find_kernel(s, "add_y"), "duration_ns")->get<double>() == 90.0);
  CHECK(find_kernel(s, "mm") == nullptr);
  auto flat = summary_scalars(s);  // host, kernels and arrays left out
  CHECK(flat.size() == 2);
  CHECK(flat.count("sim_time_ns") == 1);

  Tolerance rel{Tolerance::Kind::relative_pct, 2};
  CHECK(rel.accepts(100.0, 102.0));   // |102 - 100| = 2 <= 2 % of 100
  CHECK_FALSE(rel.accepts(100.0, 102.5));
  Tolerance abs{Tolerance::Kind::absolute, 0.02};
  CHECK(abs.accepts(0.5, 0.52));
  CHECK_FALSE(abs.accepts(0.5, 0.53));
  Tolerance exact;
  CHECK(exact.accepts(64, 64.0));
  CHECK_FALSE(exact.accepts("memory", "compute"));
  CHECK(delta_text(100.0, 102.5) == "+2.50 %");
}

// The bucket bound of offchip_peak reads every memory channel's column of utilization.csv, a
// multi-card system's ("card 1 memory/ch 0") too: those were skipped, and the bound passed on
// every multi-card run whatever its channels did.
TEST_CASE("regress checks: offchip_peak reads the channels of every card", "[regress]") {
  const std::string csv = (std::filesystem::temp_directory_path() / ("dfsim_util_" + std::to_string(getpid()) + ".csv")).string();
  Json s = Json::parse(R"({"offchip": {"achieved_gbps": 100.0, "peak_gbps": 409.6}})");
  auto bucket = [&](const std::string& text) {
    std::ofstream(csv) << text;
    return check_offchip_peak(s, csv);
  };
  // One card: the busiest bucket of a channel is 0.9 of it.
  MetricRow one = bucket("t_us,memory/ch 0,memory/ch 1,core 0/pt 0\n0,0.5,0.9,1.0\n");
  CHECK(one.pass);
  CHECK(one.delta == "bucket 90%");  // the PT's 1.0 is no channel
  // Two cards: card 1's channel 1 is busier than a bucket holds (1.2): the bound fails.
  MetricRow two = bucket("t_us,card 0 memory/ch 0,card 1 memory/ch 1,card 1 ring/mem port 0 rd\n0,0.4,1.2,1.5\n");
  CHECK_FALSE(two.pass);
  CHECK(two.delta == "bucket 120%");  // the ring port's 1.5 is no channel
  std::filesystem::remove(csv);
}

TEST_CASE("accuracy stats: RMS, mean and Spearman with ties", "[accuracy]") {
  // Errors +10 % and -10 %: RMS 10, mean 0.
  ErrorStats e = error_stats({100, 200}, {110, 180});
  CHECK(e.count == 2);
  CHECK(e.rms_pct == Approx(10.0));
  CHECK(e.mean_pct == Approx(0.0));
  CHECK(e.spearman == Approx(1.0));
  CHECK(spearman({1, 2, 3, 4}, {4, 3, 2, 1}) == Approx(-1.0));
  // Ranks with a tie: x = 1, 2.5, 2.5, 4; y = 1, 2, 3, 4 -> rho = 4.5 / sqrt(4.5 * 5) = 0.9487.
  CHECK(spearman({1, 2, 2, 3}, {1, 2, 3, 4}) == Approx(0.948683).epsilon(1e-5));
  CHECK(std::isnan(spearman({1}, {1})));
  CHECK(std::isnan(spearman({1, 1}, {1, 2})));
}

namespace {

DeviceRecords records_from(const std::string& text) {
  std::string f = std::filesystem::temp_directory_path() / ("dfsim_records_" + std::to_string(getpid()) + ".csv");
  std::ofstream(f) << text;
  DeviceRecords r = load_device_records(f);
  std::filesystem::remove(f);
  return r;
}

const char* kHeader = "id,op,cores,rows,cols,N,B,tiles,lx_planning,params,measured_kernel_us,analytical_model_us\n";

}  // namespace

TEST_CASE("device records: quoted params, and the op graphs of the record families", "[accuracy]") {
  DeviceRecords f = records_from(std::string(kHeader) +
                                 "a,bmm_layout,32,1024,2048,1024,2,0,1,\"BENCH_B=2 WD_B=1 WD_K=1 WD_LAYOUT_A=1,0,2 "
                                 "WD_LAYOUT_B=0,1,2 WD_M=4 WD_N=8\",466.5,163.9\n"
                                 "b,softmax_row_tiling,2,2048,512,,,16,1,BENCH_TILES=16,30,\n"
                                 "c,mmwd,32,1024,2048,2048,,0,1,WD_M=16 WD_N=2 WD_K=1,500,\n"
                                 "d,add4,32,2048,1024,,,0,1,,100,\n"
                                 "e,transpose_outer,32,2048,2048,,,0,1,TO_MID=2,497.5,\n"
                                 "f,bmm_wd,1,1024,2048,1024,,0,1,,900,\n"
                                 "g,bmm_wd,8,1024,2048,1024,1,0,1,WD_B=1 WD_K=1 WD_M=4 WD_N=8,627.8,\n"
                                 "h,mmwd,2,2048,2048,1024,,0,1,WD_M=2 WD_N=2,2021,\n"
                                 "i,bmm_wd,2,1024,2048,1024,1,0,1,WD_M=1 WD_N=4,1,\n");
  REQUIRE(f.rows.size() == 9);
  CHECK(f.rows[0].param("WD_LAYOUT_A", "") == "1,0,2");
  std::string why;

  Json bmm = record_graph(f, f.rows[0], &why);
  CHECK(bmm["tensors"]["a"]["shape"] == Json::array({2, 1024, 2048}));
  CHECK(bmm["tensors"]["b"]["shape"] == Json::array({2, 2048, 1024}));
  CHECK(bmm["ops"][0]["compile"]["split"] == Json::parse(R"({"B": 1, "K": 1, "M": 4, "N": 8})"));
  CHECK(bmm["compile"]["layouts"] == Json::parse(R"({"a": [1, 0, 2], "b": [0, 1, 2]})"));
  CHECK(record_category("bmm_layout") == "bmm");
  CHECK(record_shape(f, f.rows[0]) == "2x1024x2048x1024");

  Json sm = record_graph(f, f.rows[1], &why);
  CHECK(sm["ops"][0]["op"] == "softmax");
  CHECK(sm["ops"][0]["compile"]["tiles"] == Json::parse(R"({"d0": 16})"));
  CHECK(sm["compile"]["cores"] == 2);

  Json mm = record_graph(f, f.rows[2], &why);
  CHECK(mm["ops"][0]["attrs"]["work_division"] == Json::parse(R"({"m": 16, "n": 2, "k": 1})"));

  Json add4 = record_graph(f, f.rows[3], &why);  // t0 + t1 + t2 + t3, one fused kernel
  CHECK(add4["ops"].size() == 3);
  CHECK(add4["inputs"].size() == 4);
  CHECK(add4["compile"]["fuse"] == true);

  Json to = record_graph(f, f.rows[4], &why);
  CHECK(to["tensors"]["x"]["shape"] == Json::array({2048, 2, 2048}));
  CHECK(to["tensors"]["y"]["shape"] == Json::array({2, 2048, 2048}));

  Json bmm1 = record_graph(f, f.rows[5], &why);  // BENCH_B defaults to 8
  CHECK(bmm1["tensors"]["a"]["shape"] == Json::array({8, 1024, 2048}));
  CHECK_FALSE(bmm1["ops"][0].contains("compile"));

  // A forced division needing more cores than the record has: the card dropped the M split
  // (4 x 8 on 8 cores ran 1 x 8), and so does the harness: taken in the order N, M, B, K, a
  // split that would take the product past the record's cores is skipped.
  Json over = record_graph(f, f.rows[6], &why);
  CHECK(over["ops"][0]["compile"]["split"] == Json::parse(R"({"B": 1, "K": 1, "N": 8})"));
  Json over2 = record_graph(f, f.rows[7], &why);
  CHECK(over2["ops"][0]["attrs"]["work_division"] == Json::parse(R"({"n": 2})"));
  Json over3 = record_graph(f, f.rows[8], &why);  // N 4 on 2 cores is skipped too
  CHECK(over3["ops"][0]["compile"]["split"] == Json::parse(R"({"M": 1})"));
}

TEST_CASE("device records: every op of torch-spyre's benchmark harness has an op graph", "[accuracy]") {
  DeviceRecords f = records_from(std::string(kHeader) +
                                 "a,mul,32,512,1024,,,0,1,,1,\n"
                                 "b,add8,32,512,1024,,,0,1,,1,\n"
                                 "c,add5_sep,32,512,1024,,,0,1,,1,\n"
                                 "d,sumall,32,512,1024,,,0,1,,1,\n"
                                 "e,ctamin,32,512,1024,,,4,1,BENCH_TILES=4,1,\n"
                                 "f,softmax_stages,32,512,1024,,,4,1,BENCH_TILES=4 BENCH_STAGES=2,1,\n"
                                 "g,softmax_unrolled,32,512,1024,,,4,1,BENCH_TILES=4,1,\n"
                                 "h,mm_nested_m_k,32,512,1024,256,,4,1,BENCH_TILES=4,1,\n"
                                 "i,bmm_nested_b_k,32,512,1024,256,4,4,1,BENCH_B=4 BENCH_TILES=4,1,\n"
                                 "j,mmwd,4,512,1024,256,,0,1,WD_M=2 WD_N=2 WD_K=2,1,\n"
                                 "k,mm,32,512,1024,256,,4,1,BENCH_TILES=4 WD_M=2,1,\n"
                                 "l,add17,32,512,1024,,,0,1,,1,\n"
                                 "m,flash_attn,32,512,1024,,,0,1,,1,\n"
                                 "n,bmm_wd,,,,,,,,BENCH_ROWS=256 BENCH_COLS=128 BENCH_N=64 BENCH_B=2 "
                                 "SENCORES=4 LX_PLANNING=0,1,\n");
  std::string why;
  auto graph = [&](int row) { return record_graph(f, f.rows[static_cast<std::size_t>(row)], &why); };
  CHECK(graph(0)["ops"][0]["op"] == "mul");
  CHECK(record_category("mul") == "pointwise");
  CHECK(graph(1)["ops"].size() == 7);  // t0 + ... + t7
  CHECK(graph(1)["compile"]["fuse"] == true);
  CHECK(graph(2)["ops"].size() == 4);
  CHECK(graph(2)["compile"]["fuse"] == false);
  // x.sum(): a free reshape to one dim and its sum (split over the cores, partials combined).
  Json sumall = graph(3);
  CHECK(sumall["ops"][1]["op"] == "sum");
  CHECK(sumall["tensors"]["flat"]["shape"] == Json::array({512 * 1024}));
  CHECK(record_category("sumall") == "reduction");
  Json ctamin = graph(4);  // amax's cost: the same compare per element
  CHECK(ctamin["ops"][0]["op"] == "amax");
  CHECK(ctamin["ops"][0]["compile"]["tiles"] == Json::parse(R"({"d0": 4})"));
  // amax, sub, 2 sigmoids, exp, sum, div under the graph's tiles (one fused loop).
  Json stages = graph(5);
  CHECK(stages["ops"].size() == 7);
  CHECK(stages["ops"][2]["op"] == "sigmoid");
  CHECK(stages["ops"][4]["op"] == "exp");
  CHECK(stages["compile"]["tiles"] == Json::parse(R"({"d0": 4})"));
  CHECK(record_category("softmax_stages") == "softmax");
  CHECK(graph(6)["compile"]["cores"] == 1);  // the card's harness runs it on one core
  CHECK(graph(7)["ops"][0]["compile"]["tiles"] == Json::parse(R"({"M": 2, "K": 4})"));
  CHECK(graph(8)["ops"][0]["compile"]["tiles"] == Json::parse(R"({"B": 2, "K": 4})"));
  // 2 x 2 x 2 on 4 cores: N and M fit, K would make 8 and is skipped.
  CHECK(graph(9)["ops"][0]["attrs"]["work_division"] == Json::parse(R"({"m": 2, "n": 2})"));
  // mm is the compiler's own choice: no tiles, no forced division (as the card's harness).
  CHECK_FALSE(graph(10)["ops"][0].contains("compile"));
  CHECK_FALSE(graph(10)["ops"][0].contains("attrs"));
  CHECK(graph(11).is_null());  // add17: beyond the chains the harness builds
  CHECK(graph(12).is_null());
  CHECK_THAT(why, Catch::Contains("flash_attn"));
  // Empty columns: the harness's own parameters stand in for them.
  Json params_only = graph(13);
  CHECK(params_only["tensors"]["a"]["shape"] == Json::array({2, 256, 128}));
  CHECK(params_only["tensors"]["b"]["shape"] == Json::array({2, 128, 64}));
  CHECK(params_only["compile"]["cores"] == 4);
  CHECK(params_only["compile"]["lx_planning"] == "off");
  CHECK(record_shape(f, f.rows[13]) == "2x256x128x64");
  CHECK(record_shape(f, f.rows[0]) == "512x1024");
}
