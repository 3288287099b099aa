// Tests of the transformer op set of the op graph format: shape rules, attributes, the
// compile sections, and the one-line `file: /json/pointer: what` rejections.
#include <catch2/catch.hpp>

#include "sim/common/error.h"
#include "sim/graph/op_graph.h"
#include "sim/graph/op_shapes.h"

using namespace dfsim;
using Catch::Contains;

namespace {

// A graph over tensors `tensors` (name -> [shape, dtype]) with one op `op`; the op's inputs
// are graph inputs and its outputs graph outputs.
Json graph(const Json& tensors, const Json& op) {
  Json j = {{"format", "dfsim.ops"}, {"version", 1}, {"name", "t"}, {"tensors", Json::object()},
            {"inputs", op["inputs"]}, {"outputs", op["outputs"]}, {"ops", Json::array({op})}};
  for (const auto& [name, v] : tensors.items()) j["tensors"][name] = {{"shape", v[0]}, {"dtype", v[1]}};
  return j;
}

OpGraph read(const Json& j) { return read_op_graph(j, "w.json"); }

Json fp16(std::vector<std::int64_t> s) { return Json::array({s, "fp16"}); }

}  // namespace

TEST_CASE("op set: shapes and attributes of the transformer ops are resolved") {
  SECTION("softmax, layernorm, rmsnorm") {
    OpGraph g = read(graph({{"x", fp16({4, 8, 64})}, {"y", fp16({4, 8, 64})}},
                           {{"op", "softmax"}, {"inputs", {"x"}}, {"outputs", {"y"}}, {"attrs", {{"dim", 1}}}}));
    CHECK(g.ops[0].dim == 1);
    g = read(graph({{"x", fp16({4, 64})}, {"w", fp16({64})}, {"b", fp16({64})}, {"y", fp16({4, 64})}},
                   {{"op", "layernorm"}, {"inputs", {"x", "w", "b"}}, {"outputs", {"y"}}}));
    CHECK(g.ops[0].dim == 1);
    CHECK(g.ops[0].params.at("eps") == 1e-5);
    g = read(graph({{"x", fp16({4, 64})}, {"y", fp16({4, 64})}},
                   {{"op", "rmsnorm"}, {"inputs", {"x"}}, {"outputs", {"y"}}, {"attrs", {{"eps", 1e-3}}}}));
    CHECK(g.ops[0].params.at("eps") == 1e-3);
  }
  SECTION("scalar operands, pow, clamp, where, cast") {
    OpGraph g = read(graph({{"x", fp16({4, 64})}, {"y", fp16({4, 64})}},
                           {{"op", "mul"}, {"inputs", {"x"}}, {"outputs", {"y"}}, {"attrs", {{"scalar", 0.125}}}}));
    CHECK(*g.ops[0].scalar == 0.125);
    g = read(graph({{"x", fp16({4, 64})}, {"y", fp16({4, 64})}},
                   {{"op", "clamp"}, {"inputs", {"x"}}, {"outputs", {"y"}}, {"attrs", {{"min", -1}}}}));
    CHECK(g.ops[0].params.at("min") == -1);
    CHECK(g.ops[0].params.count("max") == 0);
    g = read(graph({{"c", fp16({4, 1})}, {"a", fp16({64})}, {"b", fp16({4, 64})}, {"y", fp16({4, 64})}},
                   {{"op", "where"}, {"inputs", {"c", "a", "b"}}, {"outputs", {"y"}}}));
    g = read(graph({{"x", fp16({4, 64})}, {"y", Json::array({Json::array({4, 64}), "fp32"})}},
                   {{"op", "cast"}, {"inputs", {"x"}}, {"outputs", {"y"}}}));
    CHECK(g.tensors[static_cast<std::size_t>(g.ops[0].outputs[0])].dtype == Dtype::fp32);
  }
  SECTION("rope, embedding, kv_write") {
    read(graph({{"x", fp16({1, 8, 16, 64})}, {"cos", fp16({16, 64})}, {"sin", fp16({16, 64})}, {"y", fp16({1, 8, 16, 64})}},
               {{"op", "rope"}, {"inputs", {"x", "cos", "sin"}}, {"outputs", {"y"}}}));
    read(graph({{"t", fp16({1000, 64})}, {"i", Json::array({Json::array({2, 8}), "int32"})}, {"y", fp16({2, 8, 64})}},
               {{"op", "embedding"}, {"inputs", {"t", "i"}}, {"outputs", {"y"}}}));
    OpGraph g = read(graph({{"c", fp16({1, 2, 128, 64})}, {"n", fp16({1, 2, 4, 64})}, {"y", fp16({1, 2, 128, 64})}},
                           {{"op", "kv_write"}, {"inputs", {"c", "n"}}, {"outputs", {"y"}}, {"attrs", {{"position", 124}}}}));
    CHECK(g.ops[0].position == 124);
  }
  SECTION("reshape, slice, split") {
    read(graph({{"x", fp16({4, 64})}, {"y", fp16({2, 2, 64})}}, {{"op", "reshape"}, {"inputs", {"x"}}, {"outputs", {"y"}}}));
    OpGraph g = read(graph({{"x", fp16({4, 64})}, {"y", fp16({4, 21})}},
                           {{"op", "slice"}, {"inputs", {"x"}}, {"outputs", {"y"}},
                            {"attrs", {{"dim", -1}, {"start", -63}, {"step", 3}}}}));
    CHECK(g.ops[0].dim == 1);
    CHECK(g.ops[0].start == 1);
    CHECK(g.ops[0].end == 64);  // ceil(63 / 3) = 21
    g = read(graph({{"x", fp16({4, 64})}, {"a", fp16({4, 16})}, {"b", fp16({4, 48})}},
                   {{"op", "split"}, {"inputs", {"x"}}, {"outputs", {"a", "b"}}, {"attrs", {{"dim", 1}, {"sizes", {16, 48}}}}}));
    CHECK(g.ops[0].sizes == std::vector<std::int64_t>{16, 48});
  }
}

