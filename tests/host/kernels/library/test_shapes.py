"""Problem shapes: the checks, and how many partials a reduction uses."""

import pytest

from matndp.host.kernels.library import LibraryError
from matndp.host.kernels.library.shapes import (at_least, both, channel_partials, multiple,
                                                partial_shift, row_partials, row_partials_bytes)


def test_channel_reductions_spread_each_statistic_over_at_least_eight_addresses():
    for channels in (8, 16, 24, 64, 128):
        partials = channel_partials({"channels": channels})
        assert partials * channels // 8 >= 8
        assert partials == 1 or (partials - 1) * channels // 8 < 8    # no more than needed


def test_row_reductions_use_a_power_of_two_up_to_four_partials():
    assert [row_partials({"columns": columns}) for columns in (8, 16, 24, 32, 64, 1024)] == [1, 2, 2, 4, 4, 4]
    assert row_partials({"columns": 32}, lanes=16) == 2


def test_a_rows_partials_are_selected_by_a_mask():
    assert partial_shift("k", 1) == 5 and partial_shift("k", 4) == 7
    with pytest.raises(LibraryError, match="k: row reductions need a power-of-two number of partials, not 3"):
        partial_shift("k", 3)
    assert row_partials_bytes({"rows": 3}, 4) == 3 * 32 * 4


def test_checks_name_the_dimension_and_the_reason():
    check = both(multiple("channels", 8), at_least("rows", 2, "a variance"))
    check({"rows": 2, "channels": 16})
    with pytest.raises(LibraryError, match="channels = 12 must be a multiple of 8"):
        check({"rows": 2, "channels": 12})
    with pytest.raises(LibraryError, match=r"rows = 1 must be at least 2 \(a variance\)"):
        check({"rows": 1, "channels": 8})
