"""The functional SIMT model: launch state, grids of blocks and warps, barriers, shared memory
per block, min(SP:PC) reconvergence, and every fault a run reports (with its exact message)."""

from __future__ import annotations

import numpy as np
import pytest

from reconverge.golden.asm import assemble
from reconverge.golden.functional import LaunchConfig, RunResult, run
from reconverge.golden.geometry import Geometry
from reconverge.golden.memmap import GLOBAL_BASE, LOCAL_TOP, MemoryMap

EXIT = "li a7, 93\n ecall\n"


def launch(source: str, *, grid: int = 1, block: int = 4, warp: int = 4, **kw: object) -> RunResult:
    geometry = Geometry(warp_size=warp, simd_width=min(4, warp))
    config = LaunchConfig(grid=grid, block=block, geometry=geometry, **kw)  # type: ignore[arg-type]
    return run(assemble(source, "prog.S"), config)


def words(result: RunResult, image_source: str, symbol: str, n: int) -> list[int]:
    image = assemble(image_source, "prog.S")
    return result.memory.read_words(image.symbols[symbol], n).tolist()


# ----------------------------------------------------------------------------------------------
# Launch state


def test_initial_registers_args_sp_gp() -> None:
    source = f"""
_start:
    csrr t0, tid
    slli t0, t0, 4
    la   t1, out
    add  t1, t1, t0
    sw   a0, 0(t1)
    sw   a7, 4(t1)
    sw   sp, 8(t1)
    sw   gp, 12(t1)
    li   a0, 0
    {EXIT}
    .data
    .globl __global_pointer$
__global_pointer$:
out: .space 64
"""
    result = launch(source, args=(7, 0, 0, 0, 0, 0, 0, 0x1_2345_6789))
    assert result.fault is None
    gp = assemble(source, "prog.S").symbols["__global_pointer$"]
    assert words(result, source, "out", 16) == [7, 0x2345_6789, LOCAL_TOP, gp] * 4


def test_launch_config_rejects_bad_values() -> None:
    with pytest.raises(ValueError, match="grid and block must be positive"):
        LaunchConfig(grid=0, block=1)
    with pytest.raises(ValueError, match="at most 8 arguments"):
        LaunchConfig(grid=1, block=1, args=tuple(range(9)))
    with pytest.raises(ValueError, match="step limit must be positive"):
        LaunchConfig(grid=1, block=1, step_limit=0)


@pytest.mark.parametrize(("block", "warp"), [(5, 4), (3, 1), (40, 32)])
def test_partial_last_warp_runs_only_its_threads(block: int, warp: int) -> None:
    source = f"""
_start:
    la   t0, counter
    li   t1, 1
    amoadd.w zero, t1, (t0)
    csrr a0, tid
    {EXIT}
    .data
counter: .word 0
"""
    result = launch(source, grid=2, block=block, warp=warp)
    assert result.fault is None
    assert words(result, source, "counter", 1) == [2 * block]
    assert result.exit_codes.tolist() == [list(range(block))] * 2
    assert result.thread_instructions.tolist() == [[7] * block] * 2  # la is 2 instructions


def test_shared_memory_is_per_block_and_local_memory_per_thread() -> None:
    """Every thread adds 1 to shared word 0 and to its local word; block b's threads then
    read shared word 0 (= block size, not grid x block) and local word 0 (= 1)."""
    source = f"""
_start:
    li   t0, 0x40000000
    li   t1, 1
    amoadd.w zero, t1, (t0)
    lw   t2, -4(sp)
    addi t2, t2, 1
    sw   t2, -4(sp)
    bar
    lw   a0, 0(t0)
    lw   t3, -4(sp)
    slli t3, t3, 8
    or   a0, a0, t3
    {EXIT}
"""
    result = launch(source, grid=3, block=6, warp=4)
    assert result.fault is None
    assert result.exit_codes.tolist() == [[6 | 1 << 8] * 6] * 3


# ----------------------------------------------------------------------------------------------
# Reconvergence and counting


def test_min_sp_pc_reconverges_an_if_else() -> None:
    """Seed 000 Table 2 shape: 4 threads, T0/T1 take B, T2/T3 take C, all meet at D. Warp
    instructions: A, br, B, j, C, D (+ exit) = each issued once, with the masks of the table."""
    source = f"""
_start:
    csrr t0, tid          # A
    srli t1, t0, 1
    bnez t1, C            # threads 2, 3 go to C
B:  addi a0, zero, 1
    j    D
C:  addi a0, zero, 2
D:  {EXIT}
"""
    result = launch(source, block=4, warp=4)
    assert result.fault is None
    assert result.exit_codes.tolist() == [[1, 1, 2, 2]]
    # csrr, srli, bnez, B:addi, j, C:addi, li, ecall: 8 warp instructions.
    assert result.warp_instructions == 8
    assert result.thread_instructions.tolist() == [[7, 7, 6, 6]]


def test_recursion_per_thread_stack() -> None:
    """fact(tid + 1) by recursion on each thread's private stack."""
    source = f"""
_start:
    csrr a0, tid
    addi a0, a0, 1
    call fact
    {EXIT}
fact:
    addi sp, sp, -8
    sw   ra, 4(sp)
    sw   a0, 0(sp)
    li   t0, 1
    ble  a0, t0, 1f
    addi a0, a0, -1
    call fact
    lw   t1, 0(sp)
    mul  a0, a0, t1
    j    2f
1:  li   a0, 1
2:  lw   ra, 4(sp)
    addi sp, sp, 8
    ret
"""
    result = launch(source, block=8, warp=8)
    assert result.fault is None
    assert result.exit_codes.tolist() == [[1, 2, 6, 24, 120, 720, 5040, 40320]]