TEST_CASE("op set: rejections of the transformer ops name the file and the JSON path") {
  auto fails = [](const Json& j, const std::string& what) { REQUIRE_THROWS_WITH(read(j), Contains(what)); };
  const Json x = fp16({4, 64});
  SECTION("an unknown op lists the valid ones") {
    fails(graph({{"x", x}, {"y", x}}, {{"op", "softmaxx"}, {"inputs", {"x"}}, {"outputs", {"y"}}}),
          "w.json: /ops/0/op: unknown op \"softmaxx\", expected one of add, sub,");
    fails(graph({{"x", x}, {"y", x}}, {{"op", "softmaxx"}, {"inputs", {"x"}}, {"outputs", {"y"}}}),
          "(did you mean \"softmax\"?)");
  }
  SECTION("scalar operands") {
    fails(graph({{"x", x}, {"y", x}}, {{"op", "mul"}, {"inputs", {"x"}}, {"outputs", {"y"}}}),
          "w.json: /ops/0/inputs: mul takes 2 input(s), got 1 (one input needs attrs.scalar)");
    fails(graph({{"x", x}, {"z", x}, {"y", x}},
                {{"op", "add"}, {"inputs", {"x", "z"}}, {"outputs", {"y"}}, {"attrs", {{"scalar", 1}}}}),
          "w.json: /ops/0/inputs: add takes 1 input(s) with attrs.scalar, got 2");
    fails(graph({{"x", x}, {"y", x}}, {{"op", "mul"}, {"inputs", {"x"}}, {"outputs", {"y"}}, {"attrs", {{"scalar", "a"}}}}),
          "w.json: /ops/0/attrs/scalar: expected a number");
  }
  SECTION("pow and clamp") {
    fails(graph({{"x", x}, {"y", x}}, {{"op", "pow"}, {"inputs", {"x"}}, {"outputs", {"y"}}}),
          "w.json: /ops/0/attrs/exponent: missing");
    fails(graph({{"x", x}, {"y", x}}, {{"op", "clamp"}, {"inputs", {"x"}}, {"outputs", {"y"}}}),
          "w.json: /ops/0/attrs: clamp needs \"min\", \"max\" or both");
    fails(graph({{"x", x}, {"y", x}},
                {{"op", "clamp"}, {"inputs", {"x"}}, {"outputs", {"y"}}, {"attrs", {{"min", 2}, {"max", 1}}}}),
          "w.json: /ops/0/attrs/max: max 1 is below min 2");
  }
  SECTION("norms") {
    fails(graph({{"x", x}, {"w", fp16({32})}, {"y", x}}, {{"op", "layernorm"}, {"inputs", {"x", "w"}}, {"outputs", {"y"}}}),
          "w.json: /ops/0/inputs/1: weight of layernorm must have shape [64] (the normalised dim), got [32]");
    fails(graph({{"x", x}, {"w", fp16({64})}, {"b", fp16({64})}, {"y", x}},
                {{"op", "rmsnorm"}, {"inputs", {"x", "w", "b"}}, {"outputs", {"y"}}}),
          "w.json: /ops/0/inputs: rmsnorm takes 1 to 2 input(s), got 3");
    fails(graph({{"x", x}, {"y", x}}, {{"op", "softmax"}, {"inputs", {"x"}}, {"outputs", {"y"}}, {"attrs", {{"dim", 2}}}}),
          "w.json: /ops/0/attrs/dim: dim 2 out of range for a rank-2 input, expected in [-2, 1]");
    fails(graph({{"x", x}, {"y", fp16({4, 32})}}, {{"op", "softmax"}, {"inputs", {"x"}}, {"outputs", {"y"}}}),
          "w.json: /ops/0/outputs/0: shape mismatch for \"y\": expected [4, 64] from softmax, got [4, 32]");
  }
  SECTION("rope, embedding, kv_write") {
    fails(graph({{"x", fp16({8, 16, 64})}, {"c", fp16({16, 32})}, {"s", fp16({16, 64})}, {"y", fp16({8, 16, 64})}},
                {{"op", "rope"}, {"inputs", {"x", "c", "s"}}, {"outputs", {"y"}}}),
          "w.json: /ops/0/inputs/1: cos of rope must have shape [16, 64] ([T, D] of x), got [16, 32]");
    fails(graph({{"t", fp16({100, 64})}, {"i", fp16({8})}, {"y", fp16({8, 64})}},
                {{"op", "embedding"}, {"inputs", {"t", "i"}}, {"outputs", {"y"}}}),
          "w.json: /ops/0/inputs/1: embedding's ids are int32, \"i\" is fp16");
    fails(graph({{"c", fp16({2, 128, 64})}, {"n", fp16({2, 4, 64})}, {"y", fp16({2, 128, 64})}},
                {{"op", "kv_write"}, {"inputs", {"c", "n"}}, {"outputs", {"y"}}, {"attrs", {{"position", 125}}}}),
          "w.json: /ops/0/attrs/position: expected an integer in [0, 124], got 125");
    fails(graph({{"c", fp16({2, 128, 64})}, {"n", fp16({3, 4, 64})}, {"y", fp16({2, 128, 64})}},
                {{"op", "kv_write"}, {"inputs", {"c", "n"}}, {"outputs", {"y"}}}),
          "w.json: /ops/0/inputs/1: new rows [3, 4, 64] must match the cache [2, 128, 64] in every dim but the row dim (-2)");
  }
  SECTION("reshape, slice, split") {
    fails(graph({{"x", x}, {"y", fp16({4, 60})}}, {{"op", "reshape"}, {"inputs", {"x"}}, {"outputs", {"y"}}}),
          "w.json: /ops/0/outputs/0: reshape keeps the element count: \"y\" [4, 60] has 240, \"x\" [4, 64] has 256");
    fails(graph({{"x", x}, {"y", fp16({4, 0 + 1})}},
                {{"op", "slice"}, {"inputs", {"x"}}, {"outputs", {"y"}}, {"attrs", {{"dim", 1}, {"start", 8}, {"end", 8}}}}),
          "w.json: /ops/0/attrs: slice [8, 8) of dim 1 is empty");
    fails(graph({{"x", x}, {"y", fp16({4, 1})}},
                {{"op", "slice"}, {"inputs", {"x"}}, {"outputs", {"y"}}, {"attrs", {{"dim", 1}, {"end", 65}}}}),
          "w.json: /ops/0/attrs/end: end 65 out of range for a dim of size 64, expected in [-64, 64]");
    fails(graph({{"x", x}, {"a", fp16({4, 16})}, {"b", fp16({4, 16})}},
                {{"op", "split"}, {"inputs", {"x"}}, {"outputs", {"a", "b"}}, {"attrs", {{"dim", 1}, {"sizes", {16, 16}}}}}),
          "w.json: /ops/0/attrs/sizes: sizes add up to 32, dim 1 has size 64");
    fails(graph({{"x", x}, {"a", fp16({4, 16})}},
                {{"op", "split"}, {"inputs", {"x"}}, {"outputs", {"a"}}, {"attrs", {{"dim", 1}, {"sizes", {16, 48}}}}}),
          "w.json: /ops/0/attrs/sizes: has 2 entries, the op has 1 outputs");
  }
  SECTION("compile sections") {
    Json j = graph({{"x", x}, {"y", x}}, {{"op", "softmax"}, {"inputs", {"x"}}, {"outputs", {"y"}},
                                         {"compile", {{"split", {{"d2", 2}}}}}});
    fails(j, "w.json: /ops/0/compile/split/d2: unknown dim \"d2\" for softmax, expected one of d0, d1");
    j["ops"][0]["compile"] = {{"tiles", {{"d0", 8}}}};
    fails(j, "w.json: /ops/0/compile/tiles/d0: 8 parts of d0, which has size 4 in op 0 (softmax)");
    // A matmul's dims too: [2, 4, 16] @ [16, 8] has B 2, M 4, N 8, K 16.
    Json mm = graph({{"a", fp16({2, 4, 16})}, {"b", fp16({16, 8})}, {"c", fp16({2, 4, 8})}},
                    {{"op", "matmul"}, {"inputs", {"a", "b"}}, {"outputs", {"c"}}, {"compile", {{"tiles", {{"K", 17}}}}}});
    fails(mm, "w.json: /ops/0/compile/tiles/K: 17 parts of K, which has size 16 in op 0 (matmul)");
    mm["ops"][0]["compile"] = {{"split", {{"B", 3}}}};
    fails(mm, "w.json: /ops/0/compile/split/B: 3 parts of B, which has size 2 in op 0 (matmul)");
    mm["ops"][0]["compile"] = {{"tiles", {{"M", 5}}}};
    fails(mm, "w.json: /ops/0/compile/tiles/M: 5 parts of M, which has size 4 in op 0 (matmul)");
    mm["ops"][0]["compile"] = {{"tiles", {{"N", 8}, {"K", 16}}}};
    CHECK_NOTHROW(read_op_graph(mm, "w.json"));
    j["ops"][0]["compile"] = {{"fuse", 1}};
    fails(j, "w.json: /ops/0/compile/fuse: expected true or false, got an integer");
    j["ops"][0].erase("compile");
    j["compile"] = {{"split", {{"M", 4}}}};
    fails(j, "w.json: /compile/split: names dims no op has");
    j["compile"] = {{"layouts", {{"x", {1, 1}}}}};
    fails(j, "w.json: /compile/layouts/x/1: dim 1 appears twice");
    j["compile"] = {{"layouts", {{"q", {1, 0}}}}};
    fails(j, "w.json: /compile/layouts/q: unknown tensor \"q\"");
  }
}

