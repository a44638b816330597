# matNDP. `make sim` and `make test` set up whatever is missing first (see `make setup`).
VENV      := .venv
STAMP     := $(VENV)/.setup-done
SIM       ?= verilator
export PATH := $(CURDIR)/$(VENV)/bin:$(PATH)
PY        := $(VENV)/bin/python
MATNDP    := $(VENV)/bin/matndp
# pytest-xdist workers; the suite is simulator-bound and the machines have 2 cores.
JOBS      ?= 2

.PHONY: setup soc-setup sim soc-sim soc test test-slow soak mutate verilog lint synth bench docs clean

# The stamp is refreshed when the packaging or the set-up script change, so an unchanged
# checkout costs only this timestamp check.
$(STAMP): pyproject.toml tools/setup.sh
	VENV=$(VENV) tools/setup.sh
	touch $@

setup:
	VENV=$(VENV) tools/setup.sh
	touch $(STAMP)

sim: $(STAMP)
	$(MATNDP) sim --simulator $(SIM) --output build/sim

# The slice in a LiteX SoC (docs/fpga.md, "The slice in a LiteX SoC"): its own set-up (the
# RISC-V cross compiler, the libraries LiteX's Verilator model links, the soc extra), kept
# out of `make setup`; `make soc-sim` builds what changed and runs the firmware
# (WAVEFORM=1: a build that traces every signal to an FST file).
SOC_STAMP := $(VENV)/.soc-setup-done
$(SOC_STAMP): pyproject.toml tools/setup.sh | $(STAMP)
	VENV=$(VENV) SOC=1 tools/setup.sh
	touch $@

soc-setup: $(STAMP)
	VENV=$(VENV) SOC=1 tools/setup.sh
	touch $(SOC_STAMP)

soc-sim: $(SOC_STAMP)
	$(MATNDP) soc-sim $(if $(WAVEFORM),--waveform)

# The same SoC on a ULX3S 85F board (docs/fpga.md, "Run it on a board"): gateware, Yosys,
# nextpnr-ecp5 at SOC_SEED and ecppack to build/soc/board/gateware/matndp_soc.bit, with
# the resource and timing report in build/soc/board/soc.md. Half an hour or more on 2
# cores. By default for a 25 MHz system clock, which the design reaches routed, at the
# placement seed that routes (SOC_CLOCK_MHZ=50 for the design's target).
SOC_SEED ?= 2
SOC_CLOCK_MHZ ?= 25
soc: $(SOC_STAMP)
	$(MATNDP) soc --seed $(SOC_SEED) $(if $(SOC_CLOCK_MHZ),--clock-mhz $(SOC_CLOCK_MHZ))

# The suite's processes (its workers, simulators and commands) reuse the compiled modules
# one of them writes (git ignores them), where PYTHONDONTWRITEBYTECODE, set in some
# environments, would have every process compile the project and rewrite the tests anew.
test test-slow: export PYTHONDONTWRITEBYTECODE :=

test: $(STAMP)
	$(PY) -m pytest -n $(JOBS) --dist loadgroup

test-slow: $(STAMP)
	$(PY) -m pytest -n $(JOBS) --dist loadgroup -m slow

# The soak (docs/testing.md, "Soak"): the slice with its engine under a random mix of kernels,
# faults, traffic and timing for SOAK_CYCLES cycles, drawn from SOAK_SEED (a fresh seed,
# printed, when none is given); a failure leaves build/soak/seed-S/reproducer.json.
SOAK_SEED   ?=
SOAK_CYCLES ?= 1000000
soak: $(STAMP)
	$(MATNDP) soak $(if $(SOAK_SEED),--seed $(SOAK_SEED)) --cycles $(SOAK_CYCLES)

# Mutation testing (docs/testing.md; not part of `make test`): a sample of mutmut's mutants of
# host/ drawn from those no earlier run drew, by a new seed unless MUTATE_SEED is given
# (MUTATE_SAMPLE=all for every mutant: many hours), then the RTL mutant catalog over hw/,
# then the kill rates into docs/testing.md; every run is recorded in docs/mutation-runs.json.
# Fails when a rate is below the target.
MUTATE_SAMPLE ?= 300
MUTATE_SEED   ?=
MUTATE_JOBS   ?= 2
mutate: $(STAMP)
	$(PY) -c 'import mutmut' 2>/dev/null || $(PY) -m pip install -q --disable-pip-version-check -e ".[test,mutate]"
	$(PY) -m tools.mutate host $(if $(filter all,$(MUTATE_SAMPLE)),--all,--sample $(MUTATE_SAMPLE)) $(if $(MUTATE_SEED),--seed $(MUTATE_SEED)) --jobs $(MUTATE_JOBS)
	$(PY) -m tools.mutate rtl
	$(PY) -m tools.mutate report

# The deliverables an FPGA tool takes (the simulations' own exports go to build/designs/).
# Each is exported again only when what it is made of changed, so `make lint` after
# `make verilog` lints what is there. The export leaves an unchanged file's time alone;
# the touch marks it current.
VERILOG_DIR    := build/verilog
EXPORT_SOURCES := $(shell find hw sim/designs -name '*.py') sim/cli/verilog.py pyproject.toml
DELIVERABLES   := $(VERILOG_DIR)/ndp_slice.v $(VERILOG_DIR)/ndp_slice_axi.v $(VERILOG_DIR)/expander_axi.v

verilog: $(DELIVERABLES)

$(VERILOG_DIR)/ndp_slice.v: $(EXPORT_SOURCES) | $(STAMP)
	$(MATNDP) export --output $@
	@touch $@

$(VERILOG_DIR)/ndp_slice_axi.v: $(EXPORT_SOURCES) | $(STAMP)
	$(MATNDP) export --design axi --output $@
	@touch $@

$(VERILOG_DIR)/expander_axi.v: $(EXPORT_SOURCES) | $(STAMP)
	$(MATNDP) export --design expander-axi --output $@
	@touch $@

lint: $(DELIVERABLES)
	$(MATNDP) lint $(VERILOG_DIR)/ndp_slice.v
	$(MATNDP) lint $(VERILOG_DIR)/ndp_slice_axi.v --top ndp_slice_axi
	$(MATNDP) lint $(VERILOG_DIR)/expander_axi.v --top expander_axi

synth: $(STAMP)
	$(MATNDP) synth --output build/synth

bench: $(STAMP)
	$(MATNDP) bench --output build/bench

docs: $(STAMP)
	$(MATNDP) docs

clean:
	rm -rf build .pytest_cache
