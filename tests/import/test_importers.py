#!/usr/bin/python3
"""Tests of tools/import_torch.py and tools/import_onnx.py (CTest runs one case per process).

usage: test_importers.py DFSIM CASE   (CASE: one of the test_* names below, without test_)
Each case builds what it needs in a temporary directory (the tiny Llama block of tiny_llama.py,
its ONNX export) and exits 0 if it holds; an AssertionError (exit 1) says what did not.
"""
import json
import math
import os
import stat
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TOOLS = os.path.join(ROOT, "tools")
sys.path.insert(0, TOOLS)
sys.path.insert(0, HERE)

import torch  # noqa: E402  (required: Debian's python3-torch, tools/install-deps.sh)
import tiny_bert  # noqa: E402
import tiny_llama as tl  # noqa: E402

PY = sys.executable
INPUTS = {"x": f"1x{tl.SEQ}x{tl.HIDDEN}", "cos": f"{tl.SEQ}x{tl.HEAD_DIM}", "sin": f"{tl.SEQ}x{tl.HEAD_DIM}",
          "mask": f"{tl.SEQ}x{tl.SEQ}"}
ACTIVATIONS = set(INPUTS)
DTYPE_BYTES = {"fp16": 2, "fp8": 1, "fp32": 4, "int32": 4}

# Projection MACs per token: q 256*256 + k 256*128 + v 256*128 + o 256*256 + gate, up, down 3 * 256*512
# = 65536 + 32768 + 32768 + 65536 + 393216 = 589824; times 16 tokens = 9437184. Attention per head:
# scores 16*16*64 + probs @ v 16*16*64 = 32768; times 4 heads = 131072. Total 9568256.
BLOCK_MACS = 9568256


def run(args, expect=0):
    p = subprocess.run(args, capture_output=True, text=True)
    assert p.returncode == expect, f"{' '.join(args)}: exit {p.returncode}, expected {expect}\n{p.stdout}{p.stderr}"
    return p


def tensor_bytes(graph, name):
    t = graph["tensors"][name]
    n = 1
    for d in t["shape"]:
        n *= d
    return n * DTYPE_BYTES[t["dtype"]]


def weight_bytes(graph):
    return sum(tensor_bytes(graph, n) for n in graph["inputs"] if n not in ACTIVATIONS)


def import_torch_cli(d, module="TinyLlamaBlock"):
    out = os.path.join(d, "torch.json" if module == "TinyLlamaBlock" else module + ".json")
    args = [PY, os.path.join(TOOLS, "import_torch.py"), os.path.join(HERE, "tiny_llama.py"),
            "--module", module, "-o", out]
    for k, v in INPUTS.items():
        args += ["--input", f"{k}={v}"]
    run(args)
    return out


def export_onnx(d):
    path = os.path.join(d, "block.onnx")
    torch.manual_seed(0)
    example = tuple(torch.randn([int(s) for s in v.split("x")]) for v in INPUTS.values())
    torch.onnx.export(tl.TinyLlamaBlock().eval(), example, path, input_names=list(INPUTS), output_names=["y"],
                      opset_version=17)
    return path


def import_onnx_cli(d):
    out = os.path.join(d, "onnx.json")
    run([PY, os.path.join(TOOLS, "import_onnx.py"), export_onnx(d), "-o", out])
    return out


# Two importers' graphs of one model differ in how a weight is stored (torch's Linear [N, K],
# ONNX MatMul [K, N]). The compiler's estimate ranks some divisions of the two differently once
# a shared tile costs one load per multicast group (ring.multicast_max_cores): comparisons of
# the work itself run without that limit, where the two rank alike.
SAME_PICKS = ["--set", "ring.multicast_max_cores=0"]


def simulate(dfsim, graph_path, d, extra=()):
    """dfsim validate, then dfsim run (with `extra` arguments); returns summary.json."""
    run([dfsim, "validate", graph_path])
    out = os.path.join(d, os.path.basename(graph_path) + ".out")
    run([dfsim, "run", "-q", "-w", graph_path, "--trace", "off", "--out", out, *extra])
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)


def load(path):
    with open(path) as f:
        return json.load(f)


def ops_of(graph):
    return sorted(op["op"] for op in graph["ops"])


