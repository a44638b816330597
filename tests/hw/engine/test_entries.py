"""The entry control alone, in Amaranth's simulator, against its contract (docs/engine.md,
"Initializer, finalizer, completion" and "Errors").

The testbench plays the spawner and the sub-cores: it starts initializers, finalizers and
main µthreads when the entry control asks for or accepts them, at random moments (as the
spawner does, no main µthread while a helper waits), ends
them after random lifetimes on random retire ports (several in one cycle), drains events,
injects errors and clears the recorded one; and it says at random which entries have
posted stores on their way to memory, which hold each step of an entry (the initializer's
end, the finalizer's start, completion) until they have none. Beside it runs a model of what the docs
promise of each entry, from which every output is checked every cycle."""

import random
from dataclasses import dataclass

import pytest

from matndp.hw.config import EngineConfig, NDPConfig, TriggerConfig
from matndp.hw.engine.entries import EntryControl
from matndp.hw.engine.layouts import ErrorCause, ThreadKind

from .harness import simulate
from ..streams import shared


ENTRIES = 4
PORTS = 4
CONFIG = NDPConfig(trigger=TriggerConfig(filter_entries=ENTRIES),
                   engine=EngineConfig(sub_cores=2, slots=4, instruction_words=64,
                                       argument_blocks=4))


@dataclass
class Promise:
    """What the docs promise of one entry since it was last armed."""
    has_init: bool
    has_final: bool
    expected: int
    init_threads: int = 1    # as programmed: 0 runs one
    final_threads: int = 1   # as programmed: 0 runs one
    armed: bool = False
    inits_started: int = 0
    inits_ended: int = 0
    completed: int = 0
    drained: int = 0
    reached: bool = False
    finals_started: int = 0
    finals_ended: int = 0
    init_done: bool = False     # its end seen with none of the entry's stores on their way
    final_done: bool = False    # the same for the finalizer
    stopped: bool = False
    seq: int = 0

    def arm(self):
        self.__init__(self.has_init, self.has_final, self.expected, self.init_threads,
                      self.final_threads, armed=True)

    @property
    def inits(self):
        return max(1, self.init_threads)

    @property
    def finals(self):
        return max(1, self.final_threads)

    @property
    def final_ended(self):
        return self.finals_ended == self.finals

    @property
    def initializing(self):
        return self.armed and self.has_init and not self.init_done

    @property
    def accepts(self):
        return not self.stopped and not self.initializing

    @property
    def init_request(self):
        return self.armed and self.has_init and self.inits_started < self.inits and not self.stopped

    @property
    def final_request(self):
        return self.reached and self.has_final and self.finals_started < self.finals \
            and not self.stopped

    @property
    def complete(self):
        return self.reached and (not self.has_final or self.final_done)

    @property
    def busy(self):
        return self.initializing or (self.reached and self.has_final and not self.final_done)


def _entry_config(promise):
    return {"main_pc": 1, "init_pc": 2, "final_pc": 3, "has_init": int(promise.has_init),
            "has_final": int(promise.has_final), "ordered": 0, "arg_block": 0,
            "expected": promise.expected, "init_threads": promise.init_threads,
            "final_threads": promise.final_threads}


