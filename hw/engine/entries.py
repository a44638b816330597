"""Per-entry control of the engine: arming, initializer and finalizer, completion
counting, errors.

An entry is *armed* by the runtime (a pulse on ``arm``): its counters restart and, when it
names an initializer, that kernel runs first, as ``init_threads`` µthreads (0 counts as
one), the *i*-th started with SEQ = *i*; trigger events of the entry wait until all of them
have ended. Every main µthread that ends without error counts as one completion; when the
count reaches the entry's expected count (non-zero), the finalizer runs (when it names
one) as ``final_threads`` µthreads (0 counts as one), the *i*-th started with SEQ = *i*,
and once all of them have ended, the entry is *complete*. Each of those steps also waits
until the memory port has taken every posted store of the entry (``stores_pending``), so
that what follows sees them. An error stops the entry: its
µthreads end as they next dispatch, and its further events are drained (counted, not run).

The order of an ordered entry's scratchpad atomics is kept by :mod:`.ordering`, from the
sequence numbers given here.
"""

from amaranth.hdl import Module, Mux, Signal, unsigned
from amaranth.lib import data, enum
from amaranth.lib.wiring import In, Out

from .component import EngineComponent, check_positive
from .layouts import (ThreadKind, entry_config_layout, entry_status_layout, error_layout,
                      retire_layout)


__all__ = ["Phase", "EntryControl"]


class Phase(enum.Enum, shape=3):
    RUN = 0             # events start main µthreads
    INIT_WAIT = 1       # the initializer's µthreads wait for slots (some may run); events wait
    INIT = 2            # the initializer's µthreads have all started; events wait
    FINAL_WAIT = 3      # the finalizer's µthreads wait for slots (some may run)
    FINAL = 4           # the finalizer's µthreads have all started
    DONE = 5            # complete


