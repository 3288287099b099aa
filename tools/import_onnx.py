#!/usr/bin/python3
"""Imports an ONNX model into a dfsim op graph (`dfsim.ops` v1, docs/import.md).

usage: import_onnx.py MODEL.onnx [--input NAME=SHAPE[:DTYPE] ...] -o OUT.json

Shapes come from ONNX shape inference (with data propagation); --input fixes an input's shape
(needed for symbolic dims) and dtype (fp16 by default, int32 for token ids). Initializers
become graph inputs (weights); shape computations on constants are folded away.
Example: tools/import_onnx.py block.onnx --input x=1x16x256 -o block.json
In Python: sys.path.append("tools"); from import_onnx import import_onnx;
    graph = import_onnx(onnx.load("block.onnx"), {"x": "1x16x256"})
Exit status 2 with one line on stderr for bad input or a node outside the op set.
"""
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from opgraph import ImportFailure, OpGraph, check_source, parse_input_spec, parser, run_cli  # noqa: E402
from opgraph_patterns import fuse_patterns  # noqa: E402

import numpy as np  # noqa: E402
import onnx  # noqa: E402
from onnx import numpy_helper, shape_inference  # noqa: E402

FLOAT_TYPES = {onnx.TensorProto.FLOAT, onnx.TensorProto.FLOAT16, onnx.TensorProto.DOUBLE, onnx.TensorProto.BFLOAT16}


class Importer:
    """Walks the ONNX nodes in order (constants already folded) and emits ops via TABLE."""

    def __init__(self, model, float_dtype):
        self.g, self.float_dtype = OpGraph(), float_dtype
        self.consts = {i.name: numpy_helper.to_array(i) for i in model.graph.initializer}
        self.shapes, self.elem = {}, {}
        for vi in list(model.graph.value_info) + list(model.graph.input) + list(model.graph.output):
            t = vi.type.tensor_type
            self.elem[vi.name] = t.elem_type
            if t.HasField("shape") and all(d.HasField("dim_value") for d in t.shape.dim):
                self.shapes[vi.name] = [d.dim_value for d in t.shape.dim]

    # -- helpers ------------------------------------------------------------------------
    def dtype(self, elem_type):
        return self.float_dtype if elem_type in FLOAT_TYPES else "int32"

    def shape(self, name):
        if name in self.consts:
            return list(self.consts[name].shape)
        if name not in self.shapes:
            raise ImportFailure(f"the shape of {name} is unknown after shape inference (give --input shapes)")
        return self.shapes[name]

    def tensor(self, name):
        """A data input: an emitted tensor, or a constant that becomes a graph input (a weight)."""
        if name in self.consts and name not in self.g.tensors:
            c = self.consts[name]
            dtype = self.float_dtype if c.dtype.kind == "f" else "int32"
            self.g.add_input(name, list(c.shape), dtype)
        if name not in self.g.tensors:
            raise ImportFailure(f"tensor {name} is not produced by any node")
        return name

    def scalar(self, name):
        """The number of a one-element constant, or None."""
        c = self.consts.get(name)
        return float(f"{float(c.reshape(-1)[0]):.7g}") if c is not None and c.size == 1 else None  # float32 digits

    def const(self, node, i, default=None):
        """A constant input (shape, axes, ...) as a Python list or number."""
        if i >= len(node.input) or not node.input[i]:
            return default
        if node.input[i] not in self.consts:
            raise ImportFailure(f"input {i} ({node.input[i]}) must be a constant")
        return self.consts[node.input[i]].tolist()

    def out(self, node, kind, inputs, i=0, **attrs):
        name = node.output[i]
        return self.g.op(kind, inputs, name, self.shape(name), self.dtype(self.elem.get(name, 1)), **attrs)

    def alias(self, node, source):
        self.aliases[node.output[0]] = source

    # -- the walk -----------------------------------------------------------------------
    def run(self, model):
        self.aliases = {}
        for vi in model.graph.input:
            if vi.name not in self.consts:
                self.g.add_input(vi.name, self.shape(vi.name), self.dtype(self.elem[vi.name]))
        for index, node in enumerate(model.graph.node):
            node.input[:] = [self.aliases.get(i, i) for i in node.input]
            handler = TABLE.get(node.op_type)
            what = f"node {node.name or index} ({node.op_type})"
            if handler is None:
                raise ImportFailure(f"{what}: not in the dfsim op set (docs/import.md lists the mapped ops)")
            try:
                handler(self, node, attributes(node))
            except ImportFailure as e:
                raise ImportFailure(f"{what}: {e}")
        return [self.tensor(self.aliases.get(o.name, o.name)) for o in model.graph.output]


