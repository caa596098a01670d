"""The cycle-level SM beyond the seed figures: faults with their messages (a barrier under SPS
while diverged, stack and reconvergence-table overflow, the watchdog, a block too big for the
SM), the split-table capacity, hint/IPDOM agreement, coalescing and bank conflicts, the
schedulers, block dispatch and the run/compare commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from reconverge.golden.asm import assemble
from reconverge.golden.blocks.divergence import Executed
from reconverge.golden.blocks.split_tables import SplitTables
from reconverge.golden.config import Latencies, Scheduler, SMConfig
from reconverge.golden.functional import LaunchConfig, run
from reconverge.golden.geometry import Geometry
from reconverge.golden.memmap import GLOBAL_BASE
from reconverge.golden.policies import Policy, WarpFormation
from reconverge.golden.semantics import MemAccess
from reconverge.golden.sm.lsu import access_cost
from reconverge.golden.sm.program import HintMismatch, Program
from reconverge.golden.sm.run import run_sm

W4 = Geometry(warp_size=4, simd_width=4, warps=4)
EXIT = "li a7, 93\n    ecall\n"


def launch(block: int = 4, grid: int = 1, geometry: Geometry = W4, **kw: object) -> LaunchConfig:
    return LaunchConfig(grid=grid, block=block, geometry=geometry, **kw)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------------------
# Faults

DIVERGENT_BARRIER = f"""
# The odd threads go straight to the barrier at A; the even ones go through B to the same
# barrier. The branch's IPDOM is C (B could skip A), so both reach the barrier diverged.
_start:
    csrr t0, tid
    andi t1, t0, 1
    li   t2, 7
    rhint C
    beqz t1, B
A:  bar
    j    C
B:  beq  t0, t2, C        # never taken for these four threads
    j    A
C:  li   a0, 0
    {EXIT}
"""


def test_barrier_reached_while_diverged_deadlocks_sps_not_mp() -> None:
    """Seed 002 Sec 3.3.3: under SPS the top split (the odd threads) waits at the barrier and
    the even ones, below it in the stack, can never get there; MP runs the even split to the
    same barrier, which then completes."""
    image = assemble(DIVERGENT_BARRIER, "bar.S")
    sps = run_sm(image, launch(), SMConfig(policy=Policy.SPS))
    bar = image.symbols["A"]
    assert sps.fault is not None and sps.fault.kind == "barrier deadlock"
    assert str(sps.fault) == (
        f"barrier deadlock at pc {bar:#010x} (block 0): threads 1, 3 wait at bar {bar:#010x}; "
        "threads 0, 2 are held back by the sps divergence unit and can never arrive (a "
        "barrier reached while the warp is diverged, seed 002 Sec 3.3.3)"
    )
    for policy in (Policy.MP, Policy.MP_OREC, Policy.STACKLESS, Policy.DPS):
        result = run_sm(image, launch(), SMConfig(policy=policy))
        assert result.fault is None, f"{policy}: {result.fault}"
        assert result.exit_codes.tolist() == run(image, launch()).exit_codes.tolist()


NESTED = f"""
_start:
    csrr t0, tid
    li   t2, 0
    li   t3, 4
loop:                     # thread t diverges from the others at iteration t
    rhint done
    beq  t2, t0, done
    addi t2, t2, 1
    rhint next
    blt  t2, t3, next
next:
    j    loop
done:
    li   a0, 0
    {EXIT}
"""


def test_sps_stack_overflow_is_a_fault() -> None:
    """Nested divergence needs more entries than a depth-2 stack has."""
    deep = """
_start:
    csrr t0, tid
    andi t1, t0, 1
    rhint j1
    beqz t1, j1
    andi t1, t0, 2
    rhint j2
    beqz t1, j2
    nop
j2: nop
j1: li a0, 0
    li a7, 93
    ecall
