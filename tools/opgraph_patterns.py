"""Rewrites on a built op graph: patterns that are one dfsim op (GELU from erf, SiLU, RMSNorm,
a decomposed LayerNorm, RoPE, a transposed matmul operand, softmax attention as sdpa), shared
by both importers."""
from opgraph import ImportFailure

HELPER_OPS = ("erf",)  # emitted only for the rewrites below to replace; an error if left over


def _users(ops):
    users = {}
    for op in ops:
        for t in op["inputs"]:
            users[t] = users.get(t, 0) + 1
    return users


def _producers(ops):
    return {out: op for op in ops for out in op["outputs"]}


class _Matcher:
    """Looks ops up by output; an intermediate matches only if nothing else reads it."""

    def __init__(self, graph, outputs):
        self.prod = _producers(graph.ops)
        self.users = _users(graph.ops)
        self.keep = set(outputs) | set(graph.inputs)
        self.graph = graph

    def op(self, tensor, kinds, single_use=True):
        op = self.prod.get(tensor)
        if op is None or op["op"] not in kinds:
            return None
        if single_use and (self.users.get(tensor, 0) != 1 or tensor in self.keep):
            return None
        return op


def _scalar(op, value=None):
    s = op.get("attrs", {}).get("scalar") if len(op["inputs"]) == 1 else None
    return s if value is None or s == value else None


def _rmsnorm_at(m, op):
    """mul(x, rsqrt(mean(x^2, -1, keepdim) + eps)) [* w] -> rmsnorm(x[, w])."""
    weight, norm = None, op
    if op["op"] == "mul" and len(op["inputs"]) == 2:
        for i in (0, 1):
            w, y = op["inputs"][i], op["inputs"][1 - i]
            inner = m.op(y, ("mul",))
            if w in m.graph.inputs and len(m.graph.shape(w)) == 1 and inner:
                weight, norm = w, inner
                break
    if norm["op"] != "mul" or len(norm["inputs"]) != 2:
        return None
    for i in (0, 1):
        x, r = norm["inputs"][i], norm["inputs"][1 - i]
        chain = _rsqrt_chain(m, r, x)
        if chain is not None:
            eps, fused = chain
            if weight and m.graph.shape(weight)[0] != m.graph.shape(x)[-1]:
                return None
            fused += [norm] + ([op] if weight else [])
            return fused, {"op": "rmsnorm", "inputs": [x] + ([weight] if weight else []),
                           "outputs": op["outputs"], "attrs": {"eps": eps}}
    return None


def _rsqrt_chain(m, r, x):
    """r = rsqrt(mean(x*x) + eps) in any of its spellings -> (eps, ops) or None."""
    rs = m.op(r, ("rsqrt",))
    chain = [rs] if rs else []
    if rs is None:
        rec = m.op(r, ("reciprocal",))
        sq = rec and m.op(rec["inputs"][0], ("sqrt",))
        if not sq:
            return None
        chain, rs = [rec, sq], sq
    add = m.op(rs["inputs"][0], ("add",))
    eps = add and _scalar(add)
    mean = add and m.op(add["inputs"][0], ("mean",))
    if eps is None or not mean or mean.get("attrs", {}).get("keepdim") is not True:
        return None
    if mean["attrs"].get("dim", -1) not in (-1, len(m.graph.shape(x)) - 1):
        return None
    sq = m.op(mean["inputs"][0], ("pow", "mul"))
    if not sq or (sq["op"] == "pow" and (sq["inputs"] != [x] or sq["attrs"]["exponent"] != 2)) \
            or (sq["op"] == "mul" and sq["inputs"] != [x, x]):
        return None
    if not 0 <= eps <= 1:
        return None
    return eps, chain + [add, mean, sq]


def _slice_of(m, t, x):
    """(start, end) if t = x[..., start:end] along the last dim (step 1), else None."""
    op = m.op(t, ("slice",))
    if not op or op["inputs"] != [x]:
        return None
    a, shape = op.get("attrs", {}), m.graph.shape(x)
    if a.get("dim", 0) % len(shape) != len(shape) - 1 or a.get("step", 1) != 1:
        return None
    d = shape[-1]
    start, end = a.get("start", 0), a.get("end", d)
    start, end = start + d if start < 0 else start, end + d if end < 0 else min(end, d)
    return op, start, end


