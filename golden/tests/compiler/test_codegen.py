"""Generated code: reconvergence hints exactly before the branches the analysis does not prove
uniform, naming their immediate postdominator; layout; frames and the shared spill area."""

from __future__ import annotations

import pytest

from reconverge.golden.compiler import compile_kernel, regalloc
from reconverge.golden.isa import decode
from reconverge.kernels import avg_square, cond_call, recursion, suite


def word_at(program, pc: int) -> int:
    for seg in program.image.segments:
        if seg.vaddr <= pc < seg.vaddr + len(seg.data):
            return int.from_bytes(seg.data[pc - seg.vaddr : pc - seg.vaddr + 4], "little")
    raise AssertionError(f"no code at {pc:#x}")


def test_avg_square_hints_the_divergent_if_but_not_the_uniform_loop() -> None:
    program = compile_kernel(avg_square.avgSquare, "linear", 16)
    outer, loop = program.branches
    assert (outer.uniform, outer.hinted) == (False, True)
    assert (loop.uniform, loop.hinted) == (True, False)
    # The hint names the if's immediate postdominator, the block after it.
    assert outer.reconverge == program.image.symbols["avgSquare.b3"]
    assert "rhint avgSquare.b3" in program.asm


@pytest.mark.parametrize("name", list(suite()))
def test_a_hint_precedes_exactly_the_branches_not_proven_uniform(name: str) -> None:
    program = compile_kernel(suite()[name].kernel, "affine", 8)
    assert program.branches
    for b in program.branches:
        before = decode(word_at(program, b.pc - 4))
        branch = decode(word_at(program, b.pc))
        assert branch.name in ("beq", "bne", "blt", "bge", "bltu", "bgeu")
        assert (before.name == "rhint") == b.hinted == (not b.uniform)
        if b.hinted:
            assert b.pc - 4 + before.imm == b.reconverge


def test_device_function_follows_the_kernel_as_in_listing_1() -> None:
    """Seed 000 Listing 1: the called function lies at higher addresses than the call site."""
    program = compile_kernel(cond_call.condCall, "linear", 16)
    symbols = program.image.symbols
    assert symbols["_start"] == symbols["condCall"] < symbols["work"]
    assert "jal ra, work" in program.asm


def test_recursion_uses_the_stack_and_only_local_spills() -> None:
    program = compile_kernel(recursion.recursion, "affine", 3)
    assert program.stack_bytes is None  # unbounded: recursive
    assert program.frames["fib"] > 0
    for fname in ("fib", "is_even", "is_odd"):
        kinds = {p.kind for p in program.allocations[fname].spilled.values()}
        assert not kinds & {regalloc.SHARED, regalloc.SHARED_AFFINE}, fname


def test_shared_spill_area_follows_user_shared_arrays() -> None:
    from reconverge.kernels import bfs

    program = compile_kernel(bfs.bfs, "affine", 3)
    assert program.shared_user_bytes == 4
    assert program.shared_spill_base == 0x4000_0010
    assert program.shared_spill_per_warp > 0
    assert "csrr t0, warpid" in program.asm  # the prologue points gp at the warp's slice
    linear = compile_kernel(bfs.bfs, "linear", 3)
    assert linear.shared_spill_per_warp == 0 and "gp" not in linear.asm


def test_launch_rejects_shared_memory_overflow() -> None:
    from reconverge.golden.compiler.errors import CompileError
    from reconverge.golden.geometry import Geometry
    from reconverge.golden.memmap import MemoryMap

    program = compile_kernel(avg_square.avgSquare, "affine", 3)
    case = avg_square.SPEC.case()
    launch = program.bind(**case.args)
    with pytest.raises(CompileError, match="bytes of shared memory per block"):
        launch.config(1, 64, geometry=Geometry(1, 1), memmap=MemoryMap(shared_size=16))
