/* The SoC's firmware: runs each kernel of ndp_firmware.h on the NDP slice as the host
   runtime would (host/runtime.py), with the GPU side's accesses made by the SoC's DMA
   (writes of a staged tensor, or reads, through the slice), and
   prints one line per kernel and a summary over the UART:

     kernel NAME: pass|FAIL, S sectors, C cycles (DMA T cycles)[, what failed]
     soc: K of N kernels passed

   C counts the cycles from the DMA's first write accepted by the slice to its irq. A kernel
   is waited for by its interrupt, taken through the SoC's interrupt controller. */
#include <stdint.h>

#include <generated/csr.h>
#include <generated/mem.h>
#include <generated/soc.h>
#include <irq.h>

#include "ndp_firmware.h"

/* Polls of the DMA's status before a kernel is given up on: tens of thousands of cycles,
   far beyond any kernel here, short enough that a hung kernel ends a simulated run. */
#define WAIT_POLLS 20000u

static void put_char(char c)
{
    while (uart_txfull_read())
        ;
    uart_rxtx_write((uint32_t)(unsigned char)c);
}

static void put_string(const char *s)
{
    while (*s)
        put_char(*s++);
}

/* Decimal without a divider (the CPU has none). */
static void put_decimal(uint32_t value)
{
    static const uint32_t powers[] = {1000000000u, 100000000u, 10000000u, 1000000u, 100000u,
                                      10000u, 1000u, 100u, 10u, 1u};
    int started = 0;
    for (unsigned i = 0; i < sizeof(powers) / sizeof(powers[0]); i++) {
        char digit = '0';
        while (value >= powers[i]) {
            value -= powers[i];
            digit++;
        }
        if (digit != '0' || started || powers[i] == 1u) {
            put_char(digit);
            started = 1;
        }
    }
}

static void put_hex(uint32_t value)
{
    put_string("0x");
    for (int shift = 28; shift >= 0; shift -= 4)
        put_char("0123456789abcdef"[(value >> shift) & 0xf]);
}

/* The slice's interrupts taken so far. */
static volatile uint32_t slice_interrupts;

void isr(void);

void isr(void)
{
    uint32_t pending = irq_pending() & irq_getmask();
    if (pending & (1u << SLICE_IRQ_INTERRUPT)) {
        slice_irq_ev_pending_write(slice_irq_ev_pending_read());
        slice_interrupts++;
    }
}

static volatile uint32_t *ndp_register(uint32_t offset)
{
    return (volatile uint32_t *)(NDP_BASE + offset);
}

static volatile uint32_t *dram_word(uint32_t offset)
{
    return (volatile uint32_t *)(MAIN_RAM_BASE + offset);
}

/* One runtime step: its register writes, in the runtime's order. */
static void replay(const struct ndp_block *blocks, uint32_t count)
{
    for (uint32_t b = 0; b < count; b++)
        for (uint32_t w = 0; w < blocks[b].count; w++)
            *ndp_register(blocks[b].address + 4 * w) = blocks[b].words[w];
}

static void place(const struct ndp_block *regions, uint32_t count)
{
    for (uint32_t r = 0; r < count; r++)
        for (uint32_t w = 0; w < regions[r].count; w++)
            *dram_word(regions[r].address + 4 * w) = regions[r].words[w];
}

/* The first word that differs from the expected values, or -1. */
static int32_t first_difference(const struct ndp_block *region, uint32_t *got)
{
    for (uint32_t w = 0; w < region->count; w++) {
        uint32_t word = *dram_word(region->address + 4 * w);
        if (word != region->words[w]) {
            *got = word;
            return (int32_t)w;
        }
    }
    return -1;
}

static uint32_t entry_register(uint32_t entry, uint32_t entry0_offset)
{
    return *ndp_register(entry0_offset + entry * NDP_ENTRY_STRIDE);
}

/* What the slice counted for a kernel that did not finish: where it stopped. */
static void put_counters(const struct ndp_kernel *kernel)
{
    put_string(" (hits ");
    put_decimal(entry_register(kernel->entry, NDP_ENTRY0_HITS));
    put_string(", completed ");
    put_decimal(entry_register(kernel->entry, NDP_ENTRY0_COMPLETED));
    put_string(", events ");
    put_decimal(*ndp_register(NDP_EVENT_COUNT));
    put_string(", instructions ");
    put_decimal(*ndp_register(NDP_INSTRUCTIONS));
    put_string(", complete ");
    put_hex(*ndp_register(NDP_COMPLETE));
    put_string(", stopped ");
    put_hex(*ndp_register(NDP_STOPPED));
    put_string(", error ");
    put_hex(*ndp_register(NDP_ERROR));
    put_string(", DMA done ");
    put_decimal(dma_done_read());
    put_string(")");
}

