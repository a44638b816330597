"""Model zoo: exact parameter counts and output shapes of the reference implementations,
GEMM/convolution FLOPs from the shape formulas, the structure of the iteration."""

import re

import pytest

from matndp.host.kernels.library import KERNELS, OPS
from matndp.host.zoo import MODEL_NAMES, build_model
from matndp.host.zoo.builder import GraphBuilder
from matndp.host.zoo.summary import summarize

from ..tier.graphs import mlp_graph


# torchvision / Hugging Face parameter counts (the reference implementations' numel sums)
REFERENCE_PARAMETERS = {
    "resnet50": 25_557_032,
    "vgg16_bn": 138_365_992,
    "bert-base": 109_482_240,
    "gpt2": 124_439_808,
}

B = 2


def _shapes(graph):
    return {name: graph.tensors[t].shape for name, t in graph.meta["outputs"].items()}


@pytest.fixture(scope="module", params=MODEL_NAMES)
def graph(request):
    seq_len = 64 if request.param in ("bert-base", "gpt2") else None
    return build_model(request.param, batch=B, seq_len=seq_len)


@pytest.mark.parametrize("name", MODEL_NAMES)
@pytest.mark.parametrize("dtype", ["fp32", "bf16"])
def test_parameter_counts_equal_the_reference(name, dtype):
    assert build_model(name, batch=1, dtype=dtype, seq_len=None).parameters() == \
        REFERENCE_PARAMETERS[name]


@pytest.mark.parametrize("name, seq_len, expected", [
    ("resnet50", None, {"logits": (3, 1000)}),
    ("vgg16_bn", None, {"logits": (3, 1000)}),
    ("bert-base", 40, {"last_hidden_state": (3, 40, 768), "pooler_output": (3, 768),
                       "mlm_logits": (3 * 6, 30522)}),
    ("gpt2", 40, {"last_hidden_state": (3, 40, 768), "logits": (3, 40, 50257)}),
])
def test_output_shapes(name, seq_len, expected):
    assert _shapes(build_model(name, batch=3, seq_len=seq_len)) == expected


def _conv(n, cin, cout, hout, wout, k, bias=False):
    """(multiply-adds, bias additions) of a convolution."""
    return n * cout * hout * wout * cin * k * k, (n * cout * hout * wout if bias else 0)


def _gemm(rows, k, n, bias=True):
    return rows * k * n, (rows * n if bias else 0)


S = 64
FLOP_CASES = [
    ("resnet50", "conv1", _conv(B, 3, 64, 112, 112, 7)),
    ("resnet50", "layer1.0.conv2", _conv(B, 64, 64, 56, 56, 3)),
    ("resnet50", "layer2.0.conv2", _conv(B, 128, 128, 28, 28, 3)),   # stride 2
    ("resnet50", "layer3.0.downsample.0", _conv(B, 512, 1024, 14, 14, 1)),
    ("resnet50", "layer4.2.conv3", _conv(B, 512, 2048, 7, 7, 1)),
    ("resnet50", "fc", _gemm(B, 2048, 1000)),
    ("vgg16_bn", "features.0", _conv(B, 3, 64, 224, 224, 3, bias=True)),
    ("vgg16_bn", "features.40", _conv(B, 512, 512, 14, 14, 3, bias=True)),
    ("vgg16_bn", "classifier.0", _gemm(B, 512 * 7 * 7, 4096)),
    ("vgg16_bn", "classifier.6", _gemm(B, 4096, 1000)),
    ("bert-base", "encoder.layer.0.attention.self.query", _gemm(B * S, 768, 768)),
    ("bert-base", "encoder.layer.5.intermediate.dense", _gemm(B * S, 768, 3072)),
    ("bert-base", "encoder.layer.11.attention.self.scores", (B * 12 * S * S * 64, 0)),
    ("bert-base", "encoder.layer.11.attention.self.context", (B * 12 * S * 64 * S, 0)),
    ("bert-base", "mlm.decoder", _gemm(B * 10, 768, 30522, bias=False)),  # 15 % of 64 -> 10
    ("gpt2", "h.0.attn.c_attn", _gemm(B * S, 768, 3 * 768)),
    ("gpt2", "h.3.mlp.c_proj", _gemm(B * S, 3072, 768)),
    ("gpt2", "lm_head", _gemm(B * S, 768, 50257, bias=False)),
]


