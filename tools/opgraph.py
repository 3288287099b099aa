"""Builds a `dfsim.ops` v1 op graph (docs/op-graph-format.md) for the importers: input specs,
the graph builder, all-or-nothing writing, one-line errors. Patterns: opgraph_patterns.py."""
import argparse
import json
import os
import sys

FLOAT_DTYPES = ("fp16", "fp8", "fp32")
DTYPES = FLOAT_DTYPES + ("int32",)


class ImportFailure(Exception):
    """Bad input or an unsupported node: reported as one line, exit status 2."""


def parse_input_spec(spec):
    """'2x128x4096[:fp16]' -> ([2, 128, 4096], 'fp16'); also accepts (shape[, dtype]), a shape,
    or an example tensor (its shape; int32 if it holds integers, else fp16)."""
    if hasattr(spec, "shape") and hasattr(spec, "dtype"):
        spec = (list(spec.shape), "fp16" if spec.dtype.is_floating_point else "int32")
    if isinstance(spec, (list, tuple)):
        shape, dtype = (spec[0], spec[1]) if len(spec) == 2 and isinstance(spec[1], str) else (spec, "fp16")
    else:
        text, _, dtype = str(spec).partition(":")
        dtype = dtype or "fp16"
        try:
            shape = [int(d) for d in text.split("x")]
        except ValueError:
            raise ImportFailure(f"shape '{text}': expected dims joined by 'x', e.g. 2x128x4096")
    shape = [int(d) for d in shape]
    if not shape or any(d < 1 for d in shape):
        raise ImportFailure(f"shape {shape}: expected at least one dim, each >= 1")
    if dtype not in DTYPES:
        raise ImportFailure(f"dtype '{dtype}': expected one of {', '.join(DTYPES)}")
    return shape, dtype


def parse_input_args(items):
    """['x=2x16x256:fp16', ...] (the --input flags) -> {'x': ([2, 16, 256], 'fp16')}."""
    specs = {}
    for item in items or []:
        name, eq, spec = item.partition("=")
        if not eq or not name:
            raise ImportFailure(f"--input {item}: expected NAME=SHAPE[:DTYPE], e.g. x=2x128x4096:fp16")
        if name in specs:
            raise ImportFailure(f"--input {name}: given twice")
        specs[name] = parse_input_spec(spec)
    return specs


