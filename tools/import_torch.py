#!/usr/bin/python3
"""Imports a PyTorch nn.Module into a dfsim op graph (`dfsim.ops` v1, docs/import.md).

usage: import_torch.py FILE.py --module NAME --input NAME=2x128x4096[:fp16] [--input ...] -o OUT.json

NAME is an nn.Module class in FILE.py built with no arguments; each --input names an argument
of its forward. The module is traced with torch.fx (symbolic_trace) and its shapes propagated
(ShapeProp) on example inputs of those shapes; parameters and buffers become graph inputs.
Example: tools/import_torch.py tests/import/tiny_llama.py --module TinyLlamaBlock \\
    --input x=1x16x256 --input cos=16x64 --input sin=16x64 --input mask=16x16 -o block.json
In Python: sys.path.append("tools"); from import_torch import import_module;
    graph = import_module(module, {"x": "1x16x256:fp16", ...})
Exit status 2 with one line on stderr for bad input or a node outside the op set.
"""
import contextlib
import functools
import importlib.machinery
import importlib.util
import inspect
import io
import operator
import os
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from opgraph import ImportFailure, OpGraph, check_source, parse_input_spec, parser, run_cli  # noqa: E402
from opgraph_patterns import fuse_patterns  # noqa: E402

import torch  # noqa: E402
import torch.fx  # noqa: E402
from torch import nn  # noqa: E402
from torch.fx.passes.shape_prop import ShapeProp  # noqa: E402

TORCH_DTYPES = {"fp16": torch.float32, "fp8": torch.float32, "fp32": torch.float32, "int32": torch.int64}


class Ref(str):
    """A graph tensor's name, standing for a traced tensor in a node's arguments."""


class Importer:
    """Walks the traced graph and emits dfsim ops, one handler per op family (TABLE)."""

    def __init__(self, gm, float_dtype):
        self.gm, self.g, self.float_dtype = gm, OpGraph(), float_dtype
        self.names = {}  # fx node -> tensor name (or list of names for tuple results)

    # -- helpers ------------------------------------------------------------------------
    def dtype_of(self, meta):
        return self.float_dtype if meta.dtype.is_floating_point else "int32"

    def out(self, node, kind, inputs, **attrs):
        meta = node.meta["tensor_meta"]
        return self.g.op(kind, inputs, node.name, meta.shape, self.dtype_of(meta), **attrs)

    def param(self, qualname):
        """A parameter, buffer or tensor constant of the module: a graph input named by its
        qualified name."""
        t = functools.reduce(getattr, qualname.split("."), self.gm)
        return self.g.add_input(qualname, list(t.shape), self.float_dtype if t.is_floating_point() else "int32")

    def arg(self, a):
        if isinstance(a, torch.fx.Node):
            if a in self.names:
                return self.names[a]
            return a.meta["value"]  # a shape, size or dtype: computed by the shape propagation
        if isinstance(a, (list, tuple)):
            return type(a)(self.arg(x) for x in a)
        if isinstance(a, dict):
            return {k: self.arg(v) for k, v in a.items()}
        if isinstance(a, slice):
            return slice(self.arg(a.start), self.arg(a.stop), self.arg(a.step))
        return a

    def run(self, arg_names, outputs):
        """Converts every node; graph inputs take the forward's argument names, in order."""
        arg_names = iter(arg_names)
        for node in self.gm.graph.nodes:
            if node.op == "placeholder":
                meta = node.meta["tensor_meta"]
                self.names[node] = Ref(self.g.add_input(next(arg_names), meta.shape, self.dtype_of(meta)))
            elif node.op == "get_attr":
                self.names[node] = Ref(self.param(node.target))
            elif node.op == "output":
                outputs.extend(_flatten(self.arg(node.args[0])))
            elif _is_tensor_result(node):
                self.names[node] = self.convert(node)

    def convert(self, node):
        name, handler = _handler(self.gm, node)
        if handler is None:
            raise ImportFailure(f"node {node.name} ({node.op} {_target_name(node)}): not in the dfsim op set "
                                "(docs/import.md lists the mapped ops)")
        args, kwargs = self.arg(node.args), self.arg(node.kwargs)
        try:
            result = handler(self, node, name, args, kwargs)
        except ImportFailure as e:
            raise ImportFailure(f"node {node.name} ({node.op} {_target_name(node)}): {e}")
        if isinstance(result, list):
            return [Ref(r) for r in result]
        return Ref(result)


