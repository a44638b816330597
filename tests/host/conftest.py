"""Fixtures shared by the host-model tests."""

import os

import pytest

from matndp.host.calibration import load_calibration


@pytest.fixture(scope="module")
def calibration(tmp_path_factory):
    """The documented defaults: loaded where no calibration file exists."""
    here = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("nocal"))
    try:
        return load_calibration()
    finally:
        os.chdir(here)