@pytest.mark.parametrize("name, op_name, counts", FLOP_CASES)
def test_gemm_and_conv_flops_follow_the_shape_formula(name, op_name, counts):
    macs, bias = counts
    graph = build_model(name, batch=B, seq_len=S if name in ("bert-base", "gpt2") else None)
    by_name = {op.name: op for op in graph.ops}
    assert by_name[op_name].flops == 2 * macs + bias
    # backward: the data gradient repeats the multiply-adds, the weight gradient also sums
    # the bias gradient
    if f"{op_name}.backward.wgrad" in by_name:
        assert by_name[f"{op_name}.backward.wgrad"].flops == 2 * macs + bias
    if op_name not in ("conv1", "features.0"):
        dgrad = by_name.get(f"{op_name}.backward.dgrad") or by_name[f"{op_name}.backward.dgrad_a"]
        assert dgrad.flops == 2 * macs


@pytest.mark.parametrize("name, gmacs", [("resnet50", 4.09), ("vgg16_bn", 15.47)])
def test_forward_macs_per_image_match_the_published_figure(name, gmacs):
    graph = build_model(name, batch=1)
    macs = sum(op.flops for op in graph.ops
               if op.phase == "forward" and op.kind in ("conv", "gemm")) / 2
    assert macs / 1e9 == pytest.approx(gmacs, rel=0.005)


def test_first_convolution_has_no_data_gradient(graph):
    names = {op.name for op in graph.ops}
    assert "conv1.backward.dgrad" not in names and "features.0.backward.dgrad" not in names


def test_every_op_depends_only_on_earlier_ops_and_reads_produced_tensors(graph):
    position = {op.name: i for i, op in enumerate(graph.ops)}
    written = {t for t in graph.tensors.values() if t.kind in ("input", "weight",
                                                              "optimizer_state")}
    written = {t.id for t in written} | {"grad:" + graph.meta["loss"]}
    for i, op in enumerate(graph.ops):
        assert all(position[d] < i for d in op.deps)
        for tensor_id in op.inputs:
            assert tensor_id in written, f"{op.name} reads {tensor_id} before it is written"
        written.update(op.outputs)


def test_one_optimizer_step_per_trained_parameter(graph):
    weights = {t.id for t in graph.tensors.values() if t.kind == "weight"}
    stepped = [op.attrs["parameter"] for op in graph.ops if op.phase == "optimizer"]
    assert len(stepped) == len(set(stepped))
    untrained = weights - set(stepped)
    # only BERT's pooler gets no gradient (no loss uses it, see host/zoo/bert.py)
    assert untrained == ({"pooler.dense.weight", "pooler.dense.bias"}
                         if graph.name == "bert-base" else set())


def test_residual_and_tied_gradients_are_accumulated():
    gpt2 = build_model("gpt2", batch=1, seq_len=16)
    accumulated = {op.attrs.get("accumulates") for op in gpt2.ops}
    assert "wte.weight" in accumulated            # embedding + tied LM head
    # every block input feeds the block's first convolution and its shortcut (identity or
    # downsample); the last block's output only feeds the pooling
    resnet = build_model("resnet50", batch=1)
    accumulated = {op.attrs["accumulates"] for op in resnet.ops if "accumulates" in op.attrs}
    blocks = [f"layer{stage}.{block}.relu3.out"
              for stage, count in enumerate((3, 4, 6, 3), start=1) for block in range(count)]
    assert accumulated == {"maxpool.out", *blocks[:-1]}


@pytest.mark.parametrize("dtype, optimizer, bytes_per_parameter", [
    ("fp32", "adamw", 4 + 4 + 4 + 4),          # weight, gradient, two moments
    ("bf16", "adamw", 2 + 2 + 4 + 4 + 4),      # 16-bit weight and gradient, FP32 master + moments
    ("fp32", "sgd_momentum", 4 + 4 + 4),
    ("fp16", "sgd_momentum", 2 + 2 + 4 + 4),
])
def test_persistent_bytes_per_parameter(dtype, optimizer, bytes_per_parameter):
    graph = build_model("vgg16_bn", batch=1, dtype=dtype, optimizer=optimizer)
    summary = summarize(graph)
    total = summary["weight_bytes"] + summary["weight_gradient_bytes"] + \
        summary["optimizer_state_bytes"]
    assert total == bytes_per_parameter * REFERENCE_PARAMETERS["vgg16_bn"]


