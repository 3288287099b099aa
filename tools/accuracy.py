#!/usr/bin/python3
"""Accuracy report: dfsim against the kernels measured on a Spyre card.

Each row of the device records (../shared/calibration/spyre-device-records.csv) whose op
dfsim can express is turned into an op graph, run with `dfsim run`, and compared with the
measured median kernel time, beside torch-spyre's own analytical prediction. Prints one
line per record and the RMS error per category; `--csv FILE` writes the rows.

Usage: tools/accuracy.py [--dfsim build/release/dfsim] [--config configs/spyre.json]
                         [--records FILE] [--set key=value ...] [--csv FILE] [--only OP,...]

Ops not expressible yet (forced work division, batched matmul, fused multi-op kernels,
softmax) are listed as skipped with the reason, so the report says what it does not cover.

Data-movement records (shapes from ../shared/calibration/bench-ops.md, checked against
each record's hbm_bytes):
- `transpose`: x [R, C] -> [C, R], `transpose` with dims [1, 0] (the stick dim changes);
  hbm_bytes = 2 * R*C*2 (read once, written once).
- `transpose_outer`: x [R, TO_MID, C] -> [TO_MID, R, C], dims [1, 0, 2] (stick dim kept);
  TO_MID from the record's params, default 8. Assumed because hbm_bytes = 2 * R*TO_MID*C*2
  in every record (e.g. 2048x512 without TO_MID: 32 MiB = 2 * 2048*8*512*2).
- `cat0` / `cat1`: cat([x, x], dim 0 / 1) of x [R, C] -> [2R, C] / [R, 2C]. hbm_bytes =
  3 * R*C*2: x is read once and its two copies written, which is what dfsim's cat lowering
  does for a repeated input.
"""
import argparse
import re
import csv
import json
import math
import os
import pathlib
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
DEFAULT_RECORDS = ROOT.parent / "shared" / "calibration" / "spyre-device-records.csv"

CATEGORY = {
    "add": "pointwise", "neg": "pointwise", "copy": "pointwise", "read": "pointwise",
    "write": "pointwise", "add_indep2": "pointwise", "gelu": "pointwise",
    "bcast": "broadcast", "bcastcol": "broadcast", "mulbcast": "broadcast",
    "amax": "reduction", "mean": "reduction", "sumrow": "reduction", "ctsum": "reduction",
    "cat0": "transport", "cat1": "transport", "transpose": "transport", "transpose_outer": "transport",
    "softmax_row_tiling": "softmax", "mm": "matmul", "mmwd": "matmul",
    "matmul_row_tiling": "matmul", "matmul_k_tiling": "matmul",
}


def category(op):
    if op.startswith("add"):
        return "pointwise"
    if op.startswith("bmm"):
        return "bmm"
    return CATEGORY.get(op, "other")


def tensor(shape):
    return {"shape": shape, "dtype": "fp16"}


def graph(name, cores, tensors, inputs, outputs, ops):
    return {"format": "dfsim.ops", "version": 1, "name": name,
            "tensors": {k: tensor(v) for k, v in tensors.items()},
            "inputs": inputs, "outputs": outputs, "ops": ops,
            "compile": {"cores": cores, "lx_planning": False}}


def op(kind, ins, outs, **attrs):
    o = {"op": kind, "inputs": ins, "outputs": outs}
    if attrs:
        o["attrs"] = attrs
    return o


def chain_sep(n, r, c, cores):
    """add{n}_sep: t0 + t1 + ... + t{n-1}, each + its own kernel (so through off-chip memory)."""
    ts = {f"t{i}": [r, c] for i in range(n)}
    ops, acc = [], "t0"
    for i in range(1, n):
        out = "y" if i == n - 1 else f"s{i}"
        ts[out] = [r, c]
        ops.append(op("add", [acc, f"t{i}"], [out]))
        acc = out
    return graph(f"add{n}_sep", cores, ts, [f"t{i}" for i in range(n)], ["y"], ops)


def param(params, key, default):
    """KEY=value from a record's space-separated params, else `default`."""
    for kv in params.split():
        k, _, v = kv.partition("=")
        if k == key:
            return v
    return default


