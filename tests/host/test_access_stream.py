"""The GPU write stream of a convolution's output: the output against a direct convolution
of the same seeded inputs, and its sector writes tile by tile, each a full sector of the
output's bytes at its address."""

import re

import numpy as np
import pytest

from matndp.host.access_stream import (RESNET50_LAYERS, ConvLayer, conv_output,
                                       conv_output_write_stream, output_tiles, sector_words)

# 3 → 8 channels, 3×3, stride 2, padding 1, 9×9 in: 5×5 out.
LAYER = ConvLayer("small", 3, 8, 3, 2, 1, 9)
WIDE = ConvLayer("wide", 3, 16, 1, 1, 0, 2)               # 4 pixels, 16 channels


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
    stream = conv_output_write_stream(WIDE, base=0, tile=(2, 8), max_tiles=3)
    # Tiles (rows 0-1, columns 0-7), (rows 0-1, columns 8-15), (rows 2-3, columns 0-7).
    assert [a.addr for a in stream.accesses] == [0, 64, 32, 96, 128, 192]


def test_sector_words_are_the_little_endian_float32_bytes():
    # 1.0f = 0x3F800000, 2.0f = 0x40000000: byte 0 of the sector in the low bits.
    for values in (np.array([1.0, 2.0], dtype=np.float32), [1.0, 2.0], np.array([1.0, 2.0])):
        assert sector_words(values, 8) == [0x40000000_3F800000]
    assert sector_words(np.array([[1.0], [2.0]], dtype=np.float32), 4) == [0x3F800000, 0x40000000]
    with pytest.raises(ValueError, match="^12 bytes are not a whole number of 8-byte sectors$"):
        sector_words([1.0, 2.0, 3.0], 8)


def test_resnet50_layers_are_found_by_name():
    assert {name: layer.out_size for name, layer in RESNET50_LAYERS.items()} == {
        "conv1": 112, "layer1.0.conv3": 56, "layer2.0.conv2": 28, "layer3.0.conv2": 14,
        "layer4.2.conv3": 7}
    # conv1: 112 × 112 pixels per image in tiles of 128 rows, 64 channels in one tile.
    assert output_tiles("conv1") == 98 and output_tiles("conv1", batch=2) == 196
    assert output_tiles("layer4.2.conv3", tile=(32, 256)) == 2 * 8
    with pytest.raises(ValueError, match=r"^unknown layer 'conv9'; known: conv1, layer1\.0\.conv3, "
                                         r"layer2\.0\.conv2, layer3\.0\.conv2, layer4\.2\.conv3$"):
        output_tiles("conv9")


def test_a_stream_records_its_layer_batch_and_sector_size():
    stream = conv_output_write_stream(LAYER, batch=2, base=0x40, tile=(16, 8), sector_bytes=16)
    assert (stream.layer, stream.batch, stream.base) == (LAYER, 2, 0x40)
    # Rows of 8 floats are two 16-byte sectors each.
    assert [a.addr for a in stream.accesses[:4]] == [0x40, 0x50, 0x60, 0x70]
    assert {a.mask for a in stream.accesses} == {(1 << 16) - 1}
    assert len(stream.accesses) == 100


@pytest.mark.parametrize("layer, options, message", [
    (WIDE, {"tile": (2, 8), "max_tiles": 0},
     "wide has 4 output tiles of 2x8; max_tiles must be in 1..4, not 0"),
    (WIDE, {"tile": (2, 8), "max_tiles": 5},
     "wide has 4 output tiles of 2x8; max_tiles must be in 1..4, not 5"),
    (WIDE, {"tile": (2, 8), "max_tiles": True},
     "wide has 4 output tiles of 2x8; max_tiles must be in 1..4, not True"),
    (WIDE, {"tile": (2, 8), "max_tiles": 2.0},
     "wide has 4 output tiles of 2x8; max_tiles must be in 1..4, not 2.0"),
    (WIDE, {"tile": (2, 4)}, "tile width 4 and C_out 16 must be multiples of 8 floats (one sector)"),
    (ConvLayer("odd", 3, 12, 1, 1, 0, 2), {"tile": (2, 8)},
     "tile width 8 and C_out 12 must be multiples of 8 floats (one sector)"),
    (WIDE, {"tile": (2, 8), "base": 0x10}, "base 0x10 is not sector-aligned"),
])
def test_a_bad_stream_request_is_refused_with_its_numbers(layer, options, message):
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        conv_output_write_stream(layer, **options)


def test_max_tiles_at_its_bound_is_the_whole_stream():
    whole = conv_output_write_stream(WIDE, base=0, tile=(2, 8))
    assert conv_output_write_stream(WIDE, base=0, tile=(2, 8), max_tiles=4).accesses == whole.accesses
    assert len(conv_output_write_stream(WIDE, base=0, tile=(2, 8), max_tiles=1).accesses) == 2