def run_entries(seed, cycles=2500, error_rate=0.004):
    dut = shared(EntryControl, CONFIG, retire_ports=PORTS, error_ports=PORTS)
    rng = random.Random(seed)
    # Entry e has an initializer when bit 0 is set, a finalizer when bit 1 is; of the two
    # with each, one runs it as 0 µthreads (one), the other as several.
    init_threads, final_threads = (2, 0, 1, 3), (1, 3, 0, 2)
    promises = [Promise(bool(e & 1), bool(e & 2), rng.randrange(1, 20), init_threads[e],
                        final_threads[e]) for e in range(ENTRIES)]
    alive = []              # [cycles left, entry, kind, fails]
    seen = {"init": 0, "several_inits": 0, "final": 0, "several_finals": 0, "complete": 0, "errors": 0, "rearmed": 0,
            "drained": 0, "held": 0}
    recorded = None         # the error the docs say is recorded

    async def bench(ctx):
        nonlocal recorded
        ctx.set(dut.entry_config, [_entry_config(p) for p in promises])
        for cycle in range(cycles):
            # --- inputs of this cycle ------------------------------------------------------
            arm = 0
            if cycle == 2:
                arm = (1 << ENTRIES) - 1
            else:
                for entry, promise in enumerate(promises):
                    # A finished or stopped entry is armed again once its µthreads are gone.
                    idle = not any(t[1] == entry for t in alive)
                    if (promise.complete or promise.stopped) and idle and rng.random() < 0.05:
                        arm |= 1 << entry
                        seen["rearmed"] += 1
            ctx.set(dut.arm, arm)

            spawned = None
            requests = [(e, ThreadKind.INIT) for e, p in enumerate(promises) if p.init_request]
            requests += [(e, ThreadKind.FINAL) for e, p in enumerate(promises) if p.final_request]
            accepting = [e for e, p in enumerate(promises) if p.accepts and p.armed]
            drained = None
            # As the spawner does, no main µthread starts while a helper waits.
            if requests:
                if rng.random() < 0.5:
                    spawned = rng.choice(requests)
            elif accepting and rng.random() < 0.4:
                spawned = (rng.choice(accepting), ThreadKind.MAIN)
            elif rng.random() < 0.1:
                stopped = [e for e, p in enumerate(promises) if p.stopped]
                if stopped:
                    drained = rng.choice(stopped)
            if spawned is not None and arm >> spawned[0] & 1:
                spawned = None
            ctx.set(dut.spawned, spawned is not None)
            if spawned is not None:
                ctx.set(dut.spawned_entry, spawned[0])
                ctx.set(dut.spawned_kind, spawned[1])
            ctx.set(dut.drained, drained is not None)
            ctx.set(dut.drained_entry, drained or 0)

            # µthreads that end now, on random distinct ports; some with an error.
            for thread in alive:
                thread[0] -= 1
            ending = [t for t in alive if t[0] <= 0][:PORTS]
            ports = rng.sample(range(PORTS), len(ending))
            retire_valid = error_valid = 0
            retires = [{"entry": 0, "kind": 0, "error": 0}] * PORTS
            errors = [{"entry": 0, "pc": 0, "cause": 0}] * PORTS
            for port, thread in zip(ports, ending):
                alive.remove(thread)
                _, entry, kind, fails = thread
                stopped = promises[entry].stopped
                retire_valid |= 1 << port
                retires[port] = {"entry": entry, "kind": kind, "error": int(fails or stopped)}
                if fails:
                    error_valid |= 1 << port
                    errors[port] = {"entry": entry, "pc": rng.randrange(64),
                                    "cause": ErrorCause.MISALIGNED}
            ctx.set(dut.retire_valid, retire_valid)
            ctx.set(dut.retire, retires)
            ctx.set(dut.error_valid, error_valid)
            ctx.set(dut.error, errors)
            clear = rng.random() < 0.02
            ctx.set(dut.clear_error, clear)
            pending = sum(1 << entry for entry in range(ENTRIES) if rng.random() < 0.4)
            ctx.set(dut.stores_pending, pending)

            # --- outputs, against the promise ----------------------------------------------
            for entry, promise in enumerate(promises):
                status = ctx.get(dut.status[entry])
                what = f"cycle {cycle} entry {entry}"
                assert status.completed == promise.completed, what
                assert status.drained == promise.drained, what
                assert status.stopped == promise.stopped, what
                assert status.complete == promise.complete, what
                assert status.busy == promise.busy, what
                assert ctx.get(dut.seq[entry]) == promise.seq, what
                if promise.init_request:
                    assert ctx.get(dut.helper_seq[entry]) == promise.inits_started, what
                if promise.final_request:
                    assert ctx.get(dut.helper_seq[entry]) == promise.finals_started, what
                assert ctx.get(dut.accepts) >> entry & 1 == promise.accepts, what
                assert ctx.get(dut.init_request) >> entry & 1 == promise.init_request, what
                assert ctx.get(dut.final_request) >> entry & 1 == promise.final_request, what
            assert ctx.get(dut.error_recorded) == (recorded is not None)
            if recorded is not None:
                first = ctx.get(dut.first_error)
                assert (first.entry, first.pc, ErrorCause(first.cause)) == recorded

            await ctx.tick()

            # --- the promise moves with this cycle's inputs --------------------------------
            if clear:
                recorded = None
            if error_valid and recorded is None:
                port = min(p for p in range(PORTS) if error_valid >> p & 1)
                recorded = (errors[port]["entry"], errors[port]["pc"], ErrorCause.MISALIGNED)
            for entry, promise in enumerate(promises):
                if arm >> entry & 1:
                    promise.arm()
                    continue
                for port in range(PORTS):
                    if retire_valid >> port & 1 and retires[port]["entry"] == entry:
                        kind = retires[port]["kind"]
                        if kind is ThreadKind.MAIN and not retires[port]["error"]:
                            promise.completed += 1
                        elif kind is ThreadKind.INIT and promise.inits_ended < promise.inits_started:
                            promise.inits_ended += 1
                        elif kind is ThreadKind.FINAL and promise.finals_ended < promise.finals_started:
                            promise.finals_ended += 1
                            seen["complete"] += promise.final_ended
                if any(error_valid >> p & 1 and errors[p]["entry"] == entry for p in range(PORTS)):
                    promise.stopped = True
                    seen["errors"] += 1
                if drained == entry:
                    promise.drained += 1
                    seen["drained"] += 1
                if spawned is not None and spawned[0] == entry:
                    kind = spawned[1]
                    if kind is ThreadKind.MAIN:
                        promise.seq += 1
                    elif kind is ThreadKind.INIT:
                        promise.inits_started += 1
                        seen["init"] += 1
                        seen["several_inits"] += promise.inits_started > 1
                    else:
                        promise.finals_started += 1
                        seen["final"] += 1
                        seen["several_finals"] += promise.finals_started > 1
                stored = not pending >> entry & 1
                if promise.armed and promise.has_init and promise.inits_ended == promise.inits \
                        and not promise.init_done:
                    promise.init_done = stored
                    seen["held"] += not stored
                if promise.armed and promise.expected and promise.completed >= promise.expected \
                        and not promise.initializing and not promise.reached:
                    promise.reached = stored
                    seen["held"] += not stored
                if promise.reached and promise.final_ended and not promise.final_done:
                    promise.final_done = stored
                    seen["held"] += not stored
            if spawned is not None:
                alive.append([rng.randrange(1, 25), spawned[0], spawned[1],
                              rng.random() < error_rate])

    simulate(dut, bench)
    return seen


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_entry_control_keeps_its_promises(seed):
    seen = run_entries(seed)
    # The run went through every phase and every kind of event.
    assert seen["init"] and seen["several_inits"] and seen["final"] and seen["several_finals"]
    assert seen["complete"]
    assert seen["rearmed"]
    assert seen["errors"] and seen["drained"] and seen["held"]


