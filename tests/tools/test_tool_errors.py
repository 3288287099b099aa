#!/usr/bin/python3
"""Every Python tool in tools/ fails on bad input with exit 2 and one line on stderr, never a
Python traceback (docs/reliability.md). CTest runs one tool per process.

usage: test_tool_errors.py TOOL   (TOOL: a key of CASES, or "all")
For each tool: a missing input, a malformed one (JSON or CSV cut short, non-UTF-8 bytes), and a
directory where a file is expected; nothing may be written beside the inputs.
"""
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOOLS = os.path.join(ROOT, "tools")
PY = "/usr/bin/python3"
MODEL = os.path.join(ROOT, "workloads", "models", "llama-3.1-8b.json")


def inputs(d):
    """Writes the malformed inputs into `d`; returns their paths by kind."""
    files = {
        "json": ('{"format": "dfsim.model", "name": [1, 2', "truncated.json"),
        "binary": (b"\x00\xff\xfe garbage \x80", "binary.bin"),
        "csv": ("bucket_start_ns,bucket_end_ns,core 0/pt.0\n0,10,0.5\n10,20\n", "short_row.csv"),
        "sweep_csv": ("rate,ttft_p50_ms\n1,abc\n", "sweep.csv"),
        "results_csv": ("point,status,time_ns\n0,ok\n", "results.csv"),
        "python": ("def broken(:\n", "broken.py"),
    }
    out = {}
    for kind, (text, name) in files.items():
        path = os.path.join(d, name)
        with open(path, "wb") as f:
            f.write(text if isinstance(text, bytes) else text.encode())
        out[kind] = path
    serve = os.path.join(d, "serve_run")  # a serve output directory with a requests.jsonl cut short
    os.mkdir(serve)
    with open(os.path.join(serve, "requests.jsonl"), "w") as f:
        f.write('{"id": 0, "arrival_ms": 0, "first_token_ms": 1, "finish_ms": 3, "output_tokens": 4}\n{"id": 1, "arr')
    with open(os.path.join(serve, "steps.csv"), "w") as f:
        f.write("start_ms,end_ms,phase,batch,chunk,chunks,waiting,running\n0,1,decode,1,1,1,0,1\n")
    out["serve_run"] = serve
    out["missing"] = os.path.join(d, "no_such_file.json")
    out["dir"] = os.path.join(d, "a_directory")
    os.mkdir(out["dir"])
    out["notexec"] = out["json"]  # a file that is not the dfsim executable
    return out


# tool -> list of argument lists, each expected to fail with exit 2 and one line.
def cases(p, d):
    o = os.path.join(d, "out")
    return {
        "check_schemas": [[p["missing"]], [p["json"]], [p["binary"]], [p["dir"]]],
        "check_doc_figures": [[p["missing"]], [p["notexec"]], [p["dir"]], ["/usr/bin/true", "--updat"],
                              ["/usr/bin/true", "extra"]],
        "import_onnx": [[p["missing"], "-o", o + ".json"], [p["binary"], "-o", o + ".json"], [p["dir"], "-o", o + ".json"]],
        "import_torch": [[p["missing"], "--module", "M", "-o", o + ".json"], [p["python"], "--module", "M", "-o", o + ".json"],
                         [p["dir"], "--module", "M", "-o", o + ".json"], [p["json"], "--module", "M", "-o", o + ".json"]],
        "plot_serving": [[p["missing"]], [p["serve_run"]], ["--vs-rate", p["missing"]], ["--vs-rate", p["sweep_csv"]],
                         ["--vs-rate", p["binary"]]],
        "plot_utilization": [[p["missing"]], [p["csv"]], [p["binary"]], [p["dir"]]],
        "roofline_step_table": [[p["missing"], "-o", o + ".csv"], [p["json"], "-o", o + ".csv"],
                                [p["binary"], "-o", o + ".csv"], [MODEL, "--block-size", "0", "-o", o + ".csv"]],
        "sweep_dask": [["--scheduler", "tcp://127.0.0.1:1", "--dfsim", "dfsim", "--points", p["missing"]],
                       ["--scheduler", "tcp://127.0.0.1:1", "--dfsim", "dfsim", "--points", p["binary"]]],
        "sweep_plot": [["line", p["missing"], "--x", "point", "--y", "time_ns"],
                       ["line", p["results_csv"], "--x", "point", "--y", "time_ns"],
                       ["line", p["binary"], "--x", "point", "--y", "time_ns"],
                       ["line", p["dir"], "--x", "point", "--y", "time_ns"]],
        "tp_table": [[p["missing"]], [p["notexec"]], ["/bin/true", "--models", "nosuch"], ["/bin/true", "--tp", "abc"]],
        "division_scan": [[p["missing"]], [p["notexec"]], ["/bin/true", "12x3"], ["/bin/true", "0x4x4"],
                          ["/bin/true", "--cores", "0"], ["/bin/true", "--config", p["missing"]]],
    }


def check(tool, args, d):
    before = sorted(os.listdir(d))
    r = subprocess.run([PY, os.path.join(TOOLS, tool + ".py"), *args], capture_output=True, text=True,
                       cwd=ROOT, timeout=300)
    lines = r.stderr.splitlines()
    what = f"{tool} {' '.join(args)}: exit {r.returncode}, stderr:\n{r.stderr}"
    assert r.returncode == 2, what
    assert len(lines) == 1, what
    assert "Traceback" not in r.stderr and "Error:" not in lines[0].split(": ")[0], what
    assert sorted(os.listdir(d)) == before, f"{what}\nwrote {set(os.listdir(d)) - set(before)}"


def main(which):
    with tempfile.TemporaryDirectory(prefix="dfsim-tools-") as d:
        table = cases(inputs(d), d)
        listed = {f[:-3] for f in os.listdir(TOOLS) if f.endswith(".py")} - {"opgraph", "opgraph_patterns", "tool_errors"}
        assert listed == set(table), f"tools without bad-input cases: {listed - set(table)}"
        for tool in (sorted(table) if which == "all" else [which]):
            for args in table[tool]:
                check(tool, args, d)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "all"))