class OpGraph:
    """Named tensors, graph inputs and ops, in the order they were added."""

    def __init__(self):
        self.tensors = {}  # name -> {"shape", "dtype"}
        self.inputs = []
        self.ops = []

    def tensor(self, name, shape, dtype):
        if name in self.tensors:
            raise ImportFailure(f"tensor name {name} is used twice (a helper tensor's name clashes)")
        if dtype not in DTYPES:
            raise ImportFailure(f"tensor {name}: dtype {dtype} has no dfsim equivalent")
        if any(int(d) < 1 for d in shape):  # dfsim refuses a 0-sized tensor (docs/op-graph-format.md)
            raise ImportFailure(f"tensor {name}: shape {[int(d) for d in shape]}: expected every dim >= 1")
        self.tensors[name] = {"shape": [int(d) for d in shape] or [1], "dtype": dtype}
        return name

    def add_input(self, name, shape, dtype):
        if name not in self.tensors:
            self.tensor(name, shape, dtype)
            self.inputs.append(name)
        return name

    def op(self, kind, inputs, out, shape, dtype, **attrs):
        """Adds `out = kind(inputs)`; attrs with value None are left out."""
        self.tensor(out, shape, dtype)
        op = {"op": kind, "inputs": list(inputs), "outputs": [out]}
        attrs = {k: v for k, v in attrs.items() if v is not None}
        if attrs:
            op["attrs"] = attrs
        self.ops.append(op)
        return out

    def shape(self, name):
        return self.tensors[name]["shape"]

    def reduce(self, kind, x, dims, out, out_shape, keepdim):
        """sum/mean/amax over `dims` (non-negative): one op, or one per dim then a reshape."""
        if len(dims) == 1:
            return self.op(kind, [x], out, out_shape, self.dtype(x), dim=dims[0], keepdim=bool(keepdim))
        for d in sorted(dims, reverse=True):  # means of equal-size groups: the mean
            shape = list(self.shape(x))
            shape[d] = 1
            x = self.op(kind, [x], f"{out}_d{d}", shape, self.dtype(x), dim=d, keepdim=True)
        return self.op("reshape", [x], out, out_shape, self.dtype(x))

    def expand(self, x, target, out):
        """Broadcast copies (torch expand, ONNX Expand): a cat of x with itself along each
        size-1 dim that grows (a real copy, as the reshape after repeat_kv's expand makes)."""
        shape = list(self.shape(x))
        if len(shape) < len(target):
            shape = [1] * (len(target) - len(shape)) + shape
            x = self.op("reshape", [x], out + "_r", shape, self.dtype(x))
        grow = [d for d in range(len(target)) if shape[d] != target[d]]
        for n, d in enumerate(grow):
            shape[d] = target[d]
            x = self.op("cat", [x] * target[d], out if n == len(grow) - 1 else f"{out}_{n}", shape, self.dtype(x), dim=d)
        return x

    def slice(self, x, dim, start, end, step, out):
        """x sliced along dim (python range rules already applied)."""
        shape = list(self.shape(x))
        shape[dim] = len(range(start, end, step))
        return self.op("slice", [x], out, shape, self.dtype(x), dim=dim, start=start, end=end,
                       step=step if step != 1 else None)

    def split(self, x, dim, outs, shapes):
        """x cut along dim into the given output tensors (their sizes along dim from shapes)."""
        for o, s in zip(outs, shapes):
            self.tensor(o, s, self.dtype(x))
        self.ops.append({"op": "split", "inputs": [x], "outputs": list(outs),
                         "attrs": {"dim": dim, "sizes": [int(s[dim]) for s in shapes]}})
        return list(outs)

    def dtype(self, name):
        return self.tensors[name]["dtype"]

    def document(self, name, outputs, description, cores=32):
        """The dfsim.ops JSON object (compiled for `cores` cores, the card's 32 by default);
        tensors no op or output uses are dropped."""
        if not outputs:
            raise ImportFailure("the model has no outputs (an empty model?): nothing to import")
        outputs = [self._produced(o) for o in outputs]
        used = {t for op in self.ops for t in op["inputs"] + op["outputs"]} | set(outputs)
        return {
            "format": "dfsim.ops", "version": 1, "name": name, "description": description,
            "tensors": {n: t for n, t in self.tensors.items() if n in used},
            "inputs": [i for i in self.inputs if i in used], "outputs": outputs, "ops": self.ops,
            "compile": {"cores": cores},
        }

    def _produced(self, name):
        """A graph output must come from an op: an output that is a graph input gets a copy."""
        if name in self.inputs:
            return self.op("copy", [name], name + "_out", self.shape(name), self.dtype(name))
        return name


def check_source(path):
    """The importers' input file: ImportFailure unless it is a readable file."""
    if os.path.isdir(path):
        raise ImportFailure("is a directory, expected a file")
    if not os.path.exists(path):
        raise ImportFailure("no such file")


def write_json(doc, path):
    """write_text of the document, indented as the importers write it."""
    write_text(json.dumps(doc, indent=1) + "\n", path)



class ArgParser(argparse.ArgumentParser):
    """argparse with a usage error on one line of stderr, exit 2 (argparse prints its usage
    above the error: three lines), as every dfsim tool reports bad input."""

    def error(self, message):
        print(f"{self.prog}: {' '.join(message.split())} (see '{self.prog} --help')", file=sys.stderr)
        sys.exit(2)


