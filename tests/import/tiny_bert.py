"""A tiny BERT-style encoder layer in plain torch, for the importer tests (no downloads)."""
import math

import torch
from torch import nn

HIDDEN, HEADS, INTERMEDIATE, SEQ = 128, 4, 512, 16
HEAD_DIM = HIDDEN // HEADS


class TinyBertLayer(nn.Module):
    def __init__(self):
        super().__init__()
        self.query, self.key, self.value = (nn.Linear(HIDDEN, HIDDEN) for _ in range(3))
        self.attn_out = nn.Linear(HIDDEN, HIDDEN)
        self.attn_norm = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.intermediate = nn.Linear(HIDDEN, INTERMEDIATE)
        self.output = nn.Linear(INTERMEDIATE, HIDDEN)
        self.out_norm = nn.LayerNorm(HIDDEN, eps=1e-12)
        self.act = nn.GELU()

    def heads(self, x):
        return x.view(x.shape[0], x.shape[1], HEADS, HEAD_DIM).permute(0, 2, 1, 3)

    def forward(self, x, mask):
        q, k, v = self.heads(self.query(x)), self.heads(self.key(x)), self.heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(HEAD_DIM) + mask
        ctx = torch.matmul(scores.softmax(dim=-1), v).permute(0, 2, 1, 3).reshape(x.shape[0], x.shape[1], HIDDEN)
        h = self.attn_norm(self.attn_out(ctx) + x)
        return self.out_norm(self.output(self.act(self.intermediate(h))) + h)
