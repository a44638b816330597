"""Every library kernel assembles to the very image it had before the library's sources
were restructured (shared code moved into included files and macros).

This is a refactoring-invariance check, so its expected values are frozen on purpose:
``images.json`` holds every library kernel's image, and every expander kernel
built from library sources, as the assembler produced them from the sources before the
restructuring (words, section starts, the ordering flag and the argument words the
kernel declares). The argument *names* are not frozen: they are not part of an image.
An image changes only on purpose, regenerated with the change that makes it: the
reductions' finalizers, since they run as one µthread per channel group or row; the
initializers, since they run as one µthread per sector they clear or copy; the row
reductions' main phases, since an instruction that does not need a division's quotient or
a load's data is placed where it issues while they are in flight; the expander kernels,
since the trigger gathers each sector's arrivals and they are generated per K (frozen at
K = 4).
"""

import json
import pathlib

import pytest

from matndp.host.kernels import expander
from matndp.host.kernels.library import KERNELS
from matndp.host.kernels.disassembler import disassemble_instruction


FROZEN = json.loads((pathlib.Path(__file__).parent / "images.json").read_text())
# The GPUs the frozen expander kernels reduce over.
EXPANDER_PORTS = 4


def _record(image):
    return {"name": image.name,
            "sections": {section.value: start for section, start in
                         sorted(image.sections.items(), key=lambda item: item[1])},
            "uses_atomics": image.uses_atomics,
            "argument_words": sorted(image.arguments.values()),
            "words": [f"{word:#018x}" for word in image.words]}


def _assert_same(name, image, frozen):
    now = _record(image)
    for index, (old, new) in enumerate(zip(frozen["words"], now["words"])):
        assert old == new, (f"{name}: instruction {index} is now {disassemble_instruction(int(new, 16))!r}, "
                            f"was {disassemble_instruction(int(old, 16))!r}")
    assert now == frozen, f"{name}: the image changed"


def test_no_library_kernel_is_lost():
    assert set(FROZEN["library"]) <= set(KERNELS)
    assert set(FROZEN["expander"]) <= set(expander.KERNELS)


@pytest.mark.parametrize("name", sorted(FROZEN["library"]))
def test_library_kernel_image_is_unchanged(name):
    _assert_same(name, KERNELS[name].image, FROZEN["library"][name])


@pytest.mark.parametrize("name", sorted(FROZEN["expander"]))
def test_expander_kernel_image_is_unchanged(name):
    _assert_same(name, expander.reduction_image(name, EXPANDER_PORTS), FROZEN["expander"][name])


def test_a_changed_image_is_reported():
    """The comparison does see a change (one instruction's immediate)."""
    frozen = dict(FROZEN["library"]["relu_fwd"])
    frozen["words"] = [f"{int(frozen['words'][0], 16) ^ (1 << 40):#018x}", *frozen["words"][1:]]
    with pytest.raises(AssertionError, match="instruction 0"):
        _assert_same("relu_fwd", KERNELS["relu_fwd"].image, frozen)