# ---- cases ---------------------------------------------------------------------------------

def test_torch_block(dfsim, d):
    """The traced block validates, runs, keeps every parameter byte and does the block's MACs."""
    path = import_torch_cli(d)
    graph = load(path)
    params = sum(p.numel() * 2 for p in tl.TinyLlamaBlock().parameters())  # fp16
    assert weight_bytes(graph) == params, f"weight bytes {weight_bytes(graph)} != parameter bytes {params}"
    ops = ops_of(graph)
    assert ops.count("linear") == 7 and ops.count("rmsnorm") == 2 and ops.count("rope") == 2, ops
    assert "rsqrt" not in ops and "pow" not in ops, f"the RMSNorm pattern was not matched: {ops}"
    assert ops.count("sdpa") == 1 and "softmax" not in ops and "cat" not in ops, f"attention was not matched: {ops}"
    sdpa = next(op for op in graph["ops"] if op["op"] == "sdpa")
    assert sdpa["attrs"] == {"scale": 0.125} and sdpa["inputs"][3] == "mask", sdpa  # 1/sqrt(64)
    assert graph["tensors"][sdpa["inputs"][1]]["shape"] == [1, tl.KV_HEADS, tl.SEQ, tl.HEAD_DIM], "K not taken before repeat_kv"
    s = simulate(dfsim, path, d)
    assert s["compute"]["macs"] == BLOCK_MACS, s["compute"]["macs"]
    # Every weight and input is read from off-chip at least once, the output written once.
    floor = weight_bytes(graph) + sum(tensor_bytes(graph, n) for n in ACTIVATIONS) + tensor_bytes(graph, graph["outputs"][0])
    assert s["offchip"]["graph_bytes"] >= floor, (s["offchip"]["graph_bytes"], floor)


def test_onnx_matches_torch(dfsim, d):
    """Through torch.onnx.export the block becomes the same work: the same MACs, off-chip bytes,
    parameter bytes and op mix (ONNX MatMul weights are [K, N], so linear -> matmul)."""
    t, o = load(import_torch_cli(d)), load(import_onnx_cli(d))
    assert weight_bytes(o) == weight_bytes(t), (weight_bytes(o), weight_bytes(t))
    assert ops_of(o) == sorted(("matmul" if op == "linear" else op) for op in ops_of(t)), (ops_of(o), ops_of(t))
    st, so = (simulate(dfsim, os.path.join(d, "torch.json"), d, SAME_PICKS),
              simulate(dfsim, os.path.join(d, "onnx.json"), d, SAME_PICKS))
    assert so["compute"]["macs"] == st["compute"]["macs"] == BLOCK_MACS
    assert so["offchip"]["graph_bytes"] == st["offchip"]["graph_bytes"], \
        (so["offchip"]["graph_bytes"], st["offchip"]["graph_bytes"])


def test_onnx_dynamic_batch(dfsim, d):
    """An export with a symbolic batch dim (dynamic_axes) takes its size from --input: the shape
    arithmetic the exporter wrote (Shape, Gather, Cast, Concat) folds, and batch 4 is four
    times the work of batch 1, the same work as the traced module at batch 4."""
    path = os.path.join(d, "dyn.onnx")
    example = tuple(torch.randn([int(s) for s in v.split("x")]) for v in INPUTS.values())
    torch.onnx.export(tl.TinyLlamaBlock().eval(), example, path, input_names=list(INPUTS), output_names=["y"],
                      dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}}, opset_version=17)
    out, t4 = os.path.join(d, "dyn.json"), os.path.join(d, "torch4.json")
    p = run([PY, os.path.join(TOOLS, "import_onnx.py"), path, "-o", out], expect=2)
    assert "the shape of x is unknown" in p.stderr, p.stderr
    run([PY, os.path.join(TOOLS, "import_onnx.py"), path, "--input", f"x=4x{tl.SEQ}x{tl.HIDDEN}", "-o", out])
    args = [PY, os.path.join(TOOLS, "import_torch.py"), os.path.join(HERE, "tiny_llama.py"), "--module", "TinyLlamaBlock",
            "-o", t4, "--input", f"x=4x{tl.SEQ}x{tl.HIDDEN}"] + [f"--input={k}={v}" for k, v in INPUTS.items() if k != "x"]
    run(args)
    so, st = simulate(dfsim, out, d, SAME_PICKS), simulate(dfsim, t4, d, SAME_PICKS)
    assert so["compute"]["macs"] == st["compute"]["macs"] == 4 * BLOCK_MACS, (so["compute"]["macs"], st["compute"]["macs"])
    assert so["offchip"]["graph_bytes"] == st["offchip"]["graph_bytes"]