"""
    image = assemble(deep, "deep.S")
    geometry = Geometry(warp_size=4, simd_width=4, warps=1, stack_depth=2)
    result = run_sm(image, launch(geometry=geometry), SMConfig(policy=Policy.SPS))
    assert result.fault is not None and result.fault.kind == "table overflow"
    assert str(result.fault) == (
        "table overflow at pc 0x80000018 (block 0, thread 1): beqz    t1, 0x80000020 — SPS "
        "stack overflow: the divergent branch at pc 0x80000018 needs more than 2 entries"
    )
    assert run_sm(image, launch(), SMConfig(policy=Policy.SPS)).fault is None


def test_reconvergence_table_overflow_is_a_fault() -> None:
    unit = SplitTables(4, 0b1111, 0x100, st_size=4, rt_size=1)
    unit.execute(
        Executed(0, 0x100, 0b1111, {0x200: 0b0011, 0x300: 0b1100}, control=True, rpc=0x500)
    )
    with pytest.raises(Exception, match="reconvergence table overflow: the branch or call at pc"):
        unit.execute(
            Executed(0, 0x200, 0b0011, {0x210: 0b0001, 0x220: 0b0010}, control=True, rpc=0x400)
        )


def test_full_split_table_makes_new_splits_wait() -> None:
    """Seed 002 Sec 5: with one ST entry the two sides of a branch run one after the other;
    the second waits until the first reconverges (and the results do not change)."""
    unit = SplitTables(4, 0b1111, 0x100, st_size=1, rt_size=4)
    unit.execute(
        Executed(0, 0x100, 0b1111, {0x200: 0b0011, 0x300: 0b1100}, control=True, rpc=0x400)
    )
    assert [(s.pc, s.mask) for s in unit.splits()] == [(0x200, 0b0011)]
    assert unit.occupancy() == {"st": 2, "rt": 1}  # one entry and one waiting split
    unit.execute(Executed(0, 0x200, 0b0011, {0x400: 0b0011}, control=True))
    assert [(s.pc, s.mask) for s in unit.splits()] == [(0x300, 0b1100)]
    unit.execute(Executed(0, 0x300, 0b1100, {0x400: 0b1100}, control=True))
    assert [(s.pc, s.mask) for s in unit.splits()] == [(0x400, 0b1111)]

    image = assemble(NESTED, "nested.S")
    narrow = Geometry(warp_size=4, simd_width=4, warps=1, split_table=1)
    result = run_sm(image, launch(geometry=narrow), SMConfig(policy=Policy.MP))
    assert result.fault is None
    assert result.exit_codes.tolist() == run(image, launch()).exit_codes.tolist()
    assert result.metrics is not None and result.metrics.splits_per_warp == 1.0


def test_watchdog_names_the_running_splits() -> None:
    image = assemble("_start:\n  j _start\n", "spin.S")
    result = run_sm(image, launch(block=1), SMConfig(max_cycles=100))
    assert result.fault is not None and result.fault.kind == "step limit"
    assert str(result.fault) == (
        "step limit: watchdog: no completion within 100 cycles; still running: warp 0 at 0x80000000"
    )


@pytest.mark.parametrize("formation", list(WarpFormation))
def test_a_run_stopped_at_the_step_limit_counts_its_cycles(formation: WarpFormation) -> None:
    """Issue 26: a one-instruction loop (no destination register, so no write-back) stopped at
    the step limit took the cycles of its issues, not 0 (nor fewer than its idle cycles)."""
    image = assemble("_start:\n  j _start\n", "spin.S")
    wide = Geometry(warp_size=8, simd_width=4, warps=1)
    config = SMConfig(warp_formation=formation)
    result = run_sm(image, launch(block=8, geometry=wide, step_limit=100), config, trace=True)
    assert result.fault is not None and result.fault.kind == "step limit"
    assert result.metrics is not None and len(result.trace) == 100
    last = result.trace[-1]
    assert result.metrics.cycles == last.cycle + last.passes > 0
    assert result.metrics.cycles >= result.metrics.idle_cycles


def test_block_larger_than_the_sm_is_an_error() -> None:
    image = assemble(f"_start:\n  {EXIT}", "x.S")
    with pytest.raises(ValueError, match="a block of 20 threads needs 5 warps of 4, more than"):
        run_sm(image, launch(block=20), SMConfig())


def test_hint_that_disagrees_with_the_ipdom_is_rejected() -> None:
    source = """
_start:
    csrr t0, tid
    rhint wrong
    beqz t0, join
    nop
wrong:
    nop
join:
    li a7, 93
    ecall
"""
    with pytest.raises(HintMismatch) as info:
        Program(assemble(source, "bad.S"))
    assert str(info.value) == (
        "bad.S: rhint at 0x80000004 names 0x80000010 as the reconvergence PC of the branch at "
        "0x80000008, but its immediate postdominator is 0x80000014"
    )
    fixed = Program(assemble(source.replace("rhint wrong", "rhint join"), "ok.S"))
    assert fixed.rpc(GLOBAL_BASE + 8) == GLOBAL_BASE + 0x14


JUMP_TABLE_IN_ELSE = f"""
# The else side of the branch is a jump table whose cases end at its join; the binary does not
# say where jr goes, the hint does. The branch reconverges at join (then its threads meet at the
# barrier together), not at the end of the kernel.
_start:
    csrr t0, tid
    andi t1, t0, 1
    bnez t1, other
    addi t0, t0, 1
    j    join
