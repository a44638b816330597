// Stand-alone Verilator driver of the batch harness (slice_harness.v): replays the job a
// batch run recorded in replay.txt (port settings, the reset, register accesses, loads,
// phases, dumps) with no Python at all, and prints the phases' cycles and wall time as
// JSON. It is the limit a testbench around the same model can approach (docs/simulation.md).
//
//   slice_harness_main <job directory> [--no-logs]
//
// The job directory is the one of the batch run (its stimulus files and replay.txt); the
// harness's own files (requests.hex, the logs, image_out.hex) are written there.
// --no-logs clears log_enable, so the harness writes no log lines.

#include "Vslice_harness.h"
#include "verilated.h"

#include <chrono>
#include <ctime>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Driver {
    VerilatedContext context;
    Vslice_harness* top;
    std::map<std::string, std::function<void(uint64_t)>> ports;

    Driver() : top(new Vslice_harness(&context)) {
        top->clk = 0;
        top->rst = 1;
        top->eval();
#define PORT(name) ports[#name] = [this](uint64_t value) { top->name = value; }
        PORT(load); PORT(load_what); PORT(request_count); PORT(image_count); PORT(region_count);
        PORT(dump); PORT(flush); PORT(start); PORT(budget); PORT(stop_when);
        PORT(response_target); PORT(seed); PORT(latency); PORT(interval); PORT(reorder);
        PORT(gpu_request_pause); PORT(gpu_response_pause); PORT(memory_request_pause);
        PORT(memory_response_pause); PORT(log_enable);
#undef PORT
    }

    ~Driver() {
        top->final();
        delete top;
    }

    void tick() {
        top->clk = 1;
        top->eval();
        top->clk = 0;
        top->eval();
    }

    // Raise an input for one cycle and give the harness the cycle it takes to act on it
    // (its inputs pass a register).
    void strobe(CData& signal) {
        signal = 1;
        tick();
        signal = 0;
        tick();
    }

    // One register access, as the Python bus driver makes it: a one-cycle strobe, then
    // the cycles to the acknowledgement, then one more.
    bool access(bool write, uint32_t address, uint32_t value) {
        top->csr___05Faddr = address;
        top->csr___05Fw_data = value;
        top->csr___05Fw_en = write;
        top->csr___05Fr_en = !write;
        tick();
        top->csr___05Fw_en = 0;
        top->csr___05Fr_en = 0;
        top->eval();
        for (int wait = 0; wait < 64; ++wait) {
            if (top->csr___05Fack) {
                tick();
                return true;
            }
            tick();
        }
        return false;
    }
};

void copy(const std::filesystem::path& from, const char* to) {
    std::filesystem::copy_file(from, to, std::filesystem::copy_options::overwrite_existing);
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 2) {
        std::cerr << "usage: " << argv[0] << " <job directory> [--no-logs]\n";
        return 2;
    }
    bool logs = !(argc > 2 && std::strcmp(argv[2], "--no-logs") == 0);
    std::filesystem::path directory(argv[1]);
    std::ifstream script(directory / "replay.txt");
    if (!script) {
        std::cerr << "no replay.txt in " << directory << "\n";
        return 2;
    }
    std::filesystem::current_path(directory);

    Driver driver;
    Vslice_harness* top = driver.top;
    uint64_t phase_cycles = 0;
    double phase_seconds = 0.0;
    double phase_cpu_seconds = 0.0;
    int phases = 0;
    std::string line;
    while (std::getline(script, line)) {
        std::istringstream words(line);
        std::string command;
        words >> command;
        if (command == "set") {
            std::string name;
            uint64_t value;
            words >> name >> value;
            auto port = driver.ports.find(name);
            if (port == driver.ports.end()) {
                std::cerr << "replay.txt: no port " << name << "\n";
                return 2;
            }
            port->second(name == "log_enable" && !logs ? 0 : value);
        } else if (command == "reset") {
            int cycles;
            words >> cycles;
            top->rst = 1;
            for (int cycle = 0; cycle < cycles; ++cycle)
                driver.tick();
            top->rst = 0;
            driver.tick();
        } else if (command == "csr_write" || command == "csr_read") {
            uint32_t address, value = 0;
            words >> address;
            if (command == "csr_write")
                words >> value;
            if (!driver.access(command == "csr_write", address, value)) {
                std::cerr << "no acknowledgement for the access to " << address << "\n";
                return 1;
            }
        } else if (command == "load") {
            int what;
            words >> what;
            std::string name;
            if (what & 1) {
                words >> name;
                copy(name, "requests.hex");
            }
            if (what & 2) {
                words >> name;
                copy(name, "image.hex");
                words >> name;
                copy(name, "regions.hex");
            }
            driver.strobe(top->load);
        } else if (command == "run") {
            auto begun = std::chrono::steady_clock::now();
            std::clock_t cpu_begun = std::clock();
            top->start = 1;
            driver.tick();
            top->start = 0;
            driver.tick();
            while (!top->done)
                driver.tick();
            phase_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - begun).count();
            phase_cpu_seconds += double(std::clock() - cpu_begun) / CLOCKS_PER_SEC;
            phase_cycles += top->phase_cycles;
            ++phases;
        } else if (command == "dump") {
            std::string name;
            words >> name;
            driver.strobe(top->dump);
            std::filesystem::rename("image_out.hex", name);
        } else if (!command.empty()) {
            std::cerr << "replay.txt: unknown command " << command << "\n";
            return 2;
        }
    }
    driver.strobe(top->flush);
    std::printf("{\"phases\": %d, \"cycles\": %llu, \"wall_s\": %.6f, \"cpu_s\": %.6f}\n",
                phases, static_cast<unsigned long long>(phase_cycles), phase_seconds,
                phase_cpu_seconds);
    return 0;
}