def test_python_api(dfsim, d):
    """import_module and import_onnx return what the command lines write, byte for byte; a
    module on the meta device (no weight memory) gives the same graph; two imports agree."""
    from import_onnx import import_onnx
    from import_torch import import_module
    cli_t, cli_o = import_torch_cli(d), import_onnx_cli(d)
    api_t = import_module(tl.TinyLlamaBlock(), INPUTS)
    assert import_module(tl.TinyLlamaBlock().to("meta"), INPUTS) == api_t, "a module on the meta device imports otherwise"
    api_o = import_onnx(os.path.join(d, "block.onnx"))
    assert api_t == load(cli_t) and api_o == load(cli_o)
    again = os.path.join(d, "again.json")
    os.rename(cli_t, again)
    assert open(import_torch_cli(d)).read() == open(again).read(), "two imports differ"
    run([PY, os.path.join(TOOLS, "check_schemas.py"), cli_t, cli_o])


def test_bert_encoder(dfsim, d):
    """A BERT-style encoder layer exported at ONNX opset 14 (LayerNorm as ReduceMean/Sub/Pow/
    Sqrt/Div, GELU through Erf, biases as Adds, K as one permute) imports to the same work as
    the traced module: two layernorms, one gelu, one sdpa; the same MACs and off-chip bytes."""
    from import_onnx import import_onnx
    from import_torch import import_module
    b, t, h = 2, tiny_bert.SEQ, tiny_bert.HIDDEN
    path = os.path.join(d, "bert.onnx")
    torch.onnx.export(tiny_bert.TinyBertLayer().eval(), (torch.randn(b, t, h), torch.randn(t, t)), path,
                      input_names=["x", "mask"], opset_version=14)
    inputs = {"x": f"{b}x{t}x{h}", "mask": f"{t}x{t}"}
    summaries = []
    for name, graph in (("torch", import_module(tiny_bert.TinyBertLayer(), inputs)), ("onnx", import_onnx(path))):
        ops = ops_of(graph)
        assert ops.count("layernorm") == 2 and ops.count("gelu") == 1 and ops.count("sdpa") == 1, (name, ops)
        with open(os.path.join(d, name + ".json"), "w") as f:
            json.dump(graph, f)
        summaries.append(simulate(dfsim, os.path.join(d, name + ".json"), d, SAME_PICKS))
    # Per token: q, k, v, out 4 * 128*128 + intermediate, output 2 * 128*512 = 196608; 32 tokens:
    # 6291456. Attention: 2 sequences * 4 heads * (16*16*32 + 16*16*32) = 131072. Total 6422528.
    assert [s["compute"]["macs"] for s in summaries] == [6422528, 6422528], [s["compute"]["macs"] for s in summaries]
    # The same parameters; the off-chip traffic close: ONNX stores the MatMul weights [K, N],
    # torch's Linear [N, K], so the compiler may divide them differently (and re-load the small
    # biases per grid row a different number of times).
    def param_bytes(graph):
        size = {"fp16": 2, "fp32": 4, "bf16": 2}
        return sum(math.prod(t["shape"]) * size.get(t.get("dtype", "fp16"), 2)
                   for n, t in graph["tensors"].items() if n in graph["inputs"] and n not in ("x", "mask"))
    graphs = [load(os.path.join(d, n + ".json")) for n in ("torch", "onnx")]
    assert param_bytes(graphs[0]) == param_bytes(graphs[1]), [param_bytes(g) for g in graphs]
    gb = [s["offchip"]["graph_bytes"] for s in summaries]
    assert abs(gb[0] - gb[1]) <= 0.1 * max(gb), gb


GEN_VOCAB = 1000  # the LM head's rows: tells its weight apart from the layer's