def _rope_at(m, op):
    """add(mul(x, cos), mul(cat(-x[..., D/2:], x[..., :D/2]), sin)) -> rope(x, cos, sin), with
    cos and sin reshaped to [T, D] when they come with leading 1s."""
    if op["op"] != "add" or len(op["inputs"]) != 2:
        return None
    for i in (0, 1):
        a, b = m.op(op["inputs"][i], ("mul",)), m.op(op["inputs"][1 - i], ("mul",))
        if not a or not b or len(a["inputs"]) != 2 or len(b["inputs"]) != 2:
            continue
        for j in (0, 1):
            for k in (0, 1):
                found = _rope_parts(m, a["inputs"][j], a["inputs"][1 - j], b["inputs"][k], b["inputs"][1 - k])
                if found:
                    x, cos, sin, parts = found
                    td = m.graph.shape(x)[-2:]
                    tables = [_as_shape(m, t, td, f"{op['outputs'][0]}_{n}") for t, n in ((cos, "cos"), (sin, "sin"))]
                    rope = {"op": "rope", "inputs": [x] + [t for t, _ in tables], "outputs": op["outputs"]}
                    return parts + [a, b, op], [r for _, r in tables if r] + [rope]
    return None


def _as_shape(m, t, shape, name):
    """(t, None) if t has the shape, else (a new name, its reshape op): [1, 1, T, D] -> [T, D]."""
    if m.graph.shape(t) == shape:
        return t, None
    m.graph.tensor(name, shape, m.graph.dtype(t))
    return name, {"op": "reshape", "inputs": [t], "outputs": [name]}