def attributes(node):
    return {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}


# ---- constant folding: shape arithmetic and constants, evaluated with numpy --------------

def _slice(im, node, x):
    starts, ends = im.const(node, 1), im.const(node, 2)
    axes = im.const(node, 3, list(range(len(starts))))
    steps = im.const(node, 4, [1] * len(starts))
    index = [slice(None)] * x.ndim
    for a, s, e, st in zip(axes, starts, ends, steps):
        index[a] = slice(s, e, st)
    return x[tuple(index)]


FOLD = {
    "Shape": lambda im, n, a, x: np.array(im.shape(n.input[0]), dtype=np.int64),
    "Constant": lambda im, n, a, *x: numpy_helper.to_array(a["value"]) if "value" in a else np.array(
        a.get("value_float", a.get("value_int", a.get("value_floats", a.get("value_ints"))))),
    "ConstantOfShape": lambda im, n, a, s: np.full(s.astype(np.int64), numpy_helper.to_array(a["value"])[0]
                                                    if "value" in a else 0.0),
    "Gather": lambda im, n, a, x, i: np.take(x, i, axis=a.get("axis", 0)),
    "Unsqueeze": lambda im, n, a, x, *ax: np.reshape(x, _unsqueezed(x.shape, list(ax[0]) if ax else a["axes"])),
    "Squeeze": lambda im, n, a, x, *ax: np.squeeze(x, axis=tuple(ax[0]) if ax else tuple(a.get("axes", ())) or None),
    "Concat": lambda im, n, a, *xs: np.concatenate(xs, axis=a["axis"]),
    "Cast": lambda im, n, a, x: x.astype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[a["to"]]),
    "Identity": lambda im, n, a, x: x,
    "Reshape": lambda im, n, a, x, s: x.reshape([d if d else x.shape[i] for i, d in enumerate(s.tolist())]),
    "Add": lambda im, n, a, x, y: x + y, "Sub": lambda im, n, a, x, y: x - y,
    "Mul": lambda im, n, a, x, y: x * y,
    "Div": lambda im, n, a, x, y: x // y if x.dtype.kind == "i" else x / y,
    "Equal": lambda im, n, a, x, y: x == y, "Where": lambda im, n, a, c, x, y: np.where(c, x, y),
    "Slice": lambda im, n, a, x, *r: _slice(im, n, x),
    "Range": lambda im, n, a, s, e, d: np.arange(s, e, d),
    "Sqrt": lambda im, n, a, x: np.sqrt(x),
}


def _unsqueezed(shape, axes):
    shape = list(shape)
    for ax in sorted(a % (len(shape) + len(axes)) for a in axes):
        shape.insert(ax, 1)
    return shape


def fold(im, node):
    """Evaluates a node whose inputs are all constants (or a Shape of a known shape)."""
    if node.op_type not in FOLD:
        return False
    ins = [i for i in node.input if i]
    if node.op_type == "Shape":
        if node.input[0] not in im.shapes and node.input[0] not in im.consts:
            return False
        ins = []
    if not all(i in im.consts for i in ins):
        return False
    args = [im.consts[i] for i in node.input if i] if node.op_type != "Shape" else [None]
    try:
        im.consts[node.output[0]] = np.asarray(FOLD[node.op_type](im, node, attributes(node), *args))
    except (ValueError, TypeError, IndexError, KeyError) as e:  # numpy on malformed constants
        raise ImportFailure(f"node {node.name} ({node.op_type}): cannot evaluate it on its constant inputs: {e}")
    return True