other:
    la   t1, table
    lw   t1, 0(t1)
    rhint join
    jr   t1
case:
    addi t0, t0, 2
    j    join
join:
    bar
    andi a0, t0, 255
    {EXIT}
    .data
table:
    .word case
"""


def test_a_branch_around_a_jump_table_reconverges_at_the_hinted_join() -> None:
    """Found by the random programs (a barrier deadlock under sps): without its hinted join as
    successor, ``jr`` ended the control-flow graph and the branch's IPDOM was the exit."""
    image = assemble(JUMP_TABLE_IN_ELSE, "jt.S")
    code = Program(image)
    branch, join = (GLOBAL_BASE + 8, image.symbols["join"])
    assert code.rpc(branch) == join
    result = run_sm(image, launch(), SMConfig(policy=Policy.SPS))
    assert result.fault is None, result.fault
    assert result.exit_codes.tolist() == [[1, 3, 3, 5]]


# ----------------------------------------------------------------------------------------------
# Memory


def cost(addrs: list[int], kind: str = "load", size: int = 4) -> tuple[int, int, int]:
    c = access_cost(
        MemAccess(kind, np.array(addrs, np.uint32), size),
        np.arange(len(addrs)),
        LaunchConfig(grid=1, block=1).memmap,
        warp_size=len(addrs),
        line_bytes=64,
        banks=32,
    )
    return c.transactions, c.shared_cycles, c.bank_conflicts


def test_coalescing_counts_distinct_lines() -> None:
    base = GLOBAL_BASE + 0x1000
    assert cost([base + 4 * i for i in range(16)]) == (1, 0, 0)  # one 64-byte line
    assert cost([base + 4 * i for i in range(32)]) == (2, 0, 0)
    assert cost([base + 64 * i for i in range(8)]) == (8, 0, 0)  # stride of a line
    assert cost([base] * 8) == (1, 0, 0)  # broadcast
    assert cost([base] * 8, kind="amo") == (8, 0, 0)  # same-word AMOs serialise


def test_shared_bank_conflicts() -> None:
    shared = 0x4000_0000
    assert cost([shared + 4 * i for i in range(32)]) == (0, 1, 0)
    assert cost([shared + 128 * i for i in range(4)]) == (0, 4, 3)  # one bank, four words
    assert cost([shared] * 8) == (0, 1, 0)  # one word: broadcast


def test_local_memory_is_interleaved_per_lane() -> None:
    """All lanes reading their own copy of one local word touch consecutive physical words."""
    memmap = LaunchConfig(grid=1, block=1).memmap
    word = memmap.local_base + 64
    assert cost([word] * 16) == (1, 0, 0)
    assert cost([word] * 32) == (2, 0, 0)


STRIDED = f"""
_start:
    csrr t0, tid
    slli t1, t0, {{shift}}
    la   t2, data
    add  t1, t1, t2
    lw   a0, 0(t1)
    li   a0, 0
    {EXIT}
    .data
    .balign 64
data: .space 4096
"""


def test_strided_loads_cost_transactions_and_cycles() -> None:
    results = {}
    for shift in (2, 6):  # consecutive words, one line apart
        image = assemble(STRIDED.format(shift=shift), "strided.S")
        geometry = Geometry(warp_size=16, simd_width=4, warps=1)
        result = run_sm(image, launch(block=16, geometry=geometry), SMConfig())
        assert result.fault is None and result.metrics is not None
        results[shift] = result.metrics
    assert results[2].counters.memory_transactions == 1
    assert results[6].counters.memory_transactions == 16
    assert results[6].cycles - results[2].cycles == 15


# ----------------------------------------------------------------------------------------------
# Scheduling and dispatch

TWO_WARPS = f"""
_start:
    csrr t0, warpid
    addi t1, t0, 1
    addi t1, t1, 1
    li   a0, 0
    {EXIT}
"""


def test_gto_keeps_issuing_one_warp_and_lrr_alternates() -> None:
    image = assemble(TWO_WARPS, "two.S")
    geometry = Geometry(warp_size=4, simd_width=4, warps=2)
    latencies = Latencies(alu=1, branch=1)
    orders = {}
    for scheduler in Scheduler:
        config = SMConfig(scheduler=scheduler, latencies=latencies)
        result = run_sm(image, launch(block=8, geometry=geometry), config, trace=True)
        assert result.fault is None
        orders[scheduler] = [r.warp for r in result.trace]
    assert orders[Scheduler.GTO] == [0] * 6 + [1] * 6
    assert orders[Scheduler.LRR] == [0, 1] * 6