def to_graph(rec):
    """The op graph of a device record, or (None, reason) when dfsim cannot express it."""
    o, cores = rec["op"], int(rec["cores"])
    r, c = int(rec["rows"]), int(rec["cols"])
    n = int(rec["N"]) if rec["N"] else c
    params = rec["params"]
    if any(k in params for k in ("WD_B=", "WD_LAYOUT")):
        return None, "batch work division / operand layout not supported by the compiler yet"
    if int(rec["tiles"] or 0) >= 2:
        return None, "coarse tiling loop (BENCH_TILES) not supported yet"
    if o == "add":
        return graph(o, cores, {"a": [r, c], "b": [r, c], "y": [r, c]}, ["a", "b"], ["y"],
                     [op("add", ["a", "b"], ["y"])]), None
    if o.startswith("add") and o.endswith("_sep"):
        return chain_sep(int(o[3]), r, c, cores), None
    if o in ("neg", "copy", "gelu"):
        return graph(o, cores, {"x": [r, c], "y": [r, c]}, ["x"], ["y"], [op(o, ["x"], ["y"])]), None
    if o in ("read", "sumrow", "amax", "mean"):
        kind = o if o in ("amax", "mean") else "sum"
        return graph(o, cores, {"x": [r, c], "y": [r]}, ["x"], ["y"], [op(kind, ["x"], ["y"], dim=-1)]), None
    if o == "ctsum":
        return graph(o, cores, {"x": [r, c], "y": [c]}, ["x"], ["y"], [op("sum", ["x"], ["y"], dim=0)]), None
    if o == "write":
        return graph(o, cores, {"b": [1, c], "c": [r, 1], "y": [r, c]}, ["b", "c"], ["y"],
                     [op("add", ["b", "c"], ["y"])]), None
    if o in ("bcast", "mulbcast"):
        kind = "add" if o == "bcast" else "mul"
        return graph(o, cores, {"a": [r, c], "b": [1, c], "y": [r, c]}, ["a", "b"], ["y"],
                     [op(kind, ["a", "b"], ["y"])]), None
    if o == "bcastcol":
        return graph(o, cores, {"a": [r, c], "b": [r, 1], "y": [r, c]}, ["a", "b"], ["y"],
                     [op("add", ["a", "b"], ["y"])]), None
    if o == "add_indep2":
        ts = {k: [r, c] for k in ("a", "b", "c", "d", "y", "z")}
        return graph(o, cores, ts, ["a", "b", "c", "d"], ["y", "z"],
                     [op("add", ["a", "b"], ["y"]), op("add", ["c", "d"], ["z"])]), None
    if o in ("mm", "mmwd"):
        # mmwd forces the card's work division: WD_M x WD_N cores over [M, N], WD_K over K.
        wd = {}
        for key in ("M", "N", "K"):
            m = re.search(rf"\bWD_{key}=(\d+)", params)
            if m:
                wd[key.lower()] = int(m.group(1))
        attrs = {"work_division": wd} if wd else {}
        mm = {"op": "matmul", "inputs": ["a", "b"], "outputs": ["y"]}
        if attrs:
            mm["attrs"] = attrs
        return graph(o, cores, {"a": [r, c], "b": [c, n], "y": [r, n]}, ["a", "b"], ["y"], [mm]), None
    if o == "transpose":
        return graph(o, cores, {"x": [r, c], "y": [c, r]}, ["x"], ["y"],
                     [op("transpose", ["x"], ["y"], dims=[1, 0])]), None
    if o == "transpose_outer":
        mid = int(param(params, "TO_MID", 8))
        return graph(o, cores, {"x": [r, mid, c], "y": [mid, r, c]}, ["x"], ["y"],
                     [op("transpose", ["x"], ["y"], dims=[1, 0, 2])]), None
    if o in ("cat0", "cat1"):
        d = int(o[3])
        out = [2 * r, c] if d == 0 else [r, 2 * c]
        return graph(o, cores, {"x": [r, c], "y": out}, ["x"], ["y"],
                     [op("cat", ["x", "x"], ["y"], dim=d)]), None
    if o in ("add3", "add4", "add5", "add6"):
        return None, "fused multi-op kernel (the compiler emits one kernel per op)"
    return None, f"op {o} not expressible yet"


