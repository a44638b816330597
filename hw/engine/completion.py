"""Completion queues of a shared engine unit: one completion stream per sub-core, fed by
completions that carry a value (loaded data) and by completions that carry none (stores,
atomics, refused accesses). A µthread has at most one access completing in a shared unit,
so the queues never overflow and take their inputs without back-pressure; :attr:`overrun`
tells a simulation that the rule was broken. Why, how the two kinds take turns, and the
timing: docs/engine.md, "Completion queues".
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.fifo import SyncFIFO
from amaranth.lib.wiring import In, Out

from .component import EngineComponent, check_positive
from .layouts import completion_layout, vector_layout


__all__ = ["fill_layout", "mark_layout", "CompletionQueue", "CompletingUnit"]


def fill_layout(config):
    """A completion with a value, for µthread ``thread`` (sub-core × slots + slot)."""
    return data.StructLayout({
        "thread": unsigned(config.engine.thread_bits),
        "value":  vector_layout(config),
    })


def mark_layout(config):
    """A completion without a value (its value is zero)."""
    return data.StructLayout({
        "thread": unsigned(config.engine.thread_bits),
        "error":  unsigned(1),
    })


def _round_robin(bits, above):
    """(one-hot grant, the bits above it) of the lowest set bit of ``bits`` that lies in
    ``above``, else of the lowest set bit. Both choices come from one carry chain over
    ``bits & above`` followed by ``bits``, with no selection before it."""
    width = len(bits)
    waiting_above = bits & above
    double = Cat(waiting_above, bits)
    decremented = (double - 1)[:2 * width]
    lowest = double & ~decremented
    higher = ~(double ^ decremented)[:2 * width]
    grant = lowest[:width] | lowest[width:]
    return grant, Mux(waiting_above.any(), higher[:width], higher[width:])


def _index_of(one_hot, width):
    """The position of the set bit of ``one_hot`` (at least two bits wide)."""
    index = Const(0, width)
    for position in range(1, len(one_hot)):
        index = index | Mux(one_hot[position], position, 0)
    return index[:width]


class CompletionQueue(EngineComponent):
    """Per-sub-core completion streams of one shared unit.

    ``fill``:        at most one valued completion per cycle.
    ``marks``:       ``marks`` value-less completions per cycle (for distinct µthreads).
    ``completions``: one stream per sub-core; ``slot`` is the µthread's slot within it.
    """

    @classmethod
    def check_arguments(cls, config, *, marks=1):
        check_positive("marks", marks)

    def __init__(self, config, *, marks=1):
        self.config = config
        engine = config.engine
        super().__init__({
            "fill":        In(stream.Signature(fill_layout(config), always_ready=True)),
            "marks":       In(stream.Signature(mark_layout(config), always_ready=True))
                           .array(marks),
            "completions": Out(stream.Signature(completion_layout(config))).array(engine.sub_cores),
        })
        self.overrun = Signal()

    def elaborate(self, platform):
        m = Module()
        engine = self.config.engine
        slot_bits = engine.slot_bits
        value_width = len(self.fill.payload.value.as_value())
        overruns = []

        for sub_core, completion in enumerate(self.completions):
            prefix = f"sub_core{sub_core}"

            def here(thread):
                return thread[slot_bits:] == sub_core

            queue = SyncFIFO(width=slot_bits + value_width, depth=engine.slots)
            m.submodules[f"{prefix}_queue"] = queue
            fill_here = self.fill.valid & here(self.fill.payload.thread)
            m.d.comb += [
                queue.w_en.eq(fill_here),
                queue.w_data.eq(Cat(self.fill.payload.thread[:slot_bits],
                                    self.fill.payload.value)),
            ]
            overruns.append(fill_here & ~queue.w_rdy)

            done = Signal(engine.slots, name=f"{prefix}_done")
            error = Signal(engine.slots, name=f"{prefix}_error")
            set_done = 0
            set_error = 0
            for index, mark in enumerate(self.marks):
                mark_here = mark.valid & here(mark.payload.thread)
                bit = Signal(engine.slots, name=f"{prefix}_mark{index}")
                m.d.comb += bit.eq(Mux(mark_here, 1 << mark.payload.thread[:slot_bits], 0))
                overruns.append((bit & (done | set_done)).any())
                set_done = set_done | bit
                set_error = set_error | Mux(mark.payload.error, bit, 0)

            # Round robin among done slots into ``held``; ``above`` holds the slots above
            # the last one taken, so that the next choice starts there.
            above = Signal(engine.slots, name=f"{prefix}_above",
                           init=((1 << engine.slots) - 1) & ~1)
            grant = Signal(engine.slots, name=f"{prefix}_grant")
            next_above = Signal(engine.slots, name=f"{prefix}_next_above")
            m.d.comb += Cat(grant, next_above).eq(Cat(*_round_robin(done, above)))
            held_valid = Signal(name=f"{prefix}_held_valid")
            held_slot = Signal(slot_bits, name=f"{prefix}_held_slot")
            held_error = Signal(name=f"{prefix}_held_error")

            load = ~completion.valid | completion.ready
            prefer_queue = Signal(name=f"{prefix}_prefer_queue")
            take_queue = queue.r_rdy & (prefer_queue | ~held_valid)
            take_held = load & held_valid & ~take_queue
            hold = (~held_valid | take_held) & done.any()
            cleared = Signal(engine.slots, name=f"{prefix}_cleared")
            m.d.comb += cleared.eq(Mux(hold, grant, 0))
            m.d.sync += [
                done.eq((done & ~cleared) | set_done),
                error.eq((error & ~cleared) | set_error),
            ]
            with m.If(take_held):
                m.d.sync += held_valid.eq(0)
            with m.If(hold):
                m.d.sync += [
                    held_valid.eq(1),
                    held_slot.eq(_index_of(grant, slot_bits)),
                    held_error.eq((error & grant).any()),
                    above.eq(next_above),
                ]

            head = data.View(data.StructLayout({"slot": unsigned(slot_bits),
                                                "value": vector_layout(self.config)}),
                             queue.r_data)
            m.d.comb += queue.r_en.eq(load & take_queue)
            with m.If(load):
                m.d.sync += completion.valid.eq(take_queue | held_valid)
                with m.If(take_queue):
                    m.d.sync += [
                        completion.payload.slot.eq(head.slot),
                        completion.payload.value.eq(head.value),
                        completion.payload.error.eq(0),
                        prefer_queue.eq(0),
                    ]
                with m.Elif(held_valid):
                    m.d.sync += [
                        completion.payload.slot.eq(held_slot),
                        completion.payload.value.eq(0),
                        completion.payload.error.eq(held_error),
                        prefer_queue.eq(1),
                    ]

        overrun = 0
        for item in overruns:
            overrun = overrun | item
        m.d.comb += self.overrun.eq(overrun)
        return m


class CompletingUnit(EngineComponent):
    """A shared unit that answers each sub-core on its own completion stream: ``config``
    (checked), the unit's ``members`` and ``completions``, and :attr:`overrun`."""

    def __init__(self, config, members):
        self.config = config
        super().__init__({
            **members,
            "completions": Out(stream.Signature(completion_layout(config)))
                           .array(config.engine.sub_cores),
        })
        # High in a cycle where a completion would be lost: never, while each µthread has
        # at most one access in the unit. Not a port; simulations watch it.
        self.overrun = Signal()

    def completion_queue(self, m, *, marks):
        """The unit's :class:`CompletionQueue` with ``marks`` mark inputs, driving
        ``completions`` and ``overrun``."""
        m.submodules.completion_queue = queue = CompletionQueue(self.config, marks=marks)
        m.d.comb += self.overrun.eq(queue.overrun)
        for source, completion in zip(queue.completions, self.completions):
            wiring.connect(m, source, wiring.flipped(completion))
        return queue
