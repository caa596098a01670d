"""The co-simulation plan (issue 12, "Tests and figures"): which suite kernels run on the SM's
Verilog against golden, under which policies, hws settings and geometries, and the agreement
level each is expected to reach. The tests (``testbench/tests/test_cosim_sm.py``) and
docs/cosim.md (:mod:`reconverge.testbench.cosimdoc`) read it.

Every cell is expected to reach level 4 (cycle-exact) unless :data:`KNOWN` names it with the
level it reaches and the cause; a cell that reaches less than expected is a regression, one
that reaches more is a stale entry of :data:`KNOWN`, and both fail the tests.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

from reconverge.golden.geometry import Geometry
from reconverge.golden.params import COSIM, SMParams
from reconverge.golden.policies import HARDWARE, Variant
from reconverge.kernels import suite
from reconverge.kernels.workload import Workload, load_workload
from reconverge.testbench.build import params_digest
from reconverge.testbench.cosim import CosimReport, cosim

#: Every policy variant the SM elaborates (the registry's hardware variants).
VARIANTS: tuple[Variant, ...] = HARDWARE
#: The geometries (DESIGN.md: every suite covers three, W = L among them): the named cosim
#: configuration (W = 8, L = 4, 4 warp slots), two with its other parameters, and the seeds'
#: warp size (issue 30: W = 32 on L = 8 with 8 warp slots). That one keeps the cosim's split
#: table of 8 entries, not W: the SM checks both buffer entries of every split slot on a
#: scoreboard lookup of its own (``golden.blocks.units.sm_lookups``), 512 lookups at ST = 32.
GEOMETRIES: dict[str, Geometry] = {
    "W=8 L=4": COSIM.geometry,
    "W=8 L=8": replace(COSIM.geometry, simd_width=8),
    "W=16 L=4": replace(COSIM.geometry, warp_size=16),
    "W=32 L=8 N=8": replace(COSIM.geometry, warp_size=32, simd_width=8, warps=8),
}
COSIM_GEOMETRY = "W=8 L=4"
SEEDS_GEOMETRY = "W=32 L=8 N=8"
HWS = (False, True)
KERNELS: tuple[str, ...] = tuple(sorted(suite()))

#: Cells known to stop below level 4: (kernel, geometry, variant name, hws) -> (level, cause).
KNOWN: dict[tuple[str, str, str, bool], tuple[int, str]] = {}


def params_for(geometry: str, variant: Variant, hws: bool) -> SMParams:
    """The cosim configuration with a geometry of :data:`GEOMETRIES`, a policy and hws."""
    config = replace(COSIM.config, policy=variant.policy, hints=variant.hints, hws=hws)
    return replace(COSIM, geometry=GEOMETRIES[geometry], config=config)


def expected_level(kernel: str, geometry: str, variant: Variant, hws: bool) -> int:
    return KNOWN.get((kernel, geometry, variant.name, hws), (4, ""))[0]


def build_group(geometry: str, variant: Variant, hws: bool) -> str:
    """The name of the SM build a cell runs on (tests of one build go to one pytest-xdist
    worker, so no worker waits on another's build)."""
    return "sm-" + params_digest(params_for(geometry, variant, hws))


@functools.cache
def workload(kernel: str) -> Workload:
    """A suite kernel at its default size, compiled with and without hints, with its oracle."""
    return load_workload(
        kernel, grid=None, block=None, args=(), allocator="linear", regs=16, size=None, seed=0
    )


@dataclass
class Cell:
    """One kernel on one SM: the report and the output arrays of the RTL run that differ
    from the oracle (None when the RTL did not finish)."""

    kernel: str
    geometry: str
    variant: Variant
    hws: bool
    report: CosimReport
    wrong: list[str] | None

    @property
    def expected(self) -> int:
        return expected_level(self.kernel, self.geometry, self.variant, self.hws)

    @property
    def name(self) -> str:
        hws = " +hws" if self.hws else ""
        return f"{self.kernel} {self.variant.name}{hws} at {self.geometry} ({self.report.sim})"

    def problems(self) -> list[str]:
        """Why the cell fails its expectation (empty when it meets it): a level other than
        the expected one, outputs that differ from the oracle."""
        out = []
        reached = self.report.reached
        if reached != self.expected:
            stale = " (a stale KNOWN entry?)" if reached > self.expected else ""
            out.append(f"{self.name}: level {reached}, expected {self.expected}{stale}")
        if self.wrong:
            out.append(f"{self.name}: RTL outputs differ from the oracle: {', '.join(self.wrong)}")
        return out


def run_cell(
    kernel: str,
    geometry: str,
    variant: Variant,
    hws: bool,
    *,
    sim: str = "verilator",
) -> Cell:
    """Co-simulate a suite kernel on the SM of (geometry, variant, hws), bound as ``reconverge
    cosim`` binds it, requesting level 4."""
    params = params_for(geometry, variant, hws)
    work = workload(kernel)
    hints = params.config.explicit
    launch = work.launches[hints].config(  # type: ignore[index]
        work.grid, work.block, geometry=params.geometry, memmap=params.memmap
    )
    report = cosim(work.image_for(hints), launch, params, sim=sim, level=4, source=kernel)
    wrong = work.mismatches(report.rtl, hints) if report.run.finished else None
    return Cell(kernel, geometry, variant, hws, report, wrong)


__all__ = [
    "COSIM_GEOMETRY",
    "GEOMETRIES",
    "HWS",
    "KERNELS",
    "KNOWN",
    "SEEDS_GEOMETRY",
    "VARIANTS",
    "Cell",
    "build_group",
    "expected_level",
    "params_for",
    "run_cell",
    "workload",
]
