"""One sub-core: µthread slots, a five-stage issue pipeline and its execution units.

Fine-grained multithreading with one instruction in flight per µthread: a slot becomes
eligible again only when its instruction has completed, so there are no register hazards
to track, and the latency of one µthread's loads and FP operations is hidden by the
others. Stages::

    PICK      round-robin among eligible slots; the slot's pc addresses the instruction memory
    FETCH     the instruction word, registered
    DECODE    decode; register-file, argument and special-register reads start
    OPERANDS  each source operand chosen among register, special, argument and immediate
    DISPATCH  checks; the instruction goes to its unit, or the µthread is replayed

A unit that cannot take the instruction (busy, the µthread's queue of ordered atomics
full, an ordered µthread's exit before its turn) does not stall the pipeline: the µthread
is *replayed* (it stays at its pc and becomes eligible again), and other µthreads keep
issuing. Units answer with the slot and a value;
one answer per cycle is written back, which also makes the slot eligible again (or ends
the µthread when its instruction carried ``exit``).

Errors (illegal instruction, misaligned or out-of-window access, scratchpad out of range,
watchdog, a failed memory access) end the µthread and are reported with entry, pc and
cause; µthreads of an entry the engine has stopped are ended as they reach DISPATCH.
"""

from amaranth.hdl import Cat, Const, Module, Mux, Signal, unsigned
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from ..stream import RoundRobinMerge
from .alu import ALU
from .decoder import Decoder, OperandClass, UnitCode, control_layout
from .isa import (REGISTER_COUNT, ARGUMENT_WORDS, Opcode, OperandKind, ScalarSpecial,
                  VectorSpecial, instruction_layout)
from .layouts import (SCALAR_BITS, ErrorCause, ThreadKind, completion_layout, error_layout,
                      memory_op_layout, order_bits, retire_layout, scratchpad_op_layout, spawn_layout,
                      vector_layout, vector_request_layout, VectorUnitSignature)
from .multiply import Multiply


__all__ = ["SubCore", "memory_write_layout", "RETIRE_PORTS", "ERROR_PORTS"]


RETIRE_PORTS = 2        # dispatch, write-back
ERROR_PORTS = 2         # dispatch, write-back


def memory_write_layout(depth):
    """A write into a 64-bit-wide memory, 32 bits at a time (the register bus's width)."""
    return data.StructLayout({
        "addr": unsigned(max(1, (depth - 1).bit_length())),
        "data": unsigned(64),
        "en":   unsigned(2),
    })


def _thread_info_layout(config):
    return data.StructLayout({
        "offset": unsigned(config.addr_width),
        "addr":   unsigned(config.addr_width),
        "mask":   unsigned(config.sector_bytes),
        "write":  unsigned(1),
    })