/* A traced model writes the kernels' cycles alone, from the DMA's start to the interrupt:
   the rest (placing tensors, programming the slice over the register bridge, checking the
   outputs, the UART) is most of the run. */
static void trace(int on)
{
#ifdef TRACE_KERNELS
    sim_trace_enable_write((uint32_t)on);
#else
    (void)on;
#endif
}

static int run_kernel(const struct ndp_kernel *kernel)
{
    place(kernel->place, kernel->place_count);
    for (uint32_t s = 0; s < kernel->step_count; s++)
        replay(kernel->steps[s].blocks, kernel->steps[s].count);
    trace(1);

    uint32_t interrupts_before = slice_interrupts;
    dma_read_write(kernel->read);
    dma_source_write(kernel->trigger_source);
    dma_address_write(kernel->trigger_address);
    dma_sectors_write(kernel->trigger_sectors);
    dma_start_write(1);

    uint32_t polls = 0;
    while (!(dma_done_read() && slice_interrupts != interrupts_before) && polls < WAIT_POLLS)
        polls++;
    uint32_t interrupts = slice_interrupts - interrupts_before;
    trace(0);
    uint32_t cycles = dma_cycles_read();
    uint32_t complete = *ndp_register(NDP_COMPLETE);
    uint32_t error = *ndp_register(NDP_ERROR);

    put_string("kernel ");
    put_string(kernel->name);
    int passed = 0;
    if (!dma_done_read() || cycles == 0) {
        put_string(": FAIL, no irq after the DMA's accesses");
        put_counters(kernel);
    } else if (interrupts != 1) {
        put_string(": FAIL, irq rose but ");
        put_decimal(interrupts);
        put_string(" interrupts were taken, not 1");
    } else if (dma_errors_read()) {
        put_string(": FAIL, ");
        put_decimal(dma_errors_read());
        put_string(" accesses answered with an error");
    } else if ((error >> NDP_ERROR_RECORDED_SHIFT) & NDP_ERROR_RECORDED_MASK) {
        put_string(": FAIL, engine error ");
        put_hex(error);
    } else if (!((complete >> kernel->entry) & 1u)) {
        put_string(": FAIL, entry not complete");
        put_counters(kernel);
    } else {
        passed = 1;
        for (uint32_t r = 0; r < kernel->expected_count && passed; r++) {
            uint32_t got = 0;
            int32_t word = first_difference(&kernel->expected[r], &got);
            if (word >= 0) {
                passed = 0;
                put_string(": FAIL, word ");
                put_decimal((uint32_t)word);
                put_string(" at ");
                put_hex(kernel->expected[r].address + 4u * (uint32_t)word);
                put_string(" is ");
                put_hex(got);
                put_string(", expected ");
                put_hex(kernel->expected[r].words[word]);
            }
        }
        if (passed)
            put_string(": pass");
    }
    put_string(", ");
    put_decimal(kernel->trigger_sectors);
    put_string(" sectors, ");
    put_decimal(cycles);
    put_string(" cycles (DMA ");
    put_decimal(dma_transfer_cycles_read());
    put_string(" cycles)\n");
    return passed;
}

int main(void)
{
    put_string("soc: firmware running\n");
    uint32_t magic = *ndp_register(NDP_ID);
    uint32_t passed = 0;
    if (((magic >> NDP_ID_MAGIC_SHIFT) & NDP_ID_MAGIC_MASK) != NDP_MAGIC) {
        put_string("soc: no NDP slice at the register base: ID reads ");
        put_hex(magic);
        put_string("\n");
    } else {
        slice_irq_ev_enable_write(1);
        irq_setmask(1u << SLICE_IRQ_INTERRUPT);
        irq_setie(1);
        for (uint32_t k = 0; k < NDP_KERNEL_COUNT; k++)
            passed += (uint32_t)run_kernel(&ndp_kernels[k]);
    }
    put_string("soc: ");
    put_decimal(passed);
    put_string(" of ");
    put_decimal(NDP_KERNEL_COUNT);
    put_string(" kernels passed\n");
    while (uart_txfull_read())
        ;
#ifdef CSR_SIM_FINISH_BASE
    sim_finish_finish_write(1);
    /* Not an empty loop: fetching it back to back would hold the bus, and LiteX's
       arbiter hands the bus to the data side only when the instruction side lets go,
       so the store above would never leave. A load stalls the pipeline, and fetching
       with it. */
    for (;;)
        (void)sim_finish_finish_read();
#else
    /* On a board the run ends here; a reset (the button) runs it again. */
    for (;;)
        (void)uart_txfull_read();
#endif
}
