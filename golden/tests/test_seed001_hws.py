"""Seed 001 (hybrid warp size): Fig 4.1 on the SM, conventional against HWS issue of the
example warp, and the lane utilisation HWS improves."""

from __future__ import annotations

import pytest

from reconverge.golden.asm import assemble
from reconverge.golden.config import SMConfig
from reconverge.golden.functional import LaunchConfig, run
from reconverge.golden.geometry import Geometry
from reconverge.golden.policies import Policy
from reconverge.golden.sm.core import SMResult
from reconverge.golden.sm.metrics import amdahl
from reconverge.golden.sm.run import run_sm

# Fig 4.1(c): one branch splits a warp of 32 into B (threads 0-3 and 12-15) and C (the other
# 24); each side runs one instruction before they meet at D.
FIG41 = """
_start:
    csrr t0, tid
    addi t1, t0, -4
    sltiu t1, t1, 8       # t1 = 1 for threads 4-11
    srli t2, t0, 4        # t2 = 1 for threads 16-31
    or   t1, t1, t2
    rhint D
    bnez t1, C
B:  addi a0, zero, 1
    j    D
C:  addi a0, zero, 2
D:  li   a7, 93
    ecall
"""
B_THREADS = [*range(4), *range(12, 16)]


def run_fig41(hws: bool, policy: Policy, squeeze: bool = True) -> SMResult:
    image = assemble(FIG41, "fig41.S")
    launch = LaunchConfig(grid=1, block=32, geometry=Geometry(warp_size=32, simd_width=8))
    config = SMConfig(policy=policy, hws=hws, squeeze=squeeze)
    result = run_sm(image, launch, config, trace=True)
    assert result.fault is None
    expected = [1 if t in B_THREADS else 2 for t in range(32)]
    assert result.exit_codes.tolist() == [expected] == run(image, launch).exit_codes.tolist()
    return result


@pytest.mark.parametrize("policy", [Policy.SPS, Policy.MP, Policy.STACKLESS])
def test_fig41_conventional_and_hybrid_issue(policy: Policy) -> None:
    """Conventional issue takes W/L = 4 passes for each side; HWS squeezes B (threads 12-15
    into the first quarter-warp) to 1 pass and C to 3: four execution cycles saved (Sec 4)."""
    image = assemble(FIG41, "fig41.S")
    b, c = image.symbols["B"], image.symbols["C"]
    sides = {}
    for hws in (False, True):
        result = run_fig41(hws, policy)
        passes = {r.pc: r.passes for r in result.trace}
        sides[hws] = (passes[b], passes[c])
        # Full-warp instructions keep 4 passes either way.
        assert all(r.passes == 4 for r in result.trace if r.mask == (1 << 32) - 1)
    assert sides == {False: (4, 4), True: (1, 3)}
    assert sum(sides[False]) - sum(sides[True]) == 4


@pytest.mark.parametrize("policy", [Policy.SPS, Policy.MP])
def test_fig41_without_the_squeeze_leaves_out_empty_quarters_only(policy: Policy) -> None:
    """hws without its squeeze (seed 001 Sec 6.2, Fig 6.1's baseline): B (threads 0-3 and
    12-15) keeps two quarter-warps, C (4-11 and 16-31) all four; the squeeze takes B to 1 and
    C to 3 passes, and after each divergence the squeezer's latency."""
    image = assemble(FIG41, "fig41.S")
    b, c = image.symbols["B"], image.symbols["C"]
    unsqueezed = run_fig41(True, policy, squeeze=False)
    passes = {r.pc: r.passes for r in unsqueezed.trace}
    assert (passes[b], passes[c]) == (2, 4)
    squeezed = run_fig41(True, policy)
    assert unsqueezed.metrics is not None and squeezed.metrics is not None
    saved = unsqueezed.metrics.counters.issue_passes - squeezed.metrics.counters.issue_passes
    assert saved == 2 + 1  # B's addi and j one pass each, C's addi one
    # without the squeeze no squeezer acts: no squeeze events
    assert unsqueezed.events.squeezes == 0
    assert squeezed.events.squeezes == squeezed.metrics.counters.warp_instructions


def test_the_hardware_sm_always_squeezes() -> None:
    from dataclasses import replace

    from reconverge.golden.params import COSIM, SMParams

    config = replace(COSIM.config, hws=True, squeeze=False)
    with pytest.raises(ValueError, match="without its squeeze exists in golden only"):
        SMParams(geometry=COSIM.geometry, config=config, memmap=COSIM.memmap)


def test_hws_raises_lane_utilisation_not_simd_efficiency() -> None:
    """SIMD efficiency counts active threads per warp instruction and does not change; lane
    utilisation (active threads per issued lane slot) does."""
    plain, hybrid = (run_fig41(hws, Policy.SPS) for hws in (False, True))
    assert plain.metrics is not None and hybrid.metrics is not None
    assert plain.metrics.simd_efficiency == hybrid.metrics.simd_efficiency
    assert hybrid.metrics.lane_utilisation > plain.metrics.lane_utilisation
    # B's addi and j save 3 passes each, C's addi 1.
    assert plain.metrics.counters.issue_passes - hybrid.metrics.counters.issue_passes == 7


def test_eq61_reproduces_table61() -> None:
    """Seed 001 Table 6.1 (NQU): warp distributions over 1, 2, 3 active quarter-warps give
    the estimated speedups 1.065 (all stages) and 1.104 (last stage)."""
    speedups = [4, 2, 4 / 3]
    assert round(amdahl([0.062, 0.026, 0.006], speedups), 3) == 1.065
    assert round(amdahl([0.058, 0.068, 0.067], speedups), 3) == 1.104


def test_hws_estimate_of_fig41() -> None:
    """Fig 4.1 without hws: B's two instructions (8 threads: 1 quarter) and C's one (24: 3)
    out of 12 warp instructions; the estimate bounds the measured gain of the ideal squeeze."""
    plain = run_fig41(False, Policy.SPS)
    assert plain.metrics is not None
    histogram = plain.metrics.counters.active_histogram
    assert histogram[8] == 2 and histogram[24] == 1 and histogram[32] == 9
    expected = amdahl([2 / 12, 0, 1 / 12], [4, 2, 4 / 3])
    assert plain.metrics.hws_estimate == pytest.approx(expected)
    hybrid = run_fig41(True, Policy.SPS)
    assert hybrid.metrics is not None
    measured = plain.metrics.counters.issue_passes / hybrid.metrics.counters.issue_passes
    assert measured == pytest.approx(expected)  # the squeeze is optimal here
