"""The library's assembly sources, read from the package (kernels beside the files they
include) and assembled."""

import functools
import importlib.resources

from matndp.host.kernels.assembler import assemble


__all__ = ["library_source", "read_include", "library_image"]


@functools.cache
def library_source(filename):
    """The text of a file of the library's folder."""
    return importlib.resources.files(__package__).joinpath(filename).read_text()


def read_include(name, including):
    """Reads a file a library source includes: from the library's folder (a reader for
    :func:`~matndp.host.kernels.assembler.assemble`)."""
    try:
        return library_source(name), f"library/{name}"
    except (FileNotFoundError, IsADirectoryError):
        raise FileNotFoundError(f"the kernel library has no file {name}") from None


@functools.cache
def library_image(filename):
    """The assembled image of library source ``filename``."""
    return assemble(library_source(filename), filename=f"library/{filename}", include=read_include)
