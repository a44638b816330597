"""The checks of one soak round once it has run, in bulk over its logs: the GPU path
against the pass-through reference and the memory model (:func:`~matndp.sim.batch.check.check_gpu_path`:
every access answered exactly once, with its id, the right data and status, nothing lost,
duplicated, reordered within an id or misrouted; every dump equal to the model's memory),
the events against the entries in force in each phase
(:func:`~matndp.sim.batch.check.check_events`), and per stage: no phase that carries GPU
traffic or waits for a completion ended on its budget (the GPU was never held), every
launch complete with each trigger counted and its outputs bit-exact against the numpy
golden (accumulating in the order the triggers came: memory may answer a read-triggered
reduction's reads out of order), the faulting entry stopped with its entry, pc and cause recorded and nothing
else recorded, the decoy entry's events all run, and the memory error counters equal to
the accesses to unmapped and failing memory.
"""

import numpy as np

from matndp.sim.batch.check import CheckFailed, check_events, check_gpu_path
from matndp.sim.flows.kernel_run import differing_elements, golden_outputs
from matndp.sim.flows.soak.faults import FAULT_KERNELS
from matndp.sim.flows.soak.layout import FAILING, HOLE


__all__ = ["SoakFailure", "check_round"]


class SoakFailure(AssertionError):
    """A soak round disagrees with its models; ``record`` says where (plain values: the
    round, the stage and phase when known, the check, the first wrong record)."""

    def __init__(self, message, record):
        super().__init__(message)
        self.record = record


def _fail(soak_round, check, message, stage=None, phase=None, cycle=None):
    record = {"seed": soak_round.seed, "round": soak_round.number, "check": check,
              "stage": stage, "phase": phase, "cycle": cycle, "first_wrong_record": message}
    where = f"round {soak_round.number}" + ("" if stage is None else f", stage {stage}") + \
        ("" if phase is None else f", phase {phase}")
    raise SoakFailure(f"{where}: {check}: {message}", record)


def check_round(soak_round, result):
    """Every check of ``soak_round`` against its run ``result`` (a
    :class:`~matndp.sim.batch.run.BatchResult`); raises :class:`SoakFailure` naming the first
    wrong record, else returns a summary of what was checked."""
    for stage in soak_round.stages:
        for key, what in stage.phases:
            measured = result[key]
            if what != "settle" and measured["reason"] != "until":
                _fail(soak_round, "phase ended by its stop condition",
                      f"the {what} phase ran out of its budget after {measured['cycles']} cycles "
                      f"({measured['sent']} of its requests sent): the GPU was held or a kernel "
                      f"never completed", stage.number, key)
    try:
        summary = check_gpu_path(result)
    except CheckFailed as error:
        _fail(soak_round, "GPU path and memory against the reference", str(error),
              *_where(soak_round, result, error.cycle))
    timeline = [(result[key]["start_cycle"], entries) for key, entries in soak_round.timeline]
    try:
        summary.update(check_events(result, timeline))
    except CheckFailed as error:
        _fail(soak_round, "events against the entries in force", str(error),
              *_where(soak_round, result, error.cycle))

    logs = _StageLogs(result)
    counts = {"launches": 0, "faults": {}, "decoys": 0, "stages": len(soak_round.stages)}
    for stage in soak_round.stages:
        _check_stage(soak_round, stage, result, logs, counts)
    summary.update(counts)
    summary["cycles"] = result.cycles
    return summary


def _where(soak_round, result, cycle):
    """(stage, phase, cycle) of a record of cycle ``cycle``: the phase running then, or
    None between phases; (None, None, None) when the cycle is not known."""
    if cycle is None:
        return None, None, None
    for stage in soak_round.stages:
        if cycle <= result[stage.dump_key]["cycle"]:
            for key, _ in stage.phases:
                if result[key]["start_cycle"] < cycle <= result[key]["end_cycle"]:
                    return stage.number, key, cycle
            return stage.number, None, cycle
    return None, None, cycle


