#!/usr/bin/env python3
"""Checks figures quoted in the docs against runs, so they cannot go stale silently.

usage: tools/check_doc_figures.py DFSIM [--update]   (from the repository root; exit 1 on a mismatch)

--update rewrites the quoted terminal summaries (README's demo, docs/outputs.md's add and model
report), README's reading of the demo and docs/workloads.md's TP table from the runs, then checks
everything else as usual.

Checked: the terminal summaries quoted in README.md (the `make demo` run) and docs/outputs.md;
the task templates and instances of every row of docs/compiler.md's "Sizes of the shipped
workloads" table; the 4096^3 trace size in docs/outputs.md; the simulated time quoted in
workload descriptions ("~N us simulated"); the PT dataflow of configs/spyre.json in docs/config.md;
the model report of a two-layer Llama-3.1-8B decode step in docs/outputs.md; the waiting slice
of the shipped placement in docs/placement.md; the per-category table of docs/accuracy.md ("Where
it stands") and README's overall and per-category RMS errors, against `dfsim accuracy`; README's reading of the
cost-model notes' records, against `dfsim accuracy --records workloads/device-records/cost-model-notes.csv`;
docs/regression.md's example suite and cases and its quoted table, against `dfsim regress`;
docs/workloads.md's TP table, against tools/tp_table.py.
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tool_errors  # noqa: E402

tool_errors.install()  # a missing or failing dfsim, a missing doc: one line, never a traceback
if len(sys.argv) >= 2 and sys.argv[1] in ("-h", "--help"):
    print(__doc__.strip())
    sys.exit(0)
if len(sys.argv) < 2 or sys.argv[1].startswith("-") or any(a != "--update" for a in sys.argv[2:]):
    tool_errors.fail("usage: tools/check_doc_figures.py DFSIM [--update]")  # a stray or mistyped argument too
dfsim = sys.argv[1]
if not (os.path.isfile(dfsim) and os.access(dfsim, os.X_OK)):
    tool_errors.fail(f"{dfsim}: expected the dfsim executable")
if not os.path.isfile("docs/compiler.md"):
    tool_errors.fail("run from the repository root (no docs/compiler.md here)")
update = "--update" in sys.argv[2:]
failures = []
tmp = tempfile.mkdtemp(prefix="dfsim_docs_")


def run(*args):
    return subprocess.run([dfsim, *args], capture_output=True, text=True, check=True).stdout


def rewrite(doc, old, new):
    """Replaces the quoted text `old` of `doc` with `new` (--update)."""
    text = open(doc).read()

    def write(path):
        with open(path, "w") as f:
            f.write(text.replace(old, new, 1))
    tool_errors.write_atomically(doc, write)
    print(f"{doc}: updated from a run")


def check(what, quoted, actual):
    if quoted != actual:
        failures.append(f"{what}: the docs say {quoted!r}, a run gives {actual!r}")


# 1. The quoted terminal summaries (all lines but the output paths, which depend on --out):
# README's `make demo` (the first 4 layers of a Llama-3.1-8B decode step, as the Makefile runs
# it) and docs/outputs.md's add_2048x1024.
run("gen", "llama-3.1-8b", "--phase", "decode", "--batch", "1", "--context", "2048", "--layers", "4", "-q",
    "-o", f"{tmp}/llama-demo.json")
summaries = {
    "README.md": ("llama-3.1-8b.decode.b1.ctx2048.l4 on spyre:", f"{tmp}/llama-demo.json"),
    "docs/outputs.md": ("add_2048x1024 on spyre:", "workloads/add_2048x1024.json"),
}
for doc, (head, workload) in summaries.items():
    out = run("run", "--config", "configs/spyre.json", "--workload", workload, "--out", f"{tmp}/demo")
    demo_lines = [l for l in out.splitlines() if not l.startswith("outputs:")]
    text = open(doc).read()
    m = re.search(r"```\n(" + re.escape(head) + r".*?)\n```", text, re.S)
    if not m:
        failures.append(f"{doc}: the quoted {head} summary is missing")
        continue
    quoted = [l for l in m.group(1).splitlines() if not l.startswith("outputs:")]
    if update and quoted != demo_lines:
        kept = [l for l in m.group(1).splitlines() if l.startswith("outputs:")]
        rewrite(doc, m.group(1), "\n".join(demo_lines + kept))
        text = open(doc).read()
    else:
        check(f"{doc}: terminal summary", quoted, demo_lines)
    if doc == "README.md":
        # The prose under it reads the same run: its per-token time and weight stream rate.
        prose = re.search(r"a token of these \d+ layers takes ([\d.]+) ms, [\w-]+ \(the weights stream at\s+(\d+) GB/s", text)
        ms = re.search(r"model .*: ([\d.]+) ms per token", out)
        gbs = re.search(r"weights .* read of .*, ([\d.]+) GB/s", out)
        if not (prose and ms and gbs):
            failures.append("README.md: the reading of the demo summary (ms per token, weights GB/s) was not found")
        else:
            want_ms, want_gbs = f"{float(ms.group(1)):.1f}", f"{float(gbs.group(1)):.0f}"
            if update and (prose.group(1), prose.group(2)) != (want_ms, want_gbs):
                rewrite(doc, prose.group(0), prose.group(0).replace(prose.group(1) + " ms", want_ms + " ms", 1)
                        .replace(prose.group(2) + " GB/s", want_gbs + " GB/s", 1))
                prose = re.search(re.escape(prose.group(0)[:20]) + r".*?takes ([\d.]+) ms, [\w-]+ \(the weights stream at\s+(\d+) GB/s",
                                  open(doc).read(), re.S)
            check("README.md: the demo's ms per token in prose", prose.group(1), want_ms)
            check("README.md: the demo's weights GB/s in prose", prose.group(2), want_gbs)

# 2. docs/compiler.md: templates (the middle column's closing "N in all" or "= N") and instances.
text = open("docs/compiler.md").read()
rows = re.findall(r"^\| (\w+), (\d+) cores? \| (.*) \| ([\d ]+) \|$", text, re.M)
if not rows:
    failures.append("docs/compiler.md: the sizes table was not found")
for name, cores, how, instances in rows:
    out = f"{tmp}/{name}.json"
    line = run("compile", f"workloads/{name}.json", "--cores", cores, "-o", out)
    templates = re.search(r": (\d+) task templates?", line).group(1)
    got = re.search(r"(\d+) task instances", run("validate", out)).group(1)
    check(f"docs/compiler.md: {name} on {cores} cores, instances", instances.replace(" ", ""), got)
    m = re.search(r"(\d+) in all\s*$", how) or re.search(r"= (\d+)\s*$", how)
    if m:
        check(f"docs/compiler.md: {name} on {cores} cores, templates", m.group(1), templates)

# 3. docs/outputs.md: the 4096^3 trace size, within 15 %.
text = open("docs/outputs.md").read()
m = re.search(r"the 4096³ matmul on 32 cores writes ~(\d+) MB", text)
if not m:
    failures.append("docs/outputs.md: the 4096^3 trace size is not quoted")
else:
    run("run", "-q", "--workload", "workloads/matmul_4096.json", "--out", f"{tmp}/mm")
    mb = os.path.getsize(f"{tmp}/mm/trace.json") / 1e6
    if abs(mb - int(m.group(1))) > 0.15 * mb:
        failures.append(f"docs/outputs.md: the 4096^3 trace is quoted as ~{m.group(1)} MB, a run writes {mb:.1f} MB")

# 4. Workload descriptions quoting their own simulated time ("~N us simulated" / "simulates ... in ~N us").
for f in sorted(os.listdir("workloads")):
    if not f.endswith(".json"):
        continue
    desc = json.load(open(f"workloads/{f}")).get("description", "")
    m = re.search(r"(?:simulates[^~]*in ~|~)(\d+(?:\.\d+)?) us(?: simulated| on the same core)", desc)
    if m:
        run("run", "-q", "--workload", f"workloads/{f}", "--out", f"{tmp}/w_{f}")
        us = json.load(open(f"{tmp}/w_{f}/summary.json"))["sim_time_ns"] / 1000
        if abs(us - float(m.group(1))) > 0.05 * us:
            failures.append(f"workloads/{f}: the description quotes ~{m.group(1)} us simulated, a run takes {us:.1f} us")

# 5. docs/config.md: the spyre preset's PT dataflow, as `dfsim info` reports it.
text = open("docs/config.md").read()
m = re.search(r"^\| `core.pt.dataflow` \| (\w+) \|", text, re.M)
info = re.search(r"dataflow (\w+)", run("info", "--config", "configs/spyre.json")).group(1)
check("docs/config.md: core.pt.dataflow", m.group(1) if m else None, info)

# 6. docs/outputs.md: the model report of a two-layer Llama decode step.
text = open("docs/outputs.md").read()
m = re.search(r"```\n(  model     llama-3.1-8b decode step.*?)\n```", text, re.S)
if not m:
    failures.append("docs/outputs.md: the quoted model report is missing")
else:
    run("gen", "llama-3.1-8b", "--phase", "decode", "--batch", "1", "--context", "2048", "--layers", "2", "-o", f"{tmp}/llama.json")
    out = run("run", "--trace", "off", "--workload", f"{tmp}/llama.json", "--out", f"{tmp}/llama")
    lines = out.splitlines()
    first = next((i for i, l in enumerate(lines) if l.startswith("  model ")), len(lines))
    report = [l for l in lines[first:] if not l.startswith("outputs:")]
    if update and m.group(1).splitlines() != report:
        rewrite("docs/outputs.md", m.group(1), "\n".join(report))
    else:
        check("docs/outputs.md: model report", m.group(1).splitlines(), report)

# 7. docs/placement.md: the shipped placement's waiting slice, as its trace draws it.
text = open("docs/placement.md").read()
m = re.search(r"reads `waiting on add` from\s+([\d.]+) to ([\d.]+) µs \(([\d.]+) µs, its `held_by_others_ns`\)", text)
if not m:
    failures.append("docs/placement.md: the quoted waiting slice of two_kernels_two_cards is missing")
else:
    run("run", "-q", "--trace", "kernels", "--placement", "workloads/placements/two_kernels_two_cards.json",
        "--config", "configs/spyre-drawer.json", "--out", f"{tmp}/placement")
    events = json.load(open(f"{tmp}/placement/trace.json"))["traceEvents"]
    waits = [e for e in events if e["ph"] == "X" and e["name"] == "waiting on add"]
    actual = [(f"{w['ts']:.3f}", f"{w['ts'] + w['dur']:.3f}", f"{w['args']['wait_ns'] / 1000:.3f}") for w in waits]
    check("docs/placement.md: add_again's waiting slice", [m.groups()], actual)

# 8. docs/accuracy.md's "Where it stands" table (each category's records, RMS, mean and
# Spearman before the brackets) and README's overall and per-category RMS, against `dfsim accuracy`.
text = open("docs/accuracy.md").read()
row = re.compile(r"^\| (\w+) \| (\d+) \| ([\d.]+) \([\d.]+\) \| ([−+][\d.]+) \(.*?\) \| ([\d.]+)(?: \([\d.]+\))? \|", re.M)
rows = {r[0]: r[1:] for r in row.findall(text.split("## Where it stands", 1)[-1].split("\n\n**", 1)[0])}
out = run("accuracy", "--jobs", "2", "-q", "-o", f"{tmp}/accuracy")
runs = {m.group(1): (m.group(2), m.group(3), m.group(4).replace("-", "−"), m.group(5))
        for m in re.finditer(r"^(\w+) +(\d+) +([\d.]+) +([-+][\d.]+) +([\d.]+) ", out, re.M)}
if not rows or "all" not in runs:
    failures.append("docs/accuracy.md: the per-category table (or dfsim accuracy's) was not found")
check("docs/accuracy.md: the categories of the table", sorted(rows), sorted(runs))
for cat, quoted in rows.items():
    check(f"docs/accuracy.md: {cat} (records, RMS %, mean %, Spearman)", quoted, runs.get(cat))
m = re.search(r"the RMS error is (\d+) %", open("README.md").read())
check("README.md: the overall RMS error", m.group(1) if m else None, f"{float(runs['all'][1]):.0f}" if "all" in runs else None)
# "pointwise within 7 %, softmax at 11 %, ..., and the batched-matmul records at 41 %"
readme = re.sub(r"\s+", " ", open("README.md").read())
quoted = dict((c if c != "batched-matmul records" else "bmm", v)
              for c, v in re.findall(r"(pointwise|broadcast|reduction|transport|softmax|matmul|batched-matmul records) "
                                     r"(?:within|at) (\d+(?:\.\d)?) %", readme))
# Each to the precision it is quoted with (a whole percent, or one decimal: 6.5 is not "6 %").
check("README.md: the per-category RMS errors", quoted,
      {c: f"{float(runs[c][1]):.{1 if '.' in quoted[c] else 0}f}" for c in quoted if c in runs} if len(quoted) == 7 else None)

# 9. README's reading of the cost-model notes' records (all, matmul and bmm RMS %), against
# `dfsim accuracy --records workloads/device-records/cost-model-notes.csv`.
out = run("accuracy", "--records", "workloads/device-records/cost-model-notes.csv", "--jobs", "2", "-q", "-o", f"{tmp}/notes")
runs = {m.group(1): f"{float(m.group(2)):.0f}" for m in re.finditer(r"^(\w+) +\d+ +([\d.]+) ", out, re.M)}
m = re.search(r"it is at\s+(\d+) % \(matmul (\d+) %, bmm (\d+) %\)", open("README.md").read())
check("README.md: the cost-model notes' records (all, matmul, bmm RMS %)", list(m.groups()) if m else None,
      [runs.get("all"), runs.get("matmul"), runs.get("bmm")])

# 10. docs/regression.md: the example suite and cases give the values they quote (each run with
# `dfsim regress --update` on a copy: any value it would change is stale), and the quoted table
# rows are what `dfsim regress` prints for the example suite.
text = open("docs/regression.md").read()
root = os.getcwd()
examples = [json.loads(b) for b in re.findall(r"```json\n(.*?)```", text, re.S)]
examples = [e for e in examples if "cases" in e or "expect" in e]
for n, e in enumerate(examples):
    suite = e if "cases" in e else {"format": "dfsim.suite", "version": 1, "name": "example",
                                    "defaults": {"config": "../../configs/spyre.json"}, "cases": [e]}
    path = f"{tmp}/example{n}.suite.json"
    with open(path, "w") as f:  # paths as from tests/regression/
        f.write(json.dumps(suite).replace('"../../', f'"{root}/'))
    out = run("regress", path, "--update")
    for line in out.splitlines():
        if line.startswith("updated "):
            failures.append(f"docs/regression.md: the example {suite['cases'][0]['name']}: {line.split(': ', 1)[1]}")
    if n == 0:
        out = run("regress", path)
        def key(line):  # case and metric; case, "check" and the check's name
            w = line.split()
            return " ".join(w[:3] if w[1:2] == ["check"] else w[:2])
        got = {key(l): " ".join(l.split()) for l in out.splitlines() if len(l.split()) > 2}
        table = text.split("`N case(s): P passed, F failed, E error(s)`:\n\n```\n", 1)[1].split("```", 1)[0]
        for line in table.splitlines()[1:]:
            check("docs/regression.md: the table row", " ".join(line.split()), got.get(key(line)))

# 11. docs/workloads.md: the "Decode step at TP 1, 2, 4, 8" table, as tools/tp_table.py prints it
# (eight whole-model decode steps on the drawer: about 45 s).
text = open("docs/workloads.md").read()
def tp_rows(s):
    return [line for line in s.splitlines() if re.match(r"\| (Llama-3\.1-8B|Granite-3\.3-8B) \| \d+ \|", line)]


tp_tool = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tp_table.py")
quoted = tp_rows(text)
printed = tp_rows(subprocess.run([sys.executable, tp_tool, dfsim], capture_output=True, text=True, check=True).stdout)
if update and quoted and len(quoted) == len(printed) and quoted != printed:
    rewrite("docs/workloads.md", "\n".join(quoted), "\n".join(printed))
else:
    check("docs/workloads.md: the TP table", quoted, printed)

subprocess.run(["rm", "-rf", tmp])
for f in failures:
    print(f, file=sys.stderr)
print(f"doc figures: {len(failures)} stale" if failures else "doc figures: all match runs")
sys.exit(1 if failures else 0)