def fold_constants(model):
    """Shape inference, then folding of the nodes it makes constant, until nothing changes:
    folded values become initializers, so the next inference sees through them."""
    for _ in range(20):
        try:
            model = shape_inference.infer_shapes(model, strict_mode=True, data_prop=True)
        except Exception as e:  # onnx raises InferenceError, ValidationError, ...
            raise ImportFailure(f"ONNX shape inference failed: {str(e).splitlines()[0]}")
        im = Importer(model, "fp16")
        keep = [n for n in model.graph.node if not fold(im, n)]
        if len(keep) == len(model.graph.node):
            return model
        used = {i for n in keep for i in n.input} | {o.name for o in model.graph.output}
        known = {i.name for i in model.graph.initializer}
        new = [numpy_helper.from_array(v, k) for k, v in im.consts.items() if k in used and k not in known]
        del model.graph.node[:]
        model.graph.node.extend(keep)
        model.graph.initializer.extend(new)
    return model


# ---- handlers: handler(importer, node, attributes) ---------------------------------------

BINARY = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Max": "max", "Min": "min"}
UNARY = {"Relu": "relu", "Tanh": "tanh", "Sigmoid": "sigmoid", "Exp": "exp", "Log": "log", "Sqrt": "sqrt",
         "Reciprocal": "reciprocal", "Neg": "neg", "Abs": "abs", "Gelu": "gelu"}


def binary(im, node, a):
    kind = BINARY[node.op_type]
    x, y = node.input[0], node.input[1]
    sx, sy = im.scalar(x), im.scalar(y)
    if sy is not None and sx is None:
        return im.out(node, kind, [im.tensor(x)], scalar=sy)
    if sx is not None and sy is None:
        if kind in ("add", "mul", "max", "min"):
            return im.out(node, kind, [im.tensor(y)], scalar=sx)
        if kind == "div" and sx == 1.0:
            return im.out(node, "reciprocal", [im.tensor(y)])
        pre = node.output[0] + "_pre"  # s - y = -y + s, s / y = reciprocal(y) * s
        im.g.op("neg" if kind == "sub" else "reciprocal", [im.tensor(y)], pre, im.shape(y), im.g.dtype(y))
        return im.out(node, "add" if kind == "sub" else "mul", [pre], scalar=sx)
    return im.out(node, kind, [im.tensor(x), im.tensor(y)])


def unary(im, node, a):
    im.out(node, UNARY[node.op_type], [im.tensor(node.input[0])])


def erf(im, node, a):
    """Only inside GELU (x * 0.5 * (1 + erf(x / sqrt 2))), which the rewrites turn into gelu."""
    im.out(node, "erf", [im.tensor(node.input[0])])
    im.g.ops[-1]["description"] = f"node {node.name} (Erf)"


def power(im, node, a):
    e = im.scalar(node.input[1])
    if e is None:
        raise ImportFailure("the exponent must be a constant number")
    im.out(node, "pow", [im.tensor(node.input[0])], exponent=e)


def clip(im, node, a):
    lo = im.scalar(node.input[1]) if len(node.input) > 1 and node.input[1] else a.get("min")
    hi = im.scalar(node.input[2]) if len(node.input) > 2 and node.input[2] else a.get("max")
    im.out(node, "clamp", [im.tensor(node.input[0])], min=lo, max=hi)


def alias(im, node, a):
    """Casts, Identity and Dropout pass the same data on (the graph keeps one float dtype)."""
    im.alias(node, im.tensor(node.input[0]))


def reduction(im, node, a):
    kind = {"ReduceMean": "mean", "ReduceSum": "sum", "ReduceMax": "amax"}[node.op_type]
    axes = a.get("axes") or im.const(node, 1)
    if not axes:
        raise ImportFailure("a reduction over all dims is not supported")
    rank = len(im.shape(node.input[0]))
    dims = sorted({ax % rank for ax in axes})
    im.g.reduce(kind, im.tensor(node.input[0]), dims, node.output[0], im.shape(node.output[0]), a.get("keepdims", 1))