def run(dfsim, config, sets, g, workdir):
    path = os.path.join(workdir, "w.json")
    with open(path, "w") as f:
        json.dump(g, f)
    out = os.path.join(workdir, "out")
    cmd = [dfsim, "run", "-q", "--config", config, "--workload", path, "--out", out,
           "--set", "sim.trace=false"] + [a for s in sets for a in ("--set", s)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        return None, (p.stderr.strip().splitlines() or ["failed"])[0]
    with open(os.path.join(out, "summary.json")) as f:
        return json.load(f)["sim_time_ns"] / 1000.0, None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dfsim", default=str(ROOT / "build" / "release" / "dfsim"))
    ap.add_argument("--config", default=str(ROOT / "configs" / "spyre.json"))
    ap.add_argument("--records", default=str(DEFAULT_RECORDS))
    ap.add_argument("--set", action="append", default=[], dest="sets")
    ap.add_argument("--csv")
    ap.add_argument("--only", help="comma-separated ops")
    a = ap.parse_args()

    rows, skipped = [], {}
    with open(a.records) as f:
        records = list(csv.DictReader(f))
    only = set(a.only.split(",")) if a.only else None
    with tempfile.TemporaryDirectory() as tmp:
        for rec in records:
            if only and rec["op"] not in only:
                continue
            g, why = to_graph(rec)
            if g is None:
                skipped.setdefault(why, set()).add(rec["op"])
                continue
            # The card's scratchpad planning keeps reduction outputs in LX (lx_planning true).
            g["compile"]["lx_planning"] = rec["lx_planning"] == "1"
            sim_us, err = run(a.dfsim, a.config, a.sets, g, tmp)
            if sim_us is None:
                skipped.setdefault("dfsim failed: " + err, set()).add(rec["op"])
                continue
            meas, model = float(rec["measured_kernel_us"]), float(rec["analytical_model_us"] or "nan")
            rows.append({"id": rec["id"], "op": rec["op"], "category": category(rec["op"]),
                         "cores": rec["cores"], "shape": f'{rec["rows"]}x{rec["cols"]}' + (f'x{rec["N"]}' if rec["N"] else ""),
                         "lx_planning": rec["lx_planning"], "measured_us": meas, "dfsim_us": round(sim_us, 3),
                         "dfsim_err_pct": round(100 * (sim_us - meas) / meas, 1),
                         "model_us": model, "model_err_pct": round(100 * (model - meas) / meas, 1)})

    print(f"{'op':<12} {'cores':>5} {'shape':>16} {'measured us':>12} {'dfsim us':>10} {'err %':>7} {'cost model err %':>17}")
    for r in rows:
        print(f"{r['op']:<12} {r['cores']:>5} {r['shape']:>16} {r['measured_us']:>12.1f} {r['dfsim_us']:>10.1f} "
              f"{r['dfsim_err_pct']:>7.1f} {r['model_err_pct']:>17.1f}")
    print()
    print(f"{'category':<12} {'records':>7} {'dfsim RMS err %':>16} {'dfsim mean err %':>17} {'cost model RMS err %':>21}")
    cats = sorted({r["category"] for r in rows})
    for cat in cats + ["all"]:
        rs = [r for r in rows if cat == "all" or r["category"] == cat]
        rms = math.sqrt(sum(r["dfsim_err_pct"] ** 2 for r in rs) / len(rs))
        mean = sum(r["dfsim_err_pct"] for r in rs) / len(rs)
        mrs = [r["model_err_pct"] for r in rs if not math.isnan(r["model_err_pct"])]
        mrms = math.sqrt(sum(e * e for e in mrs) / len(mrs)) if mrs else float("nan")
        print(f"{cat:<12} {len(rs):>7} {rms:>16.1f} {mean:>17.1f} {mrms:>21.1f}")
    if skipped:
        print("\nskipped:")
        for why, ops in sorted(skipped.items()):
            print(f"  {', '.join(sorted(ops))}: {why}")
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
            w.writeheader()
            w.writerows(rows)
        print(f"\nwrote {a.csv}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