def test_summary_of_a_hand_made_iteration():
    """Two GEMM layers of 2-page weights and 1-page activations, their backward GEMMs and
    two optimizer steps, one FLOP each (pages of 4 KiB, FP32)."""
    summary = summarize(mlp_graph(layers=2, activation_pages=1, weight_pages=2))
    page = 4096
    assert (summary["ops"], summary["ops_by_kind"]) == (6, {"gemm": 4, "optimizer": 2})
    assert summary["flops_per_iteration"] == 6
    assert summary["flops_by_kind"] == {"gemm": 4, "optimizer": 2}
    assert summary["flops_by_phase"] == {"forward": 2, "backward": 2, "optimizer": 2}
    assert summary["parameters"] == 2 * 2 * page // 4
    assert summary["weight_bytes"] == summary["weight_gradient_bytes"] == \
        summary["optimizer_state_bytes"] == 2 * 2 * page
    assert summary["activation_bytes"] == 2 * page            # a0, a1 (g0, g1 are gradients)
    assert summary["footprint_bytes"] == 3 * 2 * 2 * page + 2 * page + page     # + input x


def test_summary_counts_the_reference_parameters(graph):
    assert summarize(graph)["parameters"] == REFERENCE_PARAMETERS[graph.name]


def test_backward_costs_about_twice_the_forward_pass():
    graph = build_model("resnet50", batch=4)
    summary = summarize(graph)
    ratio = summary["flops_by_phase"]["backward"] / summary["flops_by_phase"]["forward"]
    assert 1.9 < ratio < 2.1


@pytest.mark.parametrize("kwargs, message", [
    ({"name": "resnet18", "batch": 1}, "unknown model 'resnet18'"),
    ({"name": "resnet50", "batch": 0}, "batch"),
    ({"name": "resnet50", "batch": 1, "dtype": "int8"}, "dtype 'int8'"),
    ({"name": "resnet50", "batch": 1, "seq_len": 128}, "seq_len"),
    ({"name": "bert-base", "batch": 1, "seq_len": 513}, "seq_len"),
    ({"name": "gpt2", "batch": 1, "seq_len": 0}, "seq_len"),
    ({"name": "gpt2", "batch": 1, "optimizer": "lion"}, "optimizer 'lion'"),
])
def test_bad_parameters_are_refused_by_name(kwargs, message):
    rest = {key: value for key, value in kwargs.items() if key != "name"}
    with pytest.raises(ValueError, match=message):
        build_model(kwargs["name"], **rest)


def test_torch_importer_matches_parameter_count():
    torch = pytest.importorskip("torch")
    from matndp.host.zoo.torch_import import import_module_graph
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8),
                                torch.nn.ReLU(), torch.nn.Flatten(),
                                torch.nn.Linear(8 * 8 * 8, 10))
    graph = import_module_graph(model, (2, 3, 8, 8))
    assert graph.parameters() == sum(p.numel() for p in model.parameters())


def test_torch_importer_follows_residual_blocks_on_meta_weights():
    torch = pytest.importorskip("torch")
    from matndp.host.zoo.torch_import import import_module_graph

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(16, 16, 3, padding=1, bias=False)
            self.norm = torch.nn.BatchNorm2d(16)

        def forward(self, x):
            return torch.relu(self.norm(self.conv(x)) + x)

    with torch.device("meta"):
        model = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), Block(), Block(),
                                    torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
                                    torch.nn.Linear(16, 10))
    graph = import_module_graph(model, (4, 3, 16, 16))
    assert graph.parameters() == sum(p.numel() for p in model.parameters())
    # Each 3x3 16->16 convolution on 16x16 maps: 2 * 16*16 outputs * 16 channels * 9*16 MACs per image.
    convs = [op for op in graph.ops if op.kind == "conv" and op.phase == "forward"]
    assert sorted(op.flops for op in convs)[-1] == 2 * 4 * 16 * 16 * 16 * 9 * 16


def test_torch_importer_refuses_unsupported_layers_by_name():
    torch = pytest.importorskip("torch")
    from matndp.host.zoo.torch_import import import_module_graph
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.Hardswish())
    with pytest.raises(ValueError, match="unsupported module Hardswish"):
        import_module_graph(model, (1, 3, 8, 8))