def matmul(im, node, a):
    if len(im.shape(node.input[0])) < 2 or len(im.shape(node.input[1])) < 2:
        raise ImportFailure("a 1-D operand is not supported")
    im.out(node, "matmul", [im.tensor(node.input[0]), im.tensor(node.input[1])])


def gemm(im, node, a):
    if a.get("alpha", 1.0) != 1.0 or a.get("beta", 1.0) != 1.0 or a.get("transA", 0):
        raise ImportFailure("only alpha = beta = 1 and transA = 0 are supported")
    x, w = im.tensor(node.input[0]), im.tensor(node.input[1])
    bias = [im.tensor(node.input[2])] if len(node.input) > 2 and node.input[2] else []
    if a.get("transB", 0) and (not bias or len(im.shape(node.input[2])) == 1):
        return im.out(node, "linear", [x, w] + bias)
    if not bias:
        return im.out(node, "matmul", [x, w], transpose_b=bool(a.get("transB", 0)) or None)
    mm = im.g.op("matmul", [x, w], node.output[0] + "_mm", im.shape(node.output[0]), im.g.dtype(x),
                 transpose_b=bool(a.get("transB", 0)) or None)
    im.out(node, "add", [mm] + bias)


def softmax(im, node, a):
    im.out(node, "softmax", [im.tensor(node.input[0])], dim=a.get("axis", -1))


def layer_norm(im, node, a):
    rank = len(im.shape(node.input[0]))
    if a.get("axis", -1) % rank != rank - 1:
        raise ImportFailure("normalising over more than the last dim is not supported")
    params = [im.tensor(i) for i in node.input[1:3] if i]
    im.out(node, "layernorm", [im.tensor(node.input[0])] + params, eps=a.get("epsilon", 1e-5))


def gather(im, node, a):
    data, ids = node.input
    if a.get("axis", 0) == 0 and len(im.shape(data)) == 2 and ids not in im.consts:
        return im.out(node, "embedding", [im.tensor(data), im.tensor(ids)])
    if ids in im.consts and im.consts[ids].size == 1:  # x[..., i, ...]: a slice, then drop the dim
        ax = a.get("axis", 0) % len(im.shape(data))
        i = int(im.consts[ids].reshape(-1)[0]) % im.shape(data)[ax]
        return im.out(node, "reshape", [im.g.slice(im.tensor(data), ax, i, i + 1, 1, node.output[0] + "_s")])
    raise ImportFailure("only embedding lookups (a 2-D table, axis 0) and constant indices are supported")


def reshape(im, node, a):
    x, shape = im.tensor(node.input[0]), im.shape(node.output[0])
    if shape == im.g.shape(x):
        return im.alias(node, x)
    if np.prod(shape) != np.prod(im.g.shape(x)):
        raise ImportFailure(f"{im.g.shape(x)} cannot become {shape} (sizes fixed when the file was written? "
                            "export with dynamic axes)")
    im.out(node, "reshape", [x])


def transpose(im, node, a):
    rank = len(im.shape(node.input[0]))
    perm = a.get("perm", list(range(rank))[::-1])
    im.out(node, "transpose", [im.tensor(node.input[0])], dims=perm)


def concat(im, node, a):
    ins = [im.tensor(i) for i in node.input]
    if len(ins) == 1:
        return im.alias(node, ins[0])
    im.out(node, "cat", ins, dim=a["axis"])


def slice_(im, node, a):
    x = im.tensor(node.input[0])
    starts, ends = im.const(node, 1), im.const(node, 2)
    axes = im.const(node, 3, list(range(len(starts))))
    steps = im.const(node, 4, [1] * len(starts))
    for n, (ax, s, e, st) in enumerate(zip(axes, starts, ends, steps)):
        shape = list(im.g.shape(x))
        ax %= len(shape)
        s, e, st = slice(s, e, st).indices(shape[ax])
        if st < 1:
            raise ImportFailure("negative slice steps are not supported")
        if (s, e, st) != (0, shape[ax], 1):
            x = im.g.slice(x, ax, s, e, st, node.output[0] if n == len(axes) - 1 else f"{node.output[0]}_{n}")
    if x != node.output[0]:
        if im.g.shape(x) != im.shape(node.output[0]):
            raise ImportFailure("slice shapes disagree with shape inference")
        im.alias(node, x)


