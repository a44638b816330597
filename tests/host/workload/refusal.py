"""The check shared by the workload readers' tests: a refusal's whole text."""

import re

import pytest

from matndp.host.workload import WorkloadError


def refused(path, message, line=None):
    """pytest.raises for a WorkloadError whose whole text is ``path[:line]: message``."""
    where = str(path) if line is None else f"{path}:{line}"
    return pytest.raises(WorkloadError, match="^" + re.escape(f"{where}: {message}") + "$")


def check_json_file_refusals(read, path):
    """``read`` (a JSON reader) refuses a missing file, one not UTF-8, one not JSON (naming
    the line) and one nested past Python's recursion limit, each naming ``path``."""
    with refused(path, "cannot read: No such file or directory"):
        read(path)
    path.write_bytes(b'{"name": "\xff"}')
    with refused(path, "not a UTF-8 text file"):
        read(path)
    path.write_text('{\n\n "format": }')
    with refused(path, "not JSON: Expecting value", line=3) as caught:
        read(path)
    assert caught.value.line == 3
    path.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(WorkloadError, match="^" + re.escape(f"{path}: not JSON: ") + r"\S"):
        read(path)
