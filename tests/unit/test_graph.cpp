// Tests of the kernel graph format (loader checks, round trip) and of graph expansion.
#include <catch2/catch.hpp>

#include <algorithm>
#include <sstream>

#include "sim/app/cli.h"
#include "sim/common/error.h"
#include "sim/config/chip_config.h"
#include "sim/graph/expand.h"
#include "sim/compiler/compile.h"
#include "sim/gen/step_graph.h"
#include "sim/graph/kernel_graph_io.h"
#include "sim/graph/op_graph.h"
#include "sim/graph/op_shapes.h"
#include "sim/graph/region_index.h"
#include "sim/graph/unit_ops.h"
#include "sim/common/json_io.h"

using namespace dfsim;
using Catch::Contains;

namespace {

ChipConfig chip(int cores = 32, std::uint64_t lx = 1589376) {
  ChipConfig c;
  c.cores = cores;
  c.core.corelets = 2;
  c.core.lx.usable_bytes = lx;
  return c;
}

// Two cores: load x halves to LX, negate, store to y; then core 0 reloads all of y.
Json base() {
  return Json::parse(R"({
    "format": "dfsim.kernels", "version": 1, "name": "neg", "cores": 2,
    "buffers": [
      {"name": "x", "space": "hbm", "bytes": 1024, "dtype": "fp16", "preloaded": true},
      {"name": "y", "space": "hbm", "bytes": 1024, "dtype": "fp16"},
      {"name": "xl", "space": "lx", "bytes": 512, "dtype": "fp16"},
      {"name": "yl", "space": "lx", "bytes": 512, "dtype": "fp16"},
      {"name": "zl", "space": "lx", "bytes": 1024, "dtype": "fp16"}
    ],
    "kernels": [
      {"name": "k0", "tasks": [
        {"name": "load", "unit": "dma", "op": "load", "cores": {"first": 0, "count": 2},
         "reads": [{"buffer": "x", "offset": {"alpha": 512, "beta": 0}, "bytes": 512}],
         "writes": [{"buffer": "xl", "offset": 0, "bytes": 512}]},
        {"name": "neg", "unit": "sfp", "op": "neg", "cores": {"first": 0, "count": 2}, "elements": 256,
         "reads": [{"buffer": "xl", "bytes": 512}], "writes": [{"buffer": "yl", "bytes": 512}]},
        {"name": "store", "unit": "dma", "op": "store", "cores": {"first": 0, "count": 2},
         "reads": [{"buffer": "yl", "bytes": 512}],
         "writes": [{"buffer": "y", "offset": {"alpha": 512, "beta": 0}, "bytes": 512}]}
      ]},
      {"name": "k1", "tasks": [
        {"name": "reload", "unit": "dma", "op": "load", "core": 0,
         "reads": [{"buffer": "y", "bytes": 1024}], "writes": [{"buffer": "zl", "bytes": 1024}]}
      ]}
    ]
  })");
}

KernelGraph load(const Json& j) { return read_kernel_graph(j, "k.json"); }

Json& task(Json& j, int k, int t) { return j["kernels"][k]["tasks"][t]; }

}  // namespace

TEST_CASE("graph: detect_format tells the three kinds of file apart") {
  CHECK(detect_format(base()) == "dfsim.kernels");
  CHECK(detect_format(Json{{"format", "dfsim.ops"}}) == "dfsim.ops");
  CHECK(detect_format(Json{{"cores", 32}}) == "");
  CHECK(detect_format(Json::array()) == "");
}

TEST_CASE("graph: a valid kernel graph loads with affine offsets and SPMD ranges") {
  KernelGraph g = load(base());
  REQUIRE(g.tasks.size() == 4);
  REQUIRE(g.kernels.size() == 2);
  CHECK(g.tasks[0].core_count == 2);
  CHECK(g.tasks[0].reads[0].offset.alpha == 512);
  CHECK(g.tasks[3].core_count == 1);
  CHECK(g.tasks[3].kernel == 1);
  CHECK(g.tasks[1].dtype == Dtype::fp16);  // defaults to the dtype of its first written buffer
  CHECK(g.task_path(3) == "/kernels/1/tasks/0");
}

