"""A tiny Llama-style decoder block in plain torch, for the importer tests (no downloads)."""
import torch
from torch import nn
import torch.nn.functional as F

HIDDEN, HEADS, KV_HEADS, INTERMEDIATE, SEQ = 256, 4, 2, 512, 16
HEAD_DIM = HIDDEN // HEADS


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.rand(dim))

    def forward(self, x):
        x32 = x.to(torch.float32)
        var = x32.pow(2).mean(-1, keepdim=True)
        return self.weight * (x32 * torch.rsqrt(var + self.eps)).to(x.dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def repeat_kv(x, n_rep):
    b, h, s, d = x.shape[0], x.shape[1], x.shape[2], x.shape[3]
    return x[:, :, None, :, :].expand(b, h, n_rep, s, d).reshape(b, h * n_rep, s, d)


class TinyLlamaBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.input_layernorm = RMSNorm(HIDDEN)
        self.q_proj = nn.Linear(HIDDEN, HEADS * HEAD_DIM, bias=False)
        self.k_proj = nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM, bias=False)
        self.v_proj = nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM, bias=False)
        self.o_proj = nn.Linear(HEADS * HEAD_DIM, HIDDEN, bias=False)
        self.post_attention_layernorm = RMSNorm(HIDDEN)
        self.gate_proj = nn.Linear(HIDDEN, INTERMEDIATE, bias=False)
        self.up_proj = nn.Linear(HIDDEN, INTERMEDIATE, bias=False)
        self.down_proj = nn.Linear(INTERMEDIATE, HIDDEN, bias=False)

    def sizes(self, x):
        return x.shape[0], x.shape[1]

    def rope_tables(self, cos, sin):
        return cos, sin

    def repeat(self, kv):
        return repeat_kv(kv, HEADS // KV_HEADS)

    def forward(self, x, cos, sin, mask):
        b, t = self.sizes(x)
        h = self.input_layernorm(x)
        q = self.q_proj(h).view(b, t, HEADS, HEAD_DIM).transpose(1, 2)
        k = self.k_proj(h).view(b, t, KV_HEADS, HEAD_DIM).transpose(1, 2)
        v = self.v_proj(h).view(b, t, KV_HEADS, HEAD_DIM).transpose(1, 2)
        cos, sin = self.rope_tables(cos, sin)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        k, v = self.repeat(k), self.repeat(v)
        scores = torch.matmul(q, k.transpose(2, 3)) / (HEAD_DIM ** 0.5) + mask
        probs = F.softmax(scores, dim=-1)
        attn = torch.matmul(probs, v).transpose(1, 2).reshape(b, t, HIDDEN)
        x = x + self.o_proj(attn)
        h = self.post_attention_layernorm(x)
        return x + self.down_proj(F.silu(self.gate_proj(h)) * self.up_proj(h))


class TinyLlamaBlockVariants(TinyLlamaBlock):
    """The same block written other ways: sizes unpacked as Hugging Face code does
    (`b, t, _ = x.shape`, which torch.fx's plain tracer cannot follow: the importer falls back
    to its meta tracer), the rotary tables as [1, 1, T, D], and repeat_interleave for GQA."""

    def sizes(self, x):
        b, t, _ = x.shape
        return b, t

    def rope_tables(self, cos, sin):
        return cos[None, None], sin[None, None]

    def repeat(self, kv):
        return kv.repeat_interleave(HEADS // KV_HEADS, dim=1)
