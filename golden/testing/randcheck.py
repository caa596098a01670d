"""Random programs (:mod:`.randprog`) checked against the golden models: every configuration
of the cycle-level SM (the six policies, ppc without hints, dwf and en-dwf, hws off and on)
against the functional model, and each thread alone on qemu-riscv32. What
``golden/tests/test_sm_random.py``, ``make soak`` and the replay of saved reproducers share."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
from hypothesis import strategies as st

from reconverge.golden.asm import assemble
from reconverge.golden.config import SMConfig
from reconverge.golden.functional import LaunchConfig, RunResult, run
from reconverge.golden.geometry import Geometry
from reconverge.golden.image import Image
from reconverge.golden.policies import Policy, WarpFormation
from reconverge.golden.sm.core import SMResult
from reconverge.golden.sm.program import Program as Code
from reconverge.golden.sm.run import run_sm
from reconverge.golden.testing import gnu, qemu
from reconverge.golden.testing.randprog import ACC_WORDS, NVARS, Program, render, thread_source

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


def check_same(reference: RunResult, result: SMResult, retries: bool,
               symbols: dict[str, int], threads: int, label: str) -> None:  # fmt: skip
    """Same exit codes, outputs and atomics' words; the same instructions per thread too,
    unless lr.w / sc.w loops (``retries``) retry as often as the timing makes them."""
    assert result.fault is None, f"{label}: {result.fault}"
    assert np.array_equal(result.exit_codes, reference.exit_codes), label
    assert np.array_equal(result.exited, reference.exited), label
    assert outputs(result, symbols, threads) == outputs(reference, symbols, threads), label
    acc = [r.memory.read_words(symbols["acc"], ACC_WORDS).tolist() for r in (result, reference)]
    assert acc[0] == acc[1], label
    if not retries:
        assert np.array_equal(result.thread_instructions, reference.thread_instructions), label


def check_image(
    image: Image,
    reference: RunResult,
    launch: LaunchConfig,
    geometry: tuple[int, int],
    hws: bool,
    label: str,
) -> None:
    """Every configuration (the policies, dwf and en-dwf) against the functional model's
    ``reference`` run of ``image``."""
    retries = any(ins.is_lr for ins in (i.spec for i in Code(image).code.values()))
    threads = launch.grid * launch.block
    for config in CONFIGS:
        config = replace(config, hws=hws)
        where = f"{config} at W, L = {geometry}, {launch.grid} x {launch.block}\n{label}"
        result = run_sm(image, launch, config, trace=True)
        check_same(reference, result, retries, image.symbols, threads, where)
        assert max(r.passes for r in result.trace) <= geometry[0] // geometry[1], where


def check_every_policy(
    program: Program,
    geometry: tuple[int, int],
    block: int,
    grid: int,
    hws: tuple[bool, ...] = (False, True),
) -> int:
    """Every configuration, with hws off and on, against the functional model at one
    geometry; the thread instructions of the functional run."""
    source = render(program)
    image = assemble(source, "random.S")
    launch = launch_for(geometry, block, grid)
    reference = run(image, launch)
    assert reference.fault is None, f"{reference.fault}\n{source}"
    for squeeze in hws:
        check_image(image, reference, launch, geometry, squeeze, source)
    return int(reference.thread_instructions.sum())


#: The three geometries (W, L) every program runs at: one pass (W = L), two and four passes.
GEOMETRY_SET = ((4, 4), (8, 4), (16, 4))
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
