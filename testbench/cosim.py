"""Whole-program co-simulation: a program on the generated Verilog of the SM (``hdl/sm/top.py``,
docs/sm-hardware.md) under cocotb, held to the golden cycle-level SM at the agreement levels of
DESIGN.md (:mod:`.compare`), and its report.

:func:`cosim` decodes the program once, runs golden
(:func:`~reconverge.golden.sm.run.run_sm` with the trace) on the geometry, configuration and
address map of the :class:`~reconverge.golden.params.SMParams`, builds the SM's Verilog once
per parameter set (:mod:`.build`), runs the cocotb test on Icarus or Verilator (:mod:`.rtl`),
and compares (:mod:`.compare`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from reconverge.golden.faults import SimtFault
from reconverge.golden.functional import LaunchConfig
from reconverge.golden.image import Image
from reconverge.golden.params import SMParams
from reconverge.golden.sm.core import SMResult
from reconverge.golden.sm.metrics import Metrics
from reconverge.golden.sm.program import Program
from reconverge.golden.sm.run import run_sm
from reconverge.testbench.build import Design, sm_design
from reconverge.testbench.compare import LEVELS, Difference, compare, fault_view, rtl_result
from reconverge.testbench.errors import CosimError
from reconverge.testbench.memory_model import Backpressure
from reconverge.testbench.rtl import RtlRun, run_rtl
from reconverge.testbench.runner import SIMULATORS

#: The metrics reported side by side (keys of :meth:`Metrics.to_json`).
METRICS = (
    "cycles",
    "idle_cycles",
    "ipc",
    "warp_instructions",
    "thread_instructions",
    "hint_instructions",
    "simd_efficiency",
    "lane_utilisation",
    "issue_passes",
    "memory_transactions",
    "shared_transactions",
    "bank_conflicts",
    "spill_loads",
    "spill_stores",
)


def metrics_json(metrics: Metrics | None) -> dict[str, Any]:
    every = {} if metrics is None else metrics.to_json()
    return {key: every.get(key) for key in METRICS}


def outcome(result: SMResult) -> str:
    """A run's own outcome, as ``reconverge run`` names it: its fault, or its threads' exit
    codes (a code with the number of threads that exited with it)."""
    if result.fault is not None:
        return f"fault: {result.fault}"
    codes, counts = np.unique(result.exit_codes[result.exited], return_counts=True)
    exits = ", ".join(f"exit {c} ({n} threads)" for c, n in zip(codes, counts, strict=True))
    waiting = int((~result.exited).sum())
    return exits + (f", {waiting} threads did not exit" if waiting else "")


def fault_json(fault: SimtFault | None) -> dict[str, Any] | None:
    if fault is None:
        return None
    return {**fault_view(fault), "message": str(fault)}  # type: ignore[dict-item]


@dataclass
class CosimReport:
    """One co-simulated program: the level reached, the first difference, both sides."""

    source: str
    sim: str
    design: str  # Design.kind
    params: SMParams
    requested: int
    reached: int
    difference: Difference | None
    golden: SMResult
    rtl: SMResult
    run: RtlRun
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.reached >= self.requested

    @property
    def cycles_per_second(self) -> float:
        return self.run.cycles_per_second

    def to_json(self) -> dict[str, Any]:
        run = self.run
        return {
            "file": self.source,
            "sim": self.sim,
            "design": self.design,
            "params": self.params.to_json(),
            "level_requested": self.requested,
            "level": self.reached,
            "ok": self.ok,
            "difference": None if self.difference is None else self.difference.to_json(),
            "golden": {**metrics_json(self.golden.metrics), "fault": fault_json(self.golden.fault)},
            "rtl": {
                **metrics_json(self.rtl.metrics),
                "stalls": run.counters.get("stalls"),
                "fault": fault_json(self.rtl.fault),
                "stopped": run.stopped,
                "message": run.message,
                "clocks": run.clocks,
                "seconds": run.seconds,
                "cycles_per_second": run.cycles_per_second,
                "load_seconds": run.load_seconds,
            },
        }

    def format(self) -> str:
        p = self.params
        g = p.geometry
        config = p.config
        policy = config.policy.value + (" +hws" if config.hws else "")
        lines = [
            f"{self.source}: {policy} on W={g.warp_size} L={g.simd_width} with {g.warps} warp "
            f"slots, {self.sim} ({self.design}): level {self.reached} reached (requested "
            f"{self.requested}) — " + ("ok" if self.ok else "FAILED"),
            f"  program on golden: {outcome(self.golden)}",
        ]
        if not self.run.finished:
            lines.append(f"  rtl stopped: {self.run.message}")
        for name, side in (("golden", self.golden), ("rtl", self.rtl)):
            m = metrics_json(side.metrics)
            lines.append(
                f"  {name:<6} cycles {m['cycles']}, idle {m['idle_cycles']}, warp instructions "
                f"{m['warp_instructions']}, thread instructions {m['thread_instructions']}, "
                f"SIMD efficiency {m['simd_efficiency']:.3f}, lane utilisation "
                f"{m['lane_utilisation']:.3f}, memory transactions {m['memory_transactions']}"
            )
        lines.append(
            f"  rtl: {self.run.clocks} clocks ({self.run.counters.get('stalls', 0)} stalled) in "
            f"{self.run.seconds:.1f} s, {self.run.cycles_per_second:,.0f} cycles/s (instruction "
            f"store loaded in {self.run.load_seconds:.1f} s)"
        )
        if self.difference is not None:
            lines.append("first difference at " + str(self.difference))
        return "\n".join(lines)


def default_max_cycles(golden_cycles: int, backpressure: Backpressure | None) -> int:
    """The watchdog's clock limit after the launch: four times golden's cycles plus a margin,
    more when the memory stalls the SM."""
    limit = 4 * (golden_cycles + 256)
    if backpressure is not None:
        limit *= (1 + backpressure.max_delay) * math.ceil(1 / backpressure.ready)
    return limit


def cosim(
    image: Image,
    launch: LaunchConfig,
    params: SMParams,
    *,
    sim: str = "icarus",
    level: int = 4,
    waves: str | Path | None = None,
    backpressure: Backpressure | None = None,
    max_cycles: int | None = None,
    max_seconds: float = 600.0,
    design: Design | None = None,
    source: str | None = None,
    keep: bool = False,
    coverage: Path | None = None,
) -> CosimReport:
    """Run ``image`` on golden and on the SM's Verilog with the launch's grid, block and
    arguments (its geometry and memory map are replaced by ``params``') and compare them.
    ``level`` is the agreement level required for :attr:`CosimReport.ok`; ``design`` replaces
    the SM (tests); ``waves`` names an FST file to record; ``coverage`` a file for the toggle
    counts (:func:`run_rtl`)."""
    if level not in LEVELS:
        raise CosimError(f"level {level} is not one of {', '.join(map(str, LEVELS))}")
    if sim not in SIMULATORS:
        raise CosimError(f"unknown simulator {sim!r} (known: {', '.join(SIMULATORS)})")
    design = design or sm_design(params)
    launch = replace(launch, geometry=params.geometry, memmap=params.memmap)
    program = Program(image)  # decoded once: golden, the instruction store, the RTL's metrics
    try:
        golden = run_sm(image, launch, params.config, trace=True, program=program)
    except ValueError as exc:  # a block larger than the SM's warp slots, an image outside memory
        raise CosimError(str(exc)) from None
    assert golden.metrics is not None
    run = run_rtl(
        design,
        program,
        launch,
        params,
        sim=sim,
        waves=waves,
        backpressure=backpressure,
        max_cycles=max_cycles or default_max_cycles(golden.metrics.cycles, backpressure),
        max_seconds=max_seconds,
        keep=keep,
        coverage=coverage,
    )
    rtl, problems = rtl_result(run, launch, program, params)
    per_block = -(-launch.block // params.geometry.warp_size)
    if not run.finished:
        reached, difference = 0, Difference(1, f"the RTL did not finish: {run.message}")
    elif problems:
        reached, difference = 0, Difference(1, f"the RTL's events are inconsistent: {problems[0]}")
    else:
        reached, difference = compare(
            golden, rtl, warps_per_block=per_block, warp_size=params.geometry.warp_size
        )
    return CosimReport(
        source or image.source,
        sim,
        design.kind,
        params,
        level,
        reached,
        difference,
        golden,
        rtl,
        run,
        problems,
    )


def cycles_per_second(
    image: Image, launch: LaunchConfig, params: SMParams, *, sim: str = "icarus"
) -> float:
    """Co-simulation speed (``make bench``): SM clock cycles per wall-clock second of one run
    of ``image`` on the SM's Verilog (the build and the instruction-store load excluded)."""
    return cosim(image, launch, params, sim=sim, level=1).cycles_per_second
