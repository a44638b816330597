"""The GPU write stream of a convolution's output: the output against a direct convolution
of the same seeded inputs, and its sector writes tile by tile, each a full sector of the
output's bytes at its address."""

import numpy as np
import pytest

from matndp.host.access_stream import ConvLayer, conv_output, conv_output_write_stream

# 3 → 8 channels, 3×3, stride 2, padding 1, 9×9 in: 5×5 out.
LAYER = ConvLayer("small", 3, 8, 3, 2, 1, 9)


def _direct(layer, batch, seed):
    """The documented inputs (post-ReLU normal activations, He-initialized weights in
    (ky, kx, c_in) × c_out order, drawn in that order) convolved pixel by pixel."""
    rng = np.random.default_rng(seed)
    x = np.maximum(rng.standard_normal((batch, layer.in_size, layer.in_size, layer.in_channels),
                                       dtype=np.float32), 0)
    fan_in = layer.kernel ** 2 * layer.in_channels
    w = rng.standard_normal((fan_in, layer.out_channels), dtype=np.float32) * np.float32(np.sqrt(2 / fan_in))
    w = w.astype(np.float64).reshape(layer.kernel, layer.kernel, layer.in_channels, -1)
    padded = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
    size = layer.out_size
    out = np.zeros((batch, size, size, layer.out_channels))
    for oy in range(size):
        for ox in range(size):
            window = padded[:, 2 * oy:2 * oy + 3, 2 * ox:2 * ox + 3, :]
            out[:, oy, ox] = np.einsum("nyxc,yxco->no", window, w)
    return out.reshape(batch * size * size, layer.out_channels)


def test_the_output_is_the_convolution_of_the_seeded_inputs():
    assert LAYER.out_size == 5
    output = conv_output(LAYER, batch=2, seed=3)
    assert output.dtype == np.float32 and output.shape == (2 * 25, 8)
    assert output == pytest.approx(_direct(LAYER, 2, 3), rel=1e-5, abs=1e-5)


def test_the_stream_writes_every_output_sector_once_tile_by_tile():
    base = 0x4000
    stream = conv_output_write_stream(LAYER, batch=2, base=base, tile=(16, 8), seed=3)
    output = stream.output
    assert stream.tensor_bytes == 50 * 8 * 4 and stream.base == base
    assert len(stream.accesses) == 50                      # a row of 8 floats is one sector
    # Tiles of 16 rows: rows 0–15, 16–31, 32–47, 48–49, each row one sector, in order.
    assert [a.addr for a in stream.accesses] == [base + 32 * row for row in range(50)]
    for row, access in enumerate(stream.accesses):
        assert access.write and access.mask == (1 << 32) - 1
        values = np.frombuffer(access.data.to_bytes(32, "little"), dtype=np.float32)
        assert values.tolist() == output[row].tolist()


def test_a_narrow_tile_splits_rows_into_sectors_column_tile_by_column_tile():
    layer = ConvLayer("wide", 3, 16, 1, 1, 0, 2)          # 4 pixels, 16 channels
    stream = conv_output_write_stream(layer, base=0, tile=(2, 8), max_tiles=3)
    # Tiles (rows 0-1, columns 0-7), (rows 0-1, columns 8-15), (rows 2-3, columns 0-7).
    assert [a.addr for a in stream.accesses] == [0, 64, 32, 96, 128, 192]
