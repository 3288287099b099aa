#!/usr/bin/python3
"""Plot a dfsim run's utilization.csv: mean busy fraction per unit kind over time.

usage: tools/plot_utilization.py OUTPUT_DIR_OR_CSV [--out FILE] [--style heatmap|lines]

Columns of utilization.csv are named "group/name" (see docs/outputs.md), "card N group/name"
on a system of several cards. Units are grouped by kind, every card's together: the group for
"memory" (DRAM channels), "ring" (ring links) and "pcie" (the cards' and drawers' links),
otherwise the part of the name before "." ("core 3/pt.1" -> pt, "card 2 core 0/dma in" -> dma).
Each kind is drawn as the mean over its units, per bucket.

Needs Debian's python3-numpy and python3-matplotlib (tools/install-deps.sh installs them).
"""
import csv
import json
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from tool_errors import BadInput, guard, number, read_text, save_figure, status_stream  # noqa: E402
import tool_errors  # noqa: E402

# Display order of kinds; kinds not listed follow in alphabetical order.
KIND_ORDER = ["pt", "sfp", "dma", "ring port", "memory", "ring", "pcie"]
KIND_LABEL = {"memory": "memory (DRAM channels)", "ring": "ring (links)", "ring port": "ring port", "pcie": "pcie (links)"}
# Columns that are not busy fractions (the card's power in W, docs/outputs.md): not drawn.
NOT_BUSY = ("power_W",)
DPI_MIN, DPI_MAX = 10, 600  # fonts fail below; a larger PNG takes tens of seconds and gigabytes


def kind_of(column):
    # A multi-card run names each card's units "card N ..." (each ring link was a kind of its own).
    column = re.sub(r"^card \d+ ", "", column)
    group, _, name = column.partition("/")
    if group in ("memory", "ring", "pcie"):
        return group
    if name.startswith("dma"):  # "dma", or "dma in" / "dma out" with two DMA queues per core
        return "dma"
    return name.split(".", 1)[0]


def read_csv(path):
    try:
        rows = list(csv.reader(read_text(path, "a dfsim utilization.csv").splitlines()))
    except csv.Error as e:
        raise BadInput(f"{path}: malformed CSV: {e}") from None
    if not rows or rows[0][:2] != ["bucket_start_ns", "bucket_end_ns"]:
        raise BadInput(f"{path}: not a dfsim utilization.csv (expected bucket_start_ns,bucket_end_ns,...)")
    header, body = rows[0], [r for r in rows[1:] if r]
    for i, r in enumerate(body):
        if len(r) != len(header):
            raise BadInput(f"{path}: line {i + 2}: expected {len(header)} fields, got {len(r)}")
    data = np.array([[number(x, f"{path}: line {i + 2}: {c}") for c, x in zip(header, r)] for i, r in enumerate(body)],
                    dtype=float).reshape(len(body), len(header))
    busy = [j for j, c in enumerate(header) if j >= 2 and c.partition("/")[2] not in NOT_BUSY]
    check_rows(path, header, data, busy)
    return [header[j] for j in busy], data[:, 0], data[:, 1], data[:, busy]


def check_rows(path, header, data, busy):
    """Each bucket ends at or after its start and each busy fraction is within 0..1."""
    for i, row in enumerate(data):
        if row[1] < row[0]:
            raise BadInput(f"{path}: line {i + 2}: bucket_end_ns: expected >= bucket_start_ns {row[0]:g}, got {row[1]:g}")
        for j in busy:
            if not 0.0 <= row[j] <= 1.0:
                raise BadInput(f"{path}: line {i + 2}: {header[j]}: expected a busy fraction in 0..1, got {row[j]:g}")


def group_by_kind(columns, values):
    kinds = {}
    for i, c in enumerate(columns):
        kinds.setdefault(kind_of(c), []).append(i)
    order = [k for k in KIND_ORDER if k in kinds] + sorted(k for k in kinds if k not in KIND_ORDER)
    means = np.array([values[:, kinds[k]].mean(axis=1) for k in order]) if order else np.zeros((0, len(values)))
    return order, [len(kinds[k]) for k in order], means


def title_of(run_dir):
    try:
        with open(os.path.join(run_dir, "summary.json")) as f:
            s = json.load(f)
        return f"{s['workload']['name']} on {s['config']['name']}: {s['sim_time_ns'] / 1000:.3f} us, {s['status']}"
    except (OSError, ValueError, KeyError, TypeError):
        return os.path.basename(os.path.normpath(run_dir)) or run_dir


