"""Where the soak puts things in the slice's address space.

Kernels may access ``WINDOW`` only. Below it nothing is mapped, so an engine access there
is out of the window; ``HOLE`` lies inside the window but is never mapped in memory, so a
GPU or engine access there is answered DECODE_ERROR (a read) or refused (a write, the
slice's ``mem_write_error``); memory answers every read of ``FAILING`` with SLAVE_ERROR
and refuses every write to it. The faulting entries watch ``FAULT_REGION``; the GPU's
unrelated traffic and the entries armed and disarmed between chunks use
``UNRELATED_REGION``; the library kernels' tensors lie from ``TENSOR_BASE`` up.
"""

WINDOW = (0x0C_0000, 0x80_0000)
HOLE = (0x0D_0000, 0x0D_0800)
FAILING = (0x0D_1000, 0x0D_1800)
FAULT_REGION = (0x0E_0000, 0x0E_0200)
UNRELATED_REGION = (0x0F_0000, 0x0F_4000)
TENSOR_BASE = 0x10_0000
