"""Seed 000 (stack-less SIMT reconvergence): Table 2 step by step, the min(SP:PC) order with a
conditional call (Listing 1), and the local-increment optimisation of Sec 4.1."""

from __future__ import annotations

import numpy as np

from reconverge.golden.asm import assemble
from reconverge.golden.blocks.divergence import DivergenceUnit
from reconverge.golden.blocks.stackless import StacklessControl
from reconverge.golden.config import Latencies, SMConfig
from reconverge.golden.functional import LaunchConfig
from reconverge.golden.geometry import Geometry
from reconverge.golden.memmap import GLOBAL_BASE
from reconverge.golden.policies import Policy
from reconverge.golden.sm.core import IssueRecord
from reconverge.golden.sm.run import run_sm

# The if-then-else of Fig 1 with the jumps of Table 2. Instruction k of the table (1-based) is
# at GLOBAL_BASE + 4k; the csrr before it gives each thread its index. T0, T1 run B; T2, T3 C.
TABLE2_PROGRAM = """
_start:
    csrr t0, tid          # (before the table)
    srli t1, t0, 1        # 1  A        c = tid < 2
    bnez t1, C            # 2  if (!c) br 5
    addi a0, zero, 1      # 3  B
    j    D                # 4  br 6
C:  addi a0, zero, 2      # 5  C
D:  li   a7, 93           # 6  D
    ecall                 # 7
"""

#: Table 2: (common PC, PC_i of T0..T3, NPC_i of T0..T3), PCs as table indices.
TABLE2 = [
    (1, "1111", "2222"),
    (2, "2222", "3355"),
    (3, "3355", "4455"),
    (4, "4455", "6655"),
    (5, "6655", "6666"),
    (6, "6666", "7777"),
]


def index(pc: int) -> int:
    return (pc - GLOBAL_BASE) // 4


def test_table2_if_then_else_trace() -> None:
    """Every step of Table 2: the common PC is the minimum of the per-thread PCs, the active
    threads are those at it (T2, T3 wait at 5 while T0, T1 run B; all meet at D)."""
    snapshots: list[tuple[IssueRecord, list[int]]] = []

    def observe(record: IssueRecord, unit: DivergenceUnit) -> None:
        assert isinstance(unit, StacklessControl)
        snapshots.append((record, [index(int(pc)) for pc in unit.pc]))

    image = assemble(TABLE2_PROGRAM, "table2.S")
    geometry = Geometry(warp_size=4, simd_width=4, warps=1)
    # Table 2 steps one instruction a cycle and resolves each branch as it issues: the
    # idealised pipeline (execute = resolve = 0)
    latencies = Latencies(branch=1, arbiter=0, execute=0, resolve=0)
    config = SMConfig(policy=Policy.STACKLESS, latencies=latencies)
    result = run_sm(
        image, LaunchConfig(grid=1, block=4, geometry=geometry), config, observer=observe
    )
    assert result.fault is None
    assert result.exit_codes.tolist() == [[1, 1, 2, 2]]

    # Per-thread PCs before each step are the NPCs of the step before (all 1 after the csrr).
    pcs_before = [[1, 1, 1, 1]] + [npc for _, npc in snapshots[1:]]
    steps = [
        (index(record.pc), "".join(map(str, before)), "".join(map(str, after)), record)
        for (record, after), before in zip(snapshots[1:], pcs_before, strict=False)
    ]
    for (pc, pc_i, npc_i, record), (want_pc, want_pc_i, want_npc_i) in zip(
        steps, TABLE2, strict=False
    ):
        assert (pc, pc_i, npc_i) == (want_pc, want_pc_i, want_npc_i)
        active = [i for i in range(4) if int(want_pc_i[i]) == want_pc]  # underlined in Table 2
        assert record.mask == sum(1 << i for i in active)
    # One instruction per cycle: with a one-cycle redirect and no arbitration delay the six
    # steps are consecutive cycles (the csrr is cycle 0).
    assert [record.cycle for record, _ in snapshots[1:7]] == [1, 2, 3, 4, 5, 6]


