#!/usr/bin/env python3
"""Prints docs/workloads.md's "Decode step at TP 1, 2, 4, 8" table from runs.

usage: tools/tp_table.py DFSIM [--layers N] [--models llama-3.1-8b,granite-3.3-8b] [--tp 1,2,4,8]

For each model and TP: `dfsim gen MODEL --phase decode --context 2048 --tp N` (`--host-io` at
TP 1, so every row pays the host's ids in and logits out), then `dfsim run -c
configs/spyre-drawer.json --trace off`. Columns: the step, the speed-up and efficiency against
the first TP listed (TP 1 by default; its step × its TP otherwise), the largest per-card collective time and communication share, the PCIe bytes sent, the
model report's attention time and the step's fraction of its roofline.
A whole-model TP 1 step takes seconds of host time; --layers N gives a quick, smaller table.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tool_errors  # noqa: E402

tool_errors.install()  # a missing or failing dfsim: one line, never a traceback
parser = tool_errors.ArgParser(description=__doc__.splitlines()[0])
parser.add_argument("dfsim")
parser.add_argument("--layers", type=int, default=0, help="layers per model (default: all)")
parser.add_argument("--models", default="llama-3.1-8b,granite-3.3-8b")
parser.add_argument("--tp", default="1,2,4,8")
args = parser.parse_args()
if not (os.path.isfile(args.dfsim) and os.access(args.dfsim, os.X_OK)):
    tool_errors.fail(f"{args.dfsim}: expected the dfsim executable")
if not os.path.isfile("configs/spyre-drawer.json"):
    tool_errors.fail("run from the repository root (no configs/spyre-drawer.json here)")
try:
    TPS = [int(t) for t in args.tp.split(",")]
except ValueError:
    TPS = []
if not TPS or min(TPS) < 1:
    tool_errors.fail(f"--tp {args.tp}: expected TP counts >= 1 separated by commas")
if args.layers < 0:
    tool_errors.fail(f"--layers {args.layers}: expected layers >= 0 (0: all)")
# Every model is checked before the table starts: a name dfsim gen finds, or a model file.
known = sorted(f[:-5] for f in os.listdir("workloads/models") if f.endswith(".json"))
for m in args.models.split(","):
    if m not in known and not os.path.isfile(m):
        tool_errors.fail(f"--models {args.models}: unknown model \"{m}\" (workloads/models has {', '.join(known)}, or give a model file)")

NAMES = {"llama-3.1-8b": "Llama-3.1-8B", "granite-3.3-8b": "Granite-3.3-8B"}
tmp = tempfile.mkdtemp(prefix="dfsim_tp_")


def step(model, tp):
    graph, out = f"{tmp}/{model}-tp{tp}.json", f"{tmp}/{model}-tp{tp}"
    gen = [args.dfsim, "gen", model, "--phase", "decode", "--context", "2048", "--tp", str(tp), "-q", "-o", graph]
    if tp == 1:
        gen.append("--host-io")
    if args.layers:
        gen += ["--layers", str(args.layers)]
    for cmd in (gen, [args.dfsim, "run", "-q", "-w", graph, "-c", "configs/spyre-drawer.json", "--trace", "off", "--out", out]):
        r = subprocess.run(cmd, stderr=subprocess.PIPE, text=True)
        if r.returncode != 0:  # dfsim's own one line, with its exit code
            print((r.stderr.strip().splitlines() or [f"{' '.join(cmd)}: exit {r.returncode}"])[-1], file=sys.stderr)
            raise SystemExit(r.returncode)
    return json.load(open(f"{out}/summary.json"))


try:
    print("| model | TP | step (ms) | speed-up | efficiency | collectives per card (ms) | communication share | PCIe bytes sent | attention (ms) | of roofline |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for model in args.models.split(","):
        base = None
        for tp in TPS:
            s = step(model, tp)
            ms = s["sim_time_ns"] / 1e6
            base = base or ms * tp
            speedup = base / ms
            collective = max(c["collective_ns"] for c in s["cards"]) / 1e6
            share = max(c["communication_share"] for c in s["cards"])
            pct = lambda x: f"{x:.0%}".replace("%", " %")
            cells = [NAMES.get(model, model), tp, f"{ms:.3f}", f"{speedup:.2f}", pct(speedup / tp),
                     f"{collective:.3f}" if collective else "0", f"{share:.1%}".replace("%", " %"),
                     f"{s['pcie']['bytes_sent'] / 1e6:.2f} MB", f"{s['model']['families']['attention']['time_ns'] / 1e6:.2f}",
                     pct(s["roofline"]["fraction_of_roofline"])]
            print("| " + " | ".join(str(c) for c in cells) + " |", flush=True)
finally:
    subprocess.run(["rm", "-rf", tmp])
sys.exit(0)