def test_barrier_orders_shared_memory_across_warps() -> None:
    """Thread t writes shared[t], waits, then reads shared[(t + 1) mod B]: only correct if
    the barrier holds every warp until all have written."""
    source = f"""
_start:
    csrr t0, tid
    csrr t1, ntid
    li   t2, 0x40000000
    slli t3, t0, 2
    add  t3, t3, t2
    addi t4, t0, 100
    sw   t4, 0(t3)
    bar
    addi t0, t0, 1
    remu t0, t0, t1
    slli t0, t0, 2
    add  t0, t0, t2
    lw   a0, 0(t0)
    {EXIT}
"""
    result = launch(source, grid=2, block=10, warp=4)
    assert result.fault is None
    assert result.exit_codes.tolist() == [[100 + (t + 1) % 10 for t in range(10)]] * 2


# ----------------------------------------------------------------------------------------------
# Faults, each with its message


def test_barrier_with_exited_threads_is_a_deadlock() -> None:
    source = f"""
_start:
    csrr t0, tid
    li   a0, 0
    beqz t0, done
    bar
done:
    {EXIT}
"""
    result = launch(source, block=4, warp=2)
    fault = result.fault
    assert fault is not None and fault.kind == "barrier deadlock"
    bar_pc = GLOBAL_BASE + 12
    assert str(fault) == (
        f"barrier deadlock at pc {bar_pc:#010x} (block 0): threads 1-3 wait at bar "
        f"{bar_pc:#010x}; thread 0 exited and can never arrive"
    )
    assert result.exited.tolist() == [[True, False, False, False]]


def test_threads_at_different_barriers_deadlock() -> None:
    source = f"""
_start:
    csrr t0, tid
    andi t0, t0, 1
    beqz t0, even
    bar
    j    done
even:
    bar
done:
    li   a0, 0
    {EXIT}
"""
    result = launch(source, block=4, warp=4)
    assert result.fault is not None
    assert str(result.fault) == (
        "barrier deadlock (block 0): threads 1, 3 wait at bar 0x8000000c; threads 0, 2 wait "
        "at bar 0x80000014; all threads of a block must meet at the same bar"
    )


def test_step_limit_names_the_running_warps() -> None:
    source = "_start:\n  csrr t0, warpid\n  bnez t0, _start\nspin:\n  j spin\n"
    result = launch(source, block=8, warp=4, step_limit=50)
    assert result.fault is not None and result.fault.kind == "step limit"
    assert str(result.fault) == (
        "step limit (block 0): no completion within 50 warp instructions; still running: "
        "warp 0 at pc 0x80000008; warp 1 at pc 0x80000004"
    )
    assert result.warp_instructions == 50


def test_illegal_instruction_names_block_thread_pc() -> None:
    source = f"""
_start:
    csrr t0, ctaid
    beqz t0, ok
    .word 0xffffffff
ok: li a0, 0
    {EXIT}
"""
    result = launch(source, grid=2, block=3, warp=4)
    assert result.fault is not None
    assert str(result.fault) == (
        "illegal instruction at pc 0x80000008 (block 1, thread 0): .word 0xffffffff — "
        "no instruction has this encoding"
    )
    assert result.exit_codes.tolist()[0] == [0, 0, 0]  # block 0 completed before


def test_csr_write_is_illegal_with_disassembly() -> None:
    result = launch("_start:\n  csrw tid, a0\n", block=1, warp=1)
    assert result.fault is not None
    assert str(result.fault) == (
        "illegal instruction at pc 0x80000000 (block 0, thread 0): csrw    tid, a0 — "
        "writes read-only CSR 0xcc0 (thread index)"
    )


def test_unmapped_load_names_the_faulting_thread() -> None:
    source = "_start:\n  csrr t0, tid\n  slli t0, t0, 28\n  lw a0, 0(t0)\n"
    result = launch(source, block=4, warp=4)
    assert result.fault is not None
    # Thread 0 reads address 0 (unmapped): the first offending lane is named.
    assert str(result.fault).startswith(
        "unmapped load at pc 0x80000008 (block 0, thread 0): lw      a0, 0(t0) — "
        "address 0x00000000 is in no memory window"
    )


def test_fetch_outside_global_memory() -> None:
    memmap = MemoryMap(global_size=4096)
    result = launch("_start:\n  li t0, 0x80001000\n  jr t0\n", block=1, warp=1, memmap=memmap)
    assert result.fault is not None
    assert str(result.fault) == (
        "instruction fetch fault at pc 0x80001000 (block 0, thread 0): pc 0x80001000 is "
        "outside global memory 0x80000000-0x80000fff"
    )


def test_unknown_syscall() -> None:
    result = launch("_start:\n  li a7, 64\n  ecall\n", block=2, warp=2)
    assert result.fault is not None
    assert str(result.fault) == (
        "unsupported syscall at pc 0x80000004 (block 0, thread 0): ecall — ecall with "
        "a7 = 64 (only a7 = 93, exit, exists)"
    )


def test_fault_keeps_partial_results() -> None:
    result = launch("_start:\n  li a0, 3\n  lw a1, 0(zero)\n", block=2, warp=2)
    assert result.fault is not None
    assert not result.exited.any()
    assert np.all(result.thread_instructions == 1)
    with pytest.raises(type(result.fault)):
        result.check()
