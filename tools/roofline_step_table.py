#!/usr/bin/env python3
"""Write a ROOFLINE-ESTIMATE step table for `dfsim serve --step-table` (docs/serving.md).

Not a measurement and not a dfsim simulation: each step's time is max(off-chip bytes / peak
bandwidth, MACs / peak MAC rate) of a decoder model's forward step, from the model file's
hyperparameters and the card's nominal figures. It exists so that the serving scheduler can be
run and tested before `dfsim gen` (issue #10) gives simulated step times; replace it with
measured times or with the simulated provider when they exist.

Usage: tools/roofline_step_table.py workloads/models/llama-3.1-8b.json -o FILE.csv
         [--peak-macs-per-ns 49152] [--peak-gbps 204.8] [--block-size 64] [--chunk 512]
         [--batches 4,8,16] [--max-kv 4096]
"""
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from opgraph import ImportFailure, check_source, write_text  # noqa: E402
from tool_errors import BadInput, guard, read_text  # noqa: E402
import tool_errors  # noqa: E402


def load_model(path):
    check_source(path)
    try:
        text = read_text(path, "a dfsim.model file")
    except BadInput as e:
        raise ImportFailure(str(e).split(": ", 1)[-1]) from None
    text = re.sub(r"^\s*//.*$", "", text, flags=re.M)  # the model files allow // comments
    try:
        m = json.loads(text)
    except ValueError as e:
        raise ImportFailure(f"not a model file: {e}")
    if not isinstance(m, dict):
        raise ImportFailure("not a model file: expected a JSON object")
    if m.get("format") != "dfsim.model":  # an op graph or a config has no hyperparameters
        raise ImportFailure(f"/format: expected \"dfsim.model\" (a model file), got {json.dumps(m.get('format'))}")
    if m.get("architecture", "decoder") != "decoder":
        raise ImportFailure(f"/architecture: {json.dumps(m['architecture'])}: expected a decoder model "
                            "(an encoder has no decode step to tabulate)")
    m.setdefault("num_kv_heads", m.get("num_heads"))  # docs/workloads.md: the default
    for k in ("hidden_size", "num_layers", "num_heads", "num_kv_heads", "intermediate_size", "vocab_size"):
        if not isinstance(m.get(k), int) or isinstance(m.get(k), bool) or m[k] < 1:
            raise ImportFailure(f"/{k}: expected an integer >= 1, got {json.dumps(m.get(k))}")
    return m


def check_options(a):
    """The numeric options: positive and finite (--block-size 0 looped forever)."""
    for flag, v in (("--peak-macs-per-ns", a.peak_macs_per_ns), ("--peak-gbps", a.peak_gbps)):
        if not (0 < v < float("inf")):
            raise ImportFailure(f"{flag} {v}: expected a positive number")
    for flag, v in (("--block-size", a.block_size), ("--chunk", a.chunk), ("--max-kv", a.max_kv)):
        if not 1 <= v <= 1 << 24:
            raise ImportFailure(f"{flag} {v}: expected an integer in [1, 16777216]")
    try:
        a.batch_list = [int(x) for x in a.batches.split(",")]
    except ValueError:
        a.batch_list = []
    if not a.batch_list or min(a.batch_list) < 1 or max(a.batch_list) > 1 << 20:
        raise ImportFailure(f"--batches {a.batches}: expected integers >= 1 separated by commas")
    twice = sorted({b for b in a.batch_list if a.batch_list.count(b) > 1})
    if twice:  # duplicate rows, which dfsim serve refuses
        raise ImportFailure(f"--batches {a.batches}: batch {twice[0]} given twice")
    if a.chunk % a.block_size:  # a prefill chunk is whole KV blocks
        raise ImportFailure(f"--chunk {a.chunk}: expected a multiple of --block-size {a.block_size}")


