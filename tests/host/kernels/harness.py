"""Small drivers that run one instruction under the simulator over many operands."""

import numpy as np

from matndp.host.kernels.assembler import assemble
from matndp.host.kernels.iss import FilterEntry, InstructionSetSimulator, IssConfig, TriggerEvents
from matndp.host.kernels.memory import Memory


LANES = 8
SECTOR = 32


def pad(values, fill=0):
    values = np.asarray(values, dtype=np.uint32)
    extra = (-len(values)) % LANES
    return np.concatenate([values, np.full(extra, fill, dtype=np.uint32)])


def run_vector(instruction, a, b=None, c=None, config=IssConfig()):
    """``instruction`` (writing v1 from DATA = a, v2 = b, v3 = c, lane by lane) applied to
    uint32 arrays, one µthread per sector; returns v1's lanes, trimmed to len(a)."""
    count = len(a)
    a = pad(a)
    b = pad(np.zeros(count) if b is None else b)
    c = pad(np.zeros(count) if c is None else c)
    image = assemble(f""".kernel vector
.arg B 0
.arg C 1
.arg OUT 2
.main
    vld v2, [OFFSET + B]
    vld v3, [OFFSET + C]
    {instruction}
    vst.x [OFFSET + OUT], v1
""")
    memory = Memory(4 * a.nbytes + SECTOR)
    addresses = [memory.place(name, array) for name, array in (("a", a), ("b", b), ("c", c))]
    out = memory.reserve("out", a.nbytes, dtype=np.uint32)
    simulator = InstructionSetSimulator(memory, [FilterEntry(addresses[0], a.nbytes, image,
                                                             (addresses[1], addresses[2], out))], config)
    simulator.run(TriggerEvents.sectors(0, addresses[0], a))
    return memory.tensor("out")[:count]


def run_scalar(instruction, a, b):
    """``instruction`` (writing x1 from a0 = a[i], a1 = b[i]) for each pair, each in its
    own entry; returns x1 of each as Python ints."""
    image = assemble(f""".kernel scalar
.main
    {instruction}
    shl x2, ENTRY, 5          ; one sector per entry: µthreads never share one
    add x2, x2, a2
    sw [x2], x1
    shr x3, x1, 32
    sw.x [x2 + 4], x3
""")
    memory = Memory(SECTOR + SECTOR * len(a))
    trigger = memory.reserve("trigger", SECTOR)
    out = memory.reserve("out", SECTOR * len(a), dtype=np.uint64)
    entries = [FilterEntry(trigger, SECTOR, image, (x, y, out)) for x, y in zip(a, b)]
    simulator = InstructionSetSimulator(memory, entries)
    events = TriggerEvents(np.arange(len(a)), np.full(len(a), trigger), np.zeros((len(a), SECTOR)),
                           np.ones((len(a), SECTOR), bool), np.zeros(len(a), bool))
    simulator.run(events)
    return [int(value) for value in memory.tensor("out")[::SECTOR // 8]]


def run_sector(main, data, base, mask=None):
    """µthreads running ``main`` (a ``.main`` body; arguments B = a sector holding ``base``,
    OUT = a sector preset to ``base``), one per write of a row of ``data`` (uint32 lanes; one
    row: one µthread) to its own sector, with byte enables ``mask`` (all when ``None``);
    returns (the run's result, races allowed; OUT's lanes)."""
    image = assemble(f""".kernel sector
.arg B 0
.arg OUT 1
.main
{main}
    exit
""")
    data = np.atleast_2d(np.asarray(data, dtype=np.uint32))
    count = len(data)
    memory = Memory((2 + count) * SECTOR)
    trigger = memory.reserve("trigger", count * SECTOR)
    source = memory.place("base", pad(base))
    out = memory.place("out", pad(base))
    simulator = InstructionSetSimulator(memory, [FilterEntry(trigger, count * SECTOR, image, (source, out))])
    mask = np.ones(SECTOR, bool) if mask is None else np.asarray(mask, bool)
    raw = np.stack([pad(row) for row in data]).view(np.uint8)
    events = TriggerEvents(np.zeros(count), trigger + SECTOR * np.arange(count), raw,
                           np.broadcast_to(mask, (count, SECTOR)), np.ones(count, bool))
    result = simulator.run(events, allow_races=True)
    return result, memory.tensor("out").copy()
