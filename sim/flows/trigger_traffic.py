"""Traffic for the trigger: a DNN layer's output stream mixed with unrelated traffic and
reads, the filter entries a runtime would program for it, and an independent golden model
of what must come out (memory contents, read data, trigger events).

Pure Python: the testbench, ``matndp sim`` and the benchmark share it.
"""

from dataclasses import dataclass, field, replace
import random

import numpy as np

from matndp.host.access_stream import conv_output_write_stream, sector_words
from matndp.host.runtime import FilterRange


__all__ = ["Scenario", "build_scenario", "GoldenResult", "golden_replay", "matching_entry",
           "OUTPUT_ENTRY", "TRIGGER_LAYER"]


# The filter entry that watches the layer's output (the weights' is the next one).
OUTPUT_ENTRY = 0
# The layer whose output the scenario writes.
TRIGGER_LAYER = "layer1.0.conv3"


@dataclass
class Scenario:
    config: object
    entries: dict                       # filter index -> FilterRange
    disabled_entries: dict              # programmed, then disabled: must never trigger
    preload: list                       # (addr, float32 array) placed in memory first
    requests: list                      # dicts: addr, write, data, mask, id
    description: dict = field(default_factory=dict)


@dataclass
class GoldenResult:
    read_data: dict                     # request index -> data
    write_events: list                  # in request order
    read_events: dict                   # request index -> event
    hits: dict                          # entry -> count


def matching_entry(entries, request):
    """The filter index a request triggers (lowest index wins), or None: the matching
    rule of docs/trigger.md, written independently of the RTL."""
    for index in sorted(entries):
        entry = entries[index]
        if entry.base <= request["addr"] < entry.end and \
                (entry.on_write if request["write"] else entry.on_read):
            return index
    return None