TEST_CASE("op set: compile options merge graph defaults, op overrides and the work_division alias") {
  Json j = graph({{"x", fp16({4, 64})}, {"y", fp16({4, 64})}, {"z", fp16({4, 64})}}, {{"op", "exp"}, {"inputs", {"x"}}, {"outputs", {"y"}}});
  j["ops"].push_back({{"op", "neg"}, {"inputs", {"y"}}, {"outputs", {"z"}}, {"compile", {{"split", {{"d1", 2}}}, {"fuse", false}}}});
  j["outputs"] = {"z"};
  j["compile"] = {{"split", {{"d0", 4}}}, {"tiles", {{"d1", 2}}}, {"fuse", true}, {"layouts", {{"x", {1, 0}}}}};
  OpGraph g = read(j);
  CHECK(g.ops[0].split == std::map<std::string, std::int64_t>{{"d0", 4}});
  CHECK(g.ops[1].split == std::map<std::string, std::int64_t>{{"d1", 2}});  // its own wins
  CHECK(g.ops[1].tiles == std::map<std::string, std::int64_t>{{"d1", 2}});
  CHECK_FALSE(op_fuses(g, g.ops[1]));
  CHECK(op_fuses(g, g.ops[0]));
  CHECK(g.compile.layouts.at("x") == std::vector<int>{1, 0});
  CHECK(apply_dim_map(g, {{"d1", 4}}, false) == 2);
  CHECK(apply_dim_map(g, {{"M", 4}}, false) == 0);
  // attrs.work_division of a matmul fills compile.split {M, N, K}.
  Json m = graph({{"a", fp16({64, 64})}, {"b", fp16({64, 64})}, {"c", fp16({64, 64})}},
                 {{"op", "matmul"}, {"inputs", {"a", "b"}}, {"outputs", {"c"}}, {"attrs", {{"work_division", {{"m", 2}, {"n", 4}}}}}});
  OpGraph mg = read(m);
  CHECK(mg.ops[0].split == std::map<std::string, std::int64_t>{{"K", 1}, {"M", 2}, {"N", 4}});
  CHECK(split_dim_names(mg, mg.ops[0]) == std::vector<std::string>{"B", "M", "N", "K"});
}
