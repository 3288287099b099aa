#!/usr/bin/python3
"""Plots of `dfsim serve` runs (docs/serving.md), written as PNG files with matplotlib.

Usage:
  plot_serving.py RUN_DIR [RUN_DIR ...] [--out DIR]   latency CDFs (TTFT, TPOT, E2E) of each run,
                                                      and throughput and queue length over time
  plot_serving.py --vs-rate SWEEP_DIR_OR_CSV [--out FILE]
                                                      latency vs request rate from a --rate sweep
                                                      (sweep.csv) or from several run dirs
RUN_DIR is a `dfsim serve` output directory (requests.jsonl, steps.csv, summary.json).
Prints `wrote FILE` for each file written.
"""
import json
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from tool_errors import BadInput, guard, number, parse_json, read_csv, read_text, save_figure, status_stream  # noqa: E402
import tool_errors  # noqa: E402

REQUEST_FIELDS = ("arrival_ms", "first_token_ms", "finish_ms", "output_tokens")
STEP_FIELDS = ("start_ms", "end_ms", "phase", "batch", "chunk", "chunks", "waiting", "running")


def read_requests(run):
    path = run / "requests.jsonl"
    out = []
    for i, line in enumerate(read_text(path, "a dfsim serve requests.jsonl").splitlines()):
        if not line.strip():
            continue
        r = parse_json(line, f"{path}: line {i + 1}")
        if not isinstance(r, dict):
            raise BadInput(f"{path}: line {i + 1}: expected a JSON object")
        for k in REQUEST_FIELDS:
            r[k] = number(r.get(k), f"{path}: line {i + 1}: {k}")
        out.append(r)
    if not out:
        raise BadInput(f"{path}: no requests")
    return out


def read_steps(run):
    path = run / "steps.csv"
    rows = read_csv(path, STEP_FIELDS, "a dfsim serve steps.csv")
    for i, s in enumerate(rows):
        for k in ("start_ms", "end_ms", "batch", "waiting", "running"):
            number(s[k], f"{path}: line {i + 2}: {k}")
    return rows


def cdf(ax, values, label):
    v = sorted(values)
    if not v:
        return
    ax.plot(v, [(i + 1) / len(v) for i in range(len(v))], label=label)


def plot_cdfs(runs, out):
    fig, axes = plt.subplots(1, 3, figsize=(14, 4))
    for run in runs:
        reqs = read_requests(run)
        name = run.name
        cdf(axes[0], [r["first_token_ms"] - r["arrival_ms"] for r in reqs], name)
        cdf(axes[1], [(r["finish_ms"] - r["first_token_ms"]) / (r["output_tokens"] - 1)
                      for r in reqs if r["output_tokens"] > 1], name)
        cdf(axes[2], [r["finish_ms"] - r["arrival_ms"] for r in reqs], name)
    for ax, title in zip(axes, ["TTFT (ms)", "TPOT (ms)", "E2E latency (ms)"]):
        ax.set_xlabel(title)
        ax.set_ylabel("share of requests")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("dfsim serve: latency CDFs")
    fig.tight_layout()
    save_figure(fig, out, dpi=120)
    print(f"wrote {out}", file=status_stream(out))


def plot_timeline(run, out, bucket_s=None):
    reqs, steps = read_requests(run), read_steps(run)
    end_s = max(r["finish_ms"] for r in reqs) / 1000
    if bucket_s is None:
        bucket_s = max(end_s / 100, 1e-3)
    n = int(end_s / bucket_s) + 1
    tokens = [0.0] * n
    done = [0.0] * n
    for s in steps:  # tokens produced at the end of each step
        i = min(int(float(s["end_ms"]) / 1000 / bucket_s), n - 1)
        if s["phase"] == "decode":
            tokens[i] += int(s["batch"])
        elif s["chunk"] == s["chunks"]:
            tokens[i] += 1
    for r in reqs:
        done[min(int(r["finish_ms"] / 1000 / bucket_s), n - 1)] += 1
    t = [i * bucket_s for i in range(n)]
    fig, axes = plt.subplots(3, 1, figsize=(10, 8), sharex=True)
    axes[0].plot(t, [x / bucket_s for x in tokens])
    axes[0].set_ylabel("output tokens/s")
    axes[1].plot(t, [x / bucket_s for x in done])
    axes[1].set_ylabel("requests done/s")
    axes[2].step([float(s["start_ms"]) / 1000 for s in steps], [int(s["waiting"]) for s in steps], where="post",
                 label="waiting")
    axes[2].step([float(s["start_ms"]) / 1000 for s in steps], [int(s["running"]) for s in steps], where="post",
                 label="decoding")
    axes[2].set_ylabel("requests")
    axes[2].set_xlabel("time (s)")
    axes[2].legend()
    for ax in axes:
        ax.grid(alpha=0.3)
    fig.suptitle(f"dfsim serve: throughput and queue over time ({run.name})")
    fig.tight_layout()
    save_figure(fig, out, dpi=120)
    print(f"wrote {out}", file=status_stream(out))


