"""Bad input to the Python tools ends in ONE line on stderr and exit 2, never a traceback.

Shared by the tools in this directory (not run by hand). A tool reads its files through
read_text / load_json / read_csv, which raise BadInput naming the file and what is wrong, and
runs its main through guard(), which turns BadInput, a missing path, a directory given as a
file and the KeyError / ValueError / TypeError of data without an expected field into
`TOOL: FILE: what` and exit 2, and Ctrl-C into one line and exit 130.
"""
import csv
import json
import os
import subprocess
import sys

from opgraph import ArgParser, is_own_stdout, written_in_place  # noqa: F401 (ArgParser: for the tools)


class BadInput(Exception):
    """An input the tool cannot use; the message is the whole line after `TOOL: `."""


def prog():
    name = os.path.basename(sys.argv[0] or "tool")
    return name[:-3] if name.endswith(".py") else name


def fail(msg):
    """Prints `TOOL: msg` (one line) and exits 2."""
    print(f"{prog()}: {' '.join(str(msg).split())}", file=sys.stderr)
    sys.exit(2)


def os_error_text(e, path=None):
    where = path if path is not None else e.filename
    reason = e.strerror or type(e).__name__
    return f"{where}: {reason}" if where is not None else reason


def read_text(path, what="a text file"):
    """The file's text (UTF-8). A missing path, a directory or a non-UTF-8 file is BadInput."""
    path = str(path)
    if os.path.isdir(path):
        raise BadInput(f"{path}: is a directory, expected {what}")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise BadInput(os_error_text(e, path)) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadInput(f"{path}: byte {e.start}: not UTF-8 text, expected {what}") from None


