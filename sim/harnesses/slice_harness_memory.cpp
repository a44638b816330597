// The batch harness's memory under Verilator (slice_harness.v calls these through DPI): the
// image's sectors in a buffer allocated when an image is loaded, as large as that image, so
// that the size of the memory is a run's and not a build's. One harness per process.
//
//   harness_image_load   image.hex (one sector per line, byte 0 in the low digits) into a
//                        buffer of `sectors` sectors of `sector_bytes` bytes
//   harness_image_dump   the first `sectors` sectors into image_out.hex, in the same form
//   harness_image_read   sector `index`, as the DPI's 32-bit words (byte 0 in the low bits
//   harness_image_write  of word 0)
//
// A file that is not `sectors` lines of hex, or a sector outside the image, ends the run
// with a message: the harness's region map only holds image sectors, so either is a fault
// of the job's files, not a memory access to answer.

#include "svdpi.h"

#if __has_include("Vtop__Dpi.h")
#include "Vtop__Dpi.h"              // cocotb's build: the prototypes Verilator made
#elif __has_include("Vslice_harness__Dpi.h")
#include "Vslice_harness__Dpi.h"    // the stand-alone driver's build
#endif

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

namespace {

std::vector<uint8_t> memory;
size_t sector_bytes = 0;

[[noreturn]] void fail(const std::string& message) {
    std::fprintf(stderr, "slice_harness memory: %s\n", message.c_str());
    std::fflush(stderr);
    std::abort();
}

int nibble(char digit) {
    if (digit >= '0' && digit <= '9')
        return digit - '0';
    if (digit >= 'a' && digit <= 'f')
        return digit - 'a' + 10;
    if (digit >= 'A' && digit <= 'F')
        return digit - 'A' + 10;
    return -1;
}

uint8_t* sector(int index) {
    if (index < 0 || size_t(index) >= memory.size() / (sector_bytes ? sector_bytes : 1))
        fail("sector " + std::to_string(index) + " is outside the image of " +
             std::to_string(sector_bytes ? memory.size() / sector_bytes : 0) + " sectors");
    return memory.data() + size_t(index) * sector_bytes;
}

}  // namespace

extern "C" void harness_image_load(int sectors, int bytes) {
    if (sectors < 0 || bytes < 1)
        fail("an image of " + std::to_string(sectors) + " sectors of " + std::to_string(bytes) + " bytes");
    sector_bytes = size_t(bytes);
    memory.assign(size_t(sectors) * sector_bytes, 0);
    std::ifstream file("image.hex");
    if (!file)
        fail("no image.hex to load");
    std::string line;
    for (int row = 0; row < sectors; ++row) {
        if (!std::getline(file, line))
            fail("image.hex has " + std::to_string(row) + " lines, the image " +
                 std::to_string(sectors) + " sectors");
        uint8_t* data = memory.data() + size_t(row) * sector_bytes;
        // The last digit is the low nibble of byte 0; digits beyond the sector are zero.
        size_t digit = 0;
        for (size_t at = line.size(); at-- > 0; ++digit) {
            int value = nibble(line[at]);
            if (value < 0)
                fail("image.hex line " + std::to_string(row + 1) + " is not hex");
            if (digit / 2 < sector_bytes)
                data[digit / 2] |= uint8_t(value << (4 * (digit % 2)));
            else if (value)
                fail("image.hex line " + std::to_string(row + 1) + " is wider than a sector");
        }
    }
}

extern "C" void harness_image_dump(int sectors) {
    if (sectors < 0 || size_t(sectors) * sector_bytes > memory.size())
        fail("a dump of " + std::to_string(sectors) + " sectors from an image of " +
             std::to_string(sector_bytes ? memory.size() / sector_bytes : 0));
    static const char digits[] = "0123456789abcdef";
    std::string text;
    text.reserve(size_t(sectors) * (2 * sector_bytes + 1));
    for (int row = 0; row < sectors; ++row) {
        const uint8_t* data = memory.data() + size_t(row) * sector_bytes;
        for (size_t byte = sector_bytes; byte-- > 0;) {
            text += digits[data[byte] >> 4];
            text += digits[data[byte] & 0xF];
        }
        text += '\n';
    }
    std::ofstream file("image_out.hex", std::ios::binary | std::ios::trunc);
    file.write(text.data(), std::streamsize(text.size()));
    if (!file)
        fail("could not write image_out.hex");
}

extern "C" void harness_image_read(int index, svBitVecVal* data) {
    const uint8_t* bytes = sector(index);
    for (size_t word = 0; word < (sector_bytes + 3) / 4; ++word) {
        uint32_t value = 0;
        for (size_t byte = 0; byte < 4 && 4 * word + byte < sector_bytes; ++byte)
            value |= uint32_t(bytes[4 * word + byte]) << (8 * byte);
        data[word] = value;
    }
}

extern "C" void harness_image_write(int index, const svBitVecVal* data) {
    uint8_t* bytes = sector(index);
    for (size_t byte = 0; byte < sector_bytes; ++byte)
        bytes[byte] = uint8_t(data[byte / 4] >> (8 * (byte % 4)));
}
