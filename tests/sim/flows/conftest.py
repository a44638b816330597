"""`make sim`'s trigger run, shortened (one tile), made once per simulator and test process
for every test that reads what it wrote: the run takes tens of seconds under Icarus."""

import pytest

from matndp.sim.flows.trigger_layer import run_trigger_layer


TRIGGER_LAYER_SEED = 2


@pytest.fixture(scope="session")
def trigger_layer_run(tmp_path_factory):
    """``trigger_layer_run(simulator)``: the folder the run wrote and its report; the
    run's seed is ``trigger_layer_run.seed``."""
    runs = {}

    def run(simulator):
        if simulator not in runs:
            folder = tmp_path_factory.mktemp(f"trigger-layer-{simulator}")
            report = run_trigger_layer(folder, simulator=simulator, tiles=1,
                                       seed=TRIGGER_LAYER_SEED, progress=lambda line: None)
            runs[simulator] = folder, report
        return runs[simulator]
    run.seed = TRIGGER_LAYER_SEED
    return run
