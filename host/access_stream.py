"""GPU sector access streams of DNN layers, with real data.

A convolution runs on the GPU as an implicit GEMM: output matrix ``[N·OH·OW, C_out]``
(NHWC, row-major), computed by thread blocks that each own a ``tile_m × tile_n`` tile and
write it row by row in sector-sized pieces (the epilogue's coalesced stores). The stream
below reproduces that order for a real layer shape, with the layer's real FP32 outputs
computed in numpy from random inputs and Kaiming-initialized weights.
"""

from dataclasses import dataclass
from math import ceil

import numpy as np


__all__ = ["ConvLayer", "RESNET50_LAYERS", "SectorAccess", "LayerStream", "conv_output", "conv_output_write_stream",
           "output_tiles", "sector_words"]


@dataclass(frozen=True)
class ConvLayer:
    """A 2-D convolution's shape: channels, square kernel, stride, padding, input size."""

    name: str
    in_channels: int
    out_channels: int
    kernel: int
    stride: int
    padding: int
    in_size: int            # input height = width

    @property
    def out_size(self):
        return (self.in_size + 2 * self.padding - self.kernel) // self.stride + 1


# Shapes of torchvision's resnet50 (v1.5: the stride sits on the 3×3 convolution).
RESNET50_LAYERS = {layer.name: layer for layer in [
    ConvLayer("conv1", 3, 64, 7, 2, 3, 224),
    ConvLayer("layer1.0.conv3", 64, 256, 1, 1, 0, 56),
    ConvLayer("layer2.0.conv2", 128, 128, 3, 2, 1, 56),
    ConvLayer("layer3.0.conv2", 256, 256, 3, 2, 1, 28),
    ConvLayer("layer4.2.conv3", 512, 2048, 1, 1, 0, 7),
]}


@dataclass(frozen=True)
class SectorAccess:
    """One GPU memory request of a sector."""

    addr: int
    write: bool
    data: int        # the sector's bytes, byte 0 in the low bits
    mask: int        # byte enables


@dataclass(frozen=True)
class LayerStream:
    """A layer's output write stream: the output values and their sector writes in order."""

    layer: ConvLayer
    batch: int
    base: int
    tensor_bytes: int
    output: np.ndarray          # [N·OH·OW, C_out] float32
    accesses: tuple             # in GPU write order


def _im2col(x, kernel, stride, padding):
    n, h, w, c = x.shape
    padded = np.pad(x, ((0, 0), (padding, padding), (padding, padding), (0, 0)))
    out = (h + 2 * padding - kernel) // stride + 1
    columns = np.empty((n, out, out, kernel, kernel, c), dtype=x.dtype)
    for dy in range(kernel):
        for dx in range(kernel):
            columns[:, :, :, dy, dx, :] = padded[:, dy:dy + stride * out:stride, dx:dx + stride * out:stride, :]
    return columns.reshape(n * out * out, kernel * kernel * c)


def sector_words(values, sector_bytes):
    """Little-endian integers, one per sector, of a float32 array's bytes."""
    raw = np.ascontiguousarray(values, dtype=np.float32).view(np.uint8).ravel()
    if raw.size % sector_bytes:
        raise ValueError(f"{raw.size} bytes are not a whole number of {sector_bytes}-byte sectors")
    return [int.from_bytes(raw[i:i + sector_bytes].tobytes(), "little")
            for i in range(0, raw.size, sector_bytes)]


def _layer(layer):
    if isinstance(layer, str):
        try:
            return RESNET50_LAYERS[layer]
        except KeyError:
            raise ValueError(f"unknown layer {layer!r}; known: {', '.join(RESNET50_LAYERS)}") from None
    return layer


def output_tiles(layer, *, batch=1, tile=(128, 64)):
    """How many ``tile``-sized tiles the implicit GEMM of ``layer``'s output has."""
    layer = _layer(layer)
    rows, columns = batch * layer.out_size ** 2, layer.out_channels
    return ceil(rows / tile[0]) * ceil(columns / tile[1])


def conv_output(layer, *, batch=1, seed=0):
    """``layer``'s output for seeded inputs, channels innermost: (batch × pixels, C_out)
    float32, computed by im2col and a matrix product in float32."""
    layer = _layer(layer)
    rng = np.random.default_rng(seed)
    # Post-ReLU activations in, He-initialized weights: realistic magnitudes and signs.
    x = np.maximum(rng.standard_normal((batch, layer.in_size, layer.in_size, layer.in_channels),
                                       dtype=np.float32), 0)
    fan_in = layer.kernel * layer.kernel * layer.in_channels
    weights = (rng.standard_normal((fan_in, layer.out_channels), dtype=np.float32)
               * np.float32(np.sqrt(2.0 / fan_in)))
    return (_im2col(x, layer.kernel, layer.stride, layer.padding) @ weights).astype(np.float32)


def conv_output_write_stream(layer, *, batch=1, base=0x10_0000_0000, tile=(128, 64),
                             sector_bytes=32, max_tiles=None, seed=0):
    """The sector writes of ``layer``'s output, tile by tile, with the real output values.

    ``max_tiles`` keeps the first tiles only (a slice of the layer for short runs); it must
    be in ``1..output_tiles(layer)``.
    """
    layer = _layer(layer)
    if max_tiles is not None:
        available = output_tiles(layer, batch=batch, tile=tile)
        if isinstance(max_tiles, bool) or not isinstance(max_tiles, int) or \
                not 1 <= max_tiles <= available:
            raise ValueError(f"{layer.name} has {available} output tiles of {tile[0]}x{tile[1]}; "
                             f"max_tiles must be in 1..{available}, not {max_tiles!r}")
    tile_m, tile_n = tile
    floats_per_sector = sector_bytes // 4
    if tile_n % floats_per_sector or layer.out_channels % floats_per_sector:
        raise ValueError(f"tile width {tile_n} and C_out {layer.out_channels} must be multiples of "
                         f"{floats_per_sector} floats (one sector)")
    if base % sector_bytes:
        raise ValueError(f"base {base:#x} is not sector-aligned")
    output = conv_output(layer, batch=batch, seed=seed)
    rows, columns = output.shape

    full_mask = (1 << sector_bytes) - 1
    accesses = []
    tiles = [(tm, tn) for tm in range(ceil(rows / tile_m)) for tn in range(ceil(columns / tile_n))]
    for tm, tn in tiles[:max_tiles]:
        for row in range(tm * tile_m, min(rows, (tm + 1) * tile_m)):
            first, last = tn * tile_n, min(columns, (tn + 1) * tile_n)
            words = sector_words(output[row, first:last], sector_bytes)
            for k, word in enumerate(words):
                addr = base + (row * columns + first + k * floats_per_sector) * 4
                accesses.append(SectorAccess(addr, True, word, full_mask))
    return LayerStream(layer, batch, base, output.nbytes, output, tuple(accesses))