SWEEP_FIELDS = ("rate", "ttft_p50_ms", "ttft_p99_ms", "e2e_p50_ms", "tpot_p50_ms", "requests_per_s")


def sweep_rows(path):
    path = pathlib.Path(path)
    if path.is_dir():
        path = path / "sweep.csv"
    rows = read_csv(path, SWEEP_FIELDS, "a dfsim serve sweep.csv")
    if not rows:
        raise BadInput(f"{path}: no rows")
    return [{k: number(row[k], f"{path}: line {i + 2}: {k}") for k in SWEEP_FIELDS} for i, row in enumerate(rows)]


def plot_vs_rate(rows, out):
    rows.sort(key=lambda r: r["rate"])
    rate = [r["rate"] for r in rows]
    fig, axes = plt.subplots(1, 2, figsize=(12, 4))
    axes[0].plot(rate, [r["ttft_p50_ms"] for r in rows], "o-", label="TTFT p50")
    axes[0].plot(rate, [r["ttft_p99_ms"] for r in rows], "o--", label="TTFT p99")
    axes[0].plot(rate, [r["e2e_p50_ms"] for r in rows], "s-", label="E2E p50")
    axes[0].plot(rate, [r["tpot_p50_ms"] for r in rows], "^-", label="TPOT p50")
    axes[0].set_yscale("log")
    axes[0].set_xlabel("offered rate (req/s)")
    axes[0].set_ylabel("latency (ms)")
    axes[0].legend(fontsize=8)
    axes[1].plot(rate, [r["requests_per_s"] for r in rows], "o-", label="achieved")
    axes[1].plot(rate, rate, ":", label="offered")
    axes[1].set_xlabel("offered rate (req/s)")
    axes[1].set_ylabel("throughput (req/s)")
    axes[1].legend(fontsize=8)
    for ax in axes:
        ax.set_xscale("log")
        ax.grid(alpha=0.3)
    fig.suptitle("dfsim serve: latency and throughput vs request rate")
    fig.tight_layout()
    save_figure(fig, out, dpi=120)
    print(f"wrote {out}", file=status_stream(out))


def main(argv):
    ap = tool_errors.ArgParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="*", help="dfsim serve output directories")
    ap.add_argument("--vs-rate", help="a sweep directory or its sweep.csv")
    ap.add_argument("--out", help="output directory (runs) or PNG file (--vs-rate)")
    a = ap.parse_args(argv)
    if a.vs_rate:
        rows = sweep_rows(a.vs_rate)
        base = pathlib.Path(a.vs_rate)
        out = a.out or str((base if base.is_dir() else base.parent) / "latency_vs_rate.png")
        plot_vs_rate(rows, out)
        return 0
    if not a.runs:
        ap.error("give RUN_DIR ... or --vs-rate SWEEP")
    runs = [pathlib.Path(r) for r in a.runs]
    for r in runs:
        if not r.is_dir():
            raise BadInput(f"{r}: expected a dfsim serve output directory")
        if not (r / "requests.jsonl").exists():
            if (r / "sweep.csv").exists():  # the directory of a --rate sweep: its runs are rate-R/
                rates = sorted(p.name for p in r.glob("rate-*") if p.is_dir())
                raise BadInput(f"{r}: a dfsim serve rate sweep: give one of its runs ({', '.join(rates[:3])}"
                               f"{', ...' if len(rates) > 3 else ''}) or --vs-rate {r}")
            raise BadInput(f"{r}: not a dfsim serve output directory (no requests.jsonl)")
        read_requests(r), read_steps(r)  # every file checked before the first plot is written
    out_dir = pathlib.Path(a.out) if a.out else runs[0]
    out_dir.mkdir(parents=True, exist_ok=True)
    plot_cdfs(runs, out_dir / "latency_cdf.png")
    for r in runs:
        plot_timeline(r, out_dir / f"timeline_{r.name}.png")
    return 0


if __name__ == "__main__":
    guard(main, sys.argv[1:])