def test_completions_of_one_cycle_on_several_ports_all_count():
    """Four main µthreads ending together reach an expected count of four at once."""
    dut = shared(EntryControl, CONFIG, retire_ports=PORTS, error_ports=PORTS)

    async def bench(ctx):
        ctx.set(dut.entry_config[0], {"expected": 4, "has_final": 1})
        ctx.set(dut.arm, 1)
        await ctx.tick()
        ctx.set(dut.arm, 0)
        ctx.set(dut.retire_valid, 0b1111)
        ctx.set(dut.retire, [{"entry": 0, "kind": ThreadKind.MAIN, "error": 0}] * PORTS)
        await ctx.tick()
        ctx.set(dut.retire_valid, 0)
        assert ctx.get(dut.status[0].completed) == 4
        assert ctx.get(dut.final_request) & 1 and ctx.get(dut.status[0].busy)
        assert not ctx.get(dut.status[0].complete)

    simulate(dut, bench)


def test_the_lowest_port_s_error_is_recorded_first():
    dut = shared(EntryControl, CONFIG, retire_ports=PORTS, error_ports=PORTS)

    async def bench(ctx):
        ctx.set(dut.error_valid, 0b1010)
        ctx.set(dut.error, [{"entry": port, "pc": 10 + port, "cause": ErrorCause.WATCHDOG}
                            for port in range(PORTS)])
        await ctx.tick()
        ctx.set(dut.error_valid, 0b0001)
        await ctx.tick()
        ctx.set(dut.error_valid, 0)
        assert ctx.get(dut.error_recorded)
        assert (ctx.get(dut.first_error.entry), ctx.get(dut.first_error.pc)) == (1, 11)
        assert ctx.get(dut.status[1].stopped) and ctx.get(dut.status[3].stopped)
        assert ctx.get(dut.status[0].stopped) and not ctx.get(dut.status[2].stopped)
        # Clearing forgets it; an error in the clearing cycle is the new first one.
        ctx.set(dut.clear_error, 1)
        ctx.set(dut.error_valid, 0b0100)
        await ctx.tick()
        ctx.set(dut.clear_error, 0)
        ctx.set(dut.error_valid, 0)
        assert ctx.get(dut.error_recorded) and ctx.get(dut.first_error.entry) == 2

    simulate(dut, bench)


@pytest.mark.parametrize("config", [None, NDPConfig(engine=None)])
def test_constructor_refuses_what_is_not_an_engine_config(config):
    with pytest.raises(TypeError, match="config must be an NDPConfig with an engine"):
        EntryControl(config, retire_ports=2, error_ports=2)


@pytest.mark.parametrize("name, value", [("retire_ports", 0), ("retire_ports", True),
                                         ("error_ports", -1), ("error_ports", 1.5)])
def test_constructor_refuses_port_counts_that_are_not_positive_integers(name, value):
    ports = {"retire_ports": 2, "error_ports": 2, name: value}
    with pytest.raises(ValueError, match=f"{name} must be a positive integer"):
        EntryControl(CONFIG, **ports)