def test_arbitration_latency_delays_only_control_flow() -> None:
    """Sec 4.1: arbitration follows control instructions only; with an arbiter latency of 2
    the instruction after each branch/jump waits 2 more cycles, the others none."""
    image = assemble(TABLE2_PROGRAM, "table2.S")
    geometry = Geometry(warp_size=4, simd_width=4, warps=1)
    launch = LaunchConfig(grid=1, block=4, geometry=geometry)
    fast = run_sm(
        image,
        launch,
        SMConfig(policy=Policy.STACKLESS, latencies=Latencies(branch=1, arbiter=0)),
        trace=True,
    )
    slow = run_sm(
        image,
        launch,
        SMConfig(policy=Policy.STACKLESS, latencies=Latencies(branch=1, arbiter=2)),
        trace=True,
    )
    assert [r.pc for r in fast.trace] == [r.pc for r in slow.trace]
    delays = [s.cycle - f.cycle for f, s in zip(fast.trace, slow.trace, strict=True)]
    # csrr, srli, bnez | B (+2), j | C (+4), D (+4), ecall (+4)
    assert delays == [0, 0, 0, 2, 2, 4, 4, 4]


LISTING1 = """
# Listing 1: a conditional call of f, which lies at a HIGHER address than its call site.
_start:
    csrr t0, tid
    andi t1, t0, 1
    beqz t1, skip
{call}
skip:
    addi a0, a0, 1
    addi a0, a0, 1
    li   a7, 93
    ecall
f:
{body}
    ret
"""
#: The caller allocates f's frame, so the callers' SP is already lower when the jump to f is
#: arbitrated: the convention the project's compiler uses for device functions.
CALLER_FRAME = LISTING1.format(
    call="    addi sp, sp, -16\n    call f\n    addi sp, sp, 16",
    body="    sw ra, 12(sp)\n    addi a0, a0, 10\n    lw ra, 12(sp)",
)
#: The usual RISC-V convention: f lowers SP in its own prologue, after the arbitration.
CALLEE_FRAME = LISTING1.format(
    call="    call f",
    body="    addi sp, sp, -16\n    sw ra, 12(sp)\n    addi a0, a0, 10\n    lw ra, 12(sp)\n"
    "    addi sp, sp, 16",
)


def run_listing1(source: str) -> tuple[list[tuple[int, int]], dict[str, int]]:
    """The (pc index, mask) of every issue of the code after the call site, and the symbols."""
    image = assemble(source, "listing1.S")
    geometry = Geometry(warp_size=4, simd_width=4, warps=1)
    result = run_sm(
        image,
        LaunchConfig(grid=1, block=4, geometry=geometry),
        SMConfig(policy=Policy.STACKLESS),
        trace=True,
    )
    assert result.fault is None
    assert result.exit_codes.tolist() == [[2, 12, 2, 12]]
    skip, f = image.symbols["skip"], image.symbols["f"]
    return [(index(r.pc), r.mask) for r in result.trace if skip <= r.pc < f], dict(image.symbols)


def test_listing1_sp_gives_the_callers_priority() -> None:
    """Sec 3: with min(SP:PC) the threads inside f (lower SP) go first, so the threads that
    skipped the call wait at ``skip`` and all four run the tail together, once."""
    tail, symbols = run_listing1(CALLER_FRAME)
    assert tail == [(index(symbols["skip"]) + k, 0b1111) for k in range(4)]


def test_listing1_callee_prologue_defeats_min_sp_pc() -> None:
    """With the SP lowered in f's own prologue the SPs are equal when the call is arbitrated,
    so min(SP:PC) picks the lower PC, ``skip``: the non-callers run the tail to the end alone
    and the callers run it after them. This is why the compiler allocates callee frames in the
    caller (docs/architecture.md)."""
    tail, symbols = run_listing1(CALLEE_FRAME)
    skip = index(symbols["skip"])
    assert tail == [(skip + k, 0b0101) for k in range(4)] + [(skip + k, 0b1010) for k in range(4)]


def test_a_64_thread_warp_arbitrates_lane_63() -> None:
    """The widest warp (W = 64): lane 63's bit is the mask's sign bit as a signed 64-bit
    number; the arbitration takes it like any other lane (it raised OverflowError)."""
    regs = np.zeros((64, 32), np.uint32)
    regs[:, 2] = 0x1000  # sp
    regs[63, 2] = 0x0800  # lane 63 alone holds the least SP:PC
    unit = StacklessControl(64, (1 << 64) - 1, GLOBAL_BASE, regs)
    [split] = unit.splits()
    assert (split.pc, split.mask) == (GLOBAL_BASE, 1 << 63)