def _flatten(v):
    if isinstance(v, (list, tuple)):
        return [x for e in v for x in _flatten(e)]
    if isinstance(v, dict):
        return [x for e in v.values() for x in _flatten(e)]
    if isinstance(v, Ref):
        return [v]
    raise ImportFailure(f"the module returns {type(v).__name__}, expected tensors")


def _is_tensor_result(node):
    meta = node.meta.get("tensor_meta")
    return meta is not None and not (isinstance(meta, (list, tuple)) and not meta)


def _target_name(node):
    t = node.target
    if node.op == "call_module":
        return type(node.graph.owning_module.get_submodule(t)).__name__
    if isinstance(t, str):
        return t
    mod = getattr(t, "__module__", None) or ""
    return f"{mod.replace('torch._C._nn', 'torch.nn.functional')}.{t.__name__}".lstrip(".")


# ---- handlers: handler(importer, node, canonical name, args, kwargs) -> tensor name(s) ----

BINARY = {"add": "add", "iadd": "add", "sub": "sub", "mul": "mul", "imul": "mul", "truediv": "div",
          "div": "div", "maximum": "max", "minimum": "min"}
UNARY = {n: n for n in ("relu", "gelu", "silu", "tanh", "sigmoid", "exp", "log", "sqrt", "rsqrt", "neg",
                        "abs", "reciprocal")}
UNARY.update({"SiLU": "silu", "ReLU": "relu", "GELU": "gelu", "Tanh": "tanh",
              "Sigmoid": "sigmoid"})


def binary(im, node, name, args, kw):
    kind = BINARY[name]
    a, b = args[0], args[1] if len(args) > 1 else kw.get("other")
    if kw.get("alpha", 1) != 1:
        raise ImportFailure("alpha is not supported")
    if isinstance(a, Ref) and isinstance(b, Ref):
        return im.out(node, kind, [a, b])
    if isinstance(a, Ref):
        return im.out(node, kind, [a], scalar=float(b))
    # scalar on the left: s - x = -x + s, s / x = reciprocal(x) * s
    if kind == "div" and a == 1:
        return im.out(node, "reciprocal", [b])
    if kind in ("sub", "div"):
        pre = im.g.op("neg" if kind == "sub" else "reciprocal", [b], node.name + "_pre", im.g.shape(b), im.g.dtype(b))
        return im.out(node, "add" if kind == "sub" else "mul", [pre], scalar=float(a))
    return im.out(node, kind, [b], scalar=float(a))


def unary(im, node, name, args, kw):
    return im.out(node, UNARY[name], [args[0]])


def erf(im, node, name, args, kw):
    """Only inside GELU (x * 0.5 * (1 + erf(x / sqrt 2))), which the rewrites turn into gelu."""
    out = im.out(node, "erf", [args[0]])
    im.g.ops[-1]["description"] = f"node {node.name} ({node.op} {_target_name(node)})"
    return out


def power(im, node, name, args, kw):
    exponent = args[1] if len(args) > 1 else kw.get("exponent")
    if isinstance(exponent, Ref) or not isinstance(args[0], Ref):
        raise ImportFailure("pow needs a tensor base and a number exponent")
    return im.out(node, "pow", [args[0]], exponent=float(exponent))


def clamp(im, node, name, args, kw):
    lo = args[1] if len(args) > 1 else kw.get("min")
    hi = args[2] if len(args) > 2 else kw.get("max")
    return im.out(node, "clamp", [args[0]], min=lo, max=hi)


def alias(im, node, name, args, kw):
    """Copies of the same data (casts included: the graph keeps one float dtype)."""
    return args[0]


def reduction(im, node, name, args, kw):
    dims = args[1] if len(args) > 1 else kw.get("dim", kw.get("axis"))
    keep = args[2] if len(args) > 2 else kw.get("keepdim", False)
    if dims is None:
        raise ImportFailure("a reduction over all dims is not supported (give dim)")
    rank = len(im.g.shape(args[0]))
    dims = sorted({d % rank for d in (dims if isinstance(dims, (list, tuple)) else [dims])})
    return im.g.reduce(name, args[0], dims, node.name, node.meta["tensor_meta"].shape, keep)


def matmul(im, node, name, args, kw):
    if len(im.g.shape(args[0])) < 2 or len(im.g.shape(args[1])) < 2:
        raise ImportFailure("matmul of a 1-D operand is not supported")
    return im.out(node, "matmul", [args[0], args[1]])


