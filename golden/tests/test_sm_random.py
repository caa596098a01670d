"""Properties of the golden models on random programs (``golden/testing/randprog.py``, checked
by ``golden/testing/randcheck.py``). Against the
functional model, at three geometries: every policy, dwf and en-dwf, with and without hws,
leaves the same memory (outputs and the atomics' words) and exit codes, and executes the same
instructions per thread (unless lr.w / sc.w loops retry as timing makes them); no issue takes
more than W/L passes; no configuration deadlocks (barriers are only where every thread
arrives). Against qemu-riscv32: every thread of a program whose threads do not communicate,
run alone, exits with the functional model's code after its number of instructions. mp with
unlimited tables and sps have the same SIMD efficiency when every branch reconverges at its
IPDOM."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconverge.golden.asm import assemble
from reconverge.golden.config import SMConfig
from reconverge.golden.policies import Policy
from reconverge.golden.sm.run import run_sm
from reconverge.golden.testing.randcheck import (
    GEOMETRIES,
    GEOMETRY_SET,
    check_every_policy,
    check_threads_on_qemu,
    launch_for,
)
from reconverge.golden.testing.randprog import Program, programs, render

PROGRAMS = {"program": programs(), "block": st.integers(1, 24), "grid": st.integers(1, 2)}


@pytest.mark.parametrize("stream", range(4))  # four test items, so that workers share them
@settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
@given(**PROGRAMS)
def test_every_policy_computes_what_the_functional_model_computes(
    stream: int, program: Program, block: int, grid: int
) -> None:
    """Each program at three geometries, every configuration with hws off and on."""
    for geometry in GEOMETRY_SET:
        check_every_policy(program, geometry, block, grid)


@pytest.mark.slow
@pytest.mark.parametrize("stream", range(4))
@settings(max_examples=625, deadline=None, suppress_health_check=list(HealthCheck))
@given(**PROGRAMS, geometry=GEOMETRIES, hws=st.booleans())
def test_every_policy_computes_what_the_functional_model_computes_sweep(
    stream: int, program: Program, block: int, grid: int, geometry: tuple[int, int], hws: bool
) -> None:
    """More programs, each at one geometry and one hws setting (every configuration)."""
    check_every_policy(program, geometry, block, grid, (hws,))


@pytest.mark.gnu
@pytest.mark.qemu
@pytest.mark.parametrize("stream", range(2))
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    program=programs(barriers=False, atomics=False),
    geometry=GEOMETRIES,
    block=st.integers(1, 8),
    grid=st.integers(1, 2),
)
def test_threads_alone_on_qemu_agree_with_the_functional_model(
    stream: int, program: Program, geometry: tuple[int, int], block: int, grid: int,
    tmp_path: Path,
) -> None:  # fmt: skip
    check_threads_on_qemu(program, geometry, block, grid, tmp_path)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=programs(unstructured=False, atomics=False), geometry=GEOMETRIES,
       block=st.integers(1, 24))  # fmt: skip
def test_mp_and_sps_have_equal_simd_efficiency_on_ipdom_code(
    program: Program, geometry: tuple[int, int], block: int
) -> None:
    """With every branch reconverging at its IPDOM, MP (unlimited tables) and SPS execute the
    same warp instructions with the same masks, only in another order (seed 002 Sec 6.1)."""
    image = assemble(render(program), "random.S")
    launch = launch_for(geometry, block, 1)
    sps = run_sm(image, launch, SMConfig(policy=Policy.SPS), trace=True)
    mp = run_sm(image, launch, SMConfig(policy=Policy.MP), trace=True)
    assert sps.fault is None and mp.fault is None
    assert sps.metrics is not None and mp.metrics is not None
    assert sorted((r.pc, r.mask, r.warp) for r in sps.trace) == sorted(
        (r.pc, r.mask, r.warp) for r in mp.trace
    )
    assert sps.metrics.simd_efficiency == mp.metrics.simd_efficiency
