"""The scratchpad in Amaranth's simulator.

µthreads of every sub-core send scratchpad operations (one at a time, as a sub-core
does) to a few hot sectors, so that loads, stores and atomics from different µthreads
collide, while the host reads and writes words through the register-bus port; ``ops``
and every completion stream see random back-pressure. The reference applies the ISA's
semantics in the order the unit accepted the accesses, with MPFR (through the golden
FP model) for the arithmetic: every op must complete exactly once to its sub-core and
slot (a posted atomic never), loads and host reads must return the reference's values,
and the storage must end up as the reference, bit for bit, over subnormals, signed zeros,
infinities and NaN.
"""

import random

import numpy as np
import pytest

from matndp.hw.config import EngineConfig, NDPConfig, TriggerConfig
from matndp.hw.engine.isa import Opcode
from matndp.hw.engine.scratchpad import Scratchpad, host_addr_width
from matndp.hw.export import export_verilog
from matndp.sim.golden.fp import (CANONICAL_NAN, SPECIAL_VALUES, canonicalize_nans,
                                  directed_operands, mismatches, random_floats, reference)

from .harness import CompletionSinks, Source, overrun_seen, simulate
from ..streams import shared


CONFIGS = {
    "default": NDPConfig(),
    "two-sub-cores": NDPConfig(engine=EngineConfig(sub_cores=2)),
    "64-byte-sectors": NDPConfig(sector_bytes=64),
    "small-scratchpad": NDPConfig(trigger=TriggerConfig(filter_entries=5),
                                  engine=EngineConfig(slots=4, scratchpad_bytes=256)),
    "two-lane": NDPConfig(sector_bytes=8, engine=EngineConfig(slots=4, scratchpad_bytes=256)),
    # The lanes in four groups through two FMA units, as the `fpga` configuration has them.
    "fma-groups": NDPConfig(trigger=TriggerConfig(filter_entries=5),
                            engine=EngineConfig(slots=4, scratchpad_bytes=512, fma_units=2)),
}

ATOMICS = (Opcode.SAMOADD, Opcode.SAMOMAX, Opcode.SAMOFMA)
NOT_SCRATCHPAD_OPS = (Opcode.ILLEGAL, Opcode.VLD, Opcode.LW, Opcode.ADD)


