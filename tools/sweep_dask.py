#!/usr/bin/env python3
"""Runs the points of a dfsim sweep on a Dask distributed cluster (`dfsim sweep --dask`).

`dfsim sweep` plans the points and writes each one's point.json in the point store; this
driver submits one task per point. A task runs `dfsim sweep --run-point` in a temporary
directory on its worker and sends the files back; the driver writes them into the point's
directory, status.json last. Workers need the dfsim binary and the sweep's input files at the
same paths as here (a shared or identical file system); they do not need the point store.

usage: sweep_dask.py --scheduler tcp://host:8786 --dfsim /path/to/dfsim --points LIST [--name NAME]
DFSIM_DASK_TIMEOUT: seconds to wait for the scheduler (default 20).
Exit codes: 0 every task came back, 1 a task was lost, 2 the scheduler could not be reached.
"""
import os
import sys

from tool_errors import guard, read_text
import tool_errors  # noqa: E402


def run_point(dfsim, point_json):
    """On a worker: runs one point in a fresh directory; returns (exit code, {file: bytes})."""
    import subprocess
    import tempfile

    with tempfile.TemporaryDirectory(prefix="dfsim-point-") as d:
        with open(os.path.join(d, "point.json"), "w") as f:
            f.write(point_json)
        code = subprocess.run([dfsim, "sweep", "--run-point", d], stdin=subprocess.DEVNULL).returncode
        files = {}
        for name in os.listdir(d):
            path = os.path.join(d, name)
            if name != "point.json" and os.path.isfile(path) and not name.startswith("."):
                with open(path, "rb") as f:
                    files[name] = f.read()
        return code, files


def store(point_dir, files):
    """Writes a point's files into its directory, each atomically, status.json last."""
    for name in sorted(files, key=lambda n: n == "status.json"):
        tmp = os.path.join(point_dir, "." + name + ".tmp")
        with open(tmp, "wb") as f:
            f.write(files[name])
        os.replace(tmp, os.path.join(point_dir, name))


def main():
    ap = tool_errors.ArgParser(description=__doc__.split("\n")[0])
    ap.add_argument("--scheduler", required=True)
    ap.add_argument("--dfsim", required=True)
    ap.add_argument("--points", required=True, help="file listing the point directories to run")
    ap.add_argument("--name", default="sweep")
    args = ap.parse_args()
    dirs = [line.strip() for line in read_text(args.points, "a list of point directories").splitlines() if line.strip()]
    points = {d: read_text(os.path.join(d, "point.json"), "a point.json") for d in dirs}  # all before any task
    try:
        from distributed import Client, as_completed
    except ImportError:
        print("dfsim sweep --dask: Python's 'distributed' is missing (Debian: apt-get install python3-distributed)",
              file=sys.stderr)
        return 2
    try:
        client = Client(args.scheduler, timeout=float(os.environ.get("DFSIM_DASK_TIMEOUT", "20")))
    except (OSError, TimeoutError) as e:
        print(f"dfsim sweep --dask: cannot reach the Dask scheduler at {args.scheduler}: {e}", file=sys.stderr)
        return 2
    tty = sys.stderr.isatty()
    with client:
        futures = {}
        for d in dirs:
            fut = client.submit(run_point, args.dfsim, points[d], pure=False)
            futures[fut] = d
        done = failed = lost = 0
        for fut in as_completed(futures):
            try:
                code, files = fut.result()
            except Exception as e:  # the worker died or the task could not run: the point stays not run
                print(f"dfsim sweep --dask: {futures[fut]}: {e}", file=sys.stderr)
                lost += 1
                continue
            store(futures[fut], files)
            done += 1
            failed += code != 0
            if tty:
                print(f"\rsweep {args.name}: {done}/{len(dirs)} points, {failed} failed (Dask)   ", end="",
                      file=sys.stderr, flush=True)
        if tty:
            print(file=sys.stderr)
    return 1 if lost else 0


if __name__ == "__main__":
    guard(main)
