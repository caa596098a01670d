"""``reconverge cosim``: a program or suite kernel on the generated Verilog of the SM under
cocotb, held to the golden SM at the agreement levels of DESIGN.md
(:func:`reconverge.testbench.cosim.cosim`).

    reconverge cosim FILE|KERNEL --policy P [--hws] [--no-hints] [--config cosim]
        [geometry and configuration options of run] [--sim icarus|verilator] [--level 1..4]
        [--waves FILE.fst] [--json]

Every option defaults to the named configuration (``golden.sm.params.CONFIGS``, ``cosim``);
an option given overrides its field. Kernels are compiled and bound to their inputs as
``reconverge run`` does (:mod:`reconverge.golden.sm.workload`) and the RTL's outputs are checked
against the oracle. Exit status: 0 when the requested level is reached (and a kernel's outputs
match its oracle), 1 otherwise, 2 for a user error.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import fields, replace
from typing import Any

from reconverge.golden import cli
from reconverge.golden.command import Command
from reconverge.golden.geometry import Geometry
from reconverge.golden.output import check_output
from reconverge.golden.sm.commands import (
    _latencies,
    add_kernel_options,
    add_sm_options,
    workload_of,
)
from reconverge.golden.sm.config import POLICY_NAMES, Policy, Scheduler, ScoreboardKind
from reconverge.golden.sm.params import CONFIGS, SMParams

#: Geometry fields a command-line option of the same name overrides.
GEOMETRY_OPTIONS = tuple(f.name for f in fields(Geometry) if f.name != "regs")


def _override(value: Any, **changes: Any) -> Any:
    """``dataclasses.replace`` with only the changes that were given (not None)."""
    return replace(value, **{k: v for k, v in changes.items() if v is not None})


def params_of(ns: argparse.Namespace) -> SMParams:
    """The named configuration with the options given on the command line; an invalid
    combination is a one-line usage error (:class:`SMParams` and its parts validate)."""
    base = CONFIGS[ns.config]
    geometry_changes = {name: getattr(ns, name) for name in GEOMETRY_OPTIONS}
    if ns.warp_size is not None and ns.simd_width is None:
        geometry_changes["simd_width"] = min(base.geometry.simd_width, ns.warp_size)
    latencies = base.config.latencies
    for pair in ns.latency:  # each NAME=CYCLES checked by run's parser, then applied to the base
        name = pair.partition("=")[0]
        field = name if name in latencies.__dataclass_fields__ else f"{name}_"
        latencies = replace(latencies, **{field: getattr(_latencies([pair]), field)})
    try:
        geometry = _override(base.geometry, **geometry_changes)
        config = _override(
            base.config,
            policy=None if ns.policy is None else Policy(ns.policy),
            hws=ns.hws or None,
            hints=ns.hints,
            scheduler=None if ns.scheduler is None else Scheduler(ns.scheduler),
            scoreboard=None if ns.scoreboard is None else ScoreboardKind(ns.scoreboard),
            latencies=latencies,
            line_bytes=ns.line_bytes,
            shared_banks=ns.shared_banks,
            max_cycles=ns.max_cycles,
        )
        return _override(base, geometry=geometry, config=config, imem_words=ns.imem_words)
    except ValueError as exc:
        raise cli.UsageError(str(exc)) from None


def add_params_options(p: argparse.ArgumentParser) -> None:
    """The program and the SM it runs on (:func:`params_of`): a named configuration and the
    options that modify it."""
    p.add_argument("file", help="ELF file, .S assembly, or a suite kernel (name or FILE.py)")
    p.add_argument("--config", choices=sorted(CONFIGS), default="cosim",
                   help="the named SM configuration the other options modify")  # fmt: skip
    p.add_argument("--policy", choices=POLICY_NAMES, default=None)
    p.add_argument("--hws", action="store_true", help="hybrid warp size (seed 001)")
    p.add_argument(
        "--hints", action=argparse.BooleanOptionalAction, default=None,
        help="ppc: explicit (with reconvergence PCs) or implicit",
    )  # fmt: skip
    p.add_argument("--imem-words", type=cli.parse_int, default=None,
                   help="32-bit words of the instruction store")  # fmt: skip
    p.add_argument("--shared-banks", type=cli.parse_int, default=None)
    cli.add_launch_options(p, grid=None, block=None, warp=0)
    add_kernel_options(p)
    add_sm_options(p)
    # Every option of the SM defaults to the named configuration's value.
    p.set_defaults(**dict.fromkeys(GEOMETRY_OPTIONS))
    p.set_defaults(scheduler=None, scoreboard=None, line_bytes=None, max_cycles=None)


def _configure(p: argparse.ArgumentParser) -> None:
    add_params_options(p)
    p.add_argument("--sim", choices=("icarus", "verilator"), default="icarus")
    p.add_argument("--level", type=int, choices=(1, 2, 3, 4), default=3,
                   help="agreement level required for exit status 0 (default 3)")  # fmt: skip
    p.add_argument("--waves", metavar="FILE.fst", help="record the RTL's waveforms here")
    p.add_argument("--timeout", type=float, default=600.0,
                   help="wall-clock seconds before the RTL run is stopped")  # fmt: skip
    p.add_argument("--backpressure", action="store_true",
                   help="a memory that stalls: random req_ready, late responses")  # fmt: skip
    p.add_argument("--keep", action="store_true", help="keep the run's directory (job, log)")


def _cmd_cosim(ns: argparse.Namespace) -> int:
    from reconverge.testbench.cosim import Backpressure, SimulationError, cosim

    if ns.waves:
        check_output(ns.waves, (".fst", ".vcd"))
    params = params_of(ns)
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
            backpressure=Backpressure(seed=ns.seed) if ns.backpressure else None,
            max_seconds=ns.timeout,
            source=work.source,
            keep=ns.keep,
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
