"""Pieces shared by the BERT and GPT-2 builders: multi-head self-attention as Hugging
Face's eager implementation runs it (separate scale, mask, softmax and dropout kernels)."""

from dataclasses import dataclass


@dataclass(frozen=True)
class TransformerShape:
    batch: int
    seq_len: int
    hidden: int
    heads: int

    @property
    def head_dim(self):
        return self.hidden // self.heads


def self_attention(b, name, q, k, v, shape, mask, causal):
    """Scores, mask, softmax, dropout and context of one layer; q, k, v are (B, S, H)
    projections (the head split is a view)."""
    bh, s, d = shape.batch * shape.heads, shape.seq_len, shape.head_dim
    scores_shape = (shape.batch, shape.heads, s, s)
    scores = b.matmul(f"{name}.scores", q, k, scores_shape, bh, s, s, d)
    scores = b.scale(f"{name}.scale", scores)
    scores = b.where(f"{name}.causal_mask", scores, mask) if causal \
        else b.add_constant(f"{name}.mask", scores, mask)
    probs = b.dropout(f"{name}.attn_dropout", b.softmax(f"{name}.softmax", scores))
    return b.matmul(f"{name}.context", probs, v, (shape.batch, s, shape.hidden), bh, s, d, s)
