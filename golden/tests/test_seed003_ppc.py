"""Seed 003 (dual-path stack with paired-path comparison): the next-PC algorithm of Fig 4/5 on
the unstructured loop with break (seed 002 Fig 10), step by step in implicit and explicit mode,
and the same loop on the SM: implicit PPC reconverges early and drops the hint instructions."""

from __future__ import annotations

import pytest

from reconverge.golden.asm import assemble
from reconverge.golden.blocks.divergence import NEVER, Executed
from reconverge.golden.blocks.dual_path_stack import DualPathStack
from reconverge.golden.config import SMConfig
from reconverge.golden.functional import LaunchConfig, run
from reconverge.golden.geometry import Geometry
from reconverge.golden.policies import Policy
from reconverge.golden.sm.run import run_sm
from reconverge.golden.tests.test_seed002_multipath import loop_with_break

# Layout of the loop: A (two instructions, then the cond1 branch to B), C (one instruction,
# then the loop branch back to A), B (the break path, three instructions), D.
A, A_BR = 0x100, 0x108
C, C_BR = 0x10C, 0x110
B, D = 0x114, 0x120


def state(unit: DualPathStack) -> list[list[tuple[int, int]]]:
    """Stack entries bottom to top, each as its paths' (PC, mask)."""
    return [[(p.pc, p.mask) for p in e.paths] for e in unit.entries]


def running(unit: DualPathStack) -> tuple[int, int]:
    (split,) = unit.splits()
    return split.pc, split.mask


def step(unit: DualPathStack, targets: dict[int, int], *, control: bool, rpc: int | None) -> None:
    (split,) = unit.splits()
    unit.execute(Executed(split.sid, split.pc, split.mask, targets, control=control, rpc=rpc))


def straight(unit: DualPathStack, n: int) -> None:
    for _ in range(n):
        pc, mask = running(unit)
        step(unit, {pc + 4: mask}, control=False, rpc=None)


def test_fig4_implicit_reconverges_where_the_paths_meet() -> None:
    """Threads 1, 3 break in the first iteration, 0, 2 in the second. Implicit PPC compares the
    two path PCs after every instruction: the smaller one runs (Fig 4 lines 10-15), and when
    the looping path arrives at B, where the breaking path waits, the PCs are equal: the entry
    is deleted and the parent path continues at B with every thread (lines 2-7)."""
    unit = DualPathStack(4, 0b1111, A, depth=8, paired=True, implicit=True)
    straight(unit, 2)
    step(unit, {C: 0b0101, B: 0b1010}, control=True, rpc=None)  # Fig 5 line 4: push
    assert state(unit) == [[(NEVER, 0b1111)], [(C, 0b0101), (B, 0b1010)]]
    assert running(unit) == (C, 0b0101)  # C < B
    straight(unit, 1)
    step(unit, {A: 0b0101}, control=True, rpc=None)  # loop back: A < B, C path keeps running
    assert running(unit) == (A, 0b0101)
    straight(unit, 2)
    step(unit, {B: 0b0101}, control=True, rpc=None)  # cond1 for threads 0, 2: PCs equal
    assert state(unit) == [[(B, 0b1111)]]
    assert running(unit) == (B, 0b1111)


def test_fig4_explicit_compares_only_at_the_reconvergence_point() -> None:
    """With the RPC from the hint (D), the running path keeps running until it reaches D; the
    paths meeting at B go unnoticed and B runs once per path."""
    unit = DualPathStack(4, 0b1111, A, depth=8, paired=True, implicit=False)
    straight(unit, 2)
    step(unit, {C: 0b0101, B: 0b1010}, control=True, rpc=D)
    assert running(unit) == (C, 0b0101)
    straight(unit, 1)
    step(unit, {A: 0b0101}, control=True, rpc=D)
    straight(unit, 2)
    step(unit, {B: 0b0101}, control=True, rpc=D)  # same PC as the other path: no comparison
    assert state(unit) == [[(D, 0b1111)], [(B, 0b0101), (B, 0b1010)]]
    assert running(unit) == (B, 0b0101)
    straight(unit, 3)  # reaches D: the other path runs B
    assert running(unit) == (B, 0b1010)
    straight(unit, 3)  # both at D: the entry is popped
    assert state(unit) == [[(D, 0b1111)]]
    assert running(unit) == (D, 0b1111)


def test_dual_path_stack_interleaves_both_paths() -> None:
    """DPS (no paired comparison) offers both paths of the top entry to the scheduler."""
    unit = DualPathStack(4, 0b1111, A, depth=8)
    step(unit, {C: 0b0101, B: 0b1010}, control=True, rpc=D)
    assert [(s.pc, s.mask) for s in unit.splits()] == [(C, 0b0101), (B, 0b1010)]


@pytest.mark.parametrize("warp_size", [4, 8, 32])
def test_implicit_ppc_on_the_sm_drops_hints_and_reconverges_early(warp_size: int) -> None:
    """Seed 003 Sec IV: on unstructured control flow the implicit scheme (no hints) executes
    fewer instructions (no hint instructions, and B once for threads that meet there) and has
    a higher activity factor (SIMD efficiency) than the explicit one; results are equal."""
    geometry = Geometry(warp_size=warp_size, simd_width=4, warps=2)
    launch = LaunchConfig(grid=1, block=4, geometry=geometry)
    with_hints = assemble(loop_with_break(hints=True), "loop.S")
    without = assemble(loop_with_break(hints=False), "loop.S")
    reference = run(without, launch).exit_codes.tolist()
    explicit = run_sm(with_hints, launch, SMConfig(policy=Policy.PPC, hints=True))
    implicit = run_sm(without, launch, SMConfig(policy=Policy.PPC, hints=False))
    for result in (explicit, implicit):
        assert result.fault is None
        assert result.exit_codes.tolist() == reference
    e, i = explicit.metrics, implicit.metrics
    assert e is not None and i is not None
    assert e.counters.hint_instructions > 0 == i.counters.hint_instructions
    assert i.counters.thread_instructions < e.counters.thread_instructions
    assert i.counters.warp_instructions < e.counters.warp_instructions
    assert i.simd_efficiency > e.simd_efficiency