class ReferenceScratchpad:
    """The scratchpad as the ISA describes it, one op at a time."""

    def __init__(self, config):
        self.lanes = config.lanes
        self.sector_bytes = config.sector_bytes
        self.words = np.zeros(config.engine.scratchpad_bytes // 4, dtype=np.uint32)

    def _sector(self, addr):
        first = addr // 4
        return slice(first, first + self.lanes)

    def execute(self, note):
        """The op's completion (value lanes, error), after applying it."""
        zero = [0] * self.lanes
        if note["refused"]:
            return zero, 1
        where = self._sector(note["addr"])
        s = self.words[where]
        b = np.array(note["b"], dtype=np.uint32)
        c = np.array(note["c"], dtype=np.uint32)
        opcode = note["opcode"]
        if opcode is Opcode.SLD:
            return [int(x) for x in s], 0
        if opcode is Opcode.SST:
            self.words[where] = c
        elif opcode is Opcode.SAMOADD:
            self.words[where] = reference("add", s, c)
        elif opcode is Opcode.SAMOMAX:
            self.words[where] = reference("max", s, c)
        elif opcode is Opcode.SAMOFMA:
            self.words[where] = reference("fma", b, c, s)
        return zero, 0

    def host(self, access):
        """(r_data, err) of a host access, after applying it."""
        addr = access["addr"]
        if addr % 4:
            return 0, 1
        if access["write"]:
            self.words[addr // 4] = access["data"]
            return 0, 0
        return int(self.words[addr // 4]), 0


def payload(note):
    return {name: note[name] for name in ("thread", "opcode", "addr", "b", "c", "entry", "release",
                                        "posted")}


def run(config, scripts, host_accesses=(), *, seed, op_pause=0.3, completion_pause=0.3,
        host_gap=0.5, read_back=()):
    """Runs ``scripts`` (per thread, its ops in order: dicts with opcode, addr, b, c,
    entry, release, refused) and ``host_accesses`` (dicts with write, addr, data), then
    reads the sectors ``read_back`` through the host port, checking everything against
    the reference; returns the load results (thread, note, value) in completion order
    and the host accesses' latencies."""
    dut = shared(Scratchpad, config)
    engine = config.engine
    threads = engine.sub_cores * engine.slots
    assert set(scripts) <= set(range(threads))
    rng = random.Random(seed)
    remaining = {thread: list(ops) for thread, ops in scripts.items() if ops}
    total = sum(len(ops) for ops in remaining.values())
    busy = set()

    def next_record():
        ready = sorted(thread for thread in remaining if thread not in busy)
        if not ready:
            return None
        thread = rng.choice(ready)
        note = dict(remaining[thread].pop(0), thread=thread)
        if not remaining[thread]:
            del remaining[thread]
        busy.add(thread)
        return payload(note), note

    source = Source(dut.ops, next_record, pause=op_pause, seed=seed + 1)
    sinks = CompletionSinks(dut, pause=completion_pause, seed=seed + 10)
    model = ReferenceScratchpad(config)
    host_queue = list(host_accesses)
    host_random = random.Random(seed + 2)
    outstanding = {}
    loads, latencies = [], []
    completed = 0
    final_reads = []
    final_words = [sector * config.lanes + lane for sector in sorted(read_back)
                   for lane in range(config.lanes)]

    async def bench(ctx):
        nonlocal completed
        cycle = 0
        host_access = None            # (access, strobe cycle, expected)
        reading_back = False
        while completed < total or host_access is not None or host_queue or not reading_back:
            assert cycle < 60 * (total + len(host_accesses) + len(final_words)) + 500, \
                f"stuck after {completed} of {total} completions"
            if completed == total and host_access is None and not host_queue and not reading_back:
                reading_back = True
                host_queue.extend({"write": 0, "addr": 4 * index, "data": 0, "final": True}
                                  for index in final_words)
            if ctx.get(dut.host.ack):
                assert host_access is not None, f"ack without an access in cycle {cycle}"
                access, strobe_cycle, expected = host_access
                got = (ctx.get(dut.host.r_data), ctx.get(dut.host.err))
                assert got == expected, f"host {access} in cycle {strobe_cycle}: {got} != {expected}"
                latencies.append(cycle - strobe_cycle)
                if access.get("final"):
                    final_reads.append(got[0])
                host_access = None
            strobe = None
            if host_access is None and host_queue and (reading_back or host_random.random() >= host_gap):
                strobe = host_queue.pop(0)
            ctx.set(dut.host.r_en, strobe is not None and not strobe["write"])
            ctx.set(dut.host.w_en, strobe is not None and bool(strobe["write"]))
            if strobe is not None:
                ctx.set(dut.host.addr, strobe["addr"])
                ctx.set(dut.host.w_data, strobe["data"])
            source.drive(ctx)
            sinks.drive(ctx)

            assert not ctx.get(dut.overrun), f"completion lost in cycle {cycle}"
            record = source.sample(ctx, cycle)
            if record is not None:
                note = record[1]
                outcome = model.execute(note)
                if note["posted"]:
                    # Its µthread goes on at once; a completion for it would meet an idle
                    # thread below.
                    busy.discard(note["thread"])
                    completed += 1
                else:
                    outstanding[note["thread"]] = (note, outcome)
            if strobe is not None:
                # Ordered after every op accepted up to this cycle.
                host_access = (strobe, cycle, model.host(strobe))
            for thread, got, got_error in sinks.sample(ctx, cycle):
                assert thread in outstanding, f"completion for idle thread {thread} in cycle {cycle}"
                note, (value, error) = outstanding.pop(thread)
                assert (got, got_error) == (value, error), \
                    f"thread {thread}: {note['opcode'].name} at {note['addr']:#x}"
                if note["opcode"] is Opcode.SLD and not error:
                    loads.append((thread, note, got))
                busy.discard(thread)
                completed += 1
            await ctx.tick()
            cycle += 1

    simulate(dut, bench)
    assert not outstanding
    assert final_reads == [int(model.words[index]) for index in final_words]
    return loads, latencies


def note(opcode, addr, *, lanes, b=None, c=None, release=0, entry=0, refused=False, posted=0):
    return {"opcode": opcode, "addr": addr, "b": b or [0] * lanes, "c": c or [0] * lanes,
            "release": release, "entry": entry, "refused": refused, "posted": posted}


def random_vector(rng, lanes):
    """FP32 patterns: special values (subnormals, zeros, infinities, NaNs) and biased
    random ones, with some lanes near the others' magnitudes so sums cancel."""
    pool = random_floats(np.random.default_rng(rng.getrandbits(32)), lanes)
    return [int(rng.choice(SPECIAL_VALUES)) if rng.random() < 0.3 else int(x) for x in pool]


def random_scripts(config, rng, *, ops_per_thread, hot_sectors):
    engine = config.engine
    lanes, sector_bytes = config.lanes, config.sector_bytes
    sectors = engine.scratchpad_bytes // sector_bytes
    hot = rng.sample(range(sectors), min(hot_sectors, sectors))
    kinds = [Opcode.SLD, Opcode.SST] + list(ATOMICS) * 2
    scripts = {}
    for thread in range(engine.sub_cores * engine.slots):
        ops = []
        for _ in range(ops_per_thread):
            opcode = rng.choice(kinds)
            addr = sector_bytes * rng.choice(hot)
            refused = True
            draw = rng.random()
            if draw < 0.03:
                addr += rng.randrange(1, sector_bytes)
            elif draw < 0.05:
                opcode = rng.choice(NOT_SCRATCHPAD_OPS)
            else:
                refused = False
            # The sub-core posts only checked atomics.
            posted = int(not refused and opcode in ATOMICS and rng.random() < 0.4)
            ops.append(note(opcode, addr, lanes=lanes, b=random_vector(rng, lanes),
                            c=random_vector(rng, lanes), release=int(rng.random() < 0.3),
                            entry=rng.randrange(config.trigger.filter_entries), refused=refused,
                            posted=posted))
        scripts[thread] = ops
    return scripts, hot


def random_host_accesses(config, rng, hot, count):
    words_per_sector = config.lanes
    accesses = []
    for _ in range(count):
        addr = 4 * (words_per_sector * rng.choice(hot) + rng.randrange(words_per_sector))
        if rng.random() < 0.05:
            addr += rng.randint(1, 3)
        accesses.append({"write": int(rng.random() < 0.5), "addr": addr,
                         "data": int(rng.choice(SPECIAL_VALUES)) if rng.random() < 0.3
                         else rng.getrandbits(32)})
    return accesses


@pytest.mark.parametrize("name", CONFIGS)
def test_random_ops_and_host_accesses_with_back_pressure(name):
    config = CONFIGS[name]
    rng = random.Random(sum(map(ord, name)))
    threads = config.engine.sub_cores * config.engine.slots
    scripts, hot = random_scripts(config, rng, ops_per_thread=max(6, 160 // threads),
                                  hot_sectors=4)
    # The hot sectors and two the ops never touch.
    untouched = rng.sample(sorted(set(range(config.engine.scratchpad_bytes // config.sector_bytes))
                                  - set(hot)), 2)
    loads, latencies = run(config, scripts, random_host_accesses(config, rng, hot, 40),
                           seed=rng.getrandbits(16), read_back=hot + untouched)
    assert len(loads) > 10
    assert min(latencies) == 4


def test_atomics_on_one_sector_from_every_thread_in_accept_order():
    """Each µthread adds, maximizes and multiply-adds special values into one sector; the
    final contents (read back by the host) are the sequential result in accept order."""
    config = CONFIGS["two-sub-cores"]
    rng = random.Random(3)
    lanes = config.lanes
    scripts = {thread: [note(rng.choice(ATOMICS), 0x40, lanes=lanes,
                             b=random_vector(rng, lanes), c=random_vector(rng, lanes))
                        for _ in range(4)]
               for thread in range(config.engine.sub_cores * config.engine.slots)}
    run(config, scripts, seed=8, op_pause=0.1, completion_pause=0.5, read_back=[2])


def _table_through_atomic(config, opcode, columns, *, seed):
    """Results of one atomic on every row of ``columns`` ((s, c) or (b, c, s) arrays):
    each sector is stored with s, updated by the atomic with the other operands, and
    loaded; µthreads take the sectors in turn."""
    lanes, sector_bytes = config.lanes, config.sector_bytes
    engine = config.engine
    threads = engine.sub_cores * engine.slots
    sectors = engine.scratchpad_bytes // sector_bytes
    *operands, s = columns if opcode is Opcode.SAMOFMA else (columns[1], columns[0])
    count = len(s)
    padded = -(-count // lanes) * lanes

    def rows(array):
        return np.concatenate([array, np.zeros(padded - count, dtype=np.uint32)]).reshape(-1, lanes)

    s_rows = rows(s)
    operand_rows = [rows(column) for column in operands]
    scripts = {thread: [] for thread in range(threads)}
    for index in range(len(s_rows)):
        addr = sector_bytes * (index % sectors)
        b = operand_rows[0][index].tolist() if opcode is Opcode.SAMOFMA else None
        c = operand_rows[-1][index].tolist()
        scripts[index % threads] += [
            note(Opcode.SST, addr, lanes=lanes, c=s_rows[index].tolist()),
            note(opcode, addr, lanes=lanes, b=b, c=c),
            note(Opcode.SLD, addr, lanes=lanes, c=[index] + [0] * (lanes - 1)),
        ]
    loads, _ = run(config, scripts, seed=seed, op_pause=0.1, completion_pause=0.1)
    results = np.zeros((len(s_rows), lanes), dtype=np.uint32)
    for _, load, value in loads:
        results[load["c"][0]] = value
    return results.reshape(-1)[:count]


@pytest.mark.parametrize("name", ["default", "fma-groups"])
def test_atomic_add_is_ieee_addition_over_special_values(name):
    """samoadd runs c × 1.0 + s through the fused multiply-add: bit-exact with IEEE
    addition over every pair of special values and the adder's boundary cases, against
    MPFR and against numpy's float32 addition."""
    config = CONFIGS[name]
    s, c = directed_operands("add")
    results = _table_through_atomic(config, Opcode.SAMOADD, (s, c), seed=1)
    expected = reference("add", s, c)
    assert not mismatches(expected, results, s, c)
    with np.errstate(all="ignore"):
        numpy_sum = (s.view(np.float32) + c.view(np.float32)).view(np.uint32)
    assert not mismatches(canonicalize_nans(numpy_sum), results, s, c)
    assert (results == CANONICAL_NAN).any() and (results == 0x80000000).any()


def test_atomic_maximum_over_special_values():
    config = CONFIGS["default"]
    s, c = directed_operands("max")
    results = _table_through_atomic(config, Opcode.SAMOMAX, (s, c), seed=2)
    assert not mismatches(reference("max", s, c), results, s, c)


@pytest.mark.parametrize("name", ["default", "fma-groups"])
def test_atomic_multiply_add_over_special_values(name):
    config = CONFIGS[name]
    b, c, s = directed_operands("fma")
    results = _table_through_atomic(config, Opcode.SAMOFMA, (b, c, s), seed=3)
    assert not mismatches(reference("fma", b, c, s), results, b, c, s)


def test_atomic_multiply_add_over_boundary_cases_with_16_lanes():
    config = CONFIGS["64-byte-sectors"]
    b, c, s = (column[-96:] for column in directed_operands("fma"))   # the boundary rows
    results = _table_through_atomic(config, Opcode.SAMOFMA, (b, c, s), seed=4)
    assert not mismatches(reference("fma", b, c, s), results, b, c, s)


def _timed(config, ops, host=None):
    """Acceptance cycles of ``ops`` (thread, opcode, addr) offered in order with
    everything ready, and the cycles their completions are offered."""
    dut = shared(Scratchpad, config)
    accepted, offered, acks = [], [], []
    lanes = config.lanes

    async def bench(ctx):
        for completion in dut.completions:
            ctx.set(completion.ready, 1)
        pending = list(ops)
        cycle = 0
        while pending or len(offered) < len(ops) or (host is not None and not acks):
            assert cycle < 300
            if host is not None:
                ctx.set(dut.host.r_en, cycle == host)
            ctx.set(dut.ops.valid, bool(pending))
            if pending:
                thread, opcode, addr = pending[0]
                ctx.set(dut.ops.payload, payload(dict(note(opcode, addr, lanes=lanes),
                                                      thread=thread)))
                if ctx.get(dut.ops.ready):
                    accepted.append(cycle)
                    pending.pop(0)
            for completion in dut.completions:
                if ctx.get(completion.valid):
                    offered.append((ctx.get(completion.payload.slot), cycle))
            if ctx.get(dut.host.ack):
                acks.append(cycle)
            await ctx.tick()
            cycle += 1

    simulate(dut, bench)
    # Each µthread's completions come in the order of its ops.
    by_thread = {}
    for thread, cycle in offered:
        by_thread.setdefault(thread, []).append(cycle)
    return accepted, [by_thread[thread].pop(0) for thread, _, _ in ops], acks


def test_documented_latencies():
    config = CONFIGS["default"]
    ops = [(0, Opcode.SST, 0x000), (1, Opcode.SLD, 0x020), (2, Opcode.SAMOMAX, 0x040),
           (3, Opcode.SAMOADD, 0x060), (4, Opcode.SAMOFMA, 0x080), (5, Opcode.SLD, 0x001)]
    accepted, offered, _ = _timed(config, ops)
    assert accepted == list(range(6))
    assert [done - start for start, done in zip(accepted, offered)] == [4, 4, 6, 13, 13, 4]


def test_one_op_per_cycle_without_hazards():
    """Loads, additions and multiply-adds of distinct sectors enter back to back; each
    µthread's next op comes 16 cycles after its last, later than its completion."""
    config = CONFIGS["default"]
    kinds = (Opcode.SLD, Opcode.SAMOADD, Opcode.SAMOFMA, Opcode.SLD)
    ops = [(index % 16, kinds[index % 4], 32 * index) for index in range(64)]
    accepted, _, _ = _timed(config, ops)
    assert accepted == list(range(64))


def test_grouped_fma_lanes_take_an_addition_every_pass():
    """With the lanes in four groups through the FMA units, additions and multiply-adds of
    distinct sectors enter one every four cycles, loads between them at once, and each
    writes three cycles later than with a unit per lane."""
    config = CONFIGS["fma-groups"]
    ops = [(0, Opcode.SAMOADD, 0x00), (1, Opcode.SAMOFMA, 0x20), (2, Opcode.SLD, 0x40),
           (3, Opcode.SAMOADD, 0x60)]
    accepted, offered, _ = _timed(config, ops)
    assert accepted == [0, 4, 5, 8]
    assert [done - start for start, done in zip(accepted, offered)] == [16, 16, 4, 16]


def test_dependent_accesses_wait_for_the_write():
    config = CONFIGS["default"]
    for first, gap in ((Opcode.SST, 2), (Opcode.SAMOMAX, 4), (Opcode.SAMOADD, 11),
                       (Opcode.SAMOFMA, 11)):
        accepted, _, _ = _timed(config, [(0, first, 0x40), (1, Opcode.SLD, 0x40),
                                         (2, Opcode.SLD, 0x60)])
        assert accepted == [0, gap, gap + 1], first


def test_writes_never_share_a_cycle():
    """A store accepted when a slower atomic would write in its cycle waits one cycle."""
    config = CONFIGS["default"]
    # The add writes in stage 10; a store accepted 9 cycles later would write with it.
    ops = [(0, Opcode.SAMOADD, 0x00)] + [(1 + index, Opcode.SLD, 0x20) for index in range(8)] \
        + [(9, Opcode.SST, 0x40), (10, Opcode.SAMOMAX, 0x60)]
    accepted, _, _ = _timed(config, ops)
    assert accepted[:9] == list(range(9))
    assert accepted[9:] == [10, 11]


def test_host_access_latency_and_priority():
    config = CONFIGS["default"]
    # Idle: ack four cycles after the strobe.
    _, _, acks = _timed(config, [], host=2)
    assert acks == [6]
    # A host read of a sector with an atomic in flight waits for its write; ops wait too.
    accepted, _, acks = _timed(config, [(0, Opcode.SAMOADD, 0x00), (1, Opcode.SLD, 0x20),
                                        (2, Opcode.SLD, 0x40)], host=0)
    assert accepted == [0, 12, 13]
    assert acks == [14]


def test_overrun_is_flagged_when_a_thread_breaks_the_one_access_rule():
    config = CONFIGS["default"]
    assert overrun_seen(Scratchpad(config), [
        payload(dict(note(Opcode.SST, addr, lanes=config.lanes), thread=7)) for addr in (0, 0x20)])


def test_ports():
    config = NDPConfig(trigger=TriggerConfig(filter_entries=5),
                       engine=EngineConfig(sub_cores=3, scratchpad_bytes=1024))
    dut = shared(Scratchpad, config)
    assert host_addr_width(config) == len(dut.host.addr) == 10
    assert len(dut.completions) == 3
    text = export_verilog(dut, "scratchpad")
    assert "module scratchpad" in text


@pytest.mark.parametrize("config", [None, "default", EngineConfig()])
def test_constructor_refuses_what_is_not_a_config(config):
    with pytest.raises(TypeError, match="config must be an NDPConfig"):
        Scratchpad(config)
