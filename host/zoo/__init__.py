"""The model zoo: training iterations of reference models as :class:`host.graph.IterationGraph`.

Shapes and parameter counts equal the reference implementations (torchvision ``resnet50``
and ``vgg16_bn``, Hugging Face ``BertModel`` base and ``GPT2Model`` small).
"""

from .bert import build_bert_base
from .gpt2 import build_gpt2
from .resnet import build_resnet50
from .vgg import build_vgg16_bn


__all__ = ["MODEL_NAMES", "build_model"]

MODEL_NAMES = ("resnet50", "vgg16_bn", "bert-base", "gpt2")

_BUILDERS = {
    "resnet50": build_resnet50,
    "vgg16_bn": build_vgg16_bn,
    "bert-base": build_bert_base,
    "gpt2": build_gpt2,
}
_SEQUENCE_MODELS = ("bert-base", "gpt2")


def build_model(name, *, batch, dtype="fp32", seq_len=None, optimizer=None):
    """One training iteration of model ``name``. ``seq_len`` applies to the transformers
    only (default: 128 for BERT, 1024 for GPT-2); ``optimizer`` defaults to SGD with
    momentum for the CNNs and AdamW for the transformers, as in their reference recipes."""
    if name not in _BUILDERS:
        raise ValueError(f"unknown model {name!r}; known: {', '.join(MODEL_NAMES)}")
    kwargs = {"batch": batch, "dtype": dtype}
    if optimizer is not None:
        kwargs["optimizer"] = optimizer
    if name in _SEQUENCE_MODELS:
        kwargs["seq_len"] = seq_len
    elif seq_len is not None:
        raise ValueError(f"{name} takes no seq_len (it is an image model)")
    return _BUILDERS[name](**kwargs)