def build_scenario(config, *, layer=TRIGGER_LAYER, tiles=4, mix=0.35, seed=1):
    """``tiles`` output tiles of ``layer`` written by the GPU, with a fraction ``mix`` of
    other traffic interleaved: unrelated writes and reads, consumer reads of the output
    (which must not trigger: its entry fires on writes), reads of the next layer's weights
    (which must trigger, with the data memory returns), partial-mask writes and accesses
    just outside every range.

    The output's entry is 0, the weights' 1 and a retired range's (programmed, then
    disabled) 2, as far as ``config`` has entries. With a single entry, the output's entry
    fires on reads too, so that both kinds of event still occur."""
    rng = random.Random(seed)
    sector = config.sector_bytes
    full = (1 << sector) - 1
    slots = config.trigger.filter_entries
    stream = conv_output_write_stream(layer, max_tiles=tiles, sector_bytes=sector, seed=seed,
                                      base=0x12_3400_0000 & ~(sector - 1))
    output = FilterRange(stream.base, stream.tensor_bytes, on_write=True, on_read=slots == 1,
                         kernel_pc=0x0040, arg_index=1)
    weights_array = np.random.default_rng(seed + 1).standard_normal(4096, dtype=np.float32) * np.float32(0.05)
    weights = FilterRange(0x02_0000_0000, weights_array.nbytes, on_write=False, on_read=True,
                          kernel_pc=0x0080, arg_index=2)
    retired = FilterRange(0x03_0000_0000, 64 * sector, on_write=True, on_read=True)
    unrelated_base = 0x04_0000_0000
    unrelated_sectors = 512
    if output.end > 1 << config.addr_width:
        raise ValueError(f"the scenario's address ranges need {output.end.bit_length()} address bits; "
                         f"the configuration has {config.addr_width}")

    def words(count):
        return [rng.getrandbits(8 * sector) for _ in range(count)]

    others = []
    weight_sectors = weights.size // sector
    for _ in range(int(len(stream.accesses) * mix / (1 - mix))):
        kind = rng.random()
        if kind < 0.3:
            others.append(dict(addr=unrelated_base + rng.randrange(unrelated_sectors) * sector,
                               write=1, data=words(1)[0],
                               mask=full if rng.random() < 0.7 else rng.getrandbits(sector)))
        elif kind < 0.45:
            others.append(dict(addr=unrelated_base + rng.randrange(unrelated_sectors) * sector, write=0))
        elif kind < 0.75:
            others.append(dict(addr=weights.base + rng.randrange(weight_sectors) * sector, write=0))
        elif kind < 0.85:
            # Consumer reads of the output tensor: in range, but the entry fires on writes only.
            others.append(dict(addr=output.base + rng.randrange(output.size // sector) * sector, write=0))
        else:
            others.append(dict(addr=retired.base + rng.randrange(retired.size // sector) * sector,
                               write=int(rng.random() < 0.5), data=words(1)[0], mask=full))
    # Range edges: the sectors just outside and the last sectors inside each range.
    for entry in (output, weights, retired):
        for addr in (entry.base - sector, entry.end - sector, entry.end):
            others.append(dict(addr=addr, write=1, data=words(1)[0], mask=full))
            others.append(dict(addr=addr, write=0))
    # A partial write inside the triggering range: the event carries its byte enables.
    others.append(dict(addr=output.base + sector, write=1, data=words(1)[0], mask=0x0F0F_00FF & full))
    rng.shuffle(others)

    writes = [dict(addr=a.addr, write=1, data=a.data, mask=a.mask) for a in stream.accesses]
    requests = []
    i = j = 0
    while i < len(writes) or j < len(others):
        take_other = j < len(others) and (i >= len(writes) or rng.random() < mix)
        if take_other:
            requests.append(others[j])
            j += 1
        else:
            requests.append(writes[i])
            i += 1

    read_id = 0
    for request in requests:
        request.setdefault("data", 0)
        request.setdefault("mask", full)
        if request["write"]:
            request["id"] = rng.getrandbits(config.id_width)
        else:
            # Round-robin tags: unique among outstanding reads for any realistic latency.
            request["id"] = read_id
            read_id = (read_id + 1) % (1 << config.id_width)

    entries = {index: entry for index, entry in enumerate((output, weights), start=OUTPUT_ENTRY)
               if index < slots}
    disabled = {2: retired} if slots > 2 else {}
    golden_hits = _count_hits(entries, requests)
    entries = {index: replace(entry, expected=golden_hits[index])
               for index, entry in entries.items()}
    return Scenario(config=config, entries=entries, disabled_entries=disabled,
                    preload=[(weights.base, weights_array)], requests=requests,
                    description={"layer": layer, "tiles": tiles, "layer_writes": len(writes),
                                 "other_requests": len(others), "requests": len(requests)})


def _count_hits(entries, requests):
    hits = {index: 0 for index in entries}
    for request in requests:
        index = matching_entry(entries, request)
        if index is not None:
            hits[index] += 1
    return hits


def golden_replay(scenario):
    """Replay the requests in order over a plain byte array model of memory."""
    sector = scenario.config.sector_bytes
    memory = {}
    for addr, array in scenario.preload:
        for k, word in enumerate(sector_words(array, sector)):
            memory[addr + k * sector] = word
    read_data = {}
    write_events = []
    read_events = {}
    hits = {index: 0 for index in scenario.entries}
    for index, request in enumerate(scenario.requests):
        addr = request["addr"]
        if request["write"]:
            old = memory.get(addr, 0)
            mask_bits = sum(0xFF << (8 * b) for b in range(sector) if request["mask"] >> b & 1)
            memory[addr] = (old & ~mask_bits) | (request["data"] & mask_bits)
            data = request["data"]
        else:
            data = read_data[index] = memory.get(addr, 0)
        entry_index = matching_entry(scenario.entries, request)
        if entry_index is None:
            continue
        event = dict(entry=entry_index, addr=addr, offset=addr - scenario.entries[entry_index].base,
                     data=data, mask=request["mask"], write=request["write"])
        if request["write"]:
            write_events.append(event)
        else:
            read_events[index] = event
        hits[entry_index] += 1
    return GoldenResult(read_data, write_events, read_events, hits)