def test_blocks_wait_for_free_warp_slots() -> None:
    """Two warp slots, blocks of two warps: block 1 starts only after block 0 retired."""
    image = assemble(TWO_WARPS, "two.S")
    geometry = Geometry(warp_size=4, simd_width=4, warps=2)
    result = run_sm(image, launch(block=8, grid=3, geometry=geometry), SMConfig(), trace=True)
    assert result.fault is None
    first = {b: min(r.cycle for r in result.trace if r.warp // 2 == b) for b in range(3)}
    last = {b: max(r.cycle for r in result.trace if r.warp // 2 == b) for b in range(3)}
    assert first[1] > last[0] and first[2] > last[1]


# ----------------------------------------------------------------------------------------------
# Commands

RECONVERGE = str(Path(sys.executable).with_name("reconverge"))
DEMO = Path(__file__).resolve().parents[2] / "kernels" / "divergent_demo.S"


def reconverge(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([RECONVERGE, *args], capture_output=True, text=True, timeout=300)


def test_run_command_json_trace_and_plot(tmp_path: Path) -> None:
    trace, plot = tmp_path / "t.jsonl", tmp_path / "p.png"
    args = ["--grid", "2", "--block", "16", "--warp-size", "8", "--simd-width", "4"]
    proc = reconverge("run", str(DEMO), "--policy", "mp", *args, "--json", "--trace", str(trace),
                      "--plot", str(plot))  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["policy"] == "mp" and report["ok"]
    assert report["geometry"]["simd_width"] == 4
    warps = report["metrics"]["warps"]
    assert [w["warp"] for w in warps] == [0, 1, 2, 3]  # two blocks of two warps of 8
    for key in ("warp_instructions", "thread_instructions", "issue_passes", "hint_instructions"):
        assert sum(w[key] for w in warps) == report["metrics"][key]
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    assert len(records) == report["metrics"]["warp_instructions"]
    assert set(records[0]) == {"cycle", "warp", "split", "pc", "mask", "passes"}
    assert sum(bin(r["mask"]).count("1") for r in records) == report["thread_instructions"]
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_compare_command_agrees_across_policies() -> None:
    proc = reconverge("compare", str(DEMO), "--grid", "2", "--block", "16", "--warp-size", "8",
                      "--hws", "both", "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert len(rows) == 2 * 9
    assert all(r["same_results"] and r["ok"] for r in rows)
    assert {r["label"] for r in rows} >= {"sps", "mp-orec +hws", "ppc-implicit"}
    proc = reconverge("compare", str(DEMO), "--policies", "sps,bogus")
    assert proc.returncode == 2 and "unknown policy 'bogus'" in proc.stderr
    assert "en-dwf" in proc.stderr


SPILLY = f"""
_start:
    li   t0, 3
loop:
    sw   t0, -4(sp)       # (marked as spill store)
    lw   t1, -4(sp)       # (marked as spill load)
    addi t0, t0, -1
    bnez t0, loop
    li   a0, 0
    {EXIT}
"""


def test_spill_metrics_count_the_marked_instructions_and_survive_elf() -> None:
    from dataclasses import replace as with_fields

    from reconverge.golden.elf import read_elf, write_elf

    image = assemble(SPILLY, "spilly.S")
    loop = image.symbols["loop"]
    image = with_fields(image, spills={loop: "store", loop + 4: "load"})
    assert read_elf(write_elf(image), "x.elf").spills == image.spills
    result = run_sm(image, launch(block=4), SMConfig())
    assert result.metrics is not None
    assert (result.metrics.counters.spill_stores, result.metrics.counters.spill_loads) == (3, 3)


def test_run_command_on_a_suite_kernel_checks_the_oracle() -> None:
    proc = reconverge("run", "loopBreak", "--policy", "ppc", "--no-hints", "--warp-size", "8",
                      "--json")  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    assert report["oracle_mismatches"] == []
    assert report["metrics"]["hint_instructions"] == 0  # the hint-free code for implicit PPC
    proc = reconverge("run", "loopBreak", "--grid", "2")
    assert proc.returncode == 2
    assert "a kernel runs with its suite case's grid, block and inputs" in proc.stderr
    proc = reconverge("run", "noSuchKernel")
    assert proc.returncode == 2 and "nor a suite kernel" in proc.stderr