def test_vgg_classifier_ops_carry_torchvisions_module_names():
    """torchvision's VGG-16-BN classifier: Linear, ReLU, Dropout, Linear, ReLU, Dropout,
    Linear as classifier.0 … classifier.6 (the importer and the reports match by name)."""
    graph = build_model("vgg16_bn", batch=1)
    forward = {op.name: op.kind for op in graph.ops if op.name.startswith("classifier.")
               and "backward" not in op.name and "step" not in op.name}
    assert forward == {"classifier.0": "gemm", "classifier.1": "elementwise",
                       "classifier.2": "elementwise", "classifier.3": "gemm",
                       "classifier.4": "elementwise", "classifier.5": "elementwise",
                       "classifier.6": "gemm"}


@pytest.mark.parametrize("name", ["gpt2", "bert-base"])
def test_the_sequence_length_and_dtype_are_recorded(name):
    graph = build_model(name, batch=1, dtype="bf16", seq_len=64)
    assert graph.meta["seq_len"] == 64
    summary = summarize(graph)
    assert (summary["model"], summary["batch"], summary["dtype"]) == (graph.name, 1, "bf16")
    assert (summary["seq_len"], summary["optimizer"]) == (64, "adamw")


def test_the_summary_names_the_optimizer_of_the_iteration():
    graph = build_model("vgg16_bn", batch=1, optimizer="sgd_momentum")
    summary = summarize(graph)
    assert (summary["optimizer"], summary["seq_len"]) == ("sgd_momentum", None)


# Suffixes of the backward ops of a layer whose backward pass is two GEMMs (or convolutions):
# the gradient of the data and of the weights, or of a product's two operands.
_GRADIENT_SUFFIXES = {"dgrad", "wgrad", "dgrad_a", "dgrad_b"}


def test_every_backward_op_is_named_after_its_forward_op(graph):
    """``<forward op>.backward``, then for a GEMM or convolution which gradient it computes,
    then for a gradient summed into one already written ``.accumulate:<tensor>``."""
    forward = {op.name: op.kind for op in graph.ops if op.phase == "forward"}
    for op in graph.ops:
        if op.phase != "backward":
            continue
        layer, marker, rest = op.name.partition(".backward")
        assert marker and layer in forward, op.name
        rest, _, accumulated = rest.partition(".accumulate:")
        assert not accumulated or accumulated in graph.tensors, op.name
        suffix = rest.removeprefix(".")
        if forward[layer] in ("gemm", "conv"):
            assert suffix in _GRADIENT_SUFFIXES, op.name
        else:
            assert suffix == "", op.name


@pytest.mark.parametrize("name", MODEL_NAMES)
def test_every_ndp_kernel_an_op_names_is_in_the_library(name):
    graph = build_model(name, batch=B, seq_len=64 if name in ("bert-base", "gpt2") else None)
    named = {op.attrs["ndp_kernel"] for op in graph.ops if "ndp_kernel" in op.attrs}
    assert named and all(name in OPS or name in KERNELS for name in named), named


def test_tanh_runs_the_tanh_kernels_both_ways():
    b = GraphBuilder("tiny", batch=2, dtype="fp32", optimizer="adamw")
    y = b.tanh("act", b.linear("fc", b.input("x", (2, 8)), 4))
    graph = b.finish(b.cross_entropy("loss", y, b.input("labels", (2,), "int64")), {"y": y})
    assert graph.name == "tiny"
    kernels = {op.name: op.attrs.get("ndp_kernel") for op in graph.ops if op.name.startswith("act")}
    assert sorted(kernels.values()) == ["tanh_bwd", "tanh_fwd"]
    # tanh' = 1 - tanh²: the backward pass reads the forward output, not its input.
    assert graph.op("act.backward").inputs == ("grad:act.out", "act.out")


def test_convolutions_carry_torchvisions_geometry_both_ways():
    """ResNet-50 v1.5: conv1 is 7×7 stride 2 padding 3; layer2.0.conv2 is the 3×3 stride-2
    convolution."""
    graph = build_model("resnet50", batch=1)
    for name, geometry in (("conv1", (7, 2, 3)), ("layer2.0.conv2", (3, 2, 1))):
        ops = [op for op in graph.ops if op.name == name or op.attrs.get("forward") == name]
        assert len(ops) == (2 if name == "conv1" else 3)         # conv1 has no data gradient
        for op in ops:
            assert (op.attrs["kernel"], op.attrs["stride"], op.attrs["padding"]) == geometry


def _inputs(graph):
    return {name: tensor.shape for name, tensor in graph.tensors.items() if tensor.kind == "input"}


