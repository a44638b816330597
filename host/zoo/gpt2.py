"""Hugging Face ``GPT2Model`` (124 M), trained as a language model through the tied
token embedding (``GPT2LMHeadModel``'s head shares ``wte``, so it adds no parameters)."""

from .builder import GraphBuilder
from .transformer import TransformerShape, self_attention


__all__ = ["build_gpt2", "DEFAULT_SEQ_LEN"]

VOCAB = 50257
MAX_POSITIONS = 1024
HIDDEN, LAYERS, HEADS = 768, 12, 12
INNER = 4 * HIDDEN
DEFAULT_SEQ_LEN = 1024


def build_gpt2(*, batch, dtype="fp32", seq_len=None, optimizer="adamw"):
    s = DEFAULT_SEQ_LEN if seq_len is None else seq_len
    if not isinstance(s, int) or isinstance(s, bool) or not 1 <= s <= MAX_POSITIONS:
        raise ValueError(f"gpt2: seq_len must be an integer in 1..{MAX_POSITIONS}, not {s!r}")
    shape = TransformerShape(batch, s, HIDDEN, HEADS)
    b = GraphBuilder("gpt2", batch=batch, dtype=dtype, optimizer=optimizer,
                     meta={"seq_len": s})
    tokens = b.input("input_ids", (batch, s), "int64")
    positions = b.input("position_ids", (1, s), "int64")
    causal = b.input("causal_mask", (1, 1, s, s), "bool")
    labels = b.input("labels", (batch * s,), "int64")

    x = b.add("add_position", b.embedding("wte", tokens, VOCAB, HIDDEN),
              b.embedding("wpe", positions, MAX_POSITIONS, HIDDEN))
    x = b.dropout("drop", x)
    for layer in range(LAYERS):
        p = f"h.{layer}"
        qkv = b.linear(f"{p}.attn.c_attn", b.layernorm(f"{p}.ln_1", x), 3 * HIDDEN)
        # q, k, v are column slices of the fused projection (views, no kernel)
        context = self_attention(b, f"{p}.attn", qkv, qkv, qkv, shape, causal, causal=True)
        y = b.dropout(f"{p}.attn.resid_dropout", b.linear(f"{p}.attn.c_proj", context, HIDDEN))
        x = b.add(f"{p}.add_attn", x, y)
        y = b.gelu(f"{p}.mlp.act", b.linear(f"{p}.mlp.c_fc", b.layernorm(f"{p}.ln_2", x), INNER))
        y = b.dropout(f"{p}.mlp.dropout", b.linear(f"{p}.mlp.c_proj", y, HIDDEN))
        x = b.add(f"{p}.add_mlp", x, y)
    hidden_states = b.layernorm("ln_f", x)
    logits = b.linear("lm_head", hidden_states, VOCAB, bias=False, weight="wte.weight")
    loss = b.cross_entropy("loss", logits, labels)
    return b.finish(loss, {"last_hidden_state": hidden_states, "logits": logits})
