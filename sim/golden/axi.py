"""AXI4 burst semantics written from the specification, independent of the RTL: the
address of every beat and the bytes it carries, and which bursts the FPGA top refuses
(docs/fpga.md)."""

FIXED, INCR, WRAP = 0, 1, 2


def beat_addresses(addr, length, size, burst):
    """The address of each of the ``length + 1`` beats of a burst (AxLEN = ``length``)."""
    beats = length + 1
    step = 1 << size
    aligned = addr // step * step
    if burst == FIXED:
        return [addr] * beats
    if burst == INCR:
        return [addr] + [aligned + k * step for k in range(1, beats)]
    window = beats * step
    lower = addr // window * window
    return [lower + (addr - lower + k * step) % window for k in range(beats)]


def beat_bytes(address, size):
    """The byte addresses a beat at ``address`` of transfer size ``2 ** size`` carries: from
    the address to the end of its size-aligned transfer."""
    step = 1 << size
    return range(address, address // step * step + step)


def lanes(address, size, sector_bytes):
    """The beat's bytes as byte lanes of a ``sector_bytes``-wide data bus."""
    return sum(1 << (byte % sector_bytes) for byte in beat_bytes(address, size))


def is_refused(addr, length, size, burst, sector_bytes):
    """Whether the FPGA top answers the burst with SLVERR (docs/fpga.md)."""
    if burst == 3 or (1 << size) > sector_bytes:
        return True
    if burst == WRAP:
        return length + 1 not in (2, 4, 8, 16) or addr % (1 << size) != 0
    if burst == FIXED:
        return length + 1 > 16
    return False