def test_bert_takes_hugging_faces_inputs_and_sums_its_three_embeddings():
    """BertModel.forward: input_ids, token_type_ids and position_ids of (batch, seq) (the
    positions shared by the batch), the attention mask extended to (batch, 1, 1, seq) to
    broadcast over heads and query positions; BertEmbeddings adds the word, position and
    token-type embeddings, then LayerNorm and dropout; BertPooler's activation is tanh."""
    graph = build_model("bert-base", batch=2, seq_len=16)
    inputs = _inputs(graph)
    assert {name: inputs[name] for name in ("input_ids", "token_type_ids", "position_ids",
                                            "attention_mask")} == \
        {"input_ids": (2, 16), "token_type_ids": (2, 16), "position_ids": (1, 16),
         "attention_mask": (2, 1, 1, 16)}
    forward = [(op.name, op.kind) for op in graph.ops if op.phase == "forward"]
    assert forward[:7] == [
        ("embeddings.word_embeddings", "embedding"), ("embeddings.position_embeddings", "embedding"),
        ("embeddings.add_position", "elementwise"), ("embeddings.token_type_embeddings", "embedding"),
        ("embeddings.add_token_type", "elementwise"), ("embeddings.LayerNorm", "normalization"),
        ("embeddings.dropout", "elementwise")]
    pooler = next(op for op in graph.ops if op.name == "pooler.activation")
    assert pooler.attrs["ndp_kernel"] == "tanh_fwd"


def test_gpt2_takes_its_token_and_position_ids():
    """GPT2Model.forward: input_ids of (batch, seq), position_ids of (1, seq) shared by the
    batch, the causal mask of (1, 1, seq, seq); the loss's labels, one per token."""
    assert _inputs(build_model("gpt2", batch=2, seq_len=16)) == {
        "input_ids": (2, 16), "position_ids": (1, 16), "causal_mask": (1, 1, 16, 16),
        "labels": (32,)}


# The reference implementations' inputs: torchvision's images in the compute precision and
# class labels as int64; Hugging Face's token ids, token types, positions and labels as
# int64 (LongTensor), BERT's attention mask additive in the compute precision, GPT-2's
# causal mask boolean. Shapes per batch B and sequence S: BERT predicts 15 % of its tokens.
@pytest.mark.parametrize("name, inputs", [
    ("resnet50", {"images": ("bf16", (B, 3, 224, 224)), "labels": ("int64", (B,))}),
    ("vgg16_bn", {"images": ("bf16", (B, 3, 224, 224)), "labels": ("int64", (B,))}),
    ("bert-base", {"input_ids": ("int64", (B, 40)), "token_type_ids": ("int64", (B, 40)),
                   "position_ids": ("int64", (1, 40)), "attention_mask": ("bf16", (B, 1, 1, 40)),
                   "masked_positions": ("int64", (12,)), "masked_labels": ("int64", (12,)),
                   "first_token_positions": ("int64", (B,))}),
    ("gpt2", {"input_ids": ("int64", (B, 40)), "position_ids": ("int64", (1, 40)),
              "causal_mask": ("bool", (1, 1, 40, 40)), "labels": ("int64", (B * 40,))}),
])
def test_the_inputs_have_the_reference_implementations_types_and_shapes(name, inputs):
    graph = build_model(name, batch=B, dtype="bf16", seq_len=40 if name in ("bert-base", "gpt2") else None)
    assert {t.id: (t.dtype, t.shape) for t in graph.tensors.values() if t.kind == "input"} == inputs


@pytest.mark.parametrize("kwargs, message", [
    ({"name": "resnet18", "batch": 1}, "unknown model 'resnet18'; known: resnet50, vgg16_bn, "
                                       "bert-base, gpt2"),
    ({"name": "resnet50", "batch": 0}, "batch must be a positive integer, not 0"),
    ({"name": "vgg16_bn", "batch": True}, "batch must be a positive integer, not True"),
    ({"name": "resnet50", "batch": 1, "dtype": "int8"},
     "unknown dtype 'int8'; known: fp32, bf16, fp16 (the 16-bit ones mean mixed precision with "
     "FP32 master weights)"),
    ({"name": "vgg16_bn", "batch": 1, "seq_len": 128}, "vgg16_bn takes no seq_len (it is an image model)"),
    ({"name": "bert-base", "batch": 1, "seq_len": 513}, "bert-base: seq_len must be an integer in "
                                                        "1..512, not 513"),
    ({"name": "gpt2", "batch": 1, "seq_len": 1025}, "gpt2: seq_len must be an integer in 1..1024, "
                                                    "not 1025"),
    ({"name": "gpt2", "batch": 1, "optimizer": "lion"}, "unknown optimizer 'lion'; known: adamw, "
                                                        "sgd_momentum"),
])
def test_each_refusal_is_one_whole_message(kwargs, message):
    rest = {key: value for key, value in kwargs.items() if key != "name"}
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        build_model(kwargs["name"], **rest)