class SubCore(wiring.Component):
    """Ports (besides the execution units it owns):

    spawn:         a µthread to start in the free slot it names.
    free:          slots without a µthread.
    imem_write, args_write: the host's writes into this sub-core's copies of the
                   instruction memory and the argument blocks.
    imem_host_*, args_host_*: the host's reads of them (one cycle).
    completed:     per entry, µthreads finished (the ``COMPLETED`` special).
    turn:          per entry, the sequence number whose turn it is (ordered entries; low
                   :func:`~.layouts.order_bits` bits, from :class:`~.ordering.AtomicOrder`).
    holding:       per slot, ordered atomics of its µthread still wait in the station.
    stopped:       entries stopped by an error; their µthreads end at dispatch.
    window_base, window_end: kernels' memory accesses must fall in [base, end).
    watchdog:      cycles a µthread may live.
    memory_ops / memory_done, scratchpad_ops / scratchpad_done: the shared units.
    fma / vector / divide / reduce / convert: vector execution units (owned by the engine
                   and connected here, so tests may substitute models).
    retire_valid / retire: µthreads that ended (up to RETIRE_PORTS per cycle).
    release:       per entry, an ordered µthread with nothing queued handed the turn on
                   at its exit.
    error_valid / error: errors (up to ERROR_PORTS per cycle).
    issued:        an instruction was dispatched this cycle (for occupancy figures).
    """

    def __init__(self, config, index=0):
        self.config = config
        self.index = index
        engine = config.engine
        entries = config.trigger.filter_entries
        super().__init__({
            "spawn":           In(stream.Signature(spawn_layout(config))),
            "free":            Out(engine.slots),
            "imem_write":      In(memory_write_layout(engine.instruction_words)),
            "args_write":      In(memory_write_layout(engine.argument_blocks * ARGUMENT_WORDS)),
            "imem_host_addr":  In(range(engine.instruction_words)),
            "imem_host_data":  Out(64),
            "args_host_addr":  In(range(engine.argument_blocks * ARGUMENT_WORDS)),
            "args_host_data":  Out(64),
            "completed":       In(data.ArrayLayout(unsigned(config.counter_width), entries)),
            "turn":            In(data.ArrayLayout(unsigned(order_bits(config)), entries)),
            "holding":         In(engine.slots),
            "stopped":         In(entries),
            "window_base":     In(config.addr_width + 1),
            "window_end":      In(config.addr_width + 1),
            "watchdog":        In(32),
            "memory_ops":      Out(stream.Signature(memory_op_layout(config))),
            "memory_done":     In(stream.Signature(completion_layout(config))),
            "scratchpad_ops":  Out(stream.Signature(scratchpad_op_layout(config))),
            "scratchpad_done": In(stream.Signature(completion_layout(config))),
            "fma":             Out(VectorUnitSignature(config).flip()),
            "vector":          Out(VectorUnitSignature(config).flip()),
            "divide":          Out(VectorUnitSignature(config).flip()),
            "reduce":          Out(VectorUnitSignature(config).flip()),
            "convert":         Out(VectorUnitSignature(config).flip()),
            "retire_valid":    Out(RETIRE_PORTS),
            "retire":          Out(data.ArrayLayout(retire_layout(config), RETIRE_PORTS)),
            "release":         Out(entries),
            "error_valid":     Out(ERROR_PORTS),
            "error":           Out(data.ArrayLayout(error_layout(config), ERROR_PORTS)),
            "issued":          Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        engine = config.engine
        slots = engine.slots
        slot_bits = engine.slot_bits
        pc_bits = engine.pc_bits
        lanes = config.lanes
        entries = config.trigger.filter_entries
        vector = vector_layout(config)
        arg_bits = max(1, (engine.argument_blocks - 1).bit_length())
        register_bits = (REGISTER_COUNT - 1).bit_length()

        # --- slot state --------------------------------------------------------------------
        active = Signal(slots)
        busy = Signal(slots)
        pc = Signal(data.ArrayLayout(unsigned(pc_bits), slots))
        entry_of = Signal(data.ArrayLayout(unsigned(config.trigger.entry_bits), slots))
        kind_of = Signal(data.ArrayLayout(ThreadKind, slots))
        arg_block = Signal(data.ArrayLayout(unsigned(arg_bits), slots))
        seq = Signal(data.ArrayLayout(unsigned(32), slots))
        ordered = Signal(slots)
        released = Signal(slots)
        age = Signal(data.ArrayLayout(unsigned(32), slots))
        # What the instruction in flight writes, and whether the µthread ends with it.
        dest_type = Signal(data.ArrayLayout(OperandClass, slots))
        dest_index = Signal(data.ArrayLayout(unsigned(register_bits), slots))
        exit_pending = Signal(slots)
        inflight_pc = Signal(data.ArrayLayout(unsigned(pc_bits), slots))
        m.d.comb += self.free.eq(~active)

        # Memories: per slot, 16 registers of each kind; the triggering sector; the
        # scalar specials. Three read ports each, one per source operand position.
        m.submodules.imem = imem = Memory(shape=64, depth=engine.instruction_words, init=[])
        m.submodules.args = args = Memory(shape=64, depth=engine.argument_blocks * ARGUMENT_WORDS,
                                          init=[])
        m.submodules.xrf = xrf = Memory(shape=SCALAR_BITS, depth=slots * REGISTER_COUNT, init=[])
        m.submodules.vrf = vrf = Memory(shape=vector, depth=slots * REGISTER_COUNT, init=[])
        m.submodules.event_data = event_data = Memory(shape=vector, depth=slots, init=[])
        m.submodules.thread_info = thread_info = Memory(shape=_thread_info_layout(config),
                                                        depth=slots, init=[])
        for memory, write in ((imem, self.imem_write), (args, self.args_write)):
            port = memory.write_port(granularity=32)
            m.d.comb += [port.addr.eq(write.addr), port.data.eq(write.data), port.en.eq(write.en)]
        imem_read = imem.read_port()
        arg_reads = [args.read_port() for _ in range(3)]
        for memory, address, data_out in ((imem, self.imem_host_addr, self.imem_host_data),
                                          (args, self.args_host_addr, self.args_host_data)):
            host_read = memory.read_port()
            m.d.comb += [host_read.addr.eq(address), data_out.eq(host_read.data)]
        xrf_reads = [xrf.read_port() for _ in range(3)]
        vrf_reads = [vrf.read_port() for _ in range(3)]
        data_read = event_data.read_port()
        info_read = thread_info.read_port()
        xrf_write = xrf.write_port()
        vrf_write = vrf.write_port()
        data_write = event_data.write_port()
        info_write = thread_info.write_port()

        # --- spawn ------------------------------------------------------------------------
        spawn = self.spawn.payload
        spawn_fire = Signal()
        m.d.comb += [
            self.spawn.ready.eq(1),
            spawn_fire.eq(self.spawn.valid),
            data_write.addr.eq(spawn.slot),
            data_write.data.eq(spawn.data),
            data_write.en.eq(spawn_fire),
            info_write.addr.eq(spawn.slot),
            info_write.data.offset.eq(spawn.offset),
            info_write.data.addr.eq(spawn.addr),
            info_write.data.mask.eq(spawn.mask),
            info_write.data.write.eq(spawn.write),
            info_write.en.eq(spawn_fire),
        ]
        with m.If(spawn_fire):
            m.d.sync += [
                pc[spawn.slot].eq(spawn.pc),
                entry_of[spawn.slot].eq(spawn.entry),
                kind_of[spawn.slot].eq(spawn.kind),
                arg_block[spawn.slot].eq(spawn.arg_block),
                seq[spawn.slot].eq(spawn.seq),
                ordered.bit_select(spawn.slot, 1).eq(spawn.ordered),
                released.bit_select(spawn.slot, 1).eq(0),
                exit_pending.bit_select(spawn.slot, 1).eq(0),
            ]

        # Watchdog: a µthread's age in cycles, from its start.
        for slot in range(slots):
            with m.If(spawn_fire & (spawn.slot == slot)):
                m.d.sync += age[slot].eq(0)
            with m.Elif(active[slot] & (age[slot] != 0xFFFF_FFFF)):
                m.d.sync += age[slot].eq(age[slot] + 1)

        # --- PICK -------------------------------------------------------------------------
        eligible = Signal(slots)
        m.d.comb += eligible.eq(active & ~busy)
        last_pick = Signal(slot_bits)
        pick_valid = Signal()
        pick_slot = Signal(slot_bits)
        # Round robin: the first eligible slot after the one picked last.
        for step in reversed(range(slots)):
            candidate = (last_pick + 1 + step)[:slot_bits]
            with m.If(eligible.bit_select(candidate, 1)):
                m.d.comb += [pick_valid.eq(1), pick_slot.eq(candidate)]
        m.d.comb += [imem_read.addr.eq(pc[pick_slot]), imem_read.en.eq(1)]
        with m.If(pick_valid):
            m.d.sync += last_pick.eq(pick_slot)

        fetch_valid = Signal()
        fetch_slot = Signal(slot_bits)
        fetch_pc = Signal(pc_bits)
        m.d.sync += [fetch_valid.eq(pick_valid), fetch_slot.eq(pick_slot),
                     fetch_pc.eq(pc[pick_slot])]

        # --- FETCH: the word arrives from the memory and is registered --------------------
        decode_valid = Signal()
        decode_slot = Signal(slot_bits)
        decode_pc = Signal(pc_bits)
        decode_word = Signal(instruction_layout())
        m.d.sync += [decode_valid.eq(fetch_valid), decode_slot.eq(fetch_slot),
                     decode_pc.eq(fetch_pc), decode_word.eq(imem_read.data)]

        # --- DECODE -----------------------------------------------------------------------
        m.submodules.decoder = decoder = Decoder()
        m.d.comb += decoder.instruction.eq(decode_word)
        control = decoder.control
        operand_names = ("a", "b", "c")
        for position, name in enumerate(operand_names):
            operand = getattr(control, name)
            register_address = Cat(operand.index, decode_slot)
            m.d.comb += [
                xrf_reads[position].addr.eq(register_address),
                vrf_reads[position].addr.eq(register_address),
                arg_reads[position].addr.eq(Cat(operand.index, arg_block[decode_slot])),
                xrf_reads[position].en.eq(1),
                vrf_reads[position].en.eq(1),
                arg_reads[position].en.eq(1),
            ]
        m.d.comb += [data_read.addr.eq(decode_slot), data_read.en.eq(1),
                     info_read.addr.eq(decode_slot), info_read.en.eq(1)]
        operand_valid = Signal()
        operand_slot = Signal(slot_bits)
        operand_pc = Signal(pc_bits)
        operand_control = Signal(control_layout())
        m.d.sync += [operand_valid.eq(decode_valid), operand_slot.eq(decode_slot),
                     operand_pc.eq(decode_pc), operand_control.eq(control)]

        # --- OPERANDS ---------------------------------------------------------------------
        info = info_read.data
        entry_now = entry_of[operand_slot]
        immediate = operand_control.imm.as_signed()
        scalar_special = Signal(data.ArrayLayout(unsigned(SCALAR_BITS), 8))
        m.d.comb += [
            scalar_special[ScalarSpecial.OFFSET.value].eq(info.offset),
            scalar_special[ScalarSpecial.ADDR.value].eq(info.addr),
            scalar_special[ScalarSpecial.ENTRY.value].eq(entry_now),
            scalar_special[ScalarSpecial.SEQ.value].eq(seq[operand_slot]),
            scalar_special[ScalarSpecial.MASK.value].eq(info.mask[:64]),
            scalar_special[ScalarSpecial.WRITE.value].eq(info.write),
            scalar_special[ScalarSpecial.SLOT.value].eq(self.index * slots + operand_slot),
            scalar_special[ScalarSpecial.COMPLETED.value].eq(self.completed[entry_now]),
        ]
        lane_index = Signal(vector)
        lane_mask = Signal(vector)
        for lane in range(lanes):
            m.d.comb += [
                lane_index[lane].eq(lane),
                lane_mask[lane].eq(info.mask[4 * lane:4 * lane + 4].all().replicate(32)),
            ]

        def broadcast(word):
            return Cat(*(word[:32] for _ in range(lanes)))

        scalars = []
        vectors = []
        for position, name in enumerate(operand_names):
            operand = getattr(operand_control, name)
            scalar = Signal(SCALAR_BITS, name=f"scalar_{name}")
            with m.Switch(operand.kind):
                with m.Case(OperandKind.REGISTER):
                    m.d.comb += scalar.eq(Mux(operand.index == 0, 0, xrf_reads[position].data))
                with m.Case(OperandKind.SPECIAL):
                    m.d.comb += scalar.eq(scalar_special[operand.index[:3]])
                with m.Case(OperandKind.ARGUMENT):
                    m.d.comb += scalar.eq(arg_reads[position].data)
                with m.Case(OperandKind.IMMEDIATE):
                    m.d.comb += scalar.eq(immediate)
            value = Signal(vector, name=f"vector_{name}")
            with m.Switch(operand.kind):
                with m.Case(OperandKind.REGISTER):
                    m.d.comb += value.eq(vrf_reads[position].data)
                with m.Case(OperandKind.SPECIAL):
                    with m.Switch(operand.index):
                        with m.Case(VectorSpecial.DATA.value):
                            m.d.comb += value.eq(data_read.data)
                        with m.Case(VectorSpecial.LANE.value):
                            m.d.comb += value.eq(lane_index)
                        with m.Case(VectorSpecial.LANEMASK.value):
                            m.d.comb += value.eq(lane_mask)
                with m.Case(OperandKind.ARGUMENT):
                    m.d.comb += value.eq(broadcast(arg_reads[position].data))
                with m.Case(OperandKind.IMMEDIATE):
                    m.d.comb += value.eq(broadcast(operand_control.imm))
            scalars.append(scalar)
            vectors.append(value)

        dispatch_valid = Signal()
        dispatch_slot = Signal(slot_bits)
        dispatch_pc = Signal(pc_bits)
        dispatch_control = Signal(control_layout())
        dispatch_scalar = [Signal(SCALAR_BITS, name=f"dispatch_x{name}") for name in operand_names]
        dispatch_vector = [Signal(vector, name=f"dispatch_v{name}") for name in operand_names]
        dispatch_mask = Signal(config.sector_bytes)
        m.d.sync += [dispatch_valid.eq(operand_valid), dispatch_slot.eq(operand_slot),
                     dispatch_pc.eq(operand_pc), dispatch_control.eq(operand_control),
                     dispatch_mask.eq(info.mask)]
        m.d.sync += [register.eq(value) for register, value in zip(dispatch_scalar, scalars)]
        m.d.sync += [register.eq(value) for register, value in zip(dispatch_vector, vectors)]

        # --- DISPATCH ---------------------------------------------------------------------
        ctl = dispatch_control
        slot = dispatch_slot
        xa, xb, xc = dispatch_scalar
        va, vb, vc = dispatch_vector
        entry = entry_of[slot]
        address = Signal(SCALAR_BITS)
        m.d.comb += address.eq(Mux(ctl.address_a, xa, 0) + Mux(ctl.address_b, xb, 0) +
                               ctl.imm.as_signed())
        opcode = ctl.opcode
        sector_aligned = address[:config.offset_bits] == 0
        word_aligned = address[:2] == 0
        word_access = (opcode == Opcode.LW) | (opcode == Opcode.SW)
        aligned = Mux(word_access, word_aligned, sector_aligned)
        in_window = ((address[config.addr_width:] == 0) &
                     (address >= self.window_base) &
                     (address + config.sector_bytes <= self.window_end))
        spad_bits = (engine.scratchpad_bytes - 1).bit_length()
        in_scratchpad = address[spad_bits:] == 0

        cause = Signal(ErrorCause)
        with m.If(age[slot] >= self.watchdog):
            m.d.comb += cause.eq(ErrorCause.WATCHDOG)
        with m.Elif(~ctl.legal):
            m.d.comb += cause.eq(ErrorCause.ILLEGAL_INSTRUCTION)
        with m.Elif((ctl.unit == UnitCode.MEMORY) & ~aligned):
            m.d.comb += cause.eq(ErrorCause.MISALIGNED)
        with m.Elif((ctl.unit == UnitCode.MEMORY) & ~in_window):
            m.d.comb += cause.eq(ErrorCause.OUT_OF_WINDOW)
        with m.Elif((ctl.unit == UnitCode.SCRATCHPAD) & ~sector_aligned):
            m.d.comb += cause.eq(ErrorCause.MISALIGNED)
        with m.Elif((ctl.unit == UnitCode.SCRATCHPAD) & ~in_scratchpad):
            m.d.comb += cause.eq(ErrorCause.SCRATCHPAD_RANGE)

        # An ordered entry's atomics go to the ordering station, which applies them in
        # turn; all but the one that hands the turn on are posted (the µthread goes on).
        # The end of a µthread that has not handed the turn on with an atomic waits for
        # its turn and for its queued atomics, then hands the turn on itself.
        ends = ctl.exit | (opcode == Opcode.EXIT)
        needs_turn = ordered.bit_select(slot, 1) & ~released.bit_select(slot, 1) & \
            (ctl.atomic | ends)
        ordered_atomic = needs_turn & ctl.atomic
        posted = ordered_atomic & ~ctl.release & ~ends
        my_turn = (self.turn[entry] == seq[slot][:order_bits(config)]) & \
            ~self.holding.bit_select(slot, 1)
        turn_ok = ~(needs_turn & ~ctl.atomic) | my_turn
        stopped = self.stopped.bit_select(entry, 1)

        # Branches.
        taken = Signal()
        with m.Switch(opcode):
            with m.Case(Opcode.BEQ):
                m.d.comb += taken.eq(xa == xb)
            with m.Case(Opcode.BNE):
                m.d.comb += taken.eq(xa != xb)
            with m.Case(Opcode.BLT):
                m.d.comb += taken.eq(xa.as_signed() < xb.as_signed())
            with m.Case(Opcode.BGE):
                m.d.comb += taken.eq(xa.as_signed() >= xb.as_signed())
            with m.Case(Opcode.BLTU):
                m.d.comb += taken.eq(xa < xb)
            with m.Case(Opcode.BGEU):
                m.d.comb += taken.eq(xa >= xb)
            with m.Case(Opcode.JUMP):
                m.d.comb += taken.eq(1)
        next_pc = Mux(taken, dispatch_pc + ctl.imm.as_signed(), dispatch_pc + 1)[:pc_bits]

        # Units of this sub-core.
        m.submodules.alu = alu = ALU(config)
        m.submodules.multiply = multiply = Multiply(config)
        scalar_units = {UnitCode.ALU: alu.request, UnitCode.MULTIPLY: multiply.request}
        vector_units = {UnitCode.FMA: self.fma.request, UnitCode.VECTOR: self.vector.request,
                        UnitCode.DIVIDE: self.divide.request, UnitCode.REDUCE: self.reduce.request,
                        UnitCode.CONVERT: self.convert.request}
        for request in scalar_units.values():
            m.d.comb += [request.payload.slot.eq(slot), request.payload.opcode.eq(opcode),
                         request.payload.a.eq(xa), request.payload.b.eq(xb)]
        for request in vector_units.values():
            m.d.comb += [request.payload.slot.eq(slot), request.payload.opcode.eq(opcode),
                         request.payload.a.eq(va), request.payload.b.eq(vb),
                         request.payload.c.eq(vc),
                         request.payload.x.eq(Mux(ctl.a.type == OperandClass.SCALAR, xa, xb))]
        thread = self.index * slots + slot
        memory_op = self.memory_ops.payload
        m.d.comb += [
            memory_op.thread.eq(thread),
            memory_op.opcode.eq(opcode),
            memory_op.addr.eq(address),
            memory_op.data.eq(Mux(word_access, Cat(*(xc[:32] for _ in range(lanes))), vc)),
            memory_op.mask.eq(dispatch_mask),
        ]
        spad_op = self.scratchpad_ops.payload
        m.d.comb += [
            spad_op.thread.eq(thread),
            spad_op.opcode.eq(opcode),
            spad_op.addr.eq(address),
            spad_op.b.eq(vb),
            spad_op.c.eq(vc),
            spad_op.entry.eq(entry),
            # An atomic that ends an ordered µthread hands the turn on as it leaves the
            # ordering station, like one marked ``.r``.
            spad_op.release.eq(ctl.release | (ends & needs_turn)),
            spad_op.ordered.eq(ordered_atomic),
            spad_op.posted.eq(posted),
            spad_op.seq.eq(seq[slot][:order_bits(config)]),
        ]

        # The outcome of the instruction in DISPATCH.
        proceed = dispatch_valid & ~stopped & (cause == ErrorCause.NONE) & turn_ok
        unit_ready = Signal()
        with m.Switch(ctl.unit):
            for code, request in {**scalar_units, **vector_units}.items():
                with m.Case(code):
                    m.d.comb += [request.valid.eq(proceed), unit_ready.eq(request.ready)]
            with m.Case(UnitCode.MEMORY):
                m.d.comb += [self.memory_ops.valid.eq(proceed),
                             unit_ready.eq(self.memory_ops.ready)]
            with m.Case(UnitCode.SCRATCHPAD):
                m.d.comb += [self.scratchpad_ops.valid.eq(proceed),
                             unit_ready.eq(self.scratchpad_ops.ready)]
            with m.Default():       # CONTROL, BRANCH: complete here
                m.d.comb += unit_ready.eq(1)
        completes_here = (ctl.unit == UnitCode.CONTROL) | (ctl.unit == UnitCode.BRANCH) | posted
        dispatched = proceed & unit_ready
        failed = dispatch_valid & ~stopped & (cause != ErrorCause.NONE)
        killed = dispatch_valid & stopped
        m.d.comb += self.issued.eq(dispatched)

        slot_bit = Const(1, slots) << slot
        clear_busy = Signal(slots)
        retire_here = Signal(slots)
        with m.If(dispatched):
            m.d.sync += [
                pc[slot].eq(next_pc),
                inflight_pc[slot].eq(dispatch_pc),
                dest_type[slot].eq(ctl.rd_type),
                dest_index[slot].eq(ctl.rd),
                exit_pending.bit_select(slot, 1).eq(ends),
            ]
            with m.If(needs_turn & (ctl.release | ends)):
                m.d.sync += released.bit_select(slot, 1).eq(1)
            with m.If(completes_here):
                with m.If(ends):
                    m.d.comb += retire_here.eq(slot_bit)
                with m.Else():
                    m.d.comb += clear_busy.eq(slot_bit)
        with m.Elif(failed | killed):
            m.d.comb += retire_here.eq(slot_bit)
        with m.Elif(dispatch_valid):        # replay
            m.d.comb += clear_busy.eq(slot_bit)

        # An ordered µthread that ends with no atomic in flight hands the turn on now.
        with m.If(dispatched & needs_turn & ends & ~ctl.atomic):
            m.d.comb += self.release.eq(Const(1, entries) << entry)
        m.d.comb += [
            self.retire_valid[0].eq(retire_here.any()),
            self.retire[0].entry.eq(entry),
            self.retire[0].kind.eq(kind_of[slot]),
            self.retire[0].error.eq(failed | killed),
            self.error_valid[0].eq(failed),
            self.error[0].entry.eq(entry),
            self.error[0].pc.eq(dispatch_pc),
            self.error[0].cause.eq(cause),
        ]

        # --- WRITE-BACK -------------------------------------------------------------------
        result_width = max(vector.size, SCALAR_BITS)
        writeback_layout = data.StructLayout({
            "slot": unsigned(slot_bits), "value": unsigned(result_width), "error": unsigned(1)})
        sources = [alu.result, multiply.result, self.fma.result, self.vector.result,
                   self.divide.result, self.reduce.result, self.convert.result,
                   self.memory_done, self.scratchpad_done]
        m.submodules.writeback = merge = RoundRobinMerge(writeback_layout, len(sources))
        for port, source in zip(merge.i, sources):
            m.d.comb += [
                port.valid.eq(source.valid),
                source.ready.eq(port.ready),
                port.payload.slot.eq(source.payload.slot),
                port.payload.value.eq(source.payload.value),
                port.payload.error.eq(source.payload.error
                                      if "error" in source.payload.shape().members else 0),
            ]
        done = merge.o.payload
        m.d.comb += merge.o.ready.eq(1)
        done_valid = merge.o.valid
        done_slot = done.slot
        done_type = dest_type[done_slot]
        done_bit = Const(1, slots) << done_slot
        retire_done = Signal(slots)
        clear_done = Signal(slots)
        m.d.comb += [
            xrf_write.addr.eq(Cat(dest_index[done_slot], done_slot)),
            xrf_write.data.eq(done.value[:SCALAR_BITS]),
            xrf_write.en.eq(done_valid & ~done.error & (done_type == OperandClass.SCALAR)),
            vrf_write.addr.eq(Cat(dest_index[done_slot], done_slot)),
            vrf_write.data.eq(done.value[:vector.size]),
            vrf_write.en.eq(done_valid & ~done.error & (done_type == OperandClass.VECTOR)),
        ]
        with m.If(done_valid):
            with m.If(done.error | exit_pending.bit_select(done_slot, 1)):
                m.d.comb += retire_done.eq(done_bit)
            with m.Else():
                m.d.comb += clear_done.eq(done_bit)
        m.d.comb += [
            self.retire_valid[1].eq(retire_done.any()),
            self.retire[1].entry.eq(entry_of[done_slot]),
            self.retire[1].kind.eq(kind_of[done_slot]),
            self.retire[1].error.eq(done.error),
            self.error_valid[1].eq(done_valid & done.error),
            self.error[1].entry.eq(entry_of[done_slot]),
            self.error[1].pc.eq(inflight_pc[done_slot]),
            self.error[1].cause.eq(ErrorCause.MEMORY_ERROR),
        ]

        # --- slot bookkeeping -------------------------------------------------------------
        start = Signal(slots)
        with m.If(spawn_fire):
            m.d.comb += start.eq(Const(1, slots) << spawn.slot)
        picked = Signal(slots)
        with m.If(pick_valid):
            m.d.comb += picked.eq(Const(1, slots) << pick_slot)
        retired = retire_here | retire_done
        m.d.sync += [
            active.eq((active & ~retired) | start),
            busy.eq(((busy | picked) & ~clear_busy & ~clear_done & ~retired) & ~start),
        ]
        return m
