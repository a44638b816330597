"""Hugging Face ``BertModel`` (bert-base-uncased), trained with a masked-language-model
loss through the word embeddings (tied decoder) at 15 % of the positions.

The graph's parameters are exactly ``BertModel``'s (pooler included). Heads that would add
parameters (the MLM transform and bias, next-sentence prediction) are left out, so no loss
reaches the pooler: it runs forward, and as in PyTorch the optimizer skips parameters
without gradients.
"""

from math import ceil

from .builder import GraphBuilder
from .transformer import TransformerShape, self_attention


__all__ = ["build_bert_base", "DEFAULT_SEQ_LEN"]

VOCAB = 30522
MAX_POSITIONS = 512
TYPE_VOCAB = 2
HIDDEN, LAYERS, HEADS, INTERMEDIATE = 768, 12, 12, 3072
DEFAULT_SEQ_LEN = 128
MASKED_FRACTION = 0.15


def build_bert_base(*, batch, dtype="fp32", seq_len=None, optimizer="adamw"):
    s = DEFAULT_SEQ_LEN if seq_len is None else seq_len
    if not isinstance(s, int) or isinstance(s, bool) or not 1 <= s <= MAX_POSITIONS:
        raise ValueError(f"bert-base: seq_len must be an integer in 1..{MAX_POSITIONS}, not {s!r}")
    shape = TransformerShape(batch, s, HIDDEN, HEADS)
    predicted = batch * ceil(MASKED_FRACTION * s)
    b = GraphBuilder("bert-base", batch=batch, dtype=dtype, optimizer=optimizer,
                     meta={"seq_len": s, "predicted_tokens": predicted})
    tokens = b.input("input_ids", (batch, s), "int64")
    types = b.input("token_type_ids", (batch, s), "int64")
    positions = b.input("position_ids", (1, s), "int64")
    mask = b.input("attention_mask", (batch, 1, 1, s))
    masked_positions = b.input("masked_positions", (predicted,), "int64")
    labels = b.input("masked_labels", (predicted,), "int64")

    words = b.embedding("embeddings.word_embeddings", tokens, VOCAB, HIDDEN)
    word_table = "embeddings.word_embeddings.weight"
    x = b.add("embeddings.add_position",
              words, b.embedding("embeddings.position_embeddings", positions, MAX_POSITIONS, HIDDEN))
    x = b.add("embeddings.add_token_type",
              x, b.embedding("embeddings.token_type_embeddings", types, TYPE_VOCAB, HIDDEN))
    x = b.dropout("embeddings.dropout", b.layernorm("embeddings.LayerNorm", x))

    for layer in range(LAYERS):
        p = f"encoder.layer.{layer}"
        q = b.linear(f"{p}.attention.self.query", x, HIDDEN)
        k = b.linear(f"{p}.attention.self.key", x, HIDDEN)
        v = b.linear(f"{p}.attention.self.value", x, HIDDEN)
        context = self_attention(b, f"{p}.attention.self", q, k, v, shape, mask, causal=False)
        y = b.dropout(f"{p}.attention.output.dropout",
                      b.linear(f"{p}.attention.output.dense", context, HIDDEN))
        x = b.layernorm(f"{p}.attention.output.LayerNorm", b.add(f"{p}.attention.output.add", y, x))
        y = b.gelu(f"{p}.intermediate.act", b.linear(f"{p}.intermediate.dense", x, INTERMEDIATE))
        y = b.dropout(f"{p}.output.dropout", b.linear(f"{p}.output.dense", y, HIDDEN))
        x = b.layernorm(f"{p}.output.LayerNorm", b.add(f"{p}.output.add", y, x))
    hidden_states = x

    first_token = b.gather_rows("pooler.first_token", hidden_states, b.input(
        "first_token_positions", (batch,), "int64"), batch)
    pooled = b.tanh("pooler.activation", b.linear("pooler.dense", first_token, HIDDEN))

    selected = b.gather_rows("mlm.gather", hidden_states, masked_positions, predicted)
    logits = b.linear("mlm.decoder", selected, VOCAB, bias=False, weight=word_table)
    loss = b.cross_entropy("mlm.loss", logits, labels)
    return b.finish(loss, {"last_hidden_state": hidden_states, "pooler_output": pooled,
                           "mlm_logits": logits})
