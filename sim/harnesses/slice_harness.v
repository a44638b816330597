// Batch-mode harness of one NDP slice with its engine (module `ndp_slice`, exported from
// Amaranth): the GPU's request stream, a memory behind the slice's memory port and logs of
// what crosses the ports, with no testbench code in any cycle. docs/simulation.md
// describes the files, the phases and the parameters; sim/batch/ writes and reads them.
//
// Loads (strobe `load`, only between phases; `load_what` says which):
//   requests.hex  one record per line: {gap, GPU request payload} in hex, the payload as
//                 the slice's gpu__req__payload packs it; `gap` is the least number of idle
//                 cycles before the record is offered, counted from the previous record's
//                 transfer (or from the phase's start). Loading requests starts a new chunk.
//   image.hex     the memory image: one sector per line, byte 0 in the low bits.
//   regions.hex   the region map: {failing (1 bit), base sector (63 bits), sectors (32),
//                 first image sector (32)} per line; an address outside every region is
//                 unmapped; a failing region holds no data and answers every access with
//                 an error.
// Phases (strobe `start`): the GPU source offers the chunk's records in order, a read
// whose id is still outstanding waiting for its response (ids are unique among
// outstanding reads). A phase ends when every condition in `stop_when` holds, if it has
// any (bit 0: every record of the chunk sent; 1: every GPU read answered; 2:
// `response_target` GPU responses in this phase; 3: irq high), or after `budget` cycles
// (0: no limit); then `done` rises and `stop_reason` says which (bit 0: `stop_when`, bit
// 1: the budget). Every input passes a register, so strobes act a cycle late. An offer
// in progress when a phase ends stays up until taken. The register bus passes from the
// top ports to the slice only while no phase runs.
// Memory: writes take effect when accepted, a read returns the contents at acceptance
// (sequential consistency in request order). A read is answered `latency` cycles after
// its acceptance, in order; with `reorder` = k > 1, answered reads collect in a pool of
// up to k and leave it in xorshift order (the pool fills before it releases while more
// answers are due, which adds up to k cycles). At most one request is accepted every
// `interval` cycles. Unmapped reads are answered DECODE_ERROR, reads of a failing region
// SLAVE_ERROR; unmapped writes and writes to a failing region pulse mem_write_error. Each
// `*_pause` is a per-cycle hold probability in 1/256 from one xorshift64 sequence (seeded
// from `seed` in reset): the GPU source delaying an offer, the GPU response sink
// withholding ready, memory refusing a request, memory delaying a response.
// Logs (bits of `log_enable`), one line per transfer, "<cycle> <payload>" in hex:
//   0 gpu_requests.log   GPU requests taken by the slice (the payload)
//   1 mem_requests.log   requests memory accepted (mem__req__payload)
//   2 gpu_responses.log  responses the GPU took (gpu__resp__payload)
//   3 events.log         trigger events the engine took (the slice's events__payload)
//   4 irq.log            each change of irq (its new level)
// `dump` writes image_out.hex (the first `image_count` sectors); `flush` flushes the logs
// (`done` does too).
// The memory's size is the run's: under Verilator it lives in C++ (slice_harness_memory.cpp,
// through DPI), allocated for the `image_count` sectors of each image loaded, so that no
// build holds a size and a larger image needs no other build. Icarus has no DPI: there it is
// an array of IMAGE_SECTORS sectors (Icarus runs are short).
`default_nettype none

module slice_harness #(
    parameter ADDR_W        = 40,
    parameter SECTOR_BYTES  = 32,
    parameter ID_W          = 8,
    parameter MEM_ID_W      = 9,
    parameter CSR_ADDR_W    = 21,
    parameter DEPTH         = 65536,
    parameter IMAGE_SECTORS = 65536,
    parameter REGIONS       = 16,
    parameter IN_FLIGHT     = 64,
    parameter POOL          = 8,
    parameter GAP_W         = 16
) (
    input  wire                  clk,
    input  wire                  rst,

    input  wire                  load,
    input  wire [2:0]            load_what,
    input  wire [31:0]           request_count,
    input  wire [31:0]           image_count,
    input  wire [31:0]           region_count,
    input  wire                  dump,
    input  wire                  flush,

    input  wire                  start,
    input  wire [63:0]           budget,
    input  wire [3:0]            stop_when,
    input  wire [63:0]           response_target,
    output reg                   running,
    output reg                   done,
    output reg  [1:0]            stop_reason,

    input  wire [63:0]           seed,
    input  wire [15:0]           latency,
    input  wire [15:0]           interval,
    input  wire [7:0]            reorder,
    input  wire [7:0]            gpu_request_pause,
    input  wire [7:0]            gpu_response_pause,
    input  wire [7:0]            memory_request_pause,
    input  wire [7:0]            memory_response_pause,
    input  wire [4:0]            log_enable,

    output reg  [63:0]           cycle,
    output reg  [63:0]           phase_cycles,
    output reg  [31:0]           sent,
    output reg  [63:0]           gpu_requests,
    output reg  [63:0]           gpu_responses,
    output reg  [63:0]           phase_responses,
    output reg  [63:0]           memory_requests,
    output reg  [63:0]           unmapped,
    output reg  [63:0]           gated_cycles,
    output reg  [63:0]           phase_start_cycle,
    output reg  [63:0]           load_cycle,
    output reg  [63:0]           dump_cycle,

    input  wire [CSR_ADDR_W-1:0] csr__addr,
    input  wire                  csr__w_en,
    input  wire [31:0]           csr__w_data,
    input  wire                  csr__r_en,
    output wire                  csr__ack,
    output wire [31:0]           csr__r_data,
    output wire                  csr__err,
    output wire                  irq
);
    // Every input passes a register before it reaches any logic: under Verilator, logic fed
    // by the top's inputs is evaluated in every eval call (both clock edges), logic behind
    // registers only at the edge. Strobes and settings thus act a cycle after they are seen.
    reg rst_q;
    reg load_q;
    reg [2:0] load_what_q;
    reg [31:0] request_count_q;
    reg [31:0] image_count_q;
    reg [31:0] region_count_q;
    reg dump_q;
    reg flush_q;
    reg start_q;
    reg [63:0] budget_q;
    reg [3:0] stop_when_q;
    reg [63:0] response_target_q;
    reg [63:0] seed_q;
    reg [15:0] latency_q;
    reg [15:0] interval_q;
    reg [7:0] reorder_q;
    reg [7:0] gpu_request_pause_q;
    reg [7:0] gpu_response_pause_q;
    reg [7:0] memory_request_pause_q;
    reg [7:0] memory_response_pause_q;
    reg [4:0] log_enable_q;
    reg [CSR_ADDR_W-1:0] csr__addr_q;
    reg csr__w_en_q;
    reg [31:0] csr__w_data_q;
    reg csr__r_en_q;
    always @(posedge clk) begin
        rst_q <= rst;
        load_q <= load;
        load_what_q <= load_what;
        request_count_q <= request_count;
        image_count_q <= image_count;
        region_count_q <= region_count;
        dump_q <= dump;
        flush_q <= flush;
        start_q <= start;
        budget_q <= budget;
        stop_when_q <= stop_when;
        response_target_q <= response_target;
        seed_q <= seed;
        latency_q <= latency;
        interval_q <= interval;
        reorder_q <= reorder;
        gpu_request_pause_q <= gpu_request_pause;
        gpu_response_pause_q <= gpu_response_pause;
        memory_request_pause_q <= memory_request_pause;
        memory_response_pause_q <= memory_response_pause;
        log_enable_q <= log_enable;
        csr__addr_q <= csr__addr;
        csr__w_en_q <= csr__w_en;
        csr__w_data_q <= csr__w_data;
        csr__r_en_q <= csr__r_en;
    end

    localparam DATA_W   = 8 * SECTOR_BYTES;
    localparam OFFSET_W = $clog2(SECTOR_BYTES);
    localparam REQ_W    = ADDR_W + 1 + DATA_W + SECTOR_BYTES + ID_W;
    localparam MREQ_W   = ADDR_W + 1 + DATA_W + SECTOR_BYTES + MEM_ID_W;
    localparam RESP_W   = DATA_W + ID_W + 2;
    localparam MRESP_W  = DATA_W + MEM_ID_W + 2;
    localparam REC_W    = GAP_W + REQ_W;
    localparam FLIGHT_W = $clog2(IN_FLIGHT);
    localparam POOL_W   = $clog2(POOL);
    // Field offsets of the request layout (hw/layouts.py): addr, write, data, mask, id.
    localparam WRITE_AT = ADDR_W;
    localparam DATA_AT  = ADDR_W + 1;
    localparam MASK_AT  = DATA_AT + DATA_W;
    localparam ID_AT    = MASK_AT + SECTOR_BYTES;
    localparam [1:0] SLAVE_ERROR  = 2'd2;
    localparam [1:0] DECODE_ERROR = 2'd3;

    // --- the slice --------------------------------------------------------------------------
    reg                gpu_valid;
    reg  [REQ_W-1:0]   gpu_payload;
    wire               gpu_ready;
    wire               gpu_resp_valid;
    wire [RESP_W-1:0]  gpu_resp_payload;
    wire               gpu_resp_ready;
    wire               mem_req_valid;
    wire [MREQ_W-1:0]  mem_req_payload;
    wire               mem_req_ready;
    reg                mem_resp_valid;
    reg  [MRESP_W-1:0] mem_resp_payload;
    wire               mem_resp_ready;
    reg                write_error;

    ndp_slice dut (
        .clk(clk),
        .rst(rst_q),
        .gpu__req__valid(gpu_valid),
        .gpu__req__ready(gpu_ready),
        .gpu__req__payload(gpu_payload),
        .gpu__resp__valid(gpu_resp_valid),
        .gpu__resp__ready(gpu_resp_ready),
        .gpu__resp__payload(gpu_resp_payload),
        .mem__req__valid(mem_req_valid),
        .mem__req__ready(mem_req_ready),
        .mem__req__payload(mem_req_payload),
        .mem__resp__valid(mem_resp_valid),
        .mem__resp__ready(mem_resp_ready),
        .mem__resp__payload(mem_resp_payload),
        .mem_write_error(write_error),
        .csr__addr(csr__addr_q),
        .csr__w_en(csr__w_en_q & ~running),
        .csr__w_data(csr__w_data_q),
        .csr__r_en(csr__r_en_q & ~running),
        .csr__ack(csr__ack),
        .csr__r_data(csr__r_data),
        .csr__err(csr__err),
        .irq(irq)
    );

    // --- randomness: xorshift64, one step per cycle -------------------------------------------
    reg  [63:0] lfsr;
    wire [63:0] step1 = lfsr ^ (lfsr << 13);
    wire [63:0] step2 = step1 ^ (step1 >> 7);
    wire [63:0] step3 = step2 ^ (step2 << 17);
    wire gpu_request_hold    = lfsr[7:0]   < gpu_request_pause_q;
    wire gpu_response_hold   = lfsr[15:8]  < gpu_response_pause_q;
    wire memory_request_hold = lfsr[23:16] < memory_request_pause_q;
    wire memory_response_hold = lfsr[31:24] < memory_response_pause_q;
    wire [7:0] pick          = lfsr[39:32];

    // --- storage ----------------------------------------------------------------------------
    reg [REC_W-1:0]  requests [0:DEPTH-1];
`ifdef VERILATOR
    import "DPI-C" function void harness_image_load(input int sectors, input int sector_bytes);
    import "DPI-C" function void harness_image_dump(input int sectors);
    import "DPI-C" function void harness_image_read(input int index, output bit [DATA_W-1:0] data);
    import "DPI-C" function void harness_image_write(input int index, input bit [DATA_W-1:0] data);
