// Batch-mode harness for one FP unit (module `fp_unit`, exported from Amaranth).
//
// On `start` it loads `count` operand records from fp_operands.hex (one 100-bit record per
// line: op, c, b, a from the top, as in hw/fp/interface.py), streams them into the unit,
// stores the results in order and writes them to fp_results.hex, then raises `done`.
// Both streams see pseudo-random back-pressure: each cycle the source holds back a record
// with probability source_pause/256 and the sink refuses a result with probability
// sink_pause/256 (0 disables either). A result beyond `count` sets `extra`.
`default_nettype none

module fp_harness #(
    parameter DEPTH = 65536
) (
    input  wire        clk,
    input  wire        rst,
    input  wire        start,
    input  wire [31:0] count,
    input  wire [31:0] seed,
    input  wire [7:0]  source_pause,
    input  wire [7:0]  sink_pause,
    output reg         done,
    output reg         extra,
    output reg  [31:0] cycles
);
    reg [99:0] operands [0:DEPTH-1];
    reg [31:0] results  [0:DEPTH-1];

    reg         running;
    reg  [31:0] sent;
    reg  [31:0] received;
    reg  [31:0] lfsr;

    reg         in_valid;
    reg  [99:0] in_payload;
    wire        in_ready;
    wire        out_valid;
    wire [31:0] out_payload;

    wire source_hold = lfsr[7:0]  < source_pause;
    wire sink_hold   = lfsr[15:8] < sink_pause;
    wire out_ready   = running & ~sink_hold;

    fp_unit unit (
        .clk(clk),
        .rst(rst),
        .operands__valid(in_valid),
        .operands__ready(in_ready),
        .operands__payload(in_payload),
        .result__valid(out_valid),
        .result__ready(out_ready),
        .result__payload(out_payload)
    );

    // xorshift32: a full-period generator; the seed must not be zero.
    wire [31:0] step1 = lfsr ^ (lfsr << 13);
    wire [31:0] step2 = step1 ^ (step1 >> 17);
    wire [31:0] step3 = step2 ^ (step2 << 5);

    always @(posedge clk) begin
        if (rst) begin
            running  <= 1'b0;
            done     <= 1'b0;
            extra    <= 1'b0;
            sent     <= 32'd0;
            received <= 32'd0;
            cycles   <= 32'd0;
            in_valid <= 1'b0;
            lfsr     <= (seed == 32'd0) ? 32'h2545F491 : seed;
        end else begin
            lfsr <= step3;
            if (start && !running && !done) begin
                if (count != 32'd0)
                    $readmemh("fp_operands.hex", operands, 0, count - 1);
                running <= 1'b1;
            end
            if (running) begin
                if (!done)
                    cycles <= cycles + 32'd1;
                // A record, once offered, stays offered until taken.
                if (!in_valid || in_ready) begin
                    if (sent != count && !source_hold) begin
                        in_valid   <= 1'b1;
                        in_payload <= operands[sent];
                        sent       <= sent + 32'd1;
                    end else begin
                        in_valid <= 1'b0;
                    end
                end
                if (out_valid && out_ready) begin
                    if (received == count) begin
                        extra <= 1'b1;
                    end else begin
                        results[received] <= out_payload;
                        received <= received + 32'd1;
                    end
                end
                if (received == count && !done) begin
                    if (count != 32'd0)
                        $writememh("fp_results.hex", results, 0, count - 1);
                    done <= 1'b1;
                end
            end
        end
    end
endmodule
