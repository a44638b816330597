"""The model zoo: training iterations of reference models as :class:`host.graph.IterationGraph`.

Shapes and parameter counts equal the reference implementations (torchvision ``resnet50``
and ``vgg16_bn``, Hugging Face ``BertModel`` base and ``GPT2Model`` small).
"""

from collections.abc import Callable
from dataclasses import dataclass

from ..registry import Registry
from . import bert, gpt2
from .bert import build_bert_base
from .builder import OPTIMIZERS, PRECISIONS
from .gpt2 import build_gpt2
from .resnet import build_resnet50
from .vgg import build_vgg16_bn


__all__ = ["ZooModel", "MODELS", "MODEL_NAMES", "PRECISIONS", "OPTIMIZERS", "build_model"]


@dataclass(frozen=True)
class ZooModel:
    """A zoo model: its builder and, for a transformer, its default and longest sequence."""

    name: str
    build: Callable
    default_seq_len: int | None = None
    max_seq_len: int | None = None

    @property
    def takes_seq_len(self):
        return self.default_seq_len is not None


MODELS = Registry("model", (
    ZooModel("resnet50", build_resnet50),
    ZooModel("vgg16_bn", build_vgg16_bn),
    ZooModel("bert-base", build_bert_base, bert.DEFAULT_SEQ_LEN, bert.MAX_POSITIONS),
    ZooModel("gpt2", build_gpt2, gpt2.DEFAULT_SEQ_LEN, gpt2.MAX_POSITIONS),
))

# The registered names, in registration order.
MODEL_NAMES = MODELS.names


def build_model(name, *, batch, dtype="fp32", seq_len=None, optimizer=None):
    """One training iteration of model ``name``. ``seq_len`` applies to the transformers
    only (default: 128 for BERT, 1024 for GPT-2); ``optimizer`` defaults to SGD with
    momentum for the CNNs and AdamW for the transformers, as in their reference recipes."""
    model = MODELS.lookup(name)
    kwargs = {"batch": batch, "dtype": dtype}
    if optimizer is not None:
        kwargs["optimizer"] = optimizer
    if model.takes_seq_len:
        kwargs["seq_len"] = seq_len
    elif seq_len is not None:
        raise ValueError(f"{name} takes no seq_len (it is an image model)")
    return model.build(**kwargs)
