"""The simulator's memory image: every constructor error, and the errors of reading a
region that is not there, which name the regions that are."""

import numpy as np
import pytest

from matndp.host.kernels.memory import Memory, MemoryImageError


@pytest.mark.parametrize("kwargs, message", [
    ({"size": -32}, r"Memory size must be a non-negative int, not -32"),
    ({"size": 64.0}, r"Memory size must be a non-negative int, not 64\.0"),
    ({"size": 64, "base": True}, r"Memory base must be a non-negative int, not True"),
    ({"size": 64, "sector_bytes": 2}, r"power of two of at least 4, not 2"),
    ({"size": 64, "sector_bytes": 24}, r"power of two of at least 4, not 24"),
    ({"size": 0}, r"base 0x0 and size 0x0 must be non-zero multiples of the 32-byte sector"),
    ({"size": 48}, r"base 0x0 and size 0x30 must be non-zero multiples"),
    ({"size": 64, "base": 16}, r"base 0x10 and size 0x40 must be non-zero multiples"),
])
def test_bad_constructor_arguments_are_refused_by_name(kwargs, message):
    with pytest.raises(MemoryImageError, match=message):
        Memory(**kwargs)


def test_the_smallest_sector_is_one_word():
    memory = Memory(8, sector_bytes=4)
    memory.write(4, np.array([7], dtype=np.uint32))
    assert memory.read(0, np.uint32, 2).tolist() == [0, 7]


def test_an_unknown_region_names_those_placed():
    memory = Memory(256)
    with pytest.raises(MemoryImageError, match=r"^no region 'x'; placed: none$"):
        memory.address("x")
    memory.place("a", np.zeros(4, np.float32))
    memory.reserve("b", 8)
    with pytest.raises(MemoryImageError, match=r"^no region 'x'; placed: a, b$"):
        memory.tensor("x")
