#!/usr/bin/python3
"""Plots a dfsim sweep's results.csv (docs/sweeps.md): PNG and SVG, titled with the sweep and axis names.

  sweep_plot.py line    RESULTS.csv --x AXIS --y METRIC [--by AXIS]     a metric over one axis, a line per value of another
  sweep_plot.py heatmap RESULTS.csv --x AXIS --y AXIS --value METRIC    a metric over two axes
  sweep_plot.py pareto  RESULTS.csv --x METRIC --y METRIC [--label AXIS ...] [--max-x] [--max-y]
                                                                        the points no other point beats on both metrics

Only rows with status "ok" are plotted. --out PREFIX writes PREFIX.png and PREFIX.svg (default:
beside results.csv, named after the plot). The sweep's name comes from sweep.json beside results.csv.
Exit 0 on success, 2 on bad arguments (an unknown column, nothing to plot).
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import tool_errors  # noqa: E402
from tool_errors import BadInput, guard, read_csv, write_atomically  # noqa: E402

matplotlib.rcParams["svg.hashsalt"] = "dfsim"  # the same SVG for the same table
matplotlib.rcParams["svg.fonttype"] = "none"  # text stays text: searchable, smaller
LINE = ("line",)  # key of a row's line number in results.csv (no column name is a tuple)


def fail(msg):
    raise BadInput(msg)


def number(s):
    """The finite number in an axis cell, or None (the axis is then a list of names)."""
    try:
        x = float(s)
    except ValueError:
        return None
    return x if abs(x) < float("inf") else None


def metric(a, row, column):
    """A metric cell of an ok row as a number, None if empty; text, nan or inf is BadInput."""
    cell = row[column].strip()
    return tool_errors.number(cell, f"{a.results}: line {row[LINE]}: {column}") if cell else None


def some(a, values, *columns):
    """`values` unless every one is None (the metric is empty in every ok row)."""
    if all(v is None for v in values):
        fail(f"{a.results}: no ok row has a number in {' or '.join(map(repr, columns))}")
    return values


def load(path):
    rows = read_csv(path, ("status",), "a dfsim sweep results.csv")
    columns = list(rows[0].keys()) if rows else []
    for i, r in enumerate(rows):
        r[LINE] = i + 2
    ok = [r for r in rows if r.get("status") == "ok"]
    name = os.path.basename(os.path.dirname(os.path.abspath(path)))
    try:
        with open(os.path.join(os.path.dirname(os.path.abspath(path)), "sweep.json")) as f:
            name = json.load(f).get("name", name)
    except (OSError, ValueError):
        pass
    return columns, ok, name


def need(columns, *names):
    for n in names:
        if n not in columns:
            fail(f"no column {n!r} in the results (columns: {', '.join(columns)})")


def ordered(values):
    """Distinct values, numerically sorted when they are all numbers, else in order of appearance."""
    distinct = list(dict.fromkeys(values))
    if all(number(v) is not None for v in distinct):
        return sorted(distinct, key=number)
    return distinct


def save(fig, prefix):
    os.makedirs(os.path.dirname(os.path.abspath(prefix)), exist_ok=True)
    for ext in ("png", "svg"):
        write_atomically(f"{prefix}.{ext}", lambda p: fig.savefig(p, dpi=120, bbox_inches="tight",
                                                                  metadata={"Date": None} if ext == "svg" else None))
    plt.close(fig)
    print(f"wrote {prefix}.png, {prefix}.svg")


def line(a, columns, rows, name):
    need(columns, a.x, a.y, *([a.by] if a.by else []))
    xs = ordered([r[a.x] for r in rows])
    numeric_x = all(number(v) is not None for v in xs)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    groups = ordered([r[a.by] for r in rows]) if a.by else [None]
    ys = some(a, [metric(a, r, a.y) for r in rows], a.y)
    for g in groups:
        pts = [(r[a.x], y) for r, y in zip(rows, ys) if y is not None and (g is None or r[a.by] == g)]
        pts.sort(key=lambda p: xs.index(p[0]))
        px = [number(x) if numeric_x else xs.index(x) for x, _ in pts]
        ax.plot(px, [y for _, y in pts], marker="o", label=f"{a.by} = {g}" if a.by else None)
    if not numeric_x:
        ax.set_xticks(range(len(xs)), xs)
    ax.set_xlabel(a.x)
    ax.set_ylabel(a.y)
    ax.set_title(f"{name}: {a.y} over {a.x}" + (f" by {a.by}" if a.by else ""))
    ax.grid(alpha=0.3)
    if a.by:
        ax.legend()
    return fig, f"line_{a.y}_over_{a.x}" + (f"_by_{a.by}" if a.by else "")


def heatmap(a, columns, rows, name):
    need(columns, a.x, a.y, a.value)
    xs, ys = ordered([r[a.x] for r in rows]), ordered([r[a.y] for r in rows])
    grid = [[float("nan")] * len(xs) for _ in ys]
    seen = {}
    for r, v in zip(rows, some(a, [metric(a, r, a.value) for r in rows], a.value)):
        cell = (r[a.x], r[a.y])
        if cell in seen:  # one cell, one value: the sweep has another axis to fix first
            fail(f"{a.results}: line {r[LINE]}: a second ok row for {a.x}={cell[0]}, {a.y}={cell[1]} "
                 f"(line {seen[cell]}): expected one row per heatmap cell")
        seen[cell] = r[LINE]
        if v is not None:
            grid[ys.index(r[a.y])][xs.index(r[a.x])] = v
    fig, ax = plt.subplots(figsize=(6.4, 4.8))
    im = ax.imshow(grid, origin="lower", aspect="auto", cmap="viridis")
    ax.set_xticks(range(len(xs)), xs, rotation=30)
    ax.set_yticks(range(len(ys)), ys)
    finite = [v for row in grid for v in row if v == v]
    mid = (min(finite) + max(finite)) / 2 if finite else 0
    for i, row in enumerate(grid):
        for j, v in enumerate(row):
            if v == v:  # not NaN: a point that ran
                ax.text(j, i, f"{v:.4g}", ha="center", va="center", color="black" if v > mid else "white", fontsize=8)
    fig.colorbar(im, ax=ax, label=a.value)
    ax.set_xlabel(a.x)
    ax.set_ylabel(a.y)
    ax.set_title(f"{name}: {a.value} over {a.x} and {a.y}")
    return fig, f"heatmap_{a.value}_{a.x}_{a.y}"


def pareto_front(points, max_x, max_y):
    """The points no other point beats on both coordinates (minimising unless max_*)."""
    sx, sy = (-1 if max_x else 1), (-1 if max_y else 1)
    front, best = [], float("inf")
    for p in sorted(points, key=lambda p: (sx * p[0], sy * p[1])):
        if sy * p[1] < best:
            front.append(p)
            best = sy * p[1]
    return front


def pareto(a, columns, rows, name):
    need(columns, a.x, a.y, *a.label)
    pts = [(metric(a, r, a.x), metric(a, r, a.y), ", ".join(f"{c}={r[c]}" for c in a.label)) for r in rows]
    pts = [p for p in pts if p[0] is not None and p[1] is not None]
    if not pts:
        fail(f"no row has numbers in both {a.x!r} and {a.y!r}")
    front = pareto_front(pts, a.max_x, a.max_y)
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    ax.scatter([p[0] for p in pts], [p[1] for p in pts], color="0.7", label="points")
    ax.plot([p[0] for p in front], [p[1] for p in front], marker="o", color="C3", label="Pareto front")
    for x, y, lab in front:
        if lab:
            ax.annotate(lab, (x, y), textcoords="offset points", xytext=(4, 4), fontsize=7)
    ax.set_xlabel(a.x + (" (higher is better)" if a.max_x else ""))
    ax.set_ylabel(a.y + (" (higher is better)" if a.max_y else ""))
    ax.set_title(f"{name}: Pareto front of {a.y} against {a.x}")
    ax.grid(alpha=0.3)
    ax.legend()
    return fig, f"pareto_{a.y}_{a.x}"


def main():
    ap = tool_errors.ArgParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="kind", required=True)
    for kind in ("line", "heatmap", "pareto"):
        p = sub.add_parser(kind)
        p.add_argument("results")
        p.add_argument("--x", required=True)
        p.add_argument("--y", required=True)
        p.add_argument("--out", help="output prefix (PREFIX.png and PREFIX.svg)")
        if kind == "line":
            p.add_argument("--by")
        if kind == "heatmap":
            p.add_argument("--value", required=True)
        if kind == "pareto":
            p.add_argument("--label", nargs="*", default=[])
            p.add_argument("--max-x", action="store_true")
            p.add_argument("--max-y", action="store_true")
    a = ap.parse_args()
    if a.out is not None and os.path.abspath(a.out).startswith(("/dev/", "/proc/")):
        # PREFIX.png and PREFIX.svg under /dev: `--out /dev/stdout` made two files there
        raise BadInput(f"--out {a.out}: expected the prefix of two files (PREFIX.png and PREFIX.svg), not a device")
    columns, rows, name = load(a.results)
    if not rows:
        fail(f"{a.results}: no row with status ok to plot")
    fig, stem = {"line": line, "heatmap": heatmap, "pareto": pareto}[a.kind](a, columns, rows, name)
    save(fig, a.out or os.path.join(os.path.dirname(os.path.abspath(a.results)), stem))


if __name__ == "__main__":
    guard(main)