TEST_CASE("graph: loader rejections name the file and the JSON path") {
  Json j = base();
  SECTION("unknown buffer") {
    task(j, 0, 2)["reads"][0]["buffer"] = "yll";
    REQUIRE_THROWS_WITH(load(j), Contains("k.json: /kernels/0/tasks/2/reads/0/buffer: unknown buffer \"yll\"") &&
                                     Contains("did you mean \"yl\""));
  }
  SECTION("unknown unit") {
    task(j, 0, 0)["unit"] = "gpu";
    REQUIRE_THROWS_WITH(load(j), Contains("k.json: /kernels/0/tasks/0/unit: unknown unit \"gpu\""));
  }
  SECTION("unknown op") {
    task(j, 0, 1)["op"] = "negg";
    REQUIRE_THROWS_WITH(load(j), Contains("k.json: /kernels/0/tasks/1/op: unknown op \"negg\"") &&
                                     Contains("did you mean \"neg\""));
  }
  SECTION("op of another unit") {
    task(j, 0, 1)["op"] = "load";
    REQUIRE_THROWS_WITH(load(j), Contains("/kernels/0/tasks/1/op: unknown op \"load\" for unit sfp"));
  }
  SECTION("unknown dtype") {
    j["buffers"][0]["dtype"] = "fp64";
    REQUIRE_THROWS_WITH(load(j), Contains("k.json: /buffers/0/dtype: unknown dtype \"fp64\""));
  }
  SECTION("layout: unknown, or on an LX buffer") {
    j["buffers"][0]["layout"] = "tiled";
    REQUIRE_THROWS_WITH(load(j), Contains("k.json: /buffers/0/layout: unknown layout \"tiled\", expected stick or row_major"));
    j["buffers"][0]["layout"] = "stick";
    CHECK(load(j).buffers[0].stick_layout);
    j["buffers"][2]["layout"] = "stick";  // xl
    REQUIRE_THROWS_WITH(load(j), Contains("k.json: /buffers/2/layout: a layout is an HBM buffer's; this buffer is in LX"));
    j["buffers"][2]["layout"] = "row_major";
    REQUIRE_THROWS_WITH(load(j), Contains("k.json: /buffers/2/layout: a layout is an HBM buffer's; this buffer is in LX"));
  }
  SECTION("a value with a newline or a NUL stays on one whole line") {
    j["buffers"][0]["layout"] = std::string("st\0ick\nx", 8);
    try {
      load(j);
      FAIL("no error");
    } catch (const InputError& e) {
      const std::string what = e.what();
      CHECK(what == "k.json: /buffers/0/layout: unknown layout \"st\\u0000ick\\nx\", expected stick or row_major");
      CHECK(what.find('\n') == std::string::npos);
    }
  }
  SECTION("unknown key with a hint") {
    task(j, 0, 0)["elemets"] = 3;
    REQUIRE_THROWS_WITH(load(j), Contains("/kernels/0/tasks/0/elemets: unknown key (did you mean \"elements\"?)"));
  }
  SECTION("wrong format and version") {
    j["version"] = 3;  // versions 1 and 2 are read
    REQUIRE_THROWS_WITH(load(j), Contains("k.json: /version:"));
    j = base();
    j["format"] = "dfsim.ops";
    REQUIRE_THROWS_WITH(load(j), Contains("k.json: /format: expected dfsim.kernels, got dfsim.ops"));
  }
  SECTION("zero bytes") {
    j["buffers"][2]["bytes"] = 0;
    REQUIRE_THROWS_WITH(load(j), Contains("k.json: /buffers/2/bytes: expected an integer >= 1"));
    j = base();
    task(j, 0, 1)["reads"][0]["bytes"] = 0;
    REQUIRE_THROWS_WITH(load(j), Contains("k.json: /kernels/0/tasks/1/reads/0/bytes"));
  }
  SECTION("core range outside the graph") {
    task(j, 0, 0)["cores"]["count"] = 3;
    REQUIRE_THROWS_WITH(load(j), Contains("k.json: /kernels/0/tasks/0/cores: cores [0, 3) outside the graph's [0, 2)"));
    j = base();
    task(j, 1, 0)["core"] = 2;
    REQUIRE_THROWS_WITH(load(j), Contains("k.json: /kernels/1/tasks/0/core: cores [2, 3)"));
  }
  SECTION("access beyond the buffer on the last core") {
    task(j, 0, 0)["reads"][0]["offset"]["beta"] = 1;  // core 1: 513 + 512 > 1024
    REQUIRE_THROWS_WITH(load(j), Contains("k.json: /kernels/0/tasks/0/reads/0: on core 1 the access ends at byte 1025"));
  }
  SECTION("strided access beyond the buffer") {
    task(j, 1, 0)["reads"][0] = Json{{"buffer", "y"}, {"bytes", 256}, {"rows", 4}, {"stride", 257}};
    task(j, 1, 0)["writes"][0]["bytes"] = 1024;
    // 3 * 257 + 256 = 1027 > 1024
    REQUIRE_THROWS_WITH(load(j), Contains("/kernels/1/tasks/0/reads/0: on core 0 the access ends at byte 1027"));
  }
  SECTION("core on an HBM buffer") {
    task(j, 0, 0)["reads"][0]["core"] = 1;
    REQUIRE_THROWS_WITH(load(j), Contains("k.json: /kernels/0/tasks/0/reads/0/core:") && Contains("in HBM"));
  }
  SECTION("LX core outside the graph") {
    task(j, 1, 0)["writes"][0]["core"] = Json{{"alpha", 1}, {"beta", 2}};
    REQUIRE_THROWS_WITH(load(j), Contains("/kernels/1/tasks/0/writes/0/core: on core 0 selects core 2"));
  }
  SECTION("pt task without m/n/k") {
    task(j, 0, 1)["unit"] = "pt";
    task(j, 0, 1)["op"] = "matmul";
    task(j, 0, 1)["m"] = 8;
    REQUIRE_THROWS_WITH(load(j), Contains("k.json: /kernels/0/tasks/1: a pt task needs \"m\", \"n\" and \"k\""));
  }
  SECTION("sfp task without elements") {
    task(j, 0, 1).erase("elements");
    REQUIRE_THROWS_WITH(load(j), Contains("k.json: /kernels/0/tasks/1: an sfp task needs \"elements\""));
  }
  SECTION("sfp task on HBM") {
    task(j, 0, 1)["reads"][0]["buffer"] = "x";
    REQUIRE_THROWS_WITH(load(j), Contains("/kernels/0/tasks/1/reads/0/buffer: a sfp neg task works on LX"));
  }
  SECTION("dma load reading LX") {
    task(j, 0, 0)["reads"][0] = Json{{"buffer", "yl"}, {"bytes", 512}};
    REQUIRE_THROWS_WITH(load(j), Contains("/kernels/0/tasks/0: a dma load reads HBM and writes LX"));
  }
  SECTION("a scatter store's writes must add up to its read and be HBM") {
    // Two 512 B HBM writes of a 512 B read: 1024 written.
    task(j, 0, 2)["writes"].push_back(task(j, 0, 2)["writes"][0]);
    REQUIRE_THROWS_WITH(load(j), Contains("/kernels/0/tasks/2/writes/0: a dma store task reads 512 bytes but writes 1024"));
    task(j, 0, 2)["writes"] = Json::array({Json{{"buffer", "y"}, {"bytes", 256}}, Json{{"buffer", "zl"}, {"bytes", 256}}});
    REQUIRE_THROWS_WITH(load(j), Contains("/kernels/0/tasks/2/writes/1/buffer: a scatter store writes HBM regions, but buffer \"zl\" is in LX"));
  }
  SECTION("a gather load's reads must add up to its write and be HBM") {
    task(j, 1, 0)["reads"] = Json::array({Json{{"buffer", "y"}, {"bytes", 256}}, Json{{"buffer", "y"}, {"offset", 512}, {"bytes", 256}}});
    REQUIRE_THROWS_WITH(load(j), Contains("/kernels/1/tasks/0/writes/0: a dma load task reads 512 bytes but writes 1024"));
    task(j, 1, 0)["reads"][1] = Json{{"buffer", "xl"}, {"bytes", 256}};
    REQUIRE_THROWS_WITH(load(j), Contains("/kernels/1/tasks/0/reads/1/buffer: a gather load reads HBM regions, but buffer \"xl\" is in LX"));
  }
  SECTION("several reads on a store") {
    task(j, 0, 2)["reads"].push_back(task(j, 0, 2)["reads"][0]);
    REQUIRE_THROWS_WITH(load(j), Contains("/kernels/0/tasks/2: a dma store task needs exactly one read and one write "
                                          "(only a load may have several writes"));
  }
  SECTION("multicast load with a write of other size or in HBM") {
    task(j, 1, 0)["writes"].push_back(Json{{"buffer", "xl"}, {"core", 1}, {"bytes", 512}});
    REQUIRE_THROWS_WITH(load(j), Contains("/kernels/1/tasks/0/writes/1: a dma load task reads 1024 bytes but writes 512"));
    task(j, 1, 0)["writes"][1] = Json{{"buffer", "y"}, {"bytes", 1024}};
    REQUIRE_THROWS_WITH(load(j), Contains("/kernels/1/tasks/0/writes/1/buffer: a multicast load writes LX, but buffer \"y\" is in HBM"));
  }
  SECTION("ring copy without a remote core") {
    task(j, 1, 0) = Json{{"name", "r"}, {"unit", "ring"}, {"op", "copy"}, {"core", 0},
                         {"reads", {{{"buffer", "xl"}, {"bytes", 512}}}}, {"writes", {{{"buffer", "yl"}, {"bytes", 512}}}}};
    REQUIRE_THROWS_WITH(load(j), Contains("/kernels/1/tasks/0: a ring copy needs \"core\""));
  }
  SECTION("empty graph") {
    j["kernels"] = Json::array();
    REQUIRE_THROWS_WITH(load(j), Contains("k.json: /kernels: the graph has no tasks"));
  }
  SECTION("a buffer taking over another's space") {
    j["buffers"][4]["after"] = "yl";
    REQUIRE(load(j).buffers[4].after == 3);
    REQUIRE(write_kernel_graph(load(j))["buffers"][4]["after"] == "yl");  // written back
    j["buffers"][4]["after"] = "zl";
    REQUIRE_THROWS_WITH(load(j), Contains("/buffers/4/after: expected the name of an LX buffer listed before \"zl\", got \"zl\""));
    j["buffers"][3]["after"] = "zl";  // listed later
    j["buffers"][4].erase("after");
    REQUIRE_THROWS_WITH(load(j), Contains("/buffers/3/after: expected the name of an LX buffer listed before \"yl\", got \"zl\""));
    j["buffers"][3]["after"] = "x";
    REQUIRE_THROWS_WITH(load(j), Contains("/buffers/3/after: expected an LX buffer; \"x\" is in HBM"));
    j = base();
    j["buffers"][1]["after"] = "x";
    REQUIRE_THROWS_WITH(load(j), Contains("/buffers/1/after: only an LX buffer takes over another's space; \"y\" is in HBM"));
  }
  SECTION("duplicate names") {
    j["buffers"][1]["name"] = "x";
    REQUIRE_THROWS_WITH(load(j), Contains("/buffers/1/name: duplicate buffer name \"x\""));
    j = base();
    task(j, 1, 0)["name"] = "load";
    REQUIRE_THROWS_WITH(load(j), Contains("/kernels/1/tasks/0/name: duplicate task name \"load\""));
  }
}

