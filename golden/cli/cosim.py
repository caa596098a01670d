"""``reconverge cosim``: a program or suite kernel on the generated Verilog of the SM under
cocotb, held to the golden SM at the agreement levels of DESIGN.md
(:func:`reconverge.testbench.cosim.cosim`).

    reconverge cosim FILE|KERNEL --policy P [--hws] [--no-hints] [--config cosim]
        [geometry and configuration options of run] [--sim icarus|verilator] [--level 1..4]
        [--waves FILE.fst] [--netlist] [--json]

Every option defaults to the named configuration (``golden.params.CONFIGS``, ``cosim``);
an option given overrides its field. Kernels are compiled and bound to their inputs as
``reconverge run`` does (:mod:`reconverge.kernels.workload`) and the RTL's outputs are checked
against the oracle. Exit status: 0 when the requested level is reached (and a kernel's outputs
match its oracle), 1 otherwise, 2 for a user error.
"""

from __future__ import annotations

import argparse
import json
import math
import sys

from reconverge.golden import cli
from reconverge.golden.cli.command import Command
from reconverge.golden.cli.hdl import check_buildable
from reconverge.golden.cli.options import add_hardware_options, params_of
from reconverge.golden.cli.sm import add_kernel_options, workload_of
from reconverge.golden.output import check_output
from reconverge.kernels.workload import is_program


def add_params_options(p: argparse.ArgumentParser) -> None:
    """The program and the SM it runs on (:func:`reconverge.golden.cli.options.params_of`): a
    named configuration and the options that modify it."""
    p.add_argument("file", help="ELF file, .S assembly, or a suite kernel (name or FILE.py)")
    cli.add_launch_options(p, grid=None, block=None, warp=None)
    add_kernel_options(p)
    add_hardware_options(p, config="cosim")


def parse_seconds(text: str) -> float:
    """A time limit: a finite number of seconds above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds above 0, not {text}")
    return value


def _configure(p: argparse.ArgumentParser) -> None:
    add_params_options(p)
    p.add_argument("--sim", choices=("icarus", "verilator"), default="icarus")
    p.add_argument("--level", type=int, choices=(1, 2, 3, 4), default=3,
                   help="agreement level required for exit status 0 (default 3)")  # fmt: skip
    p.add_argument("--waves", metavar="FILE.fst", help="record the RTL's waveforms here")
    p.add_argument("--timeout", type=parse_seconds, default=600.0,
                   help="wall-clock seconds before the RTL run is stopped")  # fmt: skip
    p.add_argument("--backpressure", action="store_true",
                   help="a memory that stalls: random req_ready, late responses (seeded by "
                   "--seed)")  # fmt: skip
    p.add_argument("--keep", action="store_true", help="keep the run's directory (job, log)")
    p.add_argument("--netlist", action="store_true",
                   help="simulate the SM's ECP5 netlist after Yosys (with the primitives' "
                   "models) instead of its RTL")  # fmt: skip


def _cmd_cosim(ns: argparse.Namespace) -> int:
    from reconverge.testbench.build import netlist_design
    from reconverge.testbench.cosim import cosim
    from reconverge.testbench.errors import SimulationError
    from reconverge.testbench.memory_model import Backpressure

    if ns.waves:
        check_output(ns.waves, (".fst", ".vcd"))
    params = params_of(ns)
    check_buildable(params)
    backpressure = Backpressure(seed=ns.seed or 0) if ns.backpressure else None
    if ns.backpressure and is_program(ns.file):  # --seed seeds the memory's stalls alone
        ns = argparse.Namespace(**{**vars(ns), "seed": None})
    hints = params.config.explicit
    work = workload_of(ns, ns.file)
    launch = work.sm_launch(params, ns.step_limit)
    try:
        report = cosim(
            work.image_for(hints),
            launch,
            params,
            sim=ns.sim,
            level=ns.level,
            waves=ns.waves,
            backpressure=backpressure,
            max_seconds=ns.timeout,
            source=work.source,
            keep=ns.keep,
            design=netlist_design(params) if ns.netlist else None,
        )
    except SimulationError as exc:
        print(f"reconverge cosim: the simulation failed: {exc}", file=sys.stderr)
        return cli.EXIT_FAILED
    wrong = work.mismatches(report.rtl, hints) if work.launches is not None else None
    if ns.json:
        print(json.dumps({**report.to_json(), "oracle_mismatches": wrong}, indent=1))
    else:
        print(report.format())
        if wrong is not None and report.rtl.fault is None and report.run.finished:
            print(f"rtl outputs differ from the oracle: {', '.join(wrong)}" if wrong else
                  "rtl outputs match the oracle")  # fmt: skip
    return cli.EXIT_OK if report.ok and not wrong else cli.EXIT_FAILED


COMMANDS = (Command("cosim", _configure, _cmd_cosim),)