def split(im, node, a):
    x = im.tensor(node.input[0])
    im.g.split(x, a.get("axis", 0) % len(im.g.shape(x)), node.output, [im.shape(o) for o in node.output])


def expand(im, node, a):
    x = im.tensor(node.input[0])
    y = im.g.expand(x, im.shape(node.output[0]), node.output[0])
    if y == x:
        im.alias(node, x)


def where(im, node, a):
    im.out(node, "where", [im.tensor(i) for i in node.input])


TABLE = {}
for _names, _fn in (
        (BINARY, binary), (UNARY, unary), (("Pow",), power), (("Erf",), erf), (("Clip",), clip),
        (("Cast", "Identity", "Dropout"), alias), (("ReduceMean", "ReduceSum", "ReduceMax"), reduction),
        (("MatMul",), matmul), (("Gemm",), gemm), (("Softmax",), softmax), (("LayerNormalization",), layer_norm),
        (("Gather",), gather), (("Reshape", "Flatten", "Squeeze", "Unsqueeze"), reshape),
        (("Transpose",), transpose), (("Concat",), concat), (("Slice",), slice_), (("Split",), split),
        (("Expand",), expand), (("Where",), where)):
    for _n in _names:
        TABLE[_n] = _fn


def import_onnx(model, inputs=None, name=None, cores=32):
    """Converts an onnx.ModelProto (or a path) with input shapes {name: '1x16x256[:fp16]' or
    (shape, dtype)} fixing the graph inputs, and returns the dfsim.ops graph as a dict, named
    `name`, else the file's name without .onnx, else the ONNX graph's name."""
    if isinstance(model, str):
        name = name or os.path.splitext(os.path.basename(model))[0]
        model = _load(model)
    else:  # the caller's model stays as it was
        model = onnx.ModelProto.FromString(model.SerializeToString())
    specs = {k: parse_input_spec(v) for k, v in (inputs or {}).items()}
    floats = {d for _, d in specs.values() if d != "int32"}
    if len(floats) > 1:
        raise ImportFailure(f"inputs mix float dtypes {', '.join(sorted(floats))}: give every float input "
                            "the same one (the graph and its weights keep one)")
    inits = {i.name for i in model.graph.initializer}
    names = [i.name for i in model.graph.input if i.name not in inits]
    unknown = [k for k in specs if k not in names]
    if unknown:
        raise ImportFailure(f"no graph input {', '.join(unknown)} (inputs: {', '.join(names)})")
    for vi in model.graph.input:
        if vi.name in specs:
            dims = vi.type.tensor_type.shape.dim
            del dims[:]
            for d in specs[vi.name][0]:
                dims.add().dim_value = d
    if specs:  # shapes the file records for other sizes are inferred again
        del model.graph.value_info[:]
        for vi in model.graph.output:
            vi.type.tensor_type.ClearField("shape")
    model = fold_constants(model)
    im = Importer(model, floats.pop() if floats else "fp16")
    outputs = im.run(model)
    fuse_patterns(im.g, outputs)
    name = name or model.graph.name or "onnx_model"
    return im.g.document(name, outputs, f"imported from ONNX graph {name} by tools/import_onnx.py", cores)


def _load(path):
    check_source(path)
    try:
        with warnings.catch_warnings():  # protobuf warns before it fails on a non-ONNX file
            warnings.simplefilter("ignore")
            return onnx.load(path)
    except Exception as e:  # protobuf DecodeError and friends
        raise ImportFailure(f"not an ONNX model: {type(e).__name__}: {e}")


def main():
    a = parser(__doc__, "MODEL.onnx", "fix a graph input's shape", "the file's name without .onnx").parse_args()
    run_cli(a, lambda specs: import_onnx(a.source, specs, a.name, a.cores))


if __name__ == "__main__":
    main()
