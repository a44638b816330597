"""What a soak round asks of the host runtime between phases: module-level dataclasses, so
that a job carries them pickled to the testbench (:meth:`~matndp.sim.batch.job.BatchJob.runtime`)."""

from dataclasses import dataclass

from matndp.sim.flows.kernel_batch import plain_error


__all__ = ["PrepareRound", "EntryProgram", "ArmEntries", "StageReport"]


@dataclass(frozen=True)
class PrepareRound:
    """Check the slice, load every kernel of the round once, set the memory window and the
    watchdog; returns each kernel's first instruction word (by name)."""
    images: tuple
    window: tuple
    watchdog: int

    def __call__(self, runtime):
        runtime.probe()
        loaded = {image.name: runtime.load_kernel(image).base for image in self.images}
        runtime.set_memory_window(*self.window)
        runtime.set_watchdog(self.watchdog)
        return loaded


@dataclass(frozen=True)
class EntryProgram:
    """Filter entry ``index`` runs loaded kernel ``kernel`` with argument block ``index``
    (written first when ``arguments`` is given). ``entry`` holds the filter range's fields
    as a launch plan gives them: ``base``, ``size``, ``on_write`` and ``on_read``, and
    ``expected``, ``init_threads`` and ``final_threads`` where the kernel needs them."""
    index: int
    kernel: str
    entry: dict
    arguments: tuple | None = None


@dataclass(frozen=True)
class ArmEntries:
    """Disarm ``disarm`` (``"all"``: every armed entry; the recorded error is cleared
    too), then program ``programs`` (:class:`EntryProgram`); with ``irq_mask`` set
    IRQ_ENABLE to it. Returns the FilterRanges programmed, by entry."""
    programs: tuple = ()
    disarm: tuple | str = ()
    irq_mask: int | None = None

    def __call__(self, runtime):
        if self.disarm == "all":
            for index in sorted(runtime.ranges):
                runtime.disable(index)
            runtime.clear_error()
        else:
            for index in self.disarm:
                runtime.disable(index)
        programmed = {}
        for program in self.programs:
            if program.arguments is not None:
                runtime.write_arguments(program.index, list(program.arguments))
            kernel = runtime.kernels[program.kernel]
            entry = kernel.filter_range(arg_index=program.index, **program.entry)
            runtime.program(program.index, entry)
            programmed[program.index] = entry
        if self.irq_mask is not None:
            runtime.enable_interrupts(self.irq_mask)
        return programmed


@dataclass(frozen=True)
class StageReport:
    """The status a stage ends with: COMPLETE and STOPPED, the recorded error, entries'
    HITS, COMPLETED and DRAINED, and the memory error counters."""
    entries: tuple

    def __call__(self, runtime):
        return {"done": runtime.done_mask(), "stopped": runtime.stopped_mask(),
                "error": plain_error(runtime.error()),
                "entries": {index: {"hits": runtime.hits(index), "completed": runtime.completed(index),
                                    "drained": runtime.drained(index)} for index in self.entries},
                "mem_read_errors": runtime.read_fields("mem_read_errors")["count"],
                "mem_write_errors": runtime.read_fields("mem_write_errors")["count"]}
