#!/usr/bin/python3
"""Every Python tool in tools/ fails on bad input with exit 2 and one line on stderr, never a
Python traceback (docs/reliability.md). CTest runs one tool per process.

usage: test_tool_errors.py TOOL   (TOOL: a key of CASES, or "all")
For each tool: a missing input, a malformed one (JSON or CSV cut short, non-UTF-8 bytes), and a
directory where a file is expected; nothing may be written beside the inputs. A case given as
(args, text) must also name `text` in its line (the option or key at fault).
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
        "util_ok": ("bucket_start_ns,bucket_end_ns,core 0/pt.0,card 0/power_W\n0,10,0.5,20.5\n", "util_ok.csv"),
        "util_order": ("bucket_start_ns,bucket_end_ns,core 0/pt.0\n10,0,0.5\n", "util_order.csv"),
        "util_range": ("bucket_start_ns,bucket_end_ns,core 0/pt.0\n0,10,1.5\n", "util_range.csv"),
        "sweep_ok": ("cores,x,t,status\n1,1,5,ok\n2,2,6,ok\n", "sweep_ok.csv"),
        "sweep_abc": ("cores,x,t,status\n1,1,abc,ok\n", "sweep_abc.csv"),
        "sweep_nan": ("cores,x,t,status\n1,1,5,ok\n2,2,nan,ok\n", "sweep_nan.csv"),
        "sweep_inf": ("cores,x,t,status\n1,1,inf,ok\n", "sweep_inf.csv"),
        "sweep_dupcol": ("cores,cores,t,status\n1,2,5,ok\n", "sweep_dupcol.csv"),
        "sweep_dupxy": ("cores,x,t,status\n1,1,5,ok\n1,1,6,ok\n", "sweep_dupxy.csv"),
        "onnx_empty": (b"", "empty.onnx"),
        # Relu of x [0, 64] fp16; Split of x [4, 64] along dim 1 into 64 and 0 (onnx.helper, opset 17).
        "onnx_zero_dim": (b'\x08\x08:1\n\x0c\n\x01x\x12\x01y"\x04Relu\x12\x01gZ\x13\n\x01x\x12\x0e\n\x0c\x08\n\x12\x08'
                          b'\n\x02\x08\x00\n\x02\x08@b\t\n\x01y\x12\x04\n\x02\x08\nB\x04\n\x00\x10\x11', "zero_dim.onnx"),
        "onnx_split_zero": (b'\x08\x08:_\n!\n\x01x\n\x02sp\x12\x01y\x12\x01z"\x05Split*\x0b\n\x04axis\x18\x01\xa0\x01\x02'
                            b'\x12\x01g*\x0c\x08\x02\x10\x07:\x02@\x00B\x02spZ\x13\n\x01x\x12\x0e\n\x0c\x08\n\x12\x08\n\x02'
                            b'\x08\x04\n\x02\x08@b\t\n\x01y\x12\x04\n\x02\x08\nb\t\n\x01z\x12\x04\n\x02\x08\nB\x04\n\x00\x10\x11',
                            "split_zero.onnx"),
        "py_exit0": ("import sys\nsys.exit(0)\n", "exit0.py"),
        "py_sysexit": ('raise SystemExit("x\\ny")\n', "sysexit.py"),
        "py_modules": ("from torch import nn\n\nclass Lin(nn.Module):\n    def __init__(self):\n"
                       "        super().__init__()\n        self.l = nn.Linear(64, 32)\n\n    def forward(self, x):\n"
                       "        return self.l(x)\n\nclass Boom(nn.Module):\n    def __init__(self):\n"
                       "        raise RuntimeError(\"boom\\nsecond line\")\n", "modules.py"),
        # a dfsim whose every command fails on the graph it is given, as `compile` of too many cores does
        "fake_dfsim": ('#!/bin/sh\necho "$2: /ops/0/attrs/work_division: needs 1000 cores" >&2\nexit 2\n', "fake_dfsim"),
    }
    out = {}
    for kind, (text, name) in files.items():
        path = os.path.join(d, name)
        with open(path, "wb") as f:
            f.write(text if isinstance(text, bytes) else text.encode())
        out[kind] = path
    os.chmod(out["fake_dfsim"], 0o755)
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


# tool -> list of argument lists (or (arguments, text the line names)), each expected to fail
# with exit 2 and one line.
def cases(p, d):
    o = os.path.join(d, "out")
    encoder = os.path.join(ROOT, "workloads", "models", "granite-embedding-278m.json")
    op_graph = os.path.join(ROOT, "workloads", "add_2048x1024.json")
    return {
        "check_schemas": [[p["missing"]], [p["json"]], [p["binary"]], [p["dir"]]],
        "check_doc_figures": [[p["missing"]], [p["notexec"]], [p["dir"]], ["/usr/bin/true", "--updat"],
                              ["/usr/bin/true", "extra"]],
        "import_onnx": [[p["missing"], "-o", o + ".json"], [p["binary"], "-o", o + ".json"], [p["dir"], "-o", o + ".json"],
                        [p["onnx_empty"], "-o", o + ".json"], [p["onnx_zero_dim"], "-o", o + ".json"],
                        [p["onnx_split_zero"], "-o", o + ".json"]],
        "import_torch": [[p["missing"], "--module", "M", "-o", o + ".json"], [p["python"], "--module", "M", "-o", o + ".json"],
                         [p["dir"], "--module", "M", "-o", o + ".json"], [p["json"], "--module", "M", "-o", o + ".json"],
                         [p["py_exit0"], "--module", "Lin", "--input", "x=4x64", "-o", o + ".json"],
                         [p["py_sysexit"], "--module", "Lin", "--input", "x=4x64", "-o", o + ".json"],
                         [p["py_modules"], "--module", "Boom", "--input", "x=4x64", "-o", o + ".json"],
                         ([p["py_modules"], "--module", "Lin", "--input", "x=4x64", "--name=", "-o", o + ".json"], "--name")],
        "plot_serving": [[p["missing"]], [p["serve_run"]], ["--vs-rate", p["missing"]], ["--vs-rate", p["sweep_csv"]],
                         ["--vs-rate", p["binary"]]],
        "plot_utilization": [[p["missing"]], [p["csv"]], [p["binary"]], [p["dir"]],
                             ([p["util_ok"], "--dpi", "5000", "-o", o + ".png"], "--dpi"),
                             # an argparse error: its usage and the error were three lines
                             ([p["util_ok"], "--dpi", "abc", "-o", o + ".png"], "argument --dpi: invalid int value"),
                             ([p["util_order"], "-o", o + ".png"], "line 2: bucket_end_ns"),
                             ([p["util_range"], "-o", o + ".png"], "line 2: core 0/pt.0"),
                             # a format matplotlib does not write: the line named the format only
                             ([p["util_ok"], "-o", o + ".txt"], "matplotlib cannot write a .txt file")],
        "roofline_step_table": [[p["missing"], "-o", o + ".csv"], [p["json"], "-o", o + ".csv"],
                                [p["binary"], "-o", o + ".csv"], [MODEL, "--block-size", "0", "-o", o + ".csv"],
                                ([MODEL, "--batches", "4,8,4", "-o", o + ".csv"], "--batches"),
                                ([MODEL, "--chunk", "100", "--block-size", "64", "-o", o + ".csv"], "--block-size 64"),
                                ([encoder, "-o", o + ".csv"], "encoder"), ([op_graph, "-o", o + ".csv"], "/format")],
        "sweep_dask": [["--scheduler", "tcp://127.0.0.1:1", "--dfsim", "dfsim", "--points", p["missing"]],
                       ["--scheduler", "tcp://127.0.0.1:1", "--dfsim", "dfsim", "--points", p["binary"]]],
        "sweep_plot": [["line", p["missing"], "--x", "point", "--y", "time_ns"],
                       ["line", p["results_csv"], "--x", "point", "--y", "time_ns"],
                       ["line", p["binary"], "--x", "point", "--y", "time_ns"],
                       ["line", p["dir"], "--x", "point", "--y", "time_ns"],
                       (["line", p["sweep_ok"], "--x", "cores", "--y", "status"], "status"),
                       (["line", p["sweep_abc"], "--x", "cores", "--y", "t"], "line 2: t"),
                       (["line", p["sweep_nan"], "--x", "cores", "--y", "t"], "line 3: t"),
                       (["pareto", p["sweep_inf"], "--x", "cores", "--y", "t"], "line 2: t"),
                       (["line", p["sweep_dupcol"], "--x", "cores", "--y", "t"], "column 'cores'"),
                       (["heatmap", p["sweep_dupxy"], "--x", "cores", "--y", "x", "--value", "t"], "line 3"),
                       # PREFIX.png and PREFIX.svg under /dev: two new files there, exit 0
                       (["line", p["sweep_ok"], "--x", "cores", "--y", "t", "--out", "/dev/stdout"], "--out /dev/stdout")],
        "tp_table": [[p["missing"]], [p["notexec"]], ["/bin/true", "--models", "nosuch"], ["/bin/true", "--tp", "abc"]],
        "division_scan": [[p["missing"]], [p["notexec"]], ["/bin/true", "12x3"], ["/bin/true", "0x4x4"],
                          ["/bin/true", "--cores", "0"], ["/bin/true", "--config", p["missing"]],
                          (["/bin/true", "--dtype", "int9"], "--dtype"),
                          ([p["fake_dfsim"], "64x64x64", "--cores", "1000"], "--cores 1000")],
    }


# tool -> (arguments, check(stdout bytes, stderr text, output directory)) of runs that must
# succeed: matplotlib appended ".png" to a path without an extension, so `-o /dev/stdout` made a
# file /dev/stdout.png and printed "wrote /dev/stdout" (nothing on stdout), `-o /dev/full` said
# it wrote, and `-o plot` failed naming the temporary's suffix.
def writes(p):
    def png_on_stdout(out, err, o):
        return out.startswith(b"\x89PNG") and err == "wrote /dev/stdout\n" and not os.path.exists("/dev/stdout.png")

    def png_without_extension(out, err, o):
        return open(os.path.join(o, "plot"), "rb").read(4) == b"\x89PNG" and os.listdir(o) == ["plot"]

    def svg_twice_the_same(out, err, o):  # a random clip-path id and the time of day differed
        again = os.path.join(o, "again.svg")
        subprocess.run([PY, os.path.join(TOOLS, "plot_utilization.py"), p["util_ok"], "-o", again], check=True,
                       capture_output=True, timeout=300)
        return open(os.path.join(o, "a.svg"), "rb").read() == open(again, "rb").read()
    return {"plot_utilization": [([p["util_ok"], "-o", "/dev/stdout"], png_on_stdout),
                                 ([p["util_ok"], "-o", "{o}/plot"], png_without_extension),
                                 ([p["util_ok"], "-o", "{o}/a.svg"], svg_twice_the_same)]}


def check_writes(tool, args, ok, d):
    o = tempfile.mkdtemp(dir=d)
    args = [a.replace("{o}", o) for a in args]
    r = subprocess.run([PY, os.path.join(TOOLS, tool + ".py"), *args], capture_output=True, cwd=ROOT, timeout=300)
    what = f"{tool} {' '.join(args)}: exit {r.returncode}, stderr:\n{r.stderr.decode(errors='replace')}"
    assert r.returncode == 0, what
    assert ok(r.stdout, r.stderr.decode(errors="replace"), o), what


def check(tool, args, d, names=None):
    before = sorted(os.listdir(d))
    r = subprocess.run([PY, os.path.join(TOOLS, tool + ".py"), *args], capture_output=True, text=True,
                       cwd=ROOT, timeout=300)
    lines = r.stderr.splitlines()
    what = f"{tool} {' '.join(args)}: exit {r.returncode}, stderr:\n{r.stderr}"
    assert r.returncode == 2, what
    assert len(lines) == 1, what
    assert "Traceback" not in r.stderr and "Error:" not in lines[0].split(": ")[0], what
    assert names is None or names in lines[0], f"{what}\nexpected it to name {names!r}"
    assert sorted(os.listdir(d)) == before, f"{what}\nwrote {set(os.listdir(d)) - set(before)}"


def main(which):
    with tempfile.TemporaryDirectory(prefix="dfsim-tools-") as d:
        p = inputs(d)
        table = cases(p, d)
        listed = {f[:-3] for f in os.listdir(TOOLS) if f.endswith(".py")} - {"opgraph", "opgraph_patterns", "tool_errors"}
        assert listed == set(table), f"tools without bad-input cases: {listed - set(table)}"
        for tool in (sorted(table) if which == "all" else [which]):
            for case in table[tool]:
                args, names = case if isinstance(case, tuple) else (case, None)
                check(tool, args, d, names)
            for args, ok in writes(p).get(tool, []):
                check_writes(tool, args, ok, d)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "all"))