def written_in_place(path):
    """True when `path` must be written in place, never replaced by a renamed file: it exists and
    is neither a file nor a directory (a pipe, a device), or it lies (or its symlink points) under
    /dev or /proc (/dev/stdout, /dev/full)."""
    special = ("/dev/", "/proc/")
    link = os.readlink(path) if os.path.islink(path) else ""
    return (os.path.exists(path) and not os.path.isfile(path)) or os.path.abspath(path).startswith(special) \
        or link.startswith(special)

def is_own_stdout(path):
    """True when `path` names this process's standard output (/dev/stdout, /dev/fd/1,
    /proc/self/fd/1, or a symlink to one of them): its status line goes to stderr then."""
    link = os.readlink(path) if os.path.islink(path) else ""
    return path in ("/dev/stdout", "/dev/fd/1", "/proc/self/fd/1") or link in ("/dev/stdout", "/proc/self/fd/1")


def write_text(text, path):
    """Writes all or nothing: a temporary file renamed over `path`. A path that exists and is
    neither a file nor a directory (a pipe), or under /dev or /proc (/dev/stdout, a symlink to
    /proc/self/fd/1), is written in place, never replaced by a file: renaming over /dev/full
    replaced the device and reported success. ImportFailure("path: why") if it fails."""
    if os.path.isdir(path):
        raise ImportFailure(f"{path}: is a directory, expected a file path")
    if written_in_place(path):
        try:
            if is_own_stdout(path):  # our own stdout ("wrote ..." then goes to stderr)
                sys.stdout.write(text)
                sys.stdout.flush()
            else:
                with open(path, "w") as f:
                    f.write(text)
        except OSError as e:
            raise ImportFailure(f"{path}: cannot write: {e.strerror}")
        return
    target = os.path.realpath(path)  # a symlink keeps pointing at the file written
    tmp = f"{target}.tmp{os.getpid()}"
    try:
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, target)
    except OSError as e:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise ImportFailure(f"{path}: cannot write: {e.strerror}")


def parser(doc, source, input_help, name_help):
    """The importers' command line: SOURCE, --input, -o, --cores, --name (docstring as help)."""
    ap = ArgParser(description=doc.split("\n")[0], epilog=doc.split("\n", 2)[2],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("source", metavar=source)
    ap.add_argument("--input", action="append", metavar="NAME=SHAPE[:DTYPE]", default=[],
                    help=input_help + ", e.g. x=2x128x4096:fp16 (dtype fp16 by default; int32 for ids)")
    ap.add_argument("-o", "--output", required=True, metavar="OUT.json")
    ap.add_argument("--cores", type=int, default=32, metavar="N", help="compile.cores of the graph (default 32, the card)")
    ap.add_argument("--name", help=f"the graph's name (default: {name_help})")
    return ap


def run_cli(args, convert):
    """convert(input specs) -> graph, written to args.output; an ImportFailure becomes one line
    `source: what` on stderr and exit status 2, with nothing written."""
    try:
        specs = parse_input_args(args.input)
        if args.cores < 1:
            raise ImportFailure(f"--cores {args.cores}: expected an integer >= 1")
        if args.name is not None and not args.name.strip():
            raise ImportFailure("--name: expected a graph name, got an empty one")
        if os.path.isdir(args.output):  # before the conversion's work
            raise ImportFailure(f"{args.output}: is a directory, expected a file path")
        write_json(convert(specs), args.output)
    except ImportFailure as e:
        print(f"{args.source}: {' '.join(str(e).split())}", file=sys.stderr)  # one line
        sys.exit(2)
    # With -o /dev/stdout the graph is stdout: the status line after it broke
    # `tools/import_torch.py ... -o /dev/stdout | dfsim run -w /dev/stdin` (as dfsim gen once did).
    print(f"wrote {args.output}", file=sys.stderr if is_own_stdout(args.output) else sys.stdout)