@pytest.mark.parametrize("name, optimizer, seq_len", [
    ("resnet50", "sgd_momentum", None), ("vgg16_bn", "sgd_momentum", None),
    ("bert-base", "adamw", 128), ("gpt2", "adamw", 1024)])
def test_each_model_trains_with_its_reference_recipes_defaults(name, optimizer, seq_len):
    meta = build_model(name, batch=1).meta
    assert (meta["optimizer"], meta.get("seq_len")) == (optimizer, seq_len)


def test_each_layers_flops_and_kernels_both_ways_on_a_tiny_network():
    """x (2 × 4) through a linear layer of 8 outputs and five element-wise or row-wise
    layers to a loss: 16 elements each. FLOPs per element, forward / backward: GELU 8 / 14,
    layer norm 7 / 10, dropout 4 / 2, softmax 5 / 3, the loss 5 / 3; the linear layer
    2 × 64 multiply-adds and its 16 bias additions (no data gradient: x is an input)."""
    b = GraphBuilder("tiny", batch=2, dtype="fp32", optimizer="adamw")
    y = b.linear("fc", b.input("x", (2, 4)), 8)
    for layer, method in (("act", b.gelu), ("ln", b.layernorm), ("drop", b.dropout),
                          ("sm", b.softmax)):
        y = method(layer, y)
    graph = b.finish(b.cross_entropy("loss", y, b.input("labels", (2,), "int64")), {"y": y})
    flops = {op.name: op.flops for op in graph.ops if op.phase != "optimizer"}
    assert flops == {
        "fc": 144, "act": 128, "ln": 112, "drop": 64, "sm": 80, "loss": 80,
        "loss.backward": 48, "sm.backward": 48, "drop.backward": 32, "ln.backward": 160,
        "act.backward": 224, "fc.backward.wgrad": 144}
    kernels = {op.name: op.attrs.get("ndp_kernel") for op in graph.ops if op.phase != "optimizer"}
    assert (kernels["act"], kernels["act.backward"]) == ("gelu_fwd", "gelu_bwd")
    assert (kernels["ln"], kernels["ln.backward"]) == ("layernorm_fwd", "layernorm_bwd")
    # GELU's derivative needs its input; layer norm's its input, scale and statistics.
    assert graph.op("act.backward").inputs == ("grad:act.out", "fc.out")
    assert set(graph.op("ln.backward").inputs) == {
        "grad:ln.out", "act.out", "ln.weight", "ln.save_mean", "ln.save_rstd"}
    assert set(graph.op("ln.backward").outputs) >= {"grad:act.out"}
    # One optimizer step per parameter: fc's weight and bias, ln's scale and shift.
    steps = [op for op in graph.ops if op.phase == "optimizer"]
    assert sorted(op.attrs["parameter"] for op in steps) == ["fc.bias", "fc.weight", "ln.bias",
                                                             "ln.weight"]


def test_each_layers_flops_both_ways_on_a_tiny_convolutional_network():
    """x (2 × 3 × 8 × 8) through a 3 × 3 convolution to 4 channels with bias (2 × 4 × 8 × 8
    outputs of 27 multiply-adds each, 512 elements), batch norm (7 / 10 per element), ReLU
    (1 / 1), 2 × 2 max-pooling (4 reads per output / 1 per output, 128 outputs), global
    average pooling (1 per input element, both ways), a linear layer to 3 classes."""
    b = GraphBuilder("tiny-cnn", batch=2, dtype="fp32", optimizer="sgd_momentum")
    y = b.conv2d("conv", b.input("x", (2, 3, 8, 8)), 4, 3, stride=1, padding=1, bias=True)
    y = b.maxpool("pool", b.relu("relu", b.batchnorm("bn", y)), 2, 2, 0)
    y = b.linear("fc", b.adaptive_avgpool("gap", y, 1, 1), 3, flatten=True)
    graph = b.finish(b.cross_entropy("loss", y, b.input("labels", (2,), "int64")), {"y": y})
    conv = 2 * 13824 + 512
    flops = {op.name: op.flops for op in graph.ops if op.phase != "optimizer"}
    assert flops == {
        "conv": conv, "bn": 7 * 512, "relu": 512, "pool": 4 * 128, "gap": 128, "fc": 2 * 24 + 6,
        "loss": 5 * 6, "loss.backward": 3 * 6, "fc.backward.dgrad": 2 * 24,
        "fc.backward.wgrad": 2 * 24 + 6, "gap.backward": 128, "pool.backward": 128,
        "relu.backward": 512, "bn.backward": 10 * 512, "conv.backward.wgrad": conv}
    assert graph.tensors["fc.out"].shape == (2, 3) and graph.tensors["pool.out"].shape == (2, 4, 4, 4)
    assert {key: graph.op("conv").attrs[key] for key in ("kernel", "stride", "padding", "macs")} == \
        {"kernel": 3, "stride": 1, "padding": 1, "macs": 13824}
    assert graph.op("bn.backward").attrs["ndp_kernel"] == "batchnorm_bwd"
    # Max-pooling's backward reads the indices it kept; ReLU's its own output.
    assert graph.op("pool.backward").inputs == ("grad:pool.out", "pool.indices")
    assert graph.op("relu.backward").inputs == ("grad:relu.out", "relu.out")