TEST_CASE("graph: checks against the chip config") {
  KernelGraph g = load(base());
  REQUIRE_NOTHROW(check_kernel_graph_fits(g, chip()));
  REQUIRE_THROWS_WITH(check_kernel_graph_fits(g, chip(1)), Contains("k.json: /cores: the graph uses 2 cores but the chip has 1"));
  REQUIRE_THROWS_WITH(expand_graph(g, chip(32, 1000)),
                      Contains("k.json: /buffers/4/bytes: LX buffer \"zl\" needs 1024 bytes but only 1000"));
}

TEST_CASE("graph: the streamed kernel graph writer prints exactly what dump(1) prints") {
  // Every member kind: a description, a takeover, a corelet, a multi-row streaming read, an
  // escaped name; then a compiled graph of a whole workload.
  Json j = base();
  j["description"] = "a \"quoted\" name\twith a tab and \u00e9";
  j["buffers"][4]["after"] = "yl";
  task(j, 0, 1)["corelet"] = 1;
  task(j, 1, 0)["reads"][0] = Json{{"buffer", "y"}, {"offset", 0}, {"bytes", 256}, {"rows", 4}, {"stride", 256},
                                   {"streaming", true}};
  std::vector<KernelGraph> graphs;
  graphs.push_back(load(j));
  ChipConfig cfg = load_chip_config("configs/spyre.json");
  graphs.push_back(load_workload("workloads/attention_512x1024.json", cfg, 0, nullptr));
  // A one-layer decode step over 2 cards: "cards", "model", link tasks, version 2.
  StepSpec step;
  step.context = 128;
  step.layers = 1;
  step.tp = 2;
  ChipConfig drawer = load_chip_config("configs/spyre-drawer.json");
  graphs.push_back(compile_ops(read_op_graph(Json::parse(generate_step_graph(load_model_spec("workloads/models/llama-3.1-8b.json"), step)), "s.json"),
                               drawer, 32));
  REQUIRE(graphs.back().cards == 2);
  REQUIRE(graphs.back().model);
  for (const KernelGraph& g : graphs) {
    std::ostringstream streamed;
    write_kernel_graph(g, streamed);
    CHECK(streamed.str() == write_kernel_graph(g).dump(1));
  }
}