def linear(im, node, name, args, kw):
    if name == "Linear":
        mod = im.gm.get_submodule(node.target)
        inputs = [args[0], im.param(node.target + ".weight")] + ([im.param(node.target + ".bias")] if mod.bias is not None else [])
    else:
        bias = args[2] if len(args) > 2 else kw.get("bias")
        inputs = [args[0], args[1]] + ([bias] if bias is not None else [])
    return im.out(node, "linear", inputs)


def softmax(im, node, name, args, kw):
    if name == "Softmax":
        dim = im.gm.get_submodule(node.target).dim
    else:
        dim = args[1] if len(args) > 1 else kw.get("dim")
    return im.out(node, "softmax", [args[0]], dim=-1 if dim is None else dim)


def layer_norm(im, node, name, args, kw):
    if name == "LayerNorm":
        mod = im.gm.get_submodule(node.target)
        shape, eps = mod.normalized_shape, mod.eps
        params = [im.param(node.target + ".weight"), im.param(node.target + ".bias")] if mod.elementwise_affine else []
    else:
        shape = args[1]
        w, b = (list(args[2:4]) + [None, None])[:2]
        w, b, eps = kw.get("weight", w), kw.get("bias", b), kw.get("eps", args[4] if len(args) > 4 else 1e-5)
        params = [p for p in (w, b) if p is not None]
        if w is None and b is not None:
            raise ImportFailure("a layer_norm bias without a weight is not supported")
    if len(shape) != 1:
        raise ImportFailure("layer_norm over more than the last dim is not supported")
    return im.out(node, "layernorm", [args[0]] + params, eps=float(eps))


def embedding(im, node, name, args, kw):
    if name == "Embedding":
        return im.out(node, "embedding", [im.param(node.target + ".weight"), args[0]])
    return im.out(node, "embedding", [args[1], args[0]])


def reshape(im, node, name, args, kw):
    if list(node.meta["tensor_meta"].shape) == im.g.shape(args[0]):
        return args[0]
    return im.out(node, "reshape", [args[0]])


def transpose(im, node, name, args, kw):
    rank = len(im.g.shape(args[0]))
    if name == "permute":
        dims = list(args[1]) if len(args) == 2 and isinstance(args[1], (list, tuple)) else list(args[1:])
    elif name in ("t", "T"):
        dims = [1, 0] if rank == 2 else [0]
    else:
        dims = list(range(rank))
        i, j = args[1] % rank, args[2] % rank
        dims[i], dims[j] = dims[j], dims[i]
    if [d % rank for d in dims] == list(range(rank)):
        return args[0]
    return im.out(node, "transpose", [args[0]], dims=[d % rank for d in dims])


def cat(im, node, name, args, kw):
    tensors = list(args[0])
    dim = args[1] if len(args) > 1 else kw.get("dim", 0)
    if name == "stack":  # stack = unsqueeze each, then cat
        shape = list(im.g.shape(tensors[0]))
        dim %= len(shape) + 1
        shape.insert(dim, 1)
        tensors = [im.g.op("reshape", [t], f"{node.name}_{i}", shape, im.g.dtype(t)) for i, t in enumerate(tensors)]
    if len(tensors) == 1:
        return tensors[0]
    return im.out(node, "cat", tensors, dim=dim)


def expand(im, node, name, args, kw):
    return im.g.expand(args[0], list(node.meta["tensor_meta"].shape), node.name)


def repeat_interleave(im, node, name, args, kw):
    """x.repeat_interleave(n, dim): a size-1 dim after dim, expanded to n, merged back."""
    x, n = args[0], args[1] if len(args) > 1 else kw.get("repeats")
    dim = args[2] if len(args) > 2 else kw.get("dim")
    if not isinstance(n, int) or dim is None:
        raise ImportFailure("only a number of repeats along a given dim is supported")
    shape = list(im.g.shape(x))
    dim %= len(shape)
    single = shape[:dim + 1] + [1] + shape[dim + 1:]
    one = im.g.op("reshape", [x], node.name + "_u", single, im.g.dtype(x))
    many = im.g.expand(one, single[:dim + 1] + [n] + single[dim + 2:], node.name + "_e")
    return im.out(node, "reshape", [many])