def labels_of(kinds, counts, means, widths):
    total = widths.sum()
    out = []
    for k, n, m in zip(kinds, counts, means):
        overall = float((m * widths).sum() / total) if total > 0 else 0.0
        out.append(f"{KIND_LABEL.get(k, k)}\n{n} unit{'s' if n != 1 else ''}, {100 * overall:.0f}%")
    return out


def plot_heatmap(ax_fig, kinds, labels, start_us, end_us, means):
    fig = ax_fig
    ax = fig.add_subplot(1, 1, 1)
    edges = np.append(start_us, end_us[-1])
    mesh = ax.pcolormesh(edges, np.arange(len(kinds) + 1), means, cmap="viridis", vmin=0.0, vmax=1.0, shading="flat")
    ax.set_yticks(np.arange(len(kinds)) + 0.5)
    ax.set_yticklabels(labels, fontsize=9)
    ax.invert_yaxis()
    ax.set_xlabel("simulated time (us)")
    ax.set_xlim(edges[0], edges[-1])
    cb = fig.colorbar(mesh, ax=ax, pad=0.01)
    cb.set_label("mean busy fraction")


def plot_lines(fig, kinds, labels, start_us, end_us, means):
    axes = fig.subplots(len(kinds), 1, sharex=True, squeeze=False)[:, 0]
    # Step plot: each bucket's value holds over the bucket.
    xs = np.append(start_us, end_us[-1])
    colors = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, (ax, label, m) in enumerate(zip(axes, labels, means)):
        ys = np.append(m, m[-1])
        c = colors[i % len(colors)]
        ax.step(xs, ys, where="post", color=c, linewidth=1.0)
        ax.fill_between(xs, ys, step="post", color=c, alpha=0.3)
        ax.set_ylim(0, 1.05)
        ax.set_yticks([0, 0.5, 1])
        ax.set_ylabel(label, rotation=0, ha="right", va="center", fontsize=9)
        ax.grid(True, axis="y", alpha=0.3)
    axes[-1].set_xlabel("simulated time (us)")
    axes[-1].set_xlim(xs[0], xs[-1])


def main(argv=None):
    p = tool_errors.ArgParser(description="Plot mean utilization per unit kind over time from a dfsim run.")
    p.add_argument("run", help="output directory of dfsim run (or its utilization.csv)")
    p.add_argument("--out", "-o", help="PNG to write (default: utilization.png beside the CSV)")
    p.add_argument("--style", choices=["heatmap", "lines"], default="heatmap",
                   help="heatmap (default): one row per kind; lines: one stacked panel per kind")
    p.add_argument("--dpi", type=int, default=120, help=f"resolution of the PNG, {DPI_MIN} to {DPI_MAX} (default 120)")
    a = p.parse_args(argv)
    if not DPI_MIN <= a.dpi <= DPI_MAX:
        raise BadInput(f"--dpi {a.dpi}: expected a resolution from {DPI_MIN} to {DPI_MAX} dots per inch")

    csv_path = a.run if os.path.isfile(a.run) else os.path.join(a.run, "utilization.csv")
    run_dir = os.path.dirname(os.path.abspath(csv_path))
    out = a.out or os.path.join(run_dir, "utilization.png")
    columns, start, end, values = read_csv(csv_path)
    if len(start) == 0 or not columns:
        raise BadInput(f"{csv_path}: no buckets or no units to plot")

    kinds, counts, means = group_by_kind(columns, values)
    labels = labels_of(kinds, counts, means, end - start)
    start_us, end_us = start / 1000.0, end / 1000.0

    if a.style == "heatmap":
        fig = plt.figure(figsize=(11, 1.0 + 0.6 * len(kinds) + 0.8))
        plot_heatmap(fig, kinds, labels, start_us, end_us, means)
    else:
        fig = plt.figure(figsize=(11, 1.2 + 1.1 * len(kinds)))
        plot_lines(fig, kinds, labels, start_us, end_us, means)
    fig.suptitle(title_of(run_dir), fontsize=11)
    fig.tight_layout()
    try:
        save_figure(fig, out, dpi=a.dpi)
    except OSError as e:
        raise BadInput(f"cannot write {out}: {e.strerror or e}") from None
    print(f"wrote {out}", file=status_stream(out))
    return 0


if __name__ == "__main__":
    guard(main)