def main():
    ap = tool_errors.ArgParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model")
    ap.add_argument("-o", "--out", required=True)
    # configs/spyre.json: 32 cores x 2 corelets x 8x8 PEs x 8 fp16 ways at 1.5 GHz = 49152 MAC/ns;
    # LPDDR5 8 channels x 32 bit x 6400 MT/s = 204.8 GB/s.
    ap.add_argument("--peak-macs-per-ns", type=float, default=49152.0)
    ap.add_argument("--peak-gbps", type=float, default=204.8)
    ap.add_argument("--config-name", default="spyre")
    ap.add_argument("--block-size", type=int, default=64)
    ap.add_argument("--chunk", type=int, default=512)
    ap.add_argument("--batches", default="4,8,16")
    ap.add_argument("--max-kv", type=int, default=4096)
    a = ap.parse_args()
    try:
        check_options(a)
        write_text(table(a, load_model(a.model)), a.out)
    except (ImportFailure, KeyError, OSError) as e:  # one line, exit 2, nothing half-written
        what = f"missing key {e}" if isinstance(e, KeyError) else str(e)
        print(f"{a.model}: {what}", file=sys.stderr)
        return 2
    return 0


def table(a, m):
    """The step table's text for model `m` under the options `a`."""
    h, layers = m["hidden_size"], m["num_layers"]
    heads, kv_heads = m["num_heads"], m["num_kv_heads"]
    hd = m.get("head_dim", h // heads)
    inter, vocab = m["intermediate_size"], m["vocab_size"]
    dbytes = 1 if m.get("dtype", "fp16") == "fp8" else 2
    per_layer = h * heads * hd * 2 + 2 * h * kv_heads * hd + 3 * h * inter + 2 * h
    params = vocab * h * (1 if m.get("tie_word_embeddings") else 2) + layers * per_layer + h
    weight_bytes = params * dbytes
    matmul_macs_per_token = layers * (h * heads * hd * 2 + 2 * h * kv_heads * hd + 3 * h * inter) + h * vocab
    kv_bytes_per_token = 2 * layers * kv_heads * hd * dbytes
    attn_macs_per_query_kv = 2 * layers * heads * hd  # q.k and p.v per query token per KV token

    kvs = []
    k = a.block_size
    while k <= a.max_kv:
        kvs.append(k)
        k *= 2
    rows = []
    for b in a.batch_list:
        for kv in kvs:
            # decode: b sequences, one query token each, each reading kv tokens of cache
            macs = b * (matmul_macs_per_token + kv * attn_macs_per_query_kv)
            nbytes = weight_bytes + b * (kv + 1) * kv_bytes_per_token
            rows.append(("decode", b, kv, 1, max(nbytes / a.peak_gbps / 1e6, macs / a.peak_macs_per_ns / 1e6)))
    for kv in kvs:
        if kv < a.chunk:
            continue
        # prefill: one chunk of `chunk` query tokens, the last `chunk` of kv tokens (the cache holds
        # the kv - chunk tokens of earlier chunks); query i sees kv - chunk + i + 1 keys (causal);
        # logits of the last token only
        attended = a.chunk * (kv - a.chunk) + a.chunk * (a.chunk + 1) // 2
        macs = a.chunk * (matmul_macs_per_token - h * vocab) + h * vocab + attended * attn_macs_per_query_kv
        nbytes = weight_bytes + kv * kv_bytes_per_token
        rows.append(("prefill", 1, kv, a.chunk, max(nbytes / a.peak_gbps / 1e6, macs / a.peak_macs_per_ns / 1e6)))
    out = []
    out.append("# dfsim step table (docs/serving.md)\n")
    out.append("# ROOFLINE ESTIMATE - not a measurement, not a dfsim simulation: each step is\n")
    out.append("#   max(off-chip bytes / %.1f GB/s, MACs / %.0f MAC/ns), weights %.2f GB fp16 read once per step,\n"
            % (a.peak_gbps, a.peak_macs_per_ns, weight_bytes / 1e9))
    out.append("#   KV cache %d B/token; a prefill chunk's query i sees the cache and the chunk's keys\n"
               "#   up to i (causal). No overheads, no efficiency.\n" % kv_bytes_per_token)
    out.append("#   Written by tools/roofline_step_table.py %s; replace with measured or simulated times.\n" % a.model)
    out.append("# model: %s\n# config: %s\n# tp: 1\n# block_size: %d\n# prefill_chunk: %d\n"
            % (m.get("name", a.model), a.config_name, a.block_size, a.chunk))
    out.append("# source: roofline estimate (tools/roofline_step_table.py), not measured\n")
    out.append("phase,batch,kv_tokens,query_tokens,step_ms\n")
    out += ["%s,%d,%d,%d,%.6f\n" % r for r in rows]
    return "".join(out)


if __name__ == "__main__":
    guard(main)
