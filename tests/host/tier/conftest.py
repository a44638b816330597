import pytest

from matndp.host.tier.lifetime import Lifetimes

from .graphs import PAGE, split_graph


@pytest.fixture(scope="module")
def split_lifetimes():
    """The lifetimes of :func:`~tests.host.tier.graphs.split_graph` in 4 KiB pages."""
    return Lifetimes(split_graph(), PAGE)