def test_each_layers_flops_both_ways_on_a_tiny_attention_block():
    """Token ids (2 × 5) looked up in two tables of width 4 and added (40 elements), scaled,
    multiplied by themselves into 2 × 5 × 5 scores (200 multiply-adds), masked, offset by a
    constant, 3 rows picked for the loss. Lookups, the pick and the additions cost nothing
    backward but the gradient's scatter; the residual and constant additions have no
    backward op at all. The sum is read twice (scaled, and as the product's right operand),
    so its two gradients are added: one addition per element."""
    b = GraphBuilder("tiny-attention", batch=2, dtype="fp32", optimizer="adamw")
    ids = b.input("ids", (2, 5), "int64")
    h = b.add("add", b.embedding("wte", ids, 10, 4), b.embedding("tok", ids, 3, 4))
    s = b.scale("scale", h)
    scores = b.matmul("qk", s, h, (2, 5, 5), batch=2, m=5, n=5, k=4)
    masked = b.where("mask", scores, b.input("causal", (5, 5), "bool"))
    offset = b.add_constant("bias", masked, b.input("attention", (2, 1, 5)))
    picked = b.gather_rows("pick", offset, b.input("positions", (3,), "int64"), 3)
    graph = b.finish(b.cross_entropy("loss", picked, b.input("labels", (3,), "int64")),
                     {"y": picked})
    flops = {op.name: op.flops for op in graph.ops if op.phase != "optimizer"}
    assert flops == {
        "wte": 0, "tok": 0, "add": 40, "scale": 40, "qk": 400, "mask": 50, "bias": 50,
        "pick": 0, "loss": 75, "loss.backward": 45, "pick.backward": 15, "mask.backward": 50,
        "qk.backward.dgrad_a": 400, "qk.backward.dgrad_b": 400, "scale.backward": 40,
        "scale.backward.accumulate:add.out": 40, "tok.backward": 40, "wte.backward": 40}
    assert graph.op("mask.backward").attrs["ndp_kernel"] == "where_bwd"
    assert graph.op("wte.backward").outputs == ("grad:wte.weight",)


def test_three_gradients_of_one_tensor_are_summed_pairwise_under_numbered_names():
    """x feeds three linear layers. Backward runs them last first: the third's data
    gradient is grad:x; the second's (grad:x#1) is added to it into grad:x#2; the first's
    (grad:x#3) is added to that into grad:x#4, the gradient x ends with."""
    b = GraphBuilder("fan-out", batch=1, dtype="fp32", optimizer="sgd_momentum")
    x = b.activation("x", (1, 2))
    b.forward("make", "elementwise", 0, (b.input("seed", (1, 2)),), (x,),
              alias=("x", ("seed",)))
    ys = [b.linear(f"fc{k}", x, 2, bias=False) for k in range(3)]
    total = b.add("sum01", ys[0], ys[1])
    graph = b.finish(b.cross_entropy("loss", b.add("sum", total, ys[2]),
                                     b.input("labels", (1,), "int64")), {"y": total})
    grads = sorted(t for t in graph.tensors if t.startswith("grad:x"))
    assert grads == ["grad:x", "grad:x#1", "grad:x#2", "grad:x#3", "grad:x#4"]
    assert graph.op("fc2.backward.dgrad").outputs == ("grad:x",)
    assert graph.op("fc1.backward.dgrad").outputs == ("grad:x#1",)
    assert graph.op("fc1.backward.dgrad.accumulate:x").inputs == ("grad:x", "grad:x#1")
    assert graph.op("fc1.backward.dgrad.accumulate:x").outputs == ("grad:x#2",)
    assert graph.op("fc0.backward.dgrad.accumulate:x").inputs == ("grad:x#2", "grad:x#3")
    assert graph.op("fc0.backward.dgrad.accumulate:x").outputs == ("grad:x#4",)
    assert graph.op("fc0.backward.dgrad.accumulate:x").attrs == {"ndp_kernel": "add",
                                                                   "accumulates": "x"}