class EntryControl(EngineComponent):
    """Ports:

    entry_config:  per entry, the kernel entry points and counts (register file).
    arm:           per entry, a pulse that (re)starts it.
    retire_valid / retire:  µthreads that ended, ``retire_ports`` of them per cycle.
    error_valid / error:    errors, ``error_ports`` per cycle.
    spawned / spawned_entry / spawned_kind: the spawner started a µthread.
    drained / drained_entry: the spawner dropped an event of a stopped entry.
    clear_error:   forget the recorded first error.
    stores_pending: per entry, a posted store of it has not reached the memory port.

    status:        per entry, what the register file shows.
    seq:           per entry, the sequence number the next main µthread gets.
    helper_seq:    per entry, the SEQ the next initializer or finalizer µthread gets.
    accepts:       per entry, events may start main µthreads now.
    init_request, final_request: per entry, a kernel waiting for a slot.
    first_error, error_recorded: the first error since ``clear_error``.
    """

    @classmethod
    def check_arguments(cls, config, *, retire_ports, error_ports):
        check_positive("retire_ports", retire_ports)
        check_positive("error_ports", error_ports)

    def __init__(self, config, *, retire_ports, error_ports):
        self.config = config
        self.retire_ports = retire_ports
        self.error_ports = error_ports
        entries = config.trigger.filter_entries
        entry = unsigned(config.trigger.entry_bits)
        super().__init__({
            "entry_config":   In(data.ArrayLayout(entry_config_layout(config), entries)),
            "arm":            In(entries),
            "retire_valid":   In(retire_ports),
            "retire":         In(data.ArrayLayout(retire_layout(config), retire_ports)),
            "error_valid":    In(error_ports),
            "error":          In(data.ArrayLayout(error_layout(config), error_ports)),
            "spawned":        In(1),
            "spawned_entry":  In(entry),
            "spawned_kind":   In(ThreadKind),
            "drained":        In(1),
            "drained_entry":  In(entry),
            "clear_error":    In(1),
            "stores_pending": In(entries),
            "status":         Out(data.ArrayLayout(entry_status_layout(config), entries)),
            "seq":            Out(data.ArrayLayout(unsigned(32), entries)),
            "helper_seq":     Out(data.ArrayLayout(unsigned(config.counter_width), entries)),
            "accepts":        Out(entries),
            "init_request":   Out(entries),
            "final_request":  Out(entries),
            "first_error":    Out(error_layout(config)),
            "error_recorded": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        entries = config.trigger.filter_entries
        count_width = config.counter_width

        # The first error, until cleared: the lowest port wins within one cycle.
        with m.If(self.clear_error):
            m.d.sync += self.error_recorded.eq(0)
        for port in reversed(range(self.error_ports)):
            with m.If(self.error_valid[port] & (~self.error_recorded | self.clear_error)):
                m.d.sync += [self.first_error.eq(self.error[port]), self.error_recorded.eq(1)]

        for index in range(entries):
            config_e = self.entry_config[index]
            status = self.status[index]
            phase = Signal(Phase, name=f"phase{index}")
            finalized = Signal(name=f"finalized{index}")

            completions = sum(
                self.retire_valid[port] & (self.retire[port].entry == index) &
                (self.retire[port].kind == ThreadKind.MAIN) & ~self.retire[port].error
                for port in range(self.retire_ports))
            def ended(kind):
                return sum(self.retire_valid[port] & (self.retire[port].entry == index) &
                           (self.retire[port].kind == kind)
                           for port in range(self.retire_ports))
            # An initializer's or finalizer's µthreads (the phases do not overlap): how
            # many to start (0 counts as one), how many have started (the next one's SEQ)
            # and how many have ended.
            def helper_count(programmed, name):
                count = Signal(count_width, name=f"{name}{index}")
                m.d.comb += count.eq(Mux(programmed == 0, 1, programmed))
                return count
            init_threads = helper_count(config_e.init_threads, "init_threads")
            final_threads = helper_count(config_e.final_threads, "final_threads")
            helpers_started = self.helper_seq[index]
            helpers_ended = Signal(count_width, name=f"helpers_ended{index}")
            init_ended_next = (helpers_ended + ended(ThreadKind.INIT))[:count_width]
            final_ended_next = (helpers_ended + ended(ThreadKind.FINAL))[:count_width]
            failed = Signal(name=f"failed{index}")
            m.d.comb += failed.eq(sum(
                self.error_valid[port] & (self.error[port].entry == index)
                for port in range(self.error_ports)) != 0)
            spawned_here = self.spawned & (self.spawned_entry == index)
            stored = ~self.stores_pending[index]

            m.d.comb += [
                self.accepts[index].eq(((phase == Phase.RUN) | (phase == Phase.FINAL_WAIT) |
                                        (phase == Phase.FINAL) | (phase == Phase.DONE)) &
                                       ~status.stopped),
                self.init_request[index].eq((phase == Phase.INIT_WAIT) & ~status.stopped),
                self.final_request[index].eq((phase == Phase.FINAL_WAIT) & ~status.stopped),
                status.complete.eq(phase == Phase.DONE),
                status.busy.eq((phase != Phase.RUN) & (phase != Phase.DONE)),
            ]
            completed_next = (status.completed + completions)[:count_width]
            reached = (config_e.expected != 0) & (completed_next >= config_e.expected)

            with m.If(self.arm[index]):
                m.d.sync += [
                    status.completed.eq(0),
                    status.drained.eq(0),
                    status.stopped.eq(0),
                    self.seq[index].eq(0),
                    finalized.eq(0),
                    helpers_started.eq(0),
                    helpers_ended.eq(0),
                ]
                with m.If(config_e.has_init):
                    m.d.sync += phase.eq(Phase.INIT_WAIT)
                with m.Else():
                    m.d.sync += phase.eq(Phase.RUN)
            with m.Else():
                m.d.sync += status.completed.eq(completed_next)
                with m.If(self.drained & (self.drained_entry == index)):
                    m.d.sync += status.drained.eq(status.drained + 1)
                with m.If(failed):
                    m.d.sync += status.stopped.eq(1)
                with m.If(spawned_here & (self.spawned_kind == ThreadKind.MAIN)):
                    m.d.sync += self.seq[index].eq(self.seq[index] + 1)
                with m.Switch(phase):
                    with m.Case(Phase.INIT_WAIT):
                        m.d.sync += helpers_ended.eq(init_ended_next)
                        with m.If(spawned_here & (self.spawned_kind == ThreadKind.INIT)):
                            m.d.sync += helpers_started.eq(helpers_started + 1)
                            with m.If(helpers_started + 1 == init_threads):
                                m.d.sync += phase.eq(Phase.INIT)
                    with m.Case(Phase.INIT):
                        m.d.sync += helpers_ended.eq(init_ended_next)
                        with m.If((init_ended_next == init_threads) & stored):
                            m.d.sync += [phase.eq(Phase.RUN), helpers_started.eq(0),
                                         helpers_ended.eq(0)]
                    with m.Case(Phase.RUN):
                        with m.If(reached & ~finalized & stored):
                            m.d.sync += finalized.eq(1)
                            with m.If(config_e.has_final):
                                m.d.sync += phase.eq(Phase.FINAL_WAIT)
                            with m.Else():
                                m.d.sync += phase.eq(Phase.DONE)
                    with m.Case(Phase.FINAL_WAIT):
                        m.d.sync += helpers_ended.eq(final_ended_next)
                        with m.If(spawned_here & (self.spawned_kind == ThreadKind.FINAL)):
                            m.d.sync += helpers_started.eq(helpers_started + 1)
                            with m.If(helpers_started + 1 == final_threads):
                                m.d.sync += phase.eq(Phase.FINAL)
                    with m.Case(Phase.FINAL):
                        m.d.sync += helpers_ended.eq(final_ended_next)
                        with m.If((final_ended_next == final_threads) & stored):
                            m.d.sync += phase.eq(Phase.DONE)
        return m