def getitem(im, node, name, args, kw):
    """x[...] with ints, slices, None and ...: a slice op per sliced dim, then a reshape."""
    x, index = args
    if isinstance(x, list):  # an element of a tuple result (split, chunk)
        return x[index]
    index = index if isinstance(index, tuple) else (index,)
    if any(isinstance(i, (Ref, list)) for i in index):
        raise ImportFailure("indexing with tensors is not supported (only ints, slices, None, ...)")
    shape = im.g.shape(x)
    if Ellipsis in index:
        e = index.index(Ellipsis)
        explicit = len([i for i in index if i is not None and i is not Ellipsis])
        index = index[:e] + (slice(None),) * (len(shape) - explicit) + index[e + 1:]
    steps = []  # (dim, start, stop, step) that change the tensor
    for d, i in enumerate(i for i in index if i is not None):
        if isinstance(i, int):
            i = slice(i % shape[d], i % shape[d] + 1)
        start, stop, step = i.indices(shape[d])
        if (start, stop, step) != (0, shape[d], 1):
            steps.append((d, start, stop, step))
    target = list(node.meta["tensor_meta"].shape) or [1]
    need_reshape = _sliced_shape(shape, steps) != target
    for n, (d, start, stop, step) in enumerate(steps):
        last = n == len(steps) - 1 and not need_reshape
        x = im.g.slice(x, d, start, stop, step, node.name if last else f"{node.name}_s{n}")
    if need_reshape:  # ints drop dims, None adds them
        x = im.out(node, "reshape", [x])
    return x


def _sliced_shape(shape, steps):
    shape = list(shape)
    for d, start, stop, step in steps:
        shape[d] = len(range(start, stop, step))
    return shape


def split(im, node, name, args, kw):
    x = args[0]
    dim = (args[2] if len(args) > 2 else kw.get("dim", 0)) % len(im.g.shape(x))
    metas = node.meta["tensor_meta"]
    return im.g.split(x, dim, [f"{node.name}_{i}" for i in range(len(metas))], [m.shape for m in metas])


def where(im, node, name, args, kw):
    if not all(isinstance(a, Ref) for a in args[:3]):
        raise ImportFailure("where needs three tensors")
    return im.out(node, "where", list(args[:3]))


def sdpa(im, node, name, args, kw):
    q, k, v = args[:3]
    mask = args[3] if len(args) > 3 else kw.get("attn_mask")
    causal = kw.get("is_causal", args[5] if len(args) > 5 else False)
    return im.out(node, "sdpa", [q, k, v] + ([mask] if mask is not None else []), causal=bool(causal) or None,
                  scale=kw.get("scale"))


TABLE = {}
for _names, _fn in (
        (BINARY, binary), (UNARY, unary), (("pow",), power), (("erf",), erf), (("clamp", "clip"), clamp),
        (("contiguous", "to", "float", "half", "type_as", "clone", "detach", "dropout", "Dropout", "Identity"), alias),
        (("sum", "mean", "amax"), reduction), (("matmul", "bmm", "mm"), matmul), (("linear", "Linear"), linear),
        (("softmax", "Softmax"), softmax), (("layer_norm", "LayerNorm"), layer_norm),
        (("embedding", "Embedding"), embedding),
        (("view", "reshape", "flatten", "unsqueeze", "squeeze", "view_as", "reshape_as"), reshape),
        (("permute", "transpose", "t", "T"), transpose), (("cat", "concat", "stack"), cat),
        (("expand", "expand_as"), expand), (("repeat_interleave",), repeat_interleave), (("getitem",), getitem),
        (("split", "chunk"), split), (("where",), where), (("scaled_dot_product_attention",), sdpa)):
    for _n in _names:
        TABLE[_n] = _fn


def _handler(gm, node):
    """The canonical name of a node's target and its handler (None if unsupported)."""
    if node.op == "call_module":
        name = type(gm.get_submodule(node.target)).__name__
    elif node.op == "call_method":
        name = node.target
    elif node.target is getattr:
        name = node.args[1]
    else:
        name = getattr(node.target, "__name__", str(node.target))
        if node.target is operator.matmul:
            name = "matmul"
    return name, TABLE.get(name)


class _Prop(ShapeProp):
    """Shape propagation that also keeps non-tensor results (sizes, dtypes) for the arguments."""

    def run_node(self, n):
        result = super().run_node(n)
        if not isinstance(result, torch.Tensor):
            n.meta["value"] = result
        return result