def test_gen_same_layer(dfsim, d):
    """`dfsim gen` of a one-layer model with the block's hyperparameters: the same projection
    weights (shapes and bytes), its layer's weights exactly the module's parameter bytes, the
    same MACs kernel by kernel, and its layer's off-chip bytes within 5 % of the import's."""
    model = {"format": "dfsim.model", "version": 1, "name": "tiny-llama", "source": "tests/import/tiny_llama.py",
             "architecture": "decoder", "hidden_size": tl.HIDDEN, "num_layers": 1, "num_heads": tl.HEADS,
             "num_kv_heads": tl.KV_HEADS, "head_dim": tl.HEAD_DIM, "intermediate_size": tl.INTERMEDIATE,
             "vocab_size": GEN_VOCAB, "max_position_embeddings": 2048, "norm": "rmsnorm", "norm_eps": 1e-6,
             "tie_word_embeddings": False, "dtype": "fp16"}
    path, out = os.path.join(d, "tiny-llama.json"), os.path.join(d, "gen.json")
    with open(path, "w") as f:
        json.dump(model, f)
    run([dfsim, "gen", path, "--phase", "prefill", "--tokens", str(tl.SEQ), "--layers", "1", "-o", out])
    gen, imported = load(out), load(import_torch_cli(d))

    def weights(graph, kinds):  # the weights (input 1) of the given ops, minus the LM head
        names = {op["inputs"][1] for op in graph["ops"] if op["op"] in kinds and len(op["inputs"]) > 1}
        return sorted((graph["tensors"][n]["shape"], tensor_bytes(graph, n)) for n in names
                      if n in graph["inputs"] and graph["tensors"][n]["shape"][0] != GEN_VOCAB)
    projections = weights(imported, ("linear",))
    assert len(projections) == 7 and weights(gen, ("linear", "matmul")) == projections, \
        (weights(gen, ("linear", "matmul")), projections)
    # gen's norms: the layer's two and the final norm before the LM head, [D] each.
    norms_and_projections = sum(b for _, b in weights(gen, ("linear", "matmul", "rmsnorm")))
    params = sum(p.numel() * 2 for p in tl.TinyLlamaBlock().parameters())
    assert norms_and_projections - tl.HIDDEN * 2 == weight_bytes(imported) == params, \
        (norms_and_projections, weight_bytes(imported), params)

    sg, si = simulate(dfsim, out, d), simulate(dfsim, os.path.join(d, "torch.json"), d)
    # gen adds the LM head of the last token: 1 * 256 * 1000 = 256000 MACs.
    head = tl.HIDDEN * GEN_VOCAB
    assert sg["compute"]["macs"] - head == si["compute"]["macs"] == BLOCK_MACS, (sg["compute"]["macs"], si["compute"]["macs"])
    layer = [k for k in sg["kernels"] if "_l0." in k["name"] and not k["name"].startswith("kv_write")]
    assert sorted(k["macs"] for k in layer if k["macs"]) == sorted(k["macs"] for k in si["kernels"] if k["macs"])
    # Off-chip bytes differ only where the graphs do: gen multiplies SwiGLU's halves in a kernel
    # of their own (the imported order fuses the product into the up projection), and the
    # imported attention reads its mask; about 2 % here.
    gen_bytes, imported_bytes = sum(k["offchip_bytes"] for k in layer), si["offchip"]["graph_bytes"]
    assert abs(gen_bytes - imported_bytes) <= 0.05 * imported_bytes, (gen_bytes, imported_bytes)


def test_torch_variants(dfsim, d):
    """The block written other ways (sizes unpacked, so traced by the meta tracer; [1, 1, T, D]
    rotary tables; repeat_interleave) imports to the same work: the same inputs, the same ops
    but for reshapes (rope's tables reshaped to [T, D]), the same MACs and off-chip bytes."""
    t, u = load(import_torch_cli(d)), load(import_torch_cli(d, "TinyLlamaBlockVariants"))
    def but_reshapes(graph):
        return [op for op in ops_of(graph) if op != "reshape"]
    assert u["inputs"] == t["inputs"] and but_reshapes(u) == but_reshapes(t), (ops_of(u), ops_of(t))
    st = simulate(dfsim, os.path.join(d, "torch.json"), d)
    su = simulate(dfsim, os.path.join(d, "TinyLlamaBlockVariants.json"), d)
    assert (su["compute"]["macs"], su["offchip"]["graph_bytes"]) == (st["compute"]["macs"], st["offchip"]["graph_bytes"]), \
        ((su["compute"]["macs"], su["offchip"]["graph_bytes"]), (st["compute"]["macs"], st["offchip"]["graph_bytes"]))


