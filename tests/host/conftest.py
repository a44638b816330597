"""Fixtures shared by the host-model tests."""

import os

import pytest

from matndp.host.calibration import load_calibration
from matndp.host.output import pyplot


@pytest.fixture(scope="module")
def calibration(tmp_path_factory):
    """The documented defaults: loaded where no calibration file exists."""
    here = os.getcwd()
    os.chdir(tmp_path_factory.mktemp("nocal"))
    try:
        return load_calibration()
    finally:
        os.chdir(here)


@pytest.fixture
def drawn_figures(monkeypatch):
    """``capture(module)``: the figures ``module`` hands to ``save_figure`` from then on,
    kept for the test to read instead of written."""
    drawn = []

    def keep(figure, path, dpi=120):
        drawn.append(figure)
        return path

    def capture(module):
        monkeypatch.setattr(module, "save_figure", keep)
        return drawn
    yield capture
    pyplot().close("all")