class _StageLogs:
    """What the per-stage checks read of a round's run: the memory requests (and which of
    them memory refused), the events."""

    def __init__(self, result):
        self.memory = result.log("mem_requests")
        self.refused = np.zeros(len(self.memory["addr"]), dtype=bool)
        for start, end in (HOLE, FAILING):
            self.refused |= (self.memory["addr"] >= np.uint64(start)) & (self.memory["addr"] < np.uint64(end))
        self.events = result.log("events")


def _check_stage(soak_round, stage, result, logs, counts):
    """The checks of one stage's status, outputs, fault, decoy and error counters; adds
    what it checked to ``counts``."""
    report = result[stage.report_key]
    dump_cycle = result[stage.dump_key]["cycle"]
    start_cycle = result[stage.phases[0][0]]["start_cycle"]
    events = logs.events

    def fail(message, check="stage status"):
        _fail(soak_round, check, message, stage.number)

    expected_error = None
    if stage.fault is not None:
        kernel = FAULT_KERNELS[stage.fault["kind"]]
        loaded = result[soak_round.prepare_key]
        expected_error = (stage.fault["entry"], loaded[kernel.image.name] + kernel.pc, kernel.cause.name)
    if report["error"] != expected_error:
        fail(f"the engine recorded error {report['error']}; expected {expected_error}",
             "fault reported with its entry, pc and cause")
    for index, plan in zip(stage.launch_entries, stage.plans):
        name = f"entry {index} ({plan.request.name}, {plan.request.problem})"
        expected = plan.launch.expected_triggers
        counted = report["entries"][index]
        if not report["done"] >> index & 1:
            fail(f"{name} is not complete: {counted}")
        if counted != {"hits": expected, "completed": expected, "drained": 0}:
            fail(f"{name}: {counted}; expected {expected} hits and completions, none drained")

    image = result.image(stage.dump_key)
    in_stage = (events["cycle"] > np.uint64(start_cycle)) & (events["cycle"] < np.uint64(dump_cycle))
    for index, plan in zip(stage.launch_entries, stage.plans):
        # A reduction accumulates in trigger order: a read-triggered launch's is the order
        # memory answered in (the events check has held it to the responses).
        offsets = events["offset"][in_stage & (events["entry"] == index)]
        order = [int(offset) // plan.sector_bytes for offset in offsets]
        if sorted(order) != list(range(plan.launch.expected_triggers)):
            fail(f"entry {index} ({plan.request.name}): its events in the stage are sectors "
                 f"{order[:20]}…, not each of its {plan.launch.expected_triggers} once")
        outputs = plan.outputs(lambda region: image.read(region["addr"], region["bytes"]))
        differing = differing_elements(outputs, golden_outputs(plan.launch, plan.inputs, order))
        if differing:
            fail(f"entry {index} ({plan.request.name}, {plan.request.problem}): elements differ "
                 f"from the golden {differing}", "kernel outputs bit-exact against the golden")
    counts["launches"] += len(stage.plans)

    if stage.fault is not None:
        index = stage.fault["entry"]
        counted = report["entries"][index]
        if not report["stopped"] >> index & 1 or counted["completed"] or \
                counted["hits"] != stage.fault["triggers"]:
            fail(f"faulting entry {index} ({stage.fault['kind']}): stopped "
                 f"{report['stopped'] >> index & 1}, {counted}; expected stopped with "
                 f"{stage.fault['triggers']} hits, none completed")
        counts["faults"][stage.fault["kind"]] = counts["faults"].get(stage.fault["kind"], 0) + 1
    if stage.decoy is not None:
        counted = report["entries"][stage.decoy]
        taken = int((in_stage & (events["entry"] == stage.decoy)).sum())
        if counted != {"hits": taken, "completed": taken, "drained": 0}:
            fail(f"decoy entry {stage.decoy}: {counted}; its events: {taken}")
        counts["decoys"] += 1

    memory = logs.memory
    before = memory["cycle"] < np.uint64(dump_cycle)
    for name, write in (("mem_read_errors", 0), ("mem_write_errors", 1)):
        expected = int((before & logs.refused & (memory["write"] == write)).sum())
        if report[name] != expected:
            fail(f"{name.upper()} reads {report[name]}; memory refused {expected} such "
                 f"accesses so far", "memory error counters")