GELU_SRC = """import math
import torch
from torch import nn


class Gelus(nn.Module):  # nn.GELU, and the erf form BERT code writes by hand
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(32, 64)
        self.act = nn.GELU()

    def forward(self, x):
        h = self.fc(x)
        return self.act(h) + h * 0.5 * (1.0 + torch.erf(h / math.sqrt(2.0)))


class Erf(nn.Module):
    def forward(self, x):
        return torch.erf(x)
"""


def test_gelu_pattern(dfsim, d):
    """GELU written with erf becomes one gelu op in both importers; an erf alone is an error."""
    from import_onnx import import_onnx
    from import_torch import import_module
    from opgraph import ImportFailure
    src = os.path.join(d, "gelus.py")
    with open(src, "w") as f:
        f.write(GELU_SRC)
    sys.path.insert(0, d)
    import gelus
    path = os.path.join(d, "gelus.onnx")
    torch.onnx.export(gelus.Gelus().eval(), (torch.randn(4, 32),), path, opset_version=17)
    for graph in (import_module(gelus.Gelus(), {"x": "4x32"}), import_onnx(path)):
        assert ops_of(graph) == ["add", "gelu", "gelu", "linear"], ops_of(graph)
    p = run([PY, os.path.join(TOOLS, "import_torch.py"), src, "--module", "Erf", "--input", "x=4x32", "-o",
             os.path.join(d, "erf.json")], expect=2)
    assert p.stderr.count("\n") == 1 and "node erf (call_function torch.erf)" in p.stderr, p.stderr
    try:
        import_module(gelus.Erf(), {"x": "4x32"})
        raise AssertionError("an erf alone was imported")
    except ImportFailure:
        pass


def test_torch_unsupported(dfsim, d):
    """torch.sort is outside the op set: exit 2, one line naming the node and its target, no file."""
    src = os.path.join(d, "sorts.py")
    with open(src, "w") as f:
        f.write("import torch\nfrom torch import nn\n\nclass Sorts(nn.Module):\n"
                "    def __init__(self):\n        super().__init__()\n        self.proj = nn.Linear(8, 8)\n\n"
                "    def forward(self, x):\n        return torch.sort(self.proj(x), dim=-1).values\n")
    out = os.path.join(d, "sorts.json")
    p = run([PY, os.path.join(TOOLS, "import_torch.py"), src, "--module", "Sorts", "--input", "x=4x8", "-o", out],
            expect=2)
    assert p.stderr.count("\n") == 1 and "node sort (call_function torch.sort)" in p.stderr, p.stderr
    assert not os.path.exists(out)


def test_onnx_unsupported(dfsim, d):
    """An ONNX TopK: exit 2, one line naming the node, no file."""
    import onnx
    from onnx import TensorProto, helper
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8])
    outs = [helper.make_tensor_value_info(n, t, None) for n, t in (("v", TensorProto.FLOAT), ("i", TensorProto.INT64))]
    k = helper.make_tensor("k", TensorProto.INT64, [1], [3])
    nodes = [helper.make_node("Relu", ["x"], ["r"], name="relu0"), helper.make_node("TopK", ["r", "k"], ["v", "i"], name="top3")]
    path, out = os.path.join(d, "topk.onnx"), os.path.join(d, "topk.json")
    onnx.save(helper.make_model(helper.make_graph(nodes, "topk", [x], outs, [k]),
                                opset_imports=[helper.make_opsetid("", 17)]), path)
    p = run([PY, os.path.join(TOOLS, "import_onnx.py"), path, "-o", out], expect=2)
    assert p.stderr.count("\n") == 1 and "node top3 (TopK)" in p.stderr, p.stderr
    assert not os.path.exists(out)