def import_module(module, inputs, name=None, cores=32):
    """Traces `module` (an nn.Module instance) on inputs {forward arg: '2x128x4096:fp16' or
    (shape, dtype)} and returns the dfsim.ops graph as a dict."""
    specs = {k: parse_input_spec(v) for k, v in inputs.items()}
    floats = {d for _, d in specs.values() if d != "int32"}
    if len(floats) > 1:
        raise ImportFailure(f"inputs mix float dtypes {', '.join(sorted(floats))}: give every float input "
                            "the same one (the graph and its weights keep one)")
    args = list(inspect.signature(module.forward).parameters)
    missing, extra = [a for a in args if a not in specs], [a for a in specs if a not in args]
    if missing or extra:
        raise ImportFailure(f"forward takes ({', '.join(args)}); "
                            + (f"missing --input {', '.join(missing)}" if missing else f"no argument {', '.join(extra)}"))
    gm = _trace(module.eval(), specs)
    rng = torch.Generator().manual_seed(0)  # values do not reach the graph; fixed all the same
    # A module built on the meta device (weights without memory, for models larger than the
    # host's RAM) propagates shapes on meta inputs.
    device = next((t.device for t in list(module.parameters()) + list(module.buffers())), torch.device("cpu"))
    examples = [_example(*specs[a], rng).to(device) for a in args]
    with torch.no_grad():
        try:
            with contextlib.redirect_stderr(io.StringIO()):  # ShapeProp prints a traceback
                _Prop(gm).propagate(*examples)
        except Exception as e:  # the module's own error on these shapes
            cause = e.__cause__ or e.__context__ or e
            raise ImportFailure(f"forward fails on the given input shapes: {str(cause).splitlines()[0]}")
    im = Importer(gm, floats.pop() if floats else "fp16")
    outputs = []
    im.run(args, outputs)
    fuse_patterns(im.g, outputs)
    name = name or type(module).__name__
    return im.g.document(name, outputs, f"imported from PyTorch module {name} by tools/import_torch.py", cores)


def _trace(module, specs):
    """torch.fx.symbolic_trace; if the forward computes with sizes (`b, t, _ = x.shape`) or
    unpacks tuples (which 1.13's tracer cannot on Python 3.11), the meta tracer, which knows
    the input shapes and writes sizes into the graph as numbers."""
    try:
        return torch.fx.symbolic_trace(module)
    except Exception as e:  # torch.fx raises TraceError, TypeError, ... for untraceable Python
        error = e
    try:
        from torch.fx.experimental import meta_tracer

        class Proxy(meta_tracer.MetaProxy):
            def __iter__(self):  # a tuple or size of known length unpacks element by element
                meta = getattr(self, "_tensor_meta", None)
                if isinstance(meta, (tuple, list)):
                    return iter([self[i] for i in range(len(meta))])
                return super().__iter__()

        class Tracer(meta_tracer.MetaTracer):
            def proxy(self, node):
                return Proxy(node, self)

        metas = {k: torch.empty(s, dtype=TORCH_DTYPES[d], device="meta") for k, (s, d) in specs.items()}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tracer = Tracer()
            graph = tracer.trace(module, metas)
        return torch.fx.GraphModule(tracer.root, graph, type(module).__name__)
    except Exception:  # report the plain tracer's reason, the usual one
        raise ImportFailure(f"torch.fx cannot trace {type(module).__name__}: {str(error).splitlines()[0]}")


def _example(shape, dtype, rng):
    if dtype == "int32":
        return torch.zeros(shape, dtype=torch.long)
    return torch.randn(shape, dtype=TORCH_DTYPES[dtype], generator=rng)


def _load_class(path, cls):
    check_source(path)
    # A loader is found by the file's suffix: a module is a .py file (not .txt, .json, ...).
    loader = importlib.machinery.SourceFileLoader(os.path.splitext(os.path.basename(path))[0], path)
    spec = importlib.util.spec_from_file_location(loader.name, path, loader=loader)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    try:
        spec.loader.exec_module(mod)
    except SystemExit as e:  # sys.exit() at import: no graph, and not a success
        raise ImportFailure(f"cannot load: it exits when imported (SystemExit: {e.code})")
    except Exception as e:
        raise ImportFailure(f"cannot load: {type(e).__name__}: {e}")
    c = getattr(mod, cls, None)
    if not (isinstance(c, type) and issubclass(c, nn.Module)):
        found = sorted(n for n, v in vars(mod).items() if isinstance(v, type) and issubclass(v, nn.Module)
                       and v.__module__ == mod.__name__)
        raise ImportFailure(f"no nn.Module class '{cls}' (found: {', '.join(found) or 'none'})")
    try:
        return c()
    except (Exception, SystemExit) as e:
        raise ImportFailure(f"{cls}() failed: {type(e).__name__}: {e}")


def main():
    ap = parser(__doc__, "FILE.py", "a forward argument's shape", "the class name")
    ap.add_argument("--module", required=True, metavar="NAME", help="nn.Module class in FILE.py (built with no arguments)")
    a = ap.parse_args()
    run_cli(a, lambda specs: import_module(_load_class(a.source, a.module), specs, a.name, a.cores))


if __name__ == "__main__":
    main()