`else
    reg [DATA_W-1:0] image    [0:IMAGE_SECTORS-1];
`endif
    reg [127:0]      regions  [0:REGIONS-1];
    reg [31:0]       count;
    reg [31:0]       regions_used;

    integer gpu_request_log, memory_request_log, gpu_response_log, event_log, irq_log;
    initial begin
        gpu_request_log    = $fopen("gpu_requests.log", "w");
        memory_request_log = $fopen("mem_requests.log", "w");
        gpu_response_log   = $fopen("gpu_responses.log", "w");
        event_log          = $fopen("events.log", "w");
        irq_log            = $fopen("irq.log", "w");
    end

    // --- the GPU source -----------------------------------------------------------------------
    reg  [(1 << ID_W)-1:0] outstanding;
    reg  [31:0]            idle;
    wire                   gpu_transfer      = gpu_valid & gpu_ready;
    assign                 gpu_resp_ready    = ~gpu_response_hold;
    wire                   gpu_resp_transfer = gpu_resp_valid & gpu_resp_ready;
    wire [31:0]            next_index        = sent + {31'd0, gpu_transfer};
    wire [REC_W-1:0]       head              = requests[next_index];
    wire [ID_W-1:0]        head_id           = head[ID_AT +: ID_W];
    wire [GAP_W-1:0]       head_gap          = head[REQ_W +: GAP_W];
    wire [ID_W-1:0]        sent_id           = gpu_payload[ID_AT +: ID_W];
    wire [ID_W-1:0]        answered_id       = gpu_resp_payload[DATA_W +: ID_W];
    reg  [(1 << ID_W)-1:0] outstanding_next;
    always @* begin
        outstanding_next = outstanding;
        if (gpu_transfer && !gpu_payload[WRITE_AT])
            outstanding_next[sent_id] = 1'b1;
        if (gpu_resp_transfer)
            outstanding_next[answered_id] = 1'b0;
    end
    wire [31:0] idle_next    = start_q ? 32'd0 : gpu_transfer ? 32'd0 :
                               (running && !gpu_valid && idle != 32'hFFFF_FFFF) ? idle + 32'd1 : idle;
    wire        all_sent     = next_index == count;
    wire        all_answered = all_sent && outstanding_next == 0;
    wire [63:0] phase_responses_next = phase_responses + {63'd0, gpu_resp_transfer};
    wire        until_met    = stop_when_q != 4'd0 &&
                               (!stop_when_q[0] || all_sent) && (!stop_when_q[1] || all_answered) &&
                               (!stop_when_q[2] || phase_responses_next >= response_target_q) &&
                               (!stop_when_q[3] || irq);
    wire        budget_met   = budget_q != 0 && phase_cycles + 64'd1 >= budget_q;
    wire        stopping     = running && (until_met || budget_met);
    wire        offering     = (running && !stopping) || (start_q && !running);
    wire        head_gated   = !head[WRITE_AT] && outstanding_next[head_id];

    always @(posedge clk) begin
        if (rst_q) begin
            gpu_valid       <= 1'b0;
            running         <= 1'b0;
            done            <= 1'b0;
            stop_reason     <= 2'd0;
            sent            <= 32'd0;
            count           <= 32'd0;
            idle            <= 32'd0;
            outstanding     <= 0;
            cycle           <= 64'd0;
            phase_cycles    <= 64'd0;
            gpu_requests    <= 64'd0;
            gpu_responses   <= 64'd0;
            phase_responses <= 64'd0;
            gated_cycles    <= 64'd0;
            lfsr            <= (seed_q == 64'd0) ? 64'h2545_F491_4F6C_DD1D : seed_q;
        end else begin
            cycle       <= cycle + 64'd1;
            lfsr        <= step3;
            outstanding <= outstanding_next;
            idle        <= idle_next;
            sent        <= next_index;
            if (gpu_transfer) begin
                gpu_requests <= gpu_requests + 64'd1;
                if (log_enable_q[0])
                    $fwrite(gpu_request_log, "%h %h\n", cycle, gpu_payload);
            end
            if (gpu_resp_transfer) begin
                gpu_responses <= gpu_responses + 64'd1;
                if (log_enable_q[2])
                    $fwrite(gpu_response_log, "%h %h\n", cycle, gpu_resp_payload);
            end
            phase_responses <= phase_responses_next;
            if (!gpu_valid || gpu_transfer) begin
                if (offering && !all_sent && idle_next >= {16'd0, head_gap} && !gpu_request_hold &&
                        !head_gated) begin
                    gpu_valid   <= 1'b1;
                    gpu_payload <= head[REQ_W-1:0];
                end else begin
                    gpu_valid <= 1'b0;
                    if (offering && !all_sent && idle_next >= {16'd0, head_gap} && head_gated)
                        gated_cycles <= gated_cycles + 64'd1;
                end
            end
            if (start_q && !running) begin
                phase_start_cycle <= cycle;
                running         <= 1'b1;
                done            <= 1'b0;
                stop_reason     <= 2'd0;
                phase_cycles    <= 64'd0;
                phase_responses <= {63'd0, gpu_resp_transfer};
            end else if (running) begin
                phase_cycles <= phase_cycles + 64'd1;
                if (stopping) begin
                    running     <= 1'b0;
                    done        <= 1'b1;
                    stop_reason <= {budget_met, until_met};
                    $fflush(gpu_request_log);
                    $fflush(memory_request_log);
                    $fflush(gpu_response_log);
                    $fflush(event_log);
                    $fflush(irq_log);
                end
            end
            if (load_q && !running)
                load_cycle <= cycle;
            if (load_q && !running && load_what_q[0]) begin
                if (request_count_q != 32'd0)
                    $readmemh("requests.hex", requests, 0, request_count_q - 1);
                count <= request_count_q;
                sent  <= 32'd0;
            end
        end
    end

    // --- memory -----------------------------------------------------------------------------
    reg  [15:0]         since_accept;
    reg  [FLIGHT_W:0]   flight_count;
    reg  [FLIGHT_W-1:0] flight_read, flight_write;
    reg  [63:0]         flight_due  [0:IN_FLIGHT-1];
    reg  [MRESP_W-1:0]  flight_resp [0:IN_FLIGHT-1];
    reg  [POOL-1:0]     pool_used;
    reg  [POOL_W:0]     pool_count;
    reg  [MRESP_W-1:0]  pool_resp [0:POOL-1];

    assign mem_req_ready = !memory_request_hold && since_accept >= interval_q &&
                           flight_count != IN_FLIGHT[FLIGHT_W:0];
    wire   mem_accept    = mem_req_valid & mem_req_ready;
    wire   resp_free     = !mem_resp_valid || mem_resp_ready;
    wire   head_due      = flight_count != 0 && flight_due[flight_read] <= cycle + 64'd1;
    wire   in_order      = reorder_q < 8'd2;
    // The pool's size in use: `reorder_q`, at most POOL.
    wire [POOL_W:0] pool_limit = reorder_q > POOL ? POOL : reorder_q[POOL_W:0];

    wire [ADDR_W-1:0]       req_addr   = mem_req_payload[0 +: ADDR_W];
    wire                    req_write  = mem_req_payload[WRITE_AT];
    wire [DATA_W-1:0]       req_data   = mem_req_payload[DATA_AT +: DATA_W];
    wire [SECTOR_BYTES-1:0] req_mask   = mem_req_payload[MASK_AT +: SECTOR_BYTES];
    wire [MEM_ID_W-1:0]     req_id     = mem_req_payload[ID_AT +: MEM_ID_W];

    reg                     mapped;
    reg                     failing;
    reg  [63:0]             sector_index;
    reg  [31:0]             image_index;
    reg  [DATA_W-1:0]       merged;
    reg  [DATA_W-1:0]       stored;
    reg                     write_back;
    reg                     dequeue;
    reg  [POOL_W:0]         pool_out;
    reg  [POOL_W:0]         pool_in;
    integer                 i, b;

    always @(posedge clk) begin
        if (rst_q) begin
            since_accept   <= 16'hFFFF;
            flight_count   <= 0;
            flight_read    <= 0;
            flight_write   <= 0;
            pool_used      <= 0;
            pool_count     <= 0;
            mem_resp_valid <= 1'b0;
            write_error    <= 1'b0;
            memory_requests <= 64'd0;
            unmapped       <= 64'd0;
        end else begin
            write_error <= 1'b0;
            if (mem_accept)
                since_accept <= 16'd1;
            else if (since_accept != 16'hFFFF)
                since_accept <= since_accept + 16'd1;

            // Requests: a write takes effect now, a read takes the sector's contents now.
            write_back = 1'b0;
            if (mem_accept) begin
                memory_requests <= memory_requests + 64'd1;
                if (log_enable_q[1])
                    $fwrite(memory_request_log, "%h %h\n", cycle, mem_req_payload);
                sector_index = {{(64 - ADDR_W){1'b0}}, req_addr} >> OFFSET_W;
                mapped = 1'b0;
                failing = 1'b0;
                image_index = 32'd0;
                for (i = 0; i < REGIONS; i = i + 1)
                    if (!mapped && i < regions_used && sector_index >= {1'b0, regions[i][126:64]} &&
                            sector_index - {1'b0, regions[i][126:64]} < {32'd0, regions[i][63:32]}) begin
                        mapped = 1'b1;
                        failing = regions[i][127];
                        image_index = regions[i][31:0] + sector_index[31:0] - regions[i][95:64];
                    end
                if (!mapped)
                    unmapped <= unmapped + 64'd1;
                stored = {DATA_W{1'b0}};
                if (mapped && !failing)
`ifdef VERILATOR
                    harness_image_read(image_index, stored);
`else
                    stored = image[image_index];
`endif
                if (req_write) begin
                    if (mapped && !failing) begin
                        merged = stored;
                        for (b = 0; b < SECTOR_BYTES; b = b + 1)
                            if (req_mask[b])
                                merged[8 * b +: 8] = req_data[8 * b +: 8];
`ifdef VERILATOR
                        write_back = 1'b1;
`else
                        image[image_index] <= merged;
`endif
                    end else begin
                        write_error <= 1'b1;
                    end
                end else begin
                    flight_due[flight_write]  <= cycle + {48'd0, latency_q};
                    flight_resp[flight_write] <= !mapped ? {DECODE_ERROR, req_id, {DATA_W{1'b0}}} :
                                                 failing ? {SLAVE_ERROR, req_id, {DATA_W{1'b0}}} :
                                                           {2'd0, req_id, stored};
                    flight_write <= flight_write + 1'b1;
                end
            end

            // Responses: in order straight from the in-flight queue, or through the pool.
            dequeue  = 1'b0;
            pool_out = POOL;        // the pool slot answered from this cycle (POOL: none)
            pool_in  = POOL;        // the pool slot filled this cycle
            if (in_order) begin
                if (resp_free) begin
                    if (head_due && !memory_response_hold) begin
                        mem_resp_valid   <= 1'b1;
                        mem_resp_payload <= flight_resp[flight_read];
                        dequeue = 1'b1;
                    end else begin
                        mem_resp_valid <= 1'b0;
                    end
                end
            end else begin
                // The pool answers once it is full, or when no more answers are due.
                if (resp_free) begin
                    if (pool_count != 0 && !memory_response_hold &&
                            (pool_count >= pool_limit || !head_due)) begin
                        for (i = 0; i < POOL; i = i + 1)
                            if (pool_out == POOL && pool_used[(pick + i) % POOL])
                                pool_out = (pick + i) % POOL;
                        mem_resp_valid   <= 1'b1;
                        mem_resp_payload <= pool_resp[pool_out[POOL_W-1:0]];
                    end else begin
                        mem_resp_valid <= 1'b0;
                    end
                end
                if (head_due && pool_count < pool_limit) begin
                    for (i = POOL - 1; i >= 0; i = i - 1)
                        if (!pool_used[i] && i != pool_out)
                            pool_in = i;
                    pool_resp[pool_in[POOL_W-1:0]] <= flight_resp[flight_read];
                    dequeue = 1'b1;
                end
                if (pool_out != POOL)
                    pool_used[pool_out[POOL_W-1:0]] <= 1'b0;
                if (pool_in != POOL)
                    pool_used[pool_in[POOL_W-1:0]] <= 1'b1;
                pool_count <= pool_count + {{POOL_W{1'b0}}, pool_in != POOL}
                                         - {{POOL_W{1'b0}}, pool_out != POOL};
            end
            if (dequeue)
                flight_read <= flight_read + 1'b1;
            flight_count <= flight_count + {{FLIGHT_W{1'b0}}, mem_accept && !req_write}
                                         - {{FLIGHT_W{1'b0}}, dequeue};

`ifdef VERILATOR
            if (load_q && !running && load_what_q[1] && image_count_q != 32'd0)
                harness_image_load(image_count_q, SECTOR_BYTES);
`else
            if (load_q && !running && load_what_q[1] && image_count_q != 32'd0)
                $readmemh("image.hex", image, 0, image_count_q - 1);
`endif
            if (dump_q)
                dump_cycle <= cycle;
`ifdef VERILATOR
            if (dump_q && image_count_q != 32'd0)
                harness_image_dump(image_count_q);
            // After this cycle's load and dump, as the array's nonblocking write lands.
            if (write_back)
                harness_image_write(image_index, merged);
`else
            if (dump_q && image_count_q != 32'd0)
                $writememh("image_out.hex", image, 0, image_count_q - 1);
`endif
        end
        if (load_q && !running && load_what_q[2]) begin
            if (region_count_q != 32'd0)
                $readmemh("regions.hex", regions, 0, region_count_q - 1);
            regions_used <= region_count_q;
        end
    end

    // --- events and irq -----------------------------------------------------------------------
    reg irq_seen;
    always @(posedge clk) begin
        if (rst_q) begin
            irq_seen <= 1'b0;
        end else begin
            if (log_enable_q[3] && dut.events__valid && dut.events__ready)
                $fwrite(event_log, "%h %h\n", cycle, dut.events__payload);
            if (irq != irq_seen && log_enable_q[4])
                $fwrite(irq_log, "%h %h\n", cycle, irq);
            irq_seen <= irq;
        end
        if (flush_q) begin
            $fflush(gpu_request_log);
            $fflush(memory_request_log);
            $fflush(gpu_response_log);
            $fflush(event_log);
            $fflush(irq_log);
        end
    end
endmodule