def parse_json(text, where):
    """JSON text; malformed JSON is BadInput with line:column."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise BadInput(f"{where}: {e.lineno}:{e.colno}: malformed JSON: {e.msg}") from None
    except RecursionError:
        raise BadInput(f"{where}: malformed JSON: nested too deeply") from None


def load_json(path, what="a JSON file", expect=dict):
    """A JSON file whose top level is `expect` (dict, list, or None for any)."""
    doc = parse_json(read_text(path, what), str(path))
    if expect is not None and not isinstance(doc, expect):
        raise BadInput(f"{path}: expected {what} (a JSON {'object' if expect is dict else 'array'} at the top level)")
    return doc


def read_csv(path, need=(), what="a CSV file"):
    """Rows of a CSV file with a header line as dicts; `need` lists columns that must be there."""
    text = read_text(path, what)
    try:
        reader = csv.DictReader(text.splitlines())
        rows = list(reader)
        columns = reader.fieldnames or []
    except csv.Error as e:
        raise BadInput(f"{path}: malformed CSV: {e}") from None
    twice = [c for i, c in enumerate(columns) if c in columns[:i]]
    if twice:  # a dict per row would keep only the last of them
        raise BadInput(f"{path}: line 1: column {twice[0]!r} named twice")
    missing = [c for c in need if c not in columns]
    if missing:
        raise BadInput(f"{path}: expected {what} with a column {missing[0]!r} (columns: {', '.join(columns) or 'none'})")
    for i, row in enumerate(rows):
        if None in row or any(v is None for v in row.values()):
            raise BadInput(f"{path}: line {i + 2}: expected {len(columns)} fields")
    return rows


def number(value, where):
    """A float from a CSV cell or JSON value; anything else is BadInput at `where`."""
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise BadInput(f"{where}: expected a number, got {value!r}") from None
    if x != x or x in (float("inf"), float("-inf")):
        raise BadInput(f"{where}: expected a finite number, got {value!r}")
    return x


def write_atomically(path, write):
    """Calls write(tmp) for a temporary beside `path` (same extension), then renames it over
    `path`, so a failed write leaves the old file or nothing. A device, a pipe or a path under
    /dev or /proc (/dev/stdout) is written in place, never replaced by a file; a symlink keeps
    pointing at the file written."""
    path = str(path)
    if os.path.isdir(path):
        raise BadInput(f"{path}: is a directory, expected a file to write")
    if written_in_place(path):
        write(path)
        return
    d, base = os.path.split(os.path.realpath(path))
    stem, ext = os.path.splitext(base)
    tmp = os.path.join(d, f".{stem}.tmp-{os.getpid()}{ext}")
    try:
        write(tmp)
        os.replace(tmp, os.path.join(d, base))
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def save_figure(fig, path, **savefig_args):
    """fig.savefig to `path` all or nothing (write_atomically), in the format its extension
    names, PNG without one. matplotlib appended ".png" to a path without an extension: `--out
    /dev/stdout` made a file /dev/stdout.png and said "wrote /dev/stdout", `--out /dev/full`
    reported success, and a plain `--out plot` failed naming the temporary's suffix. Our own
    stdout is written through sys.stdout (print the status line to status_stream(path))."""
    path = str(path)
    ext = os.path.splitext(path)[1][1:].lower()
    formats = fig.canvas.get_supported_filetypes()
    if ext and ext not in formats:
        raise BadInput(f"{path}: matplotlib cannot write a .{ext} file, expected a name ending in "
                       f".{', .'.join(sorted(formats))} (PNG without an extension)")
    fmt = ext or "png"
    # The same figure gives the same bytes: SVG clip-path ids from a fixed salt (a random one
    # by default) and no creation date in SVG, PDF or PostScript.
    import matplotlib
    matplotlib.rcParams["svg.hashsalt"] = "dfsim"
    os.environ.setdefault("SOURCE_DATE_EPOCH", "0")
    if is_own_stdout(path):
        sys.stdout.flush()
        fig.savefig(sys.stdout.buffer, format=fmt, **savefig_args)
        sys.stdout.buffer.flush()
        return
    write_atomically(path, lambda p: fig.savefig(p, format=fmt, **savefig_args))


def status_stream(*outputs):
    """Where `wrote FILE` goes: stderr when an output is our own stdout (the line would follow
    the image or the graph there), else stdout."""
    return sys.stderr if any(is_own_stdout(str(o)) for o in outputs) else sys.stdout


def _report(e):
    """The exit status and line for an exception that ends a tool, or None for any other."""
    if isinstance(e, BadInput):
        return 2, str(e)
    if isinstance(e, KeyboardInterrupt):
        return 130, "interrupted"
    if isinstance(e, subprocess.CalledProcessError):  # a dfsim the tool ran failed; it said why on stderr
        return 1, f"{' '.join(map(str, e.cmd))}: exit {e.returncode}"
    if isinstance(e, OSError):
        return 2, os_error_text(e)
    if isinstance(e, (KeyError, IndexError)):  # a file without a field the tool reads
        return 2, f"malformed input: missing field {e}"
    if isinstance(e, (ValueError, TypeError)):  # a field of the wrong type
        return 2, f"malformed input: {e}"
    return None


def _exit(e):
    status, line = _report(e)
    print(f"{prog()}: {' '.join(line.split())}", file=sys.stderr)
    sys.exit(status)


def guard(main, *args):
    """Runs main(*args) and exits with its return value (None: 0); bad input is one line and 2."""
    try:
        rc = main(*args)
    except (Exception, KeyboardInterrupt) as e:
        if _report(e) is None:
            raise
        _exit(e)
    sys.exit(rc or 0)


def install():
    """For tools written as scripts rather than a main(): the same as guard() for the whole script."""
    default = sys.excepthook

    def hook(kind, e, tb):
        if _report(e) is None:
            return default(kind, e, tb)
        status, line = _report(e)
        print(f"{prog()}: {' '.join(line.split())}", file=sys.stderr)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except OSError:
                pass
        os._exit(status)  # an excepthook cannot sys.exit

    sys.excepthook = hook
