"""The engine's scratchpad: sector-wide storage with loads, stores and FP32 atomics (add,
maximum, multiply-add, each rounded once as IEEE 754 says), shared by all sub-cores and
reachable from the host through the register bus. Accesses to a sector whose store or
atomic is still in flight wait, so each atomic reads the one before it and a load sees
every earlier write. The protocol, the hazards, the pipeline and its timing are in
docs/engine.md, "Scratchpad".
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, enum, stream
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..bus.signature import CSRBusSignature
from ..fp.fma import FPFusedMultiplyAdd
from ..fp.minmax import FPMinMax
from ..fp.opcodes import FusedMultiplyAddOp, MinMaxOp
from .completion import CompletingUnit
from .isa import Opcode
from .layouts import scratchpad_op_layout, vector_layout


__all__ = ["Scratchpad", "host_addr_width"]


# The FP units' operation codes this unit uses.

_ONE = 0x3F800000                # 1.0


class _Kind(enum.Enum, shape=4):
    """What an access in the pipeline does."""
    LOAD = 0
    STORE = 1
    ADD = 2
    MAXIMUM = 3
    MULTIPLY_ADD = 4
    REFUSED = 5
    HOST_READ = 6
    HOST_WRITE = 7
    HOST_REFUSED = 8


_KIND_OF_OPCODE = {
    Opcode.SLD: _Kind.LOAD,
    Opcode.SST: _Kind.STORE,
    Opcode.SAMOADD: _Kind.ADD,
    Opcode.SAMOMAX: _Kind.MAXIMUM,
    Opcode.SAMOFMA: _Kind.MULTIPLY_ADD,
}

_MAXIMUM_STAGE = 2 + FPMinMax.LATENCY
_FMA_KINDS = [_Kind.ADD, _Kind.MULTIPLY_ADD]


def _write_stages(passes):
    """The stage in which each kind of access writes the memory, when a vector passes the
    FMA units in ``passes`` groups of lanes (one group a cycle, from stage 2 on)."""
    fma_stage = 2 + FPFusedMultiplyAdd.LATENCY + passes - 1
    return {
        _Kind.STORE: 1,
        _Kind.HOST_WRITE: 1,
        _Kind.MAXIMUM: _MAXIMUM_STAGE,
        _Kind.ADD: fma_stage,
        _Kind.MULTIPLY_ADD: fma_stage,
    }


def host_addr_width(config):
    """Byte-address bits of the host port: the scratchpad in 32-bit words, plus 2."""
    return (config.engine.scratchpad_bytes // 4 - 1).bit_length() + 2


def _is(kind_value, kinds):
    result = 0
    for kind in kinds:
        result = result | (kind_value == kind)
    return result


class Scratchpad(CompletingUnit):
    """The scratchpad of an engine configured by ``config``."""

    def __init__(self, config):
        super().__init__(config, {
            "ops":      In(stream.Signature(scratchpad_op_layout(config))),
            "host":     In(CSRBusSignature(host_addr_width(config))),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        engine = config.engine
        lanes = config.lanes
        lane_bits = (lanes - 1).bit_length()
        sectors = engine.scratchpad_bytes // config.sector_bytes
        sector_bits = (sectors - 1).bit_length()
        vector = vector_layout(config)

        # Marks: stores and refused ops (stage 1), maximums, additions and multiply-adds.
        queue = self.completion_queue(m, marks=3)
        early_mark, maximum_mark, fma_mark = queue.marks

        m.submodules.storage = storage = Memory(shape=vector, depth=sectors, init=[])
        read = storage.read_port()
        write = storage.write_port(granularity=1)

        stage_layout = data.StructLayout({
            "valid":  1,
            "kind":   _Kind,
            "thread": unsigned(engine.thread_bits),
            "posted": unsigned(1),
            "sector": unsigned(sector_bits),
            "lane":   unsigned(lane_bits),
        })
        # With fewer FMA units than lanes an addition or multiply-add enters them in
        # `passes` groups of lanes, one a cycle, and writes once its last group is out.
        units = config.fma_units
        passes = lanes // units
        write_stage = _write_stages(passes)
        fma_stage_index = write_stage[_Kind.ADD]
        last_stage = max(write_stage.values())
        stages = [None] + [Signal(stage_layout, name=f"stage{index}")
                           for index in range(1, last_stage + 1)]

        # Stage 0: the candidate, a waiting host access before any op.
        op = self.ops.payload
        op_kind = Signal(_Kind)
        with m.Switch(op.opcode):
            for opcode, kind in _KIND_OF_OPCODE.items():
                with m.Case(opcode):
                    m.d.comb += op_kind.eq(Mux(op.addr[:config.offset_bits] == 0,
                                               kind, _Kind.REFUSED))
            with m.Default():
                m.d.comb += op_kind.eq(_Kind.REFUSED)

        host = self.host
        host_pending = Signal()
        host_request = Signal(data.StructLayout({
            "kind":   _Kind,
            "sector": unsigned(sector_bits),
            "lane":   unsigned(lane_bits),
            "data":   unsigned(32),
        }))
        candidate_kind = Mux(host_pending, host_request.kind, op_kind)
        candidate_sector = Mux(host_pending, host_request.sector,
                               op.addr[config.offset_bits:][:sector_bits])

        # Wait while an access in flight has still to write the candidate's sector, or
        # would write in the cycle the candidate writes.
        # Nor while the FMA units are still taking an earlier access's groups.
        hazard = 0
        conflict = 0
        for index in range(1, last_stage + 1):
            stage = stages[index]
            unwritten = [kind for kind, at in write_stage.items() if at >= index]
            hazard = hazard | (stage.valid & _is(stage.kind, unwritten)
                               & (stage.sector == candidate_sector))
            for kind, at in write_stage.items():
                for candidate, candidate_at in write_stage.items():
                    if at - index == candidate_at:
                        conflict = conflict | (stage.valid & (stage.kind == kind)
                                               & (candidate_kind == candidate))
            if index < passes:
                conflict = conflict | (stage.valid & _is(stage.kind, _FMA_KINDS)
                                       & _is(candidate_kind, _FMA_KINDS))
        refused = _is(candidate_kind, [_Kind.REFUSED, _Kind.HOST_REFUSED])
        go = refused | ~(hazard | conflict)
        op_enters = ~host_pending & self.ops.valid & go
        host_enters = host_pending & go
        m.d.comb += [
            self.ops.ready.eq(~host_pending & go),
            read.addr.eq(candidate_sector),
        ]

        # The host port: a strobe is held until its access enters the pipeline.
        host_kinds = [_Kind.HOST_READ, _Kind.HOST_WRITE, _Kind.HOST_REFUSED]
        host_busy = host_pending
        for stage in stages[1:3]:
            host_busy = host_busy | (stage.valid & _is(stage.kind, host_kinds))
        with m.If(host_enters):
            m.d.sync += host_pending.eq(0)
        with m.If((host.r_en | host.w_en) & ~host_busy):
            m.d.sync += [
                host_pending.eq(1),
                host_request.kind.eq(Mux(host.addr[:2] != 0, _Kind.HOST_REFUSED,
                                         Mux(host.w_en, _Kind.HOST_WRITE, _Kind.HOST_READ))),
                host_request.lane.eq(host.addr[2:2 + lane_bits]),
                host_request.sector.eq(host.addr[2 + lane_bits:]),
                host_request.data.eq(host.w_data),
            ]

        # Stage 1 registers. The FP lanes compute x × y + s (y = 1.0 for an addition) and
        # maximum(s, x); a store writes x.
        stage1_x = Signal(vector)
        stage1_y = Signal(vector)
        multiply_add = op_kind == _Kind.MULTIPLY_ADD
        m.d.sync += [
            stages[1].valid.eq(op_enters | host_enters),
            stages[1].kind.eq(candidate_kind),
            stages[1].thread.eq(op.thread),
            stages[1].posted.eq(op.posted & ~host_pending),
            stages[1].sector.eq(candidate_sector),
            stages[1].lane.eq(host_request.lane),
            stage1_x.eq(Mux(host_pending, Cat([host_request.data] * lanes),
                            Mux(multiply_add, op.b, op.c))),
            stage1_y.eq(Mux(multiply_add, op.c, Cat([Const(_ONE, 32)] * lanes))),
        ]
        for index in range(2, last_stage + 1):
            m.d.sync += stages[index].eq(stages[index - 1])


        # Stage 1: stores and host writes.
        stage1 = stages[1]
        m.d.comb += [
            early_mark.valid.eq(stage1.valid & _is(stage1.kind, [_Kind.STORE, _Kind.REFUSED])),
            early_mark.payload.thread.eq(stage1.thread),
            early_mark.payload.error.eq(stage1.kind == _Kind.REFUSED),
        ]

        # Stage 2: the read data from a register; loads complete; the FP lanes start.
        stage2 = stages[2]
        stage2_s = Signal(vector)
        stage2_x = Signal(vector)
        stage2_y = Signal(vector)
        m.d.sync += [
            stage2_s.eq(read.data),
            stage2_x.eq(stage1_x),
            stage2_y.eq(stage1_y),
        ]
        m.d.sync += [
            host.ack.eq(stage2.valid & _is(stage2.kind, host_kinds)),
            host.r_data.eq(Mux(stage2.valid & (stage2.kind == _Kind.HOST_READ),
                               stage2_s[stage2.lane], 0)),
            host.err.eq(stage2.valid & (stage2.kind == _Kind.HOST_REFUSED)),
        ]
        m.d.comb += [
            queue.fill.valid.eq(stage2.valid & (stage2.kind == _Kind.LOAD)),
            queue.fill.payload.thread.eq(stage2.thread),
            queue.fill.payload.value.eq(stage2_s),
        ]
        # The FP units, each with its result always taken: a unit's pipeline then advances
        # every cycle (its enable is constant, with no handshake across lanes), and a result
        # leaves exactly LATENCY cycles after its operands. An addition or multiply-add
        # enters the FMA units group by group from stage 2 (its later groups from a copy
        # shifted down a group a cycle), and its results are shifted into a register
        # group by group, the last joining them in the stage that writes.
        maximum_result = Signal(vector)
        fma_valid = stage2.valid & _is(stage2.kind, _FMA_KINDS)
        maximum_valid = stage2.valid & (stage2.kind == _Kind.MAXIMUM)
        group_bits = 32 * units
        fma_inputs = {"a": stage2_x.as_value(), "b": stage2_y.as_value(), "c": stage2_s.as_value()}
        fma_entering = fma_valid
        if passes > 1:
            for name, value in list(fma_inputs.items()):
                waiting = Signal(len(value) - group_bits, name=f"fma_waiting_{name}")
                m.d.sync += waiting.eq(Mux(fma_valid, value[group_bits:], waiting[group_bits:]))
                fma_inputs[name] = Mux(fma_valid, value[:group_bits], waiting[:group_bits])
            for index in range(3, 2 + passes):
                fma_entering = fma_entering | (stages[index].valid &
                                               _is(stages[index].kind, _FMA_KINDS))
        fma_group = Signal(group_bits)
        for lane in range(units):
            fma = FPFusedMultiplyAdd()
            m.submodules[f"fma{lane}"] = fma
            m.d.comb += [
                fma.operands.valid.eq(fma_entering),
                fma.operands.payload.a.eq(fma_inputs["a"].word_select(lane, 32)),
                fma.operands.payload.b.eq(fma_inputs["b"].word_select(lane, 32)),
                fma.operands.payload.c.eq(fma_inputs["c"].word_select(lane, 32)),
                fma.operands.payload.op.eq(FusedMultiplyAddOp.FMA),
                fma.result.ready.eq(1),
                fma_group.word_select(lane, 32).eq(fma.result.payload),
            ]
        if passes > 1:
            fma_earlier_groups = Signal(32 * lanes - group_bits)
            m.d.sync += fma_earlier_groups.eq(Cat(fma_earlier_groups[group_bits:], fma_group))
            fma_result = Cat(fma_earlier_groups, fma_group)
        else:
            fma_result = fma_group
        for lane in range(lanes):
            maximum = FPMinMax()
            m.submodules[f"maximum{lane}"] = maximum
            m.d.comb += [
                maximum.operands.valid.eq(maximum_valid),
                maximum.operands.payload.a.eq(stage2_s[lane]),
                maximum.operands.payload.b.eq(stage2_x[lane]),
                maximum.operands.payload.op.eq(MinMaxOp.MAX),
                maximum.result.ready.eq(1),
                maximum_result[lane].eq(maximum.result.payload),
            ]

        # The writes, in the stages the hazard logic reserved for them (never two at once).
        maximum_stage = stages[_MAXIMUM_STAGE]
        fma_stage = stages[fma_stage_index]
        writes_maximum = maximum_stage.valid & (maximum_stage.kind == _Kind.MAXIMUM)
        writes_fma = fma_stage.valid & _is(fma_stage.kind, _FMA_KINDS)
        all_lanes = (1 << lanes) - 1
        with m.If(stage1.valid & (stage1.kind == _Kind.STORE)):
            m.d.comb += [write.addr.eq(stage1.sector), write.data.eq(stage1_x),
                         write.en.eq(all_lanes)]
        with m.Elif(stage1.valid & (stage1.kind == _Kind.HOST_WRITE)):
            m.d.comb += [write.addr.eq(stage1.sector), write.data.eq(stage1_x),
                         write.en.eq(1 << stage1.lane)]
        with m.Elif(writes_maximum):
            m.d.comb += [write.addr.eq(maximum_stage.sector),
                         write.data.eq(maximum_result), write.en.eq(all_lanes)]
        with m.Elif(writes_fma):
            m.d.comb += [write.addr.eq(fma_stage.sector), write.data.eq(fma_result),
                         write.en.eq(all_lanes)]
        m.d.comb += [
            maximum_mark.valid.eq(writes_maximum & ~maximum_stage.posted),
            maximum_mark.payload.thread.eq(maximum_stage.thread),
            maximum_mark.payload.error.eq(0),
            fma_mark.valid.eq(writes_fma & ~fma_stage.posted),
            fma_mark.payload.thread.eq(fma_stage.thread),
            fma_mark.payload.error.eq(0),
        ]
        return m
