"""The library's sources: every file is a kernel's source or included by one, included
files are read from the library, and an error in one names it and the use."""

import importlib.resources
import re

import pytest

from matndp.host.kernels import expander
from matndp.host.kernels.assembler import AssemblyError, assemble
from matndp.host.kernels.library import KERNELS, library_source
from matndp.host.kernels.library.sources import library_image, read_include


FILES = sorted(path.name for path in importlib.resources.files("matndp.host.kernels.library").iterdir()
               if path.name.endswith((".s", ".inc")))


def _included(name, seen=()):
    """The files ``name`` includes, directly or not."""
    found = set()
    for included in re.findall(r'^\s*\.include\s+"([^"]+)"', library_source(name), re.MULTILINE):
        if included not in seen:
            found |= {included} | _included(included, (*seen, name))
    return found


def test_every_source_is_a_kernels_and_every_included_file_is_included():
    sources = {spec.source for spec in KERNELS.values()}
    assert {name for name in FILES if name.endswith(".s")} == sources
    included = set().union(*(_included(name) for name in sources))
    assert {name for name in FILES if name.endswith(".inc")} == included


def test_included_files_come_from_the_library():
    text, name = read_include("exp.inc", "library/gelu_fwd.s")
    assert name == "library/exp.inc" and ".macro exp" in text
    with pytest.raises(FileNotFoundError, match="the kernel library has no file nothing.inc"):
        read_include("nothing.inc", "library/gelu_fwd.s")
    assert library_image("gelu_fwd.s") is library_image("gelu_fwd.s")


def test_a_macro_of_the_library_misused_names_its_line_and_the_use():
    """The example of docs/isa.md ("Shared code")."""
    source = ('.kernel my\n.arg Y 0\n.include "exp.inc"\n.main\n    vsub    v1, DATA, 1.0\n'
              '    exp     v2, v1, x2, v3\n    vst.x   [OFFSET + Y], v2\n')
    with pytest.raises(AssemblyError) as caught:
        assemble(source, "my.s", include=read_include)
    assert str(caught.value) == ("library/exp.inc:10:13: the destination of vfma is a vector "
                                 "register (v0 … v15), not 'x2'\n  in macro exp, used at my.s:6:5")


def test_the_expander_kernels_assemble_with_the_library_files():
    for name in expander.OPTIMIZERS:
        assert '.include "optimizers.inc"' in expander.reduction_source(name, 2)
        assert not expander.reduction_image(name, 2).uses_atomics