def test_bad_input(dfsim, d):
    """Missing or misspelt inputs and bad shapes: exit 2 with one line, nothing written."""
    out = os.path.join(d, "bad.json")
    base = [PY, os.path.join(TOOLS, "import_torch.py"), os.path.join(HERE, "tiny_llama.py"), "--module", "TinyLlamaBlock", "-o", out]
    for extra, says in ((["--input", "x=1x16x256"], "missing --input cos, sin, mask"),
                        (["--input", "x=1x16by256"], "expected dims joined by 'x'"),
                        ([f"--input={k}={v}" for k, v in INPUTS.items() if k != "mask"] + ["--input", "mask=16x17"],
                         "forward fails on the given input shapes"),
                        (["--input", "x=1x16x256:bf16"], "dtype 'bf16'")):
        p = run(base + extra, expect=2)
        assert p.stderr.count("\n") == 1 and says in p.stderr, p.stderr
    p = run([PY, os.path.join(TOOLS, "import_onnx.py"), os.path.join(HERE, "tiny_llama.py"), "-o", out], expect=2)
    assert p.stderr.count("\n") == 1 and "not an ONNX model" in p.stderr, p.stderr
    assert not os.path.exists(out)


def test_bad_output(dfsim, d):
    """An output on a device was replaced by a file (the temporary renamed over /dev/full) and
    reported success: it is written in place now, a full device exits 2 with one line; a
    directory as the output or the source exits 2 before any work; a symlink keeps its link."""
    base = [PY, os.path.join(TOOLS, "import_torch.py"), os.path.join(HERE, "tiny_llama.py"), "--module", "TinyLlamaBlock"]
    for k, v in INPUTS.items():
        base += ["--input", f"{k}={v}"]
    full = os.path.join(d, "full")
    try:
        os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))  # a private /dev/full (root only)
    except PermissionError:
        full = None
    if full:
        p = run(base + ["-o", full], expect=2)
        assert p.stderr.count("\n") == 1 and "No space left on device" in p.stderr, p.stderr
        assert stat.S_ISCHR(os.stat(full).st_mode)
    p = run(base + ["-o", d], expect=2)
    assert p.stderr.count("\n") == 1 and "is a directory, expected a file path" in p.stderr, p.stderr
    p = run([PY, os.path.join(TOOLS, "import_onnx.py"), d, "-o", os.path.join(d, "x.json")], expect=2)
    assert p.stderr.count("\n") == 1 and "is a directory, expected a file" in p.stderr, p.stderr
    # tools/roofline_step_table.py shares the writer: it wrote straight into the path (half a
    # table on a full disk) and ended in a traceback on any error.
    roof = [PY, os.path.join(TOOLS, "roofline_step_table.py")]
    if full:
        p = run(roof + ["workloads/models/llama-3.1-8b.json", "-o", full], expect=2)
        assert p.stderr.count("\n") == 1 and "No space left on device" in p.stderr, p.stderr
    p = run(roof + ["tests/data/bad/ops_ok.json", "-o", os.path.join(d, "t.csv")], expect=2)
    assert p.stderr == 'tests/data/bad/ops_ok.json: /format: expected "dfsim.model" (a model file), got "dfsim.ops"\n', p.stderr
    # -o /dev/stdout: the graph alone on stdout (its "wrote" line followed it, so a pipe into
    # `dfsim run -w /dev/stdin` failed), the status line on stderr
    p = run(base + ["-o", "/dev/stdout"])
    assert json.loads(p.stdout)["format"] == "dfsim.ops" and p.stderr == "wrote /dev/stdout\n", p.stderr
    target, link = os.path.join(d, "target.json"), os.path.join(d, "link.json")
    open(target, "w").write("old")
    os.symlink(target, link)
    run(base + ["-o", link])
    assert os.path.islink(link) and json.load(open(target))["format"] == "dfsim.ops"


def main():
    dfsim, case = sys.argv[1], sys.argv[2]
    fn = globals().get("test_" + case)
    if fn is None:
        print(f"unknown case {case}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="dfsim-import-") as d:
        fn(dfsim, d)
    return 0


if __name__ == "__main__":
    sys.exit(main())