def _rope_parts(m, x, cos, rot, sin):
    cat = m.op(rot, ("cat",))
    if not cat or len(cat["inputs"]) != 2 or cat.get("attrs", {}).get("dim", 0) not in (-1, len(m.graph.shape(x)) - 1):
        return None
    neg = m.op(cat["inputs"][0], ("neg",))
    hi, lo = neg and _slice_of(m, neg["inputs"][0], x), _slice_of(m, cat["inputs"][1], x)
    shape = m.graph.shape(x)
    d = shape[-1]
    if not hi or not lo or d % 2 or (hi[1], hi[2], lo[1], lo[2]) != (d // 2, d, 0, d // 2):
        return None
    for t in (cos, sin):  # [T, D], or that with leading 1s ([1, 1, T, D] as Hugging Face's unsqueeze makes)
        ts = m.graph.shape(t)
        if ts[-2:] != shape[-2:] or any(n != 1 for n in ts[:-2]) or len(ts) > len(shape):
            return None
    return x, cos, sin, [cat, neg, hi[0], lo[0]]


def _matmul_transpose_at(m, op):
    """matmul(a, transpose(y, P)) -> matmul(a, transpose(y, P'), transpose_b) where P' is P
    with its last two entries swapped: no transpose at all when P' is the identity (x.T @), a
    cheaper one when P' keeps the last dim, which P moved (ONNX's k.permute(0, 2, 3, 1))."""
    if op["op"] != "matmul" or op.get("attrs", {}).get("transpose_b"):
        return None
    t = m.op(op["inputs"][1], ("transpose",))
    if not t:
        return None
    y, rank = t["inputs"][0], len(m.graph.shape(t["inputs"][0]))
    dims = [d % rank for d in t["attrs"]["dims"]]
    swapped = dims[:-2] + [dims[-1], dims[-2]]
    mm = dict(op, attrs=dict(op.get("attrs", {}), transpose_b=True))
    if swapped == list(range(rank)):
        return [t, op], dict(mm, inputs=[op["inputs"][0], y])
    if swapped[-1] != rank - 1 or dims[-1] == rank - 1:  # only to keep the last (stick) dim in place
        return None
    out = t["outputs"][0] + "_t"
    m.graph.tensor(out, [m.graph.shape(y)[d] for d in swapped], m.graph.dtype(y))
    return [t, op], [{"op": "transpose", "inputs": [y], "outputs": [out], "attrs": {"dims": swapped}},
                     dict(mm, inputs=[op["inputs"][0], out])]


def _layernorm_at(m, op):
    """(x - mean(x)) / sqrt(mean((x - mean(x))^2) + eps) [* w] [+ b] over the last dim, as
    exporters before ONNX opset 17 write it -> layernorm(x[, w[, b]])."""
    bias = weight = None
    root = op
    if op["op"] == "add" and len(op["inputs"]) == 2 and op["inputs"][1] in m.graph.inputs:
        bias, op = op["inputs"][1], m.op(op["inputs"][0], ("mul",))
    if op and op["op"] == "mul" and len(op["inputs"]) == 2 and op["inputs"][1] in m.graph.inputs:
        weight, op = op["inputs"][1], m.op(op["inputs"][0], ("div",))
    if not op or op["op"] != "div" or len(op["inputs"]) != 2 or (bias and not weight):
        return None
    d, den = op["inputs"]
    sub = m.op(d, ("sub",), single_use=False)
    if not sub or m.users.get(d) != 2 or d in m.keep:
        return None
    x, mu = sub["inputs"]
    mean1 = m.op(mu, ("mean",), single_use=False)
    sq = m.op(den, ("sqrt",))
    add = sq and m.op(sq["inputs"][0], ("add",))
    eps = add and _scalar(add)
    mean2 = add and m.op(add["inputs"][0], ("mean",))
    p = mean2 and m.op(mean2["inputs"][0], ("pow",))
    last = len(m.graph.shape(x)) - 1
    if not mean1 or mean1["inputs"] != [x] or m.users.get(mu) != 1 or eps is None or not p \
            or p["inputs"] != [d] or p["attrs"].get("exponent") != 2 or not 0 <= eps <= 1:
        return None
    if any(r["attrs"].get("dim", -1) not in (-1, last) or r["attrs"].get("keepdim") is not True for r in (mean1, mean2)):
        return None
    if any(w and m.graph.shape(w) != [m.graph.shape(x)[-1]] for w in (weight, bias)):
        return None
    parts = [mean1, sub, p, mean2, add, sq, op] + [o for o in (m.prod.get(root["inputs"][0]) if bias else None, root)
                                                   if o is not None and o is not op]
    return parts, {"op": "layernorm", "inputs": [x] + [w for w in (weight, bias) if w], "outputs": root["outputs"],
                   "attrs": {"eps": eps}}


def _silu_at(m, op):
    """mul(x, sigmoid(x)) -> silu(x) (how ONNX exports F.silu)."""
    if op["op"] != "mul" or len(op["inputs"]) != 2:
        return None
    for i in (0, 1):
        s = m.op(op["inputs"][i], ("sigmoid",))
        if s and s["inputs"] == [op["inputs"][1 - i]]:
            return [s, op], {"op": "silu", "inputs": s["inputs"], "outputs": op["outputs"]}
    return None


def _erf_term(m, t, x):
    """t = 1 + erf(x / sqrt(2)) (or erf(x * 1/sqrt(2)))?"""
    add = m.op(t, ("add",))
    erf = add and _scalar(add, 1.0) is not None and m.op(add["inputs"][0], ("erf",))
    arg = erf and m.op(erf["inputs"][0], ("div", "mul"))
    if not arg or arg["inputs"] != [x]:
        return None
    s = _scalar(arg)
    if s is None or abs((s if arg["op"] == "div" else 1 / s) - 2 ** 0.5) > 1e-4:
        return None
    return [add, erf, arg]


def _gelu_at(m, op):
    """x * (1 + erf(x / sqrt(2))) * 0.5, in the orders exporters and BERT code write it -> gelu(x)."""
    if op["op"] != "mul":
        return None
    if _scalar(op, 0.5) is not None:  # mul(mul(x, 1 + erf(..)), 0.5)
        inner = m.op(op["inputs"][0], ("mul",))
        pairs = [(inner, inner["inputs"][i], inner["inputs"][1 - i]) for i in (0, 1)] if inner and len(inner["inputs"]) == 2 else []
    elif len(op["inputs"]) == 2:  # mul(mul(x, 0.5), 1 + erf(..))
        pairs = []
        for i in (0, 1):
            half = m.op(op["inputs"][i], ("mul",))
            if half and _scalar(half, 0.5) is not None:
                pairs.append((half, half["inputs"][0], op["inputs"][1 - i]))
    else:
        return None
    for other, x, term in pairs:
        parts = _erf_term(m, term, x)
        if parts:
            return parts + [other, op], {"op": "gelu", "inputs": [x], "outputs": op["outputs"]}
    return None


def _unrepeated_kv(m, t):
    """The KV tensor before repeat_kv (reshape(cat([reshape(kv)] * n, dim 2))), or t itself."""
    r = m.op(t, ("reshape",))
    c = r and m.op(r["inputs"][0], ("cat",))
    u = c and len(set(c["inputs"])) == 1 and c["attrs"].get("dim") == 2 and m.op(c["inputs"][0], ("reshape",), single_use=False)
    if not u:
        return t, []
    kv, five = u["inputs"][0], m.graph.shape(u["outputs"][0])
    if len(five) != 5 or five[2] != 1 or m.graph.shape(kv) != five[:2] + five[3:] or m.users.get(u["outputs"][0]) != len(c["inputs"]):
        return t, []
    return kv, [r, c, u]


def _sdpa_at(m, op):
    """matmul(softmax(matmul(q, k^T) * scale [+ mask]), v) -> sdpa(q, k, v[, mask]) with scale;
    K and V repeated for grouped-query heads (repeat_kv) are taken before the repeat."""
    if op["op"] != "matmul" or op.get("attrs"):
        return None
    sm = m.op(op["inputs"][0], ("softmax",))
    if not sm or sm.get("attrs", {}).get("dim", -1) not in (-1, 3) or len(m.graph.shape(op["outputs"][0])) != 4:
        return None
    parts, t, mask = [sm], sm["inputs"][0], []
    add = m.op(t, ("add",))
    for i in (0, 1) if add and len(add["inputs"]) == 2 else ():
        if len(m.graph.shape(add["inputs"][1 - i])) == 2 and m.op(add["inputs"][i], ("mul", "div", "matmul")):
            parts, t, mask = parts + [add], add["inputs"][i], [add["inputs"][1 - i]]
            break
    scale = 1.0
    sc = m.op(t, ("mul", "div"))
    if sc and _scalar(sc) and _scalar(sc) > 0:
        scale = _scalar(sc) if sc["op"] == "mul" else 1 / _scalar(sc)
        parts, t = parts + [sc], sc["inputs"][0]
    qk = m.op(t, ("matmul",))
    if not qk or qk.get("attrs") != {"transpose_b": True}:
        return None
    k, k_parts = _unrepeated_kv(m, qk["inputs"][1])
    v, v_parts = _unrepeated_kv(m, op["inputs"][1])
    if m.graph.shape(k) != m.graph.shape(v):
        return None
    return parts + [qk] + k_parts + v_parts + [op], {
        "op": "sdpa", "inputs": [qk["inputs"][0], k, v] + mask, "outputs": op["outputs"], "attrs": {"scale": scale}}


REWRITES = (_gelu_at, _silu_at, _rmsnorm_at, _layernorm_at, _rope_at, _matmul_transpose_at, _sdpa_at)


def fuse_patterns(graph, outputs):
    """Replaces each matched pattern by its op(s), in place of the pattern's last op."""
    for rewrite in REWRITES:
        m = _Matcher(graph, outputs)
        replaced, dropped = {}, set()
        for op in reversed(graph.ops):  # the outermost match first (a norm's weight mul)
            hit = None if id(op) in dropped else rewrite(m, op)
            if hit and not any(id(o) in dropped for o in hit[0]):
                dropped.update(id(o) for o in hit[0])
                replaced[id(op)] = hit[1] if isinstance(hit[1], list) else [hit[1]]
        graph.ops = [new for op in graph.ops if id(op) in replaced or id(op) not in dropped
                     for new in replaced.get(id(op), [op])]
    for op in graph.ops:  # a helper op no pattern took (erf outside GELU)
        if op["op"] in HELPER_OPS:
            raise ImportFailure(f"{op['description']}: not in the dfsim op set, and not part of a GELU")
