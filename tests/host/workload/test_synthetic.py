"""The synthetic G10-format trace: the kernel and tensor counts its definition gives, and
each layer's input gradient the size of that layer's input."""

import pytest

from matndp.host.workload import read_g10
from matndp.host.workload.synthetic import write_synthetic_g10


LAYERS, SKIPS = 12, 3


@pytest.fixture
def graph(tmp_path):
    directory = write_synthetic_g10(tmp_path / "synthetic", layers=LAYERS,
                                    skips=SKIPS, batch=8, activation_bytes=1e6,
                                    weight_bytes=1e5, seconds=0.5)
    assert sorted(path.name for path in directory.iterdir()) == ["cudnn8.txt", "kernels.config"]
    return read_g10(directory, batch=8)


def test_counts_follow_the_layers_and_skips(graph):
    # Data load, a forward kernel per layer, the loss, two backward kernels and an update
    # per layer, the final scale; 7 tensors per layer, the skips, the data and the loss
    # gradient.
    assert len(graph.ops) == 4 * LAYERS + 3
    assert len(graph.tensors) == 7 * LAYERS + SKIPS + 2
    kinds = [op.name.split(".", 1)[1] for op in graph.ops]
    assert kinds == (["LoadData_A0"] + ["Conv2d_Forward"] * LAYERS + ["makeLoss"]
                     + ["Conv2d_Backward_Input", "Conv2d_Backward_Weight"] * LAYERS
                     + ["Conv2d_Apply_Grad"] * LAYERS + ["Scale_Forward"])
    assert sum(op.duration_s for op in graph.ops) == pytest.approx(0.5, rel=1e-6)


def test_a_layers_input_gradient_has_the_size_of_its_input(graph):
    backward = graph.ops[LAYERS + 2:3 * LAYERS + 2]
    for data_gradient, weight_gradient in zip(backward[0::2], backward[1::2]):
        layer_input = weight_gradient.inputs[1]           # what the layer read going forward
        assert graph.tensors[data_gradient.outputs[0]].bytes == graph.tensors[layer_input].bytes
    # Layer 0 read the loaded data.
    assert backward[-1].inputs[1] == graph.ops[0].outputs[0]
