#!/usr/bin/python3
"""How good dfsim's choice of a matmul's work division is: every 2-D grid forced and simulated.

usage: tools/division_scan.py DFSIM [SHAPE ...] [--config configs/spyre.json] [--cores 32] [--dtype fp16]

For each SHAPE `MxKxN` (default: the 16 shapes of docs/compiler.md, "How good the choice is"):
`dfsim compile --explain` of `a [M, K] @ b [K, N]` gives the division the compiler chooses and
its estimate; `dfsim run --trace off` simulates that choice and then every grid `--split
M=r,N=c` with r x c = the cores (r <= M, c <= N). Prints a Markdown table: the chosen grid and
its time, the fastest grid and its time, how much slower the choice is, and every grid's time;
then the mean of that loss. The compiler's estimate is its cost model of dfsim's own runs, so
the loss is the estimate's error, not the card's.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tool_errors  # noqa: E402

DTYPES = ("fp16", "fp8", "int8", "int4", "fp32", "int32")  # docs/op-graph-format.md, `tensors`
DEFAULT_SHAPES = ["2048x4096x14336", "2048x14336x4096", "2048x4096x4096", "2048x4096x1024", "512x4096x14336",
                  "128x4096x4096", "4096x4096x4096", "1024x4096x4096", "1024x2048x2048", "512x2048x2048",
                  "4096x2048x1024", "2048x1024x8192", "1024x4096x14336", "2048x256x2048", "4096x512x4096",
                  "256x4096x4096"]

tool_errors.install()  # a missing or failing dfsim: one line, never a traceback
parser = tool_errors.ArgParser(description=__doc__.splitlines()[0])
parser.add_argument("dfsim")
parser.add_argument("shapes", nargs="*", metavar="SHAPE", help="MxKxN (default: the 16 of docs/compiler.md)")
parser.add_argument("--config", default="configs/spyre.json")
parser.add_argument("--cores", type=int, default=32)
parser.add_argument("--dtype", default="fp16", help=f"the operands' and the output's dtype: {', '.join(DTYPES)}")
args = parser.parse_args()
if not (os.path.isfile(args.dfsim) and os.access(args.dfsim, os.X_OK)):
    tool_errors.fail(f"{args.dfsim}: expected the dfsim executable")
if args.cores < 1:
    tool_errors.fail(f"--cores {args.cores}: expected cores >= 1")
if args.dtype not in DTYPES:
    tool_errors.fail(f"--dtype {args.dtype}: expected one of {', '.join(DTYPES)}")
if not os.path.isfile(args.config):
    tool_errors.fail(f"{args.config}: no such config (expected a dfsim.config file)")
shapes = []
for s in args.shapes or DEFAULT_SHAPES:
    m = re.fullmatch(r"([1-9][0-9]*)x([1-9][0-9]*)x([1-9][0-9]*)", s)
    if not m:
        tool_errors.fail(f"{s}: expected a shape MxKxN of positive integers (e.g. 1024x4096x4096)")
    shapes.append(tuple(int(g) for g in m.groups()))


def dfsim(*argv, graph=None, shape=None):
    """Runs dfsim; on failure exits with its own one line and exit code. An error in `graph` (the
    temporary matmul, deleted at exit) names the options and the shape it was made from."""
    r = subprocess.run([args.dfsim, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        line = (r.stderr.strip().splitlines() or [f"dfsim {' '.join(argv)}: exit {r.returncode}"])[-1]
        if graph and line.startswith(graph + ":"):
            line = f"--cores {args.cores} --dtype {args.dtype} ({shape} matmul on {args.config}){line[len(graph):]}"
        print(line, file=sys.stderr)
        raise SystemExit(r.returncode)
    return r.stdout


def percent(x):
    return f"{x:+.1%}".replace("%", " %")


def simulate(graph, shape, out, split=None):
    dfsim("run", "-q", "-w", graph, "-c", args.config, "--trace", "off", "-o", out, *(["--split", split] if split else []),
          graph=graph, shape=shape)
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)["sim_time_ns"] / 1000.0


tmp = tempfile.mkdtemp(prefix="dfsim_divisions_")
try:
    print("| M × K × N | chosen | estimate µs | simulated µs | fastest grid | simulated µs | loss | every grid (µs) |")
    print("|---|---|---|---|---|---|---|---|")
    losses = []
    for M, K, N in shapes:
        graph = os.path.join(tmp, f"mm{M}x{K}x{N}.json")
        with open(graph, "w") as f:
            json.dump({"format": "dfsim.ops", "version": 1, "name": f"matmul_{M}x{K}x{N}",
                       "compile": {"cores": args.cores}, "inputs": ["a", "b"], "outputs": ["c"],
                       "tensors": {"a": {"shape": [M, K], "dtype": args.dtype}, "b": {"shape": [K, N], "dtype": args.dtype},
                                   "c": {"shape": [M, N], "dtype": args.dtype}},
                       "ops": [{"op": "matmul", "inputs": ["a", "b"], "outputs": ["c"]}]}, f)
        shape = f"{M}x{K}x{N}"
        text = dfsim("compile", graph, "-c", args.config, "-o", os.path.join(tmp, "k.json"), "--explain",
                     graph=graph, shape=shape)
        split = re.search(r"split: (.*?) \(", text)
        estimate = re.search(r"least estimate \(([0-9.]+) us", text)
        chosen = split.group(1) if split else "?"
        chosen_us = simulate(graph, shape, os.path.join(tmp, "chosen"))
        grids = {}
        for r in range(1, args.cores + 1):
            c = args.cores // r
            if r * c != args.cores or r > M or c > N:
                continue
            grids[f"{r}×{c}"] = simulate(graph, shape, os.path.join(tmp, f"g{r}"), f"M={r},N={c}")
        fastest = min([chosen_us] + list(grids.values()))
        loss = chosen_us / fastest - 1
        losses.append(loss)
        best = min(grids, key=grids.get) if grids else "—"
        cells = [f"{M} × {K} × {N}", chosen, estimate.group(1) if estimate else "—", f"{chosen_us:.1f}", best,
                 f"{grids[best]:.1f}" if grids else "—", percent(loss), ", ".join(f"{g} {t:.1f}" for g, t in grids.items())]
        print("| " + " | ".join(cells) + " |", flush=True)
    print(f"\nmean loss over {len(losses)} shapes: {percent(sum(losses) / len(losses))}")
finally:
    subprocess.run(["rm", "-rf", tmp])
sys.exit(0)