TEST_CASE("graph: a large kernel graph's tasks are read while parsing, to the same graph and the same errors") {
  ChipConfig cfg = load_chip_config("configs/spyre.json");
  KernelGraph g = load_workload("workloads/attention_512x1024.json", cfg, 0, nullptr);
  std::ostringstream text;
  write_kernel_graph(g, text);
  // stream_bytes 0: every file counts as large.
  StreamedTasks streamed;
  Json doc = parse_workload_text(text.str(), "big.json", &streamed, 0);
  REQUIRE(streamed.active);
  CHECK(doc["kernels"][0]["tasks"].empty());  // read, not kept
  CHECK(doc["buffers"].size() == g.buffers.size());  // put back
  KernelGraph back = read_kernel_graph(doc, "big.json", &streamed);
  CHECK(write_kernel_graph(back) == write_kernel_graph(g));
  // Below the threshold the document is whole.
  StreamedTasks none;
  CHECK_FALSE(parse_workload_text(text.str(), "big.json", &none)["kernels"][0]["tasks"].empty());
  CHECK_FALSE(none.active);
  // Errors name the same path either way: a task reading an unknown buffer, a task name twice.
  auto error_of = [](const Json& j, std::size_t stream_bytes) {
    StreamedTasks st;
    try {
      Json d = parse_workload_text(j.dump(1), "big.json", &st, stream_bytes);
      read_kernel_graph(d, "big.json", &st);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  Json bad = write_kernel_graph(g);
  const std::size_t last = bad["kernels"].size() - 1;
  bad["kernels"][last]["tasks"][1]["reads"][0]["buffer"] = "nope";
  CHECK_THAT(error_of(bad, 0), Contains("big.json: /kernels/" + std::to_string(last) + "/tasks/1/reads/0/buffer: unknown buffer \"nope\""));
  CHECK(error_of(bad, 0) == error_of(bad, SIZE_MAX));
  bad = write_kernel_graph(g);
  bad["kernels"][last]["tasks"][2]["name"] = bad["kernels"][0]["tasks"][0]["name"];
  CHECK_THAT(error_of(bad, 0), Contains("/kernels/" + std::to_string(last) + "/tasks/2/name: duplicate task name"));
  CHECK(error_of(bad, 0) == error_of(bad, SIZE_MAX));
  bad = write_kernel_graph(g);
  bad["kernels"][1]["tasks"][0] = 7;
  CHECK(error_of(bad, 0) == error_of(bad, SIZE_MAX));
  CHECK_THAT(error_of(bad, 0), Contains("/kernels/1/tasks/0"));
  // A "tasks" that is an object of tasks, "kernels" an object of kernels: reported as such.
  bad = write_kernel_graph(g);
  bad["kernels"][1]["tasks"] = Json{{"a", bad["kernels"][1]["tasks"][0]}};
  CHECK(error_of(bad, 0) == error_of(bad, SIZE_MAX));
  CHECK_THAT(error_of(bad, 0), Contains("/kernels/1/tasks: expected an array"));
  // A kernel that is an array of arrays: not read as kernel 0's "tasks" (the key before it).
  bad = write_kernel_graph(g);
  bad["kernels"][1] = Json::parse("[[5]]");
  CHECK(error_of(bad, 0) == error_of(bad, SIZE_MAX));
  CHECK_THAT(error_of(bad, 0), Contains("/kernels/1: expected an object, got an array"));
  bad = write_kernel_graph(g);
  bad["kernels"] = Json{{"k", bad["kernels"][0]}};
  CHECK(error_of(bad, 0) == error_of(bad, SIZE_MAX));
  CHECK_THAT(error_of(bad, 0), Contains("/kernels: expected an array"));
  // A key given twice: inside a task read while parsing, and a root key ("buffers") whose
  // value was moved out of the document when it ended (found all the same).
  auto text_error_of = [](const std::string& t) {
    StreamedTasks st;
    try {
      read_kernel_graph(parse_workload_text(t, "big.json", &st, 0), "big.json", &st);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  std::string twice = write_kernel_graph(g).dump(1);
  const std::size_t task_name = twice.find("\"name\"", twice.find("\"tasks\""));
  REQUIRE(task_name != std::string::npos);
  twice.insert(task_name, "\"name\": \"x\", ");
  CHECK_THAT(text_error_of(twice), Contains("big.json: /kernels/0/tasks/0/name: duplicate key \"name\" in one object"));
  std::string root_twice = write_kernel_graph(g).dump(1);
  root_twice.insert(root_twice.rfind('}'), ", \"buffers\": []");
  CHECK_THAT(text_error_of(root_twice), Contains("big.json: /buffers: duplicate key \"buffers\" in one object"));
}

TEST_CASE("json: a parser callback sees nlohmann's events at nlohmann's depths and may leave ended values out") {
  const std::string text = R"({"a": [1, {"b": 2}, [3]], "c": {"d": null}, "e": "f"})";
  std::vector<std::string> ours, theirs;
  auto recorder = [](std::vector<std::string>& log) {
    return [&log](int depth, Json::parse_event_t event, Json& parsed) {
      log.push_back(std::to_string(depth) + ":" + std::to_string(static_cast<int>(event)) + ":" + parsed.dump());
      // Leave out the array [3] and the member "c" when they end, and the element 1. (Not a
      // member's scalar: nlohmann keeps a discarded value there.)
      const bool drop = (event == Json::parse_event_t::array_end && parsed == Json::parse("[3]")) ||
                        (event == Json::parse_event_t::object_end && parsed.contains("d")) ||
                        (event == Json::parse_event_t::value && parsed == 1);
      return !drop;
    };
  };
  Json mine = parse_json_text(text, "t.json", recorder(ours));
  Json reference = Json::parse(text, recorder(theirs));
  CHECK(ours == theirs);
  CHECK(mine == reference);
  CHECK(mine == Json::parse(R"({"a": [{"b": 2}], "e": "f"})"));
}

TEST_CASE("graph: write_kernel_graph round-trips exactly") {
  Json j = base();
  task(j, 0, 1)["corelet"] = 1;
  task(j, 1, 0)["reads"][0] = Json{{"buffer", "y"}, {"offset", 0}, {"bytes", 256}, {"rows", 4}, {"stride", 256},
                                   {"streaming", true}};
  KernelGraph g = load(j);
  Json w = write_kernel_graph(g);
  KernelGraph g2 = read_kernel_graph(w, "k2.json");
  CHECK(write_kernel_graph(g2) == w);
  REQUIRE(g2.tasks.size() == g.tasks.size());
  for (std::size_t i = 0; i < g.tasks.size(); ++i) {
    const Task &a = g.tasks[i], &b = g2.tasks[i];
    CHECK(a.name == b.name);
    CHECK(a.first_core == b.first_core);
    CHECK(a.core_count == b.core_count);
    CHECK(a.corelet == b.corelet);
    CHECK(a.elements == b.elements);
    REQUIRE(a.reads.size() == b.reads.size());
    for (std::size_t r = 0; r < a.reads.size(); ++r) {
      CHECK(a.reads[r].offset.alpha == b.reads[r].offset.alpha);
      CHECK(a.reads[r].rows == b.reads[r].rows);
      CHECK(a.reads[r].stride == b.reads[r].stride);
      CHECK(a.reads[r].streaming == b.reads[r].streaming);
    }
  }
  CHECK(g2.tasks[1].corelet == 1);
  CHECK(g2.tasks[3].reads[0].streaming);
  CHECK(w["kernels"][0]["tasks"][0]["reads"][0]["offset"] == Json{{"alpha", 512}, {"beta", 0}});
}

TEST_CASE("graph: expansion gives exact dependencies and consumers") {
  KernelGraph g = load(base());
  ExpandedGraph eg = expand_graph(g, chip());
  // Instances: load c0, load c1, neg c0, neg c1, store c0, store c1, reload c0.
  REQUIRE(eg.instances.size() == 7);
  CHECK(eg.first_instance == std::vector<int>{0, 2, 4, 6});
  CHECK(eg.instances[1].core == 1);
  CHECK(reads_of(g, eg.instances[1])[0].offset == 512);
  CHECK(reads_of(g, eg.instances[1])[0].core == -1);  // HBM
  CHECK(writes_of(g, eg.instances[3])[0].core == 1);  // LX of its own core
  std::vector<std::vector<int>> deps = {{}, {}, {0}, {1}, {2}, {3}, {4, 5}};
  std::vector<std::vector<int>> cons = {{2}, {3}, {4}, {5}, {6}, {6}, {}};
  for (std::size_t i = 0; i < deps.size(); ++i) {
    CHECK(eg.deps[i].to_vector() == deps[i]);
    CHECK(eg.consumers[i].to_vector() == cons[i]);
  }
}

TEST_CASE("graph: a ring copy depends on the writer of the remote LX instance") {
  Json j = base();
  // Core 1 pulls core 0's yl into its zl (first half).
  task(j, 1, 0) = Json{{"name", "pull"}, {"unit", "ring"}, {"op", "copy"}, {"core", 1},
                       {"reads", {{{"buffer", "yl"}, {"bytes", 512}, {"core", 0}}}},
                       {"writes", {{{"buffer", "zl"}, {"bytes", 512}}}}};
  KernelGraph g = load(j);
  ExpandedGraph eg = expand_graph(g, chip());
  CHECK(reads_of(g, eg.instances[6])[0].core == 0);
  CHECK(eg.deps[6].to_vector() == std::vector<int>{2});  // neg on core 0, not core 1
}

TEST_CASE("graph: strided regions overlap exactly when strides match") {
  auto R = [](std::uint64_t off, std::uint64_t bytes, std::uint64_t rows, std::uint64_t stride) {
    Region r;
    r.buffer = 0;
    r.offset = off;
    r.bytes = bytes;
    r.rows = rows;
    r.stride = stride;
    return r;
  };
  // Two column halves of a 4 x 128-byte matrix interleave but never share a byte.
  CHECK_FALSE(regions_overlap(R(0, 64, 4, 128), R(64, 64, 4, 128)));
  CHECK(regions_overlap(R(0, 65, 4, 128), R(64, 64, 4, 128)));
  // A contiguous run inside the gap of a strided region: exact, no overlap.
  CHECK_FALSE(regions_overlap(R(0, 64, 4, 128), R(320, 64, 1, 0)));
  CHECK(regions_overlap(R(0, 64, 4, 128), R(300, 64, 1, 0)));
  // Row ranges that do not meet (rows 0-1 against rows 2-3 of the same columns).
  CHECK_FALSE(regions_overlap(R(0, 64, 2, 128), R(256, 64, 2, 128)));
  // Different strides: row by row. [64, 96) and [320, 352) both fall in the gaps of rows of
  // 64 bytes 128 apart ([0, 64), [128, 192), [256, 320), [384, 448)): no byte shared.
  CHECK_FALSE(regions_overlap(R(0, 64, 4, 128), R(64, 32, 2, 256)));
  CHECK(regions_overlap(R(0, 64, 4, 128), R(100, 32, 2, 256)));  // [100, 132) meets [128, 192)
  CHECK_FALSE(regions_overlap(R(0, 64, 4, 128), R(448, 32, 2, 256)));
  // Two cores' stores of a batched tensor in the card's layout: single sticks, 512 apart for
  // one, two sticks 4992 apart for the other (sticks 3 and 42); they interleave, never meet.
  CHECK_FALSE(regions_overlap(R(0, 128, 4, 512), R(384, 128, 2, 4992)));
  CHECK(regions_overlap(R(0, 128, 4, 512), R(1024, 128, 2, 4992)));
  // More than 4096 rows of one inside the other's bounding range: bounding ranges (the even
  // bytes against the odd ones meet nowhere, but are not compared row by row).
  CHECK(regions_overlap(R(0, 1, 10000, 2), R(1, 1, 10000, 4)));
  CHECK_FALSE(regions_overlap(R(0, 1, 100, 2), R(1, 1, 100, 4)));
}

TEST_CASE("graph: expansion with strided writers and readers") {
  Json j = base();
  // Cores 0 and 1 store yl as column halves of y viewed as 4 rows of 256 bytes (stride 256).
  auto& st = task(j, 0, 2);
  st["writes"][0] = Json{{"buffer", "y"}, {"offset", {{"alpha", 128}, {"beta", 0}}}, {"bytes", 128}, {"rows", 4}, {"stride", 256}};
  // The reload reads only the left column half: it waits for core 0's store alone.
  task(j, 1, 0)["reads"][0] = Json{{"buffer", "y"}, {"bytes", 128}, {"rows", 4}, {"stride", 256}};
  task(j, 1, 0)["writes"][0]["bytes"] = 512;
  ExpandedGraph eg = expand_graph(load(j), chip());
  CHECK(eg.deps[6].to_vector() == std::vector<int>{4});
}

TEST_CASE("graph: expansion rejections") {
  Json j = base();
  SECTION("two writers of one range") {
    task(j, 0, 2)["writes"][0]["offset"] = 0;
    task(j, 1, 0)["reads"][0]["bytes"] = 512;
    task(j, 1, 0)["writes"][0]["bytes"] = 512;
    REQUIRE_THROWS_WITH(expand_graph(load(j), chip()),
                        Contains("k.json: /kernels/0/tasks/2/writes/0: buffer \"y\" written twice: by task store core 0 "
                                 "and task store core 1"));
  }
  SECTION("writing a preloaded LX buffer") {
    j["buffers"][3]["preloaded"] = true;  // yl, which neg writes
    REQUIRE_THROWS_WITH(expand_graph(load(j), chip()),
                        Contains("k.json: /kernels/0/tasks/1/writes/0: writes buffer \"yl\", which is preloaded"));
  }
  SECTION("a dependency cycle") {
    // neg now also reads zl, which the reload writes after the store that waits for neg.
    task(j, 0, 1)["reads"].push_back(Json{{"buffer", "zl"}, {"bytes", 16}});
    REQUIRE_THROWS_WITH(expand_graph(load(j), chip()),
                        Contains("k.json: /kernels/") && Contains("dependency cycle: ") &&
                            Contains("task neg core 0 waits for task reload core 0") &&
                            Contains("task reload core 0 waits for task store core"));
  }
  SECTION("reading what nobody writes is not a loader error") {
    j["buffers"][0]["preloaded"] = false;
    ExpandedGraph eg = expand_graph(load(j), chip());
    CHECK(eg.deps[0].empty());
  }
}

TEST_CASE("graph: expansion of 131072 instances links each store to its own load") {
  // 2048 tiles x (a load and a store template) x 32 cores = 131072 instances.
  KernelGraph g;
  g.file = "big.json";
  g.name = "big";
  g.cores = 32;
  const int tiles = 2048;
  const std::uint64_t tile = 256;
  g.buffers.push_back(Buffer{"in", Space::hbm, tile * tiles * 32, Dtype::fp16, true});
  g.buffers.push_back(Buffer{"out", Space::hbm, tile * tiles * 32, Dtype::fp16, false});
  g.kernels.push_back(Kernel{"k", {}});
  for (int t = 0; t < tiles; ++t) {
    int lx = static_cast<int>(g.buffers.size());
    g.buffers.push_back(Buffer{"l" + std::to_string(t), Space::lx, tile, Dtype::fp16, false});
    for (int s = 0; s < 2; ++s) {
      Task task;
      task.name = (s ? "st" : "ld") + std::to_string(t);
      task.unit = UnitKind::dma;
      task.op = s ? "store" : "load";
      task.core_count = 32;
      Access h;
      h.buffer = s;
      h.offset = Affine{static_cast<std::int64_t>(tile * tiles), static_cast<std::int64_t>(tile * t)};
      h.bytes = tile;
      Access l;
      l.buffer = lx;
      l.bytes = tile;
      task.reads.push_back(s ? l : h);
      task.writes.push_back(s ? h : l);
      task.kernel = 0;
      g.kernels[0].tasks.push_back(static_cast<int>(g.tasks.size()));
      g.tasks.push_back(task);
    }
  }
  check_kernel_graph(g);
  ExpandedGraph eg = expand_graph(g, chip());
  REQUIRE(eg.instances.size() == 2u * tiles * 32);
  // Each store depends on exactly the load of its own tile on its own core.
  for (int t = 0; t < tiles; t += 97)
    for (int c = 0; c < 32; c += 7) {
      CHECK(eg.deps[eg.first_instance[2 * t + 1] + c].to_vector() == std::vector<int>{eg.first_instance[2 * t] + c});
    }
}

TEST_CASE("graph: a multicast load feeds readers on every destination core") {
  Json j = base();
  // Core 0 reloads y into zl on both cores; add a reader of zl on core 1.
  task(j, 1, 0)["writes"] = Json::parse(R"([{"buffer": "zl", "core": 0, "bytes": 1024},
                                            {"buffer": "zl", "core": 1, "bytes": 1024}])");
  j["kernels"][1]["tasks"].push_back(Json::parse(R"({"name": "use", "unit": "sfp", "op": "neg", "core": 1,
      "elements": 512, "reads": [{"buffer": "zl", "bytes": 1024}], "writes": [{"buffer": "yl", "offset": 512, "bytes": 512}]})"));
  j["buffers"][3]["bytes"] = 1024;  // yl: neg writes its first half, "use" the second
  KernelGraph g = load(j);
  ExpandedGraph x = expand_graph(g, chip());
  REQUIRE(g.tasks[x.instances.back().task].name == "use");
  const IdLists::Span use = x.deps[x.instances.size() - 1];
  REQUIRE(use.size() == 1);
  CHECK(g.tasks[x.instances[use[0]].task].name == "reload");
  CHECK(writes_of(g, x.instances[use[0]]).size() == 2);
  CHECK(writes_of(g, x.instances[use[0]])[1].core == 1);
}

TEST_CASE("graph: a preloaded HBM buffer may be updated in place, its readers wait for the write") {
  // (This test's name had a ';', which ctest takes as a list separator: it ran two fragments
  // of the name that matched no test, and passed, from 2026-12-03 to 2026-12-05, while the
  // test itself read x in k0 and wrote it back in the same kernel: a cycle.)
  Json j = base();
  j["buffers"][0]["bytes"] = 2048;  // x: the load reads its first 1024 bytes, the store writes the rest
  task(j, 0, 2)["writes"][0] = Json::parse(R"({"buffer": "x", "offset": {"alpha": 512, "beta": 1024}, "bytes": 512})");
  task(j, 1, 0)["reads"][0] = Json::parse(R"({"buffer": "x", "offset": 1024, "bytes": 512})");
  task(j, 1, 0)["writes"][0]["bytes"] = 512;
  KernelGraph g = load(j);
  ExpandedGraph eg = expand_graph(g, chip());
  // reload (kernel k1) reads x[1024, 1536), which store core 0 wrote (core 1 wrote [1536, 2048)).
  const IdLists::Span use = eg.deps[eg.instances.size() - 1];
  REQUIRE(use.size() == 1);
  CHECK(g.tasks[eg.instances[use[0]].task].name == "store");
  CHECK(eg.instances[use[0]].core == 0);
  // Reading the bytes it writes back in the same kernel, before the write: a cycle, refused.
  task(j, 0, 2)["writes"][0]["offset"]["beta"] = 0;
  REQUIRE_THROWS_WITH(expand_graph(load(j), chip()), Contains("dependency cycle"));
}

TEST_CASE("graph: the JSON Schemas list exactly the ops the readers accept") {
  // The schemas are hand-written; the op lists live in unit_ops.cpp and op_shapes.cpp.
  Json ks = load_json_file("docs/schemas/dfsim.kernels.schema.json");
  std::vector<std::string> sfp_enum;
  for (const Json& rule : ks["$defs"]["task"]["allOf"])
    if (rule["if"]["properties"]["unit"]["const"] == "sfp") sfp_enum = rule["then"]["properties"]["op"]["enum"];
  CHECK(sfp_enum == unit_ops(UnitKind::sfp));
  Json os = load_json_file("docs/schemas/dfsim.ops.schema.json");
  std::vector<std::string> op_enum;
  for (const auto& [name, def] : os["$defs"].items())
    if (def.contains("properties") && def["properties"].contains("op")) op_enum = def["properties"]["op"]["enum"];
  std::vector<std::string> catalog;
  for (const OpInfo& o : op_catalog()) catalog.push_back(o.name);
  std::sort(op_enum.begin(), op_enum.end());
  std::sort(catalog.begin(), catalog.end());
  CHECK(op_enum == catalog);
}

TEST_CASE("graph: the writer index finds exactly the overlapping writers of every read, buffer instance by buffer instance") {
  // The index searches one buffer instance's entries only (a key per buffer, card and core);
  // checked against a brute-force scan of every write of every instance on a compiled
  // attention block: many LX buffer instances per core, HBM buffers shared by all cores.
  ChipConfig cfg = load_chip_config("configs/spyre.json", {});
  KernelGraph g = load_workload("workloads/attention_512x1024.json", cfg, 0, nullptr);
  ExpandedGraph eg = expand_graph(g, cfg);
  RegionIndex idx(g, eg.instances);
  for (std::size_t i = 0; i < eg.instances.size(); ++i) {
    InstanceRegions ws = writes_of(g, eg.instances[i]);
    for (std::size_t s = 0; s < ws.size(); ++s) idx.add(ws[s], static_cast<int>(i), static_cast<int>(s));
  }
  idx.build();
  std::size_t queries = 0, found = 0;
  for (std::size_t i = 0; i < eg.instances.size(); ++i) {
    for (const Region& r : reads_of(g, eg.instances[i])) {
      std::vector<std::pair<int, int>> got, want;
      idx.for_each_overlap(r, [&](const RegionIndex::Entry& e) { got.emplace_back(e.inst, e.slot); });
      for (std::size_t j = 0; j < eg.instances.size(); ++j) {
        InstanceRegions ws = writes_of(g, eg.instances[j]);
        for (std::size_t s = 0; s < ws.size(); ++s)
          if (ws[s].buffer == r.buffer && ws[s].core == r.core && ws[s].card == r.card && regions_overlap(ws[s], r))
            want.emplace_back(static_cast<int>(j), static_cast<int>(s));
      }
      std::sort(got.begin(), got.end());
      CHECK(got == want);
      ++queries;
      found += got.size();
    }
  }
  CHECK(queries > 2000);
  CHECK(found > 0);
}
