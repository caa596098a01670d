"""Properties of the cycle-level SM on random programs (tests/randprog.py), against the
functional model: every policy, with and without hws, leaves the same memory and exit codes;
no issue takes more than W/L passes; no policy deadlocks (barriers are only where every thread
arrives); mp with unlimited tables and sps have the same SIMD efficiency when every branch
reconverges at its IPDOM."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconverge.golden.asm import assemble
from reconverge.golden.functional import LaunchConfig, RunResult, run
from reconverge.golden.geometry import Geometry
from reconverge.golden.sm.config import Policy, SMConfig, WarpFormation
from reconverge.golden.sm.core import SMResult, run_sm
from reconverge.golden.tests import gnu, qemu
from reconverge.golden.tests.randprog import (
    ACC_WORDS,
    NVARS,
    Program,
    programs,
    render,
    thread_source,
)

#: Every configuration a policy name and its switches give.
CONFIGS = [
    SMConfig(policy=Policy.SPS),
    SMConfig(policy=Policy.STACKLESS),
    SMConfig(policy=Policy.DPS),
    SMConfig(policy=Policy.PPC, hints=True),
    SMConfig(policy=Policy.PPC, hints=False),
    SMConfig(policy=Policy.MP),
    SMConfig(policy=Policy.MP_OREC),
    SMConfig(warp_formation=WarpFormation.DWF),
    SMConfig(warp_formation=WarpFormation.EN_DWF),
]

GEOMETRIES = st.sampled_from([(4, 4), (8, 4), (8, 2), (16, 4)])


def launch_for(geometry: tuple[int, int], block: int, grid: int) -> LaunchConfig:
    w, lanes = geometry
    g = Geometry(warp_size=w, simd_width=lanes, warps=8, stack_depth=64, split_table=w,
                 reconv_table=64)  # fmt: skip
    return LaunchConfig(grid=grid, block=block, geometry=g, step_limit=200_000)


def outputs(result: RunResult, image_symbols: dict[str, int], threads: int) -> list[int]:
    return result.memory.read_words(image_symbols["out"], NVARS * threads).tolist()


def check_same(reference: RunResult, result: SMResult, program: Program,
               symbols: dict[str, int], threads: int, label: str) -> None:  # fmt: skip
    """Same exit codes, outputs and atomics' words; the same instructions per thread too,
    unless lr.w / sc.w loops retry as often as the timing makes them."""
    assert result.fault is None, f"{label}: {result.fault}"
    assert np.array_equal(result.exit_codes, reference.exit_codes), label
    assert np.array_equal(result.exited, reference.exited), label
    assert outputs(result, symbols, threads) == outputs(reference, symbols, threads), label
    acc = [r.memory.read_words(symbols["acc"], ACC_WORDS).tolist() for r in (result, reference)]
    assert acc[0] == acc[1], label
    if not program.has_retries:
        assert np.array_equal(result.thread_instructions, reference.thread_instructions), label


def check_every_policy(
    program: Program, geometry: tuple[int, int], block: int, grid: int, hws: bool
) -> None:
    source = render(program)
    image = assemble(source, "random.S")
    launch = launch_for(geometry, block, grid)
    reference = run(image, launch)
    assert reference.fault is None, f"{reference.fault}\n{source}"
    passes = geometry[0] // geometry[1]
    for config in CONFIGS:
        config = replace(config, hws=hws)
        label = f"{config} hws={hws}\n{source}"
        result = run_sm(image, launch, config, trace=True)
        check_same(reference, result, program, image.symbols, grid * block, label)
        assert max(r.passes for r in result.trace) <= passes, label


LAUNCHES = {
    "program": programs(),
    "geometry": GEOMETRIES,
    "block": st.integers(1, 24),
    "grid": st.integers(1, 2),
    "hws": st.booleans(),
}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**LAUNCHES)
def test_every_policy_computes_what_the_functional_model_computes(
    program: Program, geometry: tuple[int, int], block: int, grid: int, hws: bool
) -> None:
    check_every_policy(program, geometry, block, grid, hws)


@pytest.mark.slow
@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**LAUNCHES)
def test_every_policy_computes_what_the_functional_model_computes_sweep(
    program: Program, geometry: tuple[int, int], block: int, grid: int, hws: bool
) -> None:
    check_every_policy(program, geometry, block, grid, hws)


IDENTITY = ("tid", "ntid", "ctaid", "nctaid", "laneid", "warpid", "warpsize")


def check_threads_on_qemu(
    program: Program, geometry: tuple[int, int], block: int, grid: int, workdir: Path
) -> None:
    """Each thread of a program whose threads do not communicate, run alone on qemu-riscv32
    (its SIMT instructions replaced by what they mean for it: ``thread_source``), exits with
    the code and executes the instructions the functional model gives it."""
    assert not program.communicates
    source = render(program)
    launch = launch_for(geometry, block, grid)
    reference = run(assemble(source, "random.S"), launch)
    assert reference.fault is None, f"{reference.fault}\n{source}"
    w = geometry[0]
    for b in range(grid):
        for t in range(block):
            values = (t, block, b, grid, t % w, t // w, w)
            identity = dict(zip(IDENTITY, values, strict=True))
            elf = qemu.build(gnu.gnu_spelling(thread_source(source, identity)), workdir, "thread")
            status, count = qemu.run(elf, workdir / "thread.log")
            label = f"block {b} thread {t} of {grid} x {block}, W = {w}\n{source}"
            assert status == reference.exit_codes[b, t] & 0xFF, label
            assert count == reference.thread_instructions[b, t], label


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    program=programs(barriers=False, atomics=False),
    geometry=GEOMETRIES,
    block=st.integers(1, 8),
    grid=st.integers(1, 2),
)
def test_threads_alone_on_qemu_agree_with_the_functional_model(
    program: Program, geometry: tuple[int, int], block: int, grid: int, tmp_path: Path
) -> None:
    check_threads_on_qemu(program, geometry, block, grid, tmp_path)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=programs(unstructured=False), geometry=GEOMETRIES, block=st.integers(1, 24))
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