def test_a_batched_matmul_records_its_batch_and_both_operands_gradients():
    b = GraphBuilder("bmm", batch=3, dtype="fp32", optimizer="adamw")
    q = b.parameter("q", (3, 4, 5))
    k = b.parameter("k", (3, 5, 6))
    y = b.matmul("qk", q, k, (3, 4, 6), batch=3, m=4, n=6, k=5)
    graph = b.finish(b.cross_entropy("loss", y, b.input("labels", (3,), "int64")), {"y": y})
    gemm = {"batch": 3, "m": 4, "n": 6, "k": 5, "macs": 3 * 4 * 6 * 5}
    assert graph.op("qk").attrs == gemm and graph.op("qk").flops == 720
    assert graph.op("qk.backward.dgrad_a").attrs == {**gemm, "forward": "qk"}
    assert graph.op("qk.backward.dgrad_a").outputs == ("grad:q",)
    assert graph.op("qk.backward.dgrad_b").outputs == ("grad:k",)


def test_each_refusal_of_the_builder_is_one_whole_message():
    def refused(message):
        return pytest.raises(ValueError, match=f"^{re.escape(message)}$")
    with refused("batch must be a positive integer, not True"):
        GraphBuilder("g", batch=True, dtype="fp32", optimizer="adamw")
    b = GraphBuilder("g", batch=1, dtype="fp32", optimizer="adamw")
    x = b.input("x", (1, 3, 4, 4))
    with refused("g: tensor 'x' defined twice"):
        b.activation("x", (1,))
    with refused("input size 4 too small for kernel 7, stride 2, padding 1"):
        b.conv2d("conv", x, 8, kernel=7, stride=2, padding=1)
    tied = b.parameter("tied", (5, 4))
    with refused("fc: tied weight 'tied' has shape (5, 4), needs (4, 4)"):
        b.linear("fc", x, 4, weight=tied)


def test_batchnorm_saves_fp32_statistics_per_channel_and_tanh_costs_its_elements():
    """x (2 × 3 × 4 × 4, 96 bf16 elements) through batch norm and tanh. Batch norm keeps
    a mean and an inverse standard deviation per channel, in FP32 under mixed precision;
    tanh costs 4 FLOPs an element forward (reading x, writing y: 2 × 192 bytes) and 3
    backward (reading dy and y, writing dx: 3 × 192 bytes)."""
    b = GraphBuilder("tiny-bn", batch=2, dtype="bf16", optimizer="adamw")
    y = b.tanh("act", b.batchnorm("bn", b.input("x", (2, 3, 4, 4))))
    y = b.linear("fc", y, 2, flatten=True)
    graph = b.finish(b.cross_entropy("loss", y, b.input("labels", (2,), "int64")), {"y": y})
    for saved in ("bn.save_mean", "bn.save_invstd"):
        assert (graph.tensors[saved].shape, graph.tensors[saved].dtype) == ((3,), "fp32")
    assert (graph.tensors["bn.out"].shape, graph.tensors["bn.out"].dtype) == ((2, 3, 4, 4), "bf16")
    assert set(graph.op("bn").outputs) == {"bn.out", "bn.save_mean", "bn.save_invstd"}
    assert set(graph.op("bn.backward").inputs) == {
        "grad:bn.out", "x", "bn.weight", "bn.save_mean", "bn.save_invstd"}
    forward, backward = graph.op("act"), graph.op("act.backward")
    assert (forward.flops, backward.flops) == (4 * 96, 3 * 96)
    assert (graph.op_bytes(forward), graph.op_bytes(backward)) == (2 * 96 * 2, 3 * 96 * 2)
    assert (forward.kind, backward.kind) == ("elementwise", "elementwise")
