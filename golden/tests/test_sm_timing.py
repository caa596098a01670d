"""The timing rules the hardware fixes (docs/sm-hardware.md, rules 1-6, and the stack-less LSU
of seed 000 Sec 4.3), one small program each, with the issue cycles derived by hand; the
update clocks the divergence units report; and the scheduler's selection rule over plain data
against a brute-force ranking.

The pipeline's offsets (an outcome the lanes compute reaches the unit ``resolve`` cycles after
the last pass; the LSU starts ``execute`` cycles later) have tests of their own; the tests of
the unit clocks, barriers, dispatch and the stack-less tree run on the idealised pipeline
(``IDEAL``: both 0), which keeps their derivations about the rule they test."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reconverge.golden.asm import assemble
from reconverge.golden.blocks.divergence import RETURN, Executed
from reconverge.golden.blocks.dual_path_stack import DualPathStack
from reconverge.golden.blocks.reconvergence_stack import ReconvergenceStack
from reconverge.golden.blocks.split_tables import SplitTables
from reconverge.golden.blocks.stackless import StacklessControl
from reconverge.golden.config import Latencies, Scheduler, SMConfig
from reconverge.golden.functional import LaunchConfig, initial_registers
from reconverge.golden.geometry import Geometry
from reconverge.golden.memmap import GLOBAL_BASE
from reconverge.golden.policies import Policy
from reconverge.golden.sm.core import SM, SMResult, lsu_last_cycle
from reconverge.golden.sm.run import run_sm
from reconverge.golden.sm.scheduler import SplitView, WarpView, select_views
from reconverge.golden.tests.test_blocks_split_tables import _three_waiting

EXIT = "li   a7, 93\n    ecall\n"
W4 = Geometry(warp_size=4, simd_width=4, warps=2)  # one pass per instruction
W8 = Geometry(warp_size=8, simd_width=4, warps=2)  # two passes per instruction
#: The pipeline of the seeds' worked examples: a branch resolves as it issues, the LSU starts
#: right after the passes.
IDEAL = {"execute": 0, "resolve": 0}


def run_timed(
    source: str,
    policy: Policy = Policy.SPS,
    *,
    geometry: Geometry = W4,
    block: int = 4,
    grid: int = 1,
    hws: bool = False,
    **latencies: int,
) -> SMResult:
    config = SMConfig(policy=policy, hws=hws, latencies=Latencies(**latencies))
    launch = LaunchConfig(grid=grid, block=block, geometry=geometry)
    result = run_sm(assemble(source, "timing.S"), launch, config, trace=True)
    assert result.fault is None, result.fault
    return result


def issues(result: SMResult) -> list[tuple[int, int]]:
    """(cycle, instruction index from the entry) per issue."""
    return [(r.cycle, (r.pc - GLOBAL_BASE) // 4) for r in result.trace]


# ----------------------------------------------------------------------------------------------
# Rule 1: update clocks. The divergence unit takes c clocks; the warp's splits show from
# V = u + c, u = t + p - 1.


def test_units_report_their_update_clocks() -> None:
    """c per unit: the stacks one per StackUpdate (k - 1 for an indirect jump to k > 2 PCs),
    the split tables the update plus ``more`` plus busy cycles (pipelined, as the hardware
    builds them, one busy cycle per new split: the update and its two insertions, a ``more``
    and its two; on the idealised machine the update's cycle inserts), the stack-less
    control 2 when it arbitrates (1 on the idealised machine)."""
    four = {0x200: 0b0001, 0x300: 0b0010, 0x400: 0b0100, 0x500: 0b1000}
    jump = Executed(0, 0x100, 0b1111, four, control=True, rpc=0x900)
    two = Executed(0, 0x100, 0b1111, {0x200: 0b0011, 0x300: 0b1100}, control=True, rpc=0x900)
    for targets, stack_clocks, table_clocks, atomic in ((jump, 3, 6, 2), (two, 1, 3, 1)):
        assert ReconvergenceStack(4, 0b1111, 0x100, 8).execute(targets) == stack_clocks
        assert DualPathStack(4, 0b1111, 0x100, 8).execute(targets) == stack_clocks
        assert SplitTables(4, 0b1111, 0x100, 4, 4).execute(targets) == table_clocks
        ideal = SplitTables(4, 0b1111, 0x100, 4, 4, pipelined=False)
        assert ideal.execute(targets) == atomic
    regs = initial_registers(4, assemble(f"_start:\n    {EXIT}", "x.S"), LaunchConfig(1, 4))
    stackless = StacklessControl(4, 0b1111, 0x100, regs)
    assert stackless.execute(jump) == 2  # the update, then the tree from the registers
    stackless.execute(Executed(0, 0x200, 0b0001, {}, barrier=0b0001))
    assert stackless.release(0b0001) == 2
    ideal = StacklessControl(4, 0b1111, 0x100, regs, pipelined=False)
    assert ideal.execute(jump) == 1
    # The release of seed 002's three reconvergences at one barrier: the release's cycle and
    # a busy cycle for each entry that moves back (test_blocks_split_tables counts them step
    # by step)
    assert _three_waiting().release(0x2A) == 4


def test_the_dual_path_stack_pops_one_entry_a_clock() -> None:
    """The dual-path stack's update is a clock, then one clock per finished entry it pops (as
    its HDL block, from the registers); on the idealised machine 1. A two-way branch pushes
    (c = 1); the first path at the RPC waits (c = 1); the second finishes the entry (c = 2).
    Inside a call, a branch reconverging at RETURN: the second path's return finishes the
    branch's entry, whose pop returns the call entry's path and finishes it too (c = 3)."""
    two = Executed(0, 0x100, 0b1111, {0x200: 0b0011, 0x300: 0b1100}, control=True, rpc=0x900)
    for pipelined, pop, two_pops in ((True, 2, 3), (False, 1, 1)):
        dps = DualPathStack(4, 0b1111, 0x100, 8, pipelined=pipelined)
        assert dps.execute(two) == 1
        assert dps.execute(Executed(2, 0x200, 0b0011, {0x900: 0b0011}, control=True)) == 1
        assert dps.execute(Executed(3, 0x300, 0b1100, {0x900: 0b1100}, control=True)) == pop
        assert [(p.pc, p.mask) for e in dps.entries for p in e.paths] == [(0x900, 0b1111)]
        ppc = DualPathStack(4, 0b1111, 0x100, 8, paired=True, pipelined=pipelined)
        assert (
            ppc.execute(Executed(0, 0x100, 0b1111, {0x400: 0b1111}, control=True, call=True)) == 1
        )
        branch = {0x500: 0b0011, 0x600: 0b1100}
        assert ppc.execute(Executed(2, 0x400, 0b1111, branch, control=True, rpc=RETURN)) == 1
        back = {0x104: 0b0011}
        assert ppc.execute(Executed(4, 0x500, 0b0011, back, control=True, ret=True)) == 1
        back = {0x104: 0b1100}
        assert ppc.execute(Executed(5, 0x600, 0b1100, back, control=True, ret=True)) == two_pops
        assert [(p.pc, p.mask) for e in ppc.entries for p in e.paths] == [(0x104, 0b1111)]


JUMP4 = f"""
_start:
    csrr t0, tid          # 0
    slli t0, t0, 3        # 1
    la   t1, T            # 2, 3
    add  t1, t1, t0       # 4
    rhint D               # 5
    jalr zero, 0(t1)      # 6: thread i jumps to T + 8i
T:  j    D                # 7
    nop
    j    D                # 9
    nop
    j    D                # 11
    nop
    j    D                # 13
    nop
D:  {EXIT}                # 15, 16
"""


def test_indirect_jump_to_four_targets_takes_three_stack_clocks() -> None:
    """SPS, branch = 2: the jalr issues at 6 (u = 6) and is three StackUpdates (c = 3), so
    V = 9 and the top split (thread 0 at T) is ready at V - 1 + branch = 10. Each ``j D`` then
    pops its entry (c = 1): the next path is ready 2 cycles later; D's entry at 18."""
    result = run_timed(JUMP4, branch=2, **IDEAL)
    assert issues(result) == [
        (0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6),
        (10, 7), (12, 9), (14, 11), (16, 13), (18, 15), (19, 16),
    ]  # fmt: skip


def test_indirect_jump_to_four_targets_takes_two_table_cycles() -> None:
    """MP, branch = 2: the jalr (u = 6) is an update with two targets and a ``more`` cycle
    with the other two (c = 2): V = 8, the four splits are ready at 9 and issue in round robin;
    each arrives at D (c = 1); the last arrival moves D back to the ST in its own cycle
    (u = 12, V = 13): D ready at 14."""
    result = run_timed(JUMP4, Policy.MP, branch=2, **IDEAL)
    assert issues(result) == [
        (0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6),
        (9, 7), (10, 9), (11, 11), (12, 13), (14, 15), (15, 16),
    ]  # fmt: skip


BLOCKED = f"""
_start:
    csrr t0, tid          # 0
    slli t1, t0, 3        # 1
    la   t2, T            # 2, 3
    add  t2, t2, t1       # 4
    beqz t0, Z            # 5: thread 0 to Z, threads 1-3 to J (RPC: D, the hinted join)
J:  rhint D               # 6
    jalr zero, 0(t2)      # 7: threads 1-3 to T + 8, T + 16, T + 24
Z:  nop                   # 8
    nop                   # 9
    j    D                # 10
T:  j    D                # 11 (no thread)
    nop
    j    D                # 13
    nop
    j    D                # 15
    nop
    j    D                # 17
    nop
D:  {EXIT}                # 19, 20
"""


def test_no_split_of_a_warp_issues_while_its_unit_is_busy() -> None:
    """MP, branch = 2. beqz at 5 (V = 6): J (sid 0) and Z (sid 1) ready at 7. Round robin:
    7 J rhint, 8 Z nop, 9 J jalr: three targets, c = 2, V = 11. Z's next nop has been ready
    since 9, but no split of the warp issues before V: cycle 10 is idle. 11: Z (T1 is ready only
    at V - 1 + 2 = 12), 12: T2 (sid 2, after sid 1), 13: T1 (round robin restarts after a jump),
    14: Z's j D (Z arrives at D, the RPC of the beqz: the hinted ``jr`` leads there), 15: T3,
    the last arrival, moves D back (V = 16, ready 17); 16 is idle; 17: D with all four threads,
    18: its ecall."""
    result = run_timed(BLOCKED, Policy.MP, branch=2, **IDEAL)
    assert issues(result) == [
        (0, 0), (1, 1), (2, 2), (3, 3), (4, 4), (5, 5),
        (7, 6), (8, 8), (9, 7), (11, 9), (12, 15), (13, 13), (14, 10), (15, 17),
        (17, 19), (18, 20),
    ]  # fmt: skip
    assert result.metrics is not None and result.metrics.idle_cycles == 3  # cycles 6, 10 and 16


# ----------------------------------------------------------------------------------------------
# Rule 2: ready times from V.

REDIRECT = f"""
_start:
    csrr t0, tid          # 0
    nop                   # 1
    j    L                # 2
L:  {EXIT}                # 3, 4
"""


def test_ready_times_count_from_the_settled_update() -> None:
    """W = 8 on L = 4 (p = 2), branch = 3, the hardware's pipeline (resolve = 5): csrr at 0,
    u = 1, V = 2: the nop continues at 2 (u = 3, V = 4); the jump at 4 is resolved by the lanes:
    u = 5 + 5 = 10, V = 11 (under stackless 12: the tree's clock, c = 2); L is ready at
    V - 1 + branch = 13 (14), + squeeze (1) with hws. Its ecall issues 2 later, its last pass
    1 after that, and it settles at u + c = + 3 + resolve + c: the run's cycles. On the
    idealised pipeline (resolve = 0, every update one clock) the jump's u is 5: L at 8."""
    for policy in (Policy.SPS, Policy.STACKLESS):
        for hws in (False, True):
            for pipeline, redirect, resolve in (({}, 13, 5), (IDEAL, 8, 0)):
                clocks = 2 if policy is Policy.STACKLESS and not pipeline else 1
                result = run_timed(
                    REDIRECT, policy, geometry=W8, block=8, hws=hws, branch=3, **pipeline
                )
                at = redirect + clocks - 1 + hws
                assert issues(result) == [(0, 0), (2, 1), (4, 2), (at, 3), (at + 2, 4)]
                assert result.metrics is not None
                assert result.metrics.cycles == at + 3 + resolve + clocks


SP_WRITE = f"""
_start:
    addi sp, sp, -16      # 0: writes x2
    li   a0, 0            # 1
    {EXIT}                # 2, 3
"""


def test_only_outcomes_the_lanes_compute_wait_for_resolve() -> None:
    """W = 4 (p = 1), resolve = 5. Under SPS the sp write is decided at issue (u = 0, V = 1):
    back to back, and the ecall at 3 settles at 3 + 5 + 1 = 9, the run's cycles. Under
    stackless sp orders the threads, so the lanes resolve it: u = 5, and the update takes the
    tree over the split and the comparison (c = 3): V = 8, the li at 8, the ecall at 10, whose
    arbitration (c = 2) is done at 10 + 5 + 2 = 17."""
    for policy, cycles, total in (
        (Policy.SPS, [0, 1, 2, 3], 9),
        (Policy.STACKLESS, [0, 8, 9, 10], 17),
    ):
        result = run_timed(SP_WRITE, policy)
        assert issues(result) == list(zip(cycles, range(4), strict=True)), policy
        assert result.metrics is not None and result.metrics.cycles == total


# ----------------------------------------------------------------------------------------------
# Rule 3: the LSU.

LSU = f"""
_start:
    csrr t0, tid          # 0
    slli t0, t0, 4        # 1: 16 bytes apart: 8 threads on two 64-byte lines
    la   t1, data         # 2, 3
    add  t1, t1, t0       # 4
    lw   a0, 0(t1)        # 5
    sw   t0, 0(t1)        # 6
    add  a1, a0, a0       # 7
    li   a0, 0            # 8
    {EXIT}                # 9, 10
    .data
    .balign 64
data: .space 256
"""


def test_lsu_cycles_follow_the_passes() -> None:
    """W = 8, p = 2, global = 5, execute = 3. The lw issues at 10 (last pass 11, executed at
    14); its two transactions take LSU cycles 15 and 16 (L = 16): a0 is released at
    16 + 5 = 21, the LSU is idle from 17, when the sw issues (LSU cycles 22, 23). The add waits
    for a0 until 21; the store completes at 23 + 5 = 28; the ecall (27, 28) reaches the unit
    at 28 + 5 = 33 and the warp is done at V = 34: 34 cycles. On the idealised pipeline the
    LSU follows the passes at once (L = 13, the sw at 14, the add at 18) and the run ends
    with the ecall's port cycles."""
    for pipeline, cycles, total in (
        ({}, [0, 2, 4, 6, 8, 10, 17, 21, 23, 25, 27], 34),
        (IDEAL, [0, 2, 4, 6, 8, 10, 14, 18, 20, 22, 24], 26),
    ):
        result = run_timed(LSU, geometry=W8, block=8, global_=5, **pipeline)
        assert issues(result) == list(zip(cycles, range(11), strict=True))
        assert result.metrics is not None
        assert (result.metrics.cycles, result.metrics.counters.memory_transactions) == (total, 4)


# ----------------------------------------------------------------------------------------------
# Rule 6: the divider. A division issues only when the divider is idle: div_interval cycles
# after the last pass of the previous division.

DIVS = f"""
_start:
    csrr t0, tid          # 0
    addi t1, t0, 1        # 1
    div  a0, t0, t1       # 2
    rem  a1, t1, t1       # 3: a second division
    add  a2, t0, t0       # 4
    li   a0, 0            # 5: waits for the first division's a0
    {EXIT}                # 6, 7
"""


def test_a_division_waits_for_the_divider() -> None:
    """W = 8, p = 2, div = 6. The div issues at 4 (u = 5): a0 released at 11, the divider idle
    from 5 + div_interval. With an interval of 4 the rem waits until 9 (u = 10); the add
    follows at 11 and ``li a0`` finds a0 released at 13. With an interval of 1 the rem issues
    at 6, the add at 8, ``li a0`` waits for a0 until 11."""
    slow = run_timed(DIVS, geometry=W8, block=8, div=6, div_interval=4)
    assert issues(slow) == list(zip([0, 2, 4, 9, 11, 13, 15, 17], range(8), strict=True))
    fast = run_timed(DIVS, geometry=W8, block=8, div=6, div_interval=1)
    assert issues(fast) == list(zip([0, 2, 4, 6, 8, 11, 13, 15], range(8), strict=True))


def test_the_divider_meets_its_latency_and_interval() -> None:
    """The restoring steps per cycle: the fewest that finish 32 steps within the interval and
    before a dependent instruction reads the result: div - 2 cycles after the last pass behind
    the pipeline (operands taken at the end of the execute stage, t + p - 1 + 3; the dependent
    issued at t + p - 1 + div gives its read address at the end of the next cycle), div - 1
    on the idealised pipeline."""
    cases = {
        (145, 8, 3): (4, 8), (18, 16, 3): (2, 16), (17, 16, 3): (3, 11), (17, 16, 0): (2, 16),
        (5, 8, 3): (11, 3), (3, 8, 2): (32, 1), (2, 8, 0): (32, 1), (40, 40, 3): (1, 32),
    }  # fmt: skip
    for (div, interval, execute), want in cases.items():
        lat = Latencies(div=div, div_interval=interval, execute=execute)
        assert (lat.div_steps, lat.div_cycles) == want
        assert lat.div_cycles <= min(interval, div - (2 if execute else 1))


def test_lsu_last_cycle_passes_over_skipped_cycles() -> None:
    assert lsu_last_cycle(6, 4, set()) == 9
    assert lsu_last_cycle(6, 4, {6, 7}) == 11
    assert lsu_last_cycle(6, 4, {5, 8, 10, 12}) == 11
    assert lsu_last_cycle(6, 1, {6, 7, 9}) == 8


# ----------------------------------------------------------------------------------------------
# The stack-less LSU (seed 000 Sec 4.3): the warp's control and its memory instructions share
# one arbiter tree, which finds the LSU's next line a cycle ahead; in the cycle after one in
# which the control arbitrates the LSU does not advance.

SP_AND_JUMP = f"""
_start:
    csrr t0, tid          # 0
    slli t0, t0, {{shift}}  # 1: 6: a line apart, four transactions; 2: one line
    la   t1, data         # 2, 3
    add  t1, t1, t0       # 4
    lw   a0, 0(t1)        # 5
    addi sp, sp, -16      # 6: writes x2
    j    L                # 7: control
L:  add  a1, a0, a0       # 8
    li   a0, 0            # 9
    {EXIT}                # 10, 11
    .data
    .balign 64
data: .space 256
"""

BARRIER = f"""
_start:
    csrr t0, tid          # 0
    slli t0, t0, 6        # 1
    la   t1, data         # 2, 3
    add  t1, t1, t0       # 4
    lw   a0, 0(t1)        # 5
    bar                   # 6: reaches a barrier, released at V = 7
    add  a1, a0, a0       # 7
    li   a0, 0            # 8
    {EXIT}                # 9, 10
    .data
    .balign 64
data: .space 256
"""


def test_stackless_arbitration_holds_the_lsu() -> None:
    """W = 4, p = 1, global = 4, branch = 2. The lw issues at 5: LSU cycles 6..9, a0 at 13.
    Under stackless the next two cycles are arbitration cycles of the same warp: the SP write
    at 6 and the jump at 7 (first program), the barrier arrival at 6 (u = 6, V = 7) and the
    release in cycle 7 (second program). The tree finds no line for cycles 7 and 8: the LSU
    runs 6, 9..11 instead, a0 at 15, two cycles later than under SPS, and so is every issue
    after."""
    for source, first in ((SP_AND_JUMP.format(shift=6), 8), (BARRIER, 7)):
        for policy, ready in ((Policy.SPS, 13), (Policy.STACKLESS, 15)):
            result = run_timed(source, policy, global_=4, branch=2, **IDEAL)
            # back to back up to the instruction that reads a0, then the last four
            expected = [(i, i) for i in range(first)] + [(ready + i, first + i) for i in range(4)]
            assert issues(result) == expected, policy


def test_stackless_arbitration_in_the_last_lsu_cycle_costs_nothing() -> None:
    """The first program of the test above with the four words on one line: one LSU cycle,
    6, found by the tree in 5. The SP write arbitrates in 6 and the jump in 7, after the last
    LSU cycle's line was found: a0 at 10 under stackless as under SPS."""
    for policy in (Policy.SPS, Policy.STACKLESS):
        result = run_timed(SP_AND_JUMP.format(shift=2), policy, global_=4, branch=2, **IDEAL)
        assert issues(result) == [(i, i) for i in range(8)] + [(10 + i, 8 + i) for i in range(4)]


LOAD_THEN_USE = f"""
_start:
    csrr t0, tid          # 0
    slli t0, t0, 6        # 1: a line apart, four transactions
    la   t1, data         # 2, 3
    add  t1, t1, t0       # 4
    lw   a0, 0(t1)        # 5
    add  a1, a0, a0       # 6: waits for a0
    li   a0, 0            # 7
    {EXIT}                # 8, 9
    .data
    .balign 64
data: .space 256
"""


def test_stackless_lsu_takes_its_keys_from_the_address_buffer() -> None:
    """On the hardware's pipeline (``execute`` and ``resolve`` at their defaults) the shared
    tree takes a memory instruction's line keys from the LSU's address buffer, which has the
    last pass's addresses from the cycle after its execute stage: the four LSU cycles, and
    with them a0's release, run a cycle later under stackless than under SPS (docs/
    architecture.md, rule 3), and nothing before the load differs."""
    runs = {
        p: issues(run_timed(LOAD_THEN_USE, p, global_=4)) for p in (Policy.SPS, Policy.STACKLESS)
    }
    sps, stackless = runs[Policy.SPS], runs[Policy.STACKLESS]
    assert [i for _, i in sps] == [i for _, i in stackless] == list(range(10))
    assert stackless[:6] == sps[:6]
    assert stackless[6][0] == sps[6][0] + 1


# ----------------------------------------------------------------------------------------------
# Rule 4: barriers.

TWO_WARP_BARRIER = f"""
_start:
    csrr t0, warpid       # 0
    bnez t0, B            # 1: warp 1 skips the nop
    nop                   # 2
B:  bar                   # 3
    li   a0, 0            # 4
    {EXIT}                # 5, 6
"""


def test_barrier_release_from_the_settled_arrival() -> None:
    """Two warps of 4, GTO, branch = 2. Warp 0: csrr 0, bnez 1 (V = 2: the nop is ready at 3);
    warp 1: csrr 2, bnez 3 (B ready at 5); warp 0: nop 4, bar 5; warp 1: bar 6 (u = 6, V = 7)
    completes the barrier: the release reaches both warps in cycle 7, takes one clock, and the
    released splits are ready at 7 + 1 - 1 + 2 = 9: warp 1 (greedy) 9-11, warp 0 12-14."""
    for policy in (Policy.SPS, Policy.STACKLESS, Policy.MP, Policy.PPC):
        result = run_timed(TWO_WARP_BARRIER, policy, block=8, branch=2, **IDEAL)
        assert [(r.cycle, r.warp) for r in result.trace] == [
            (0, 0), (1, 0), (2, 1), (3, 1), (4, 0), (5, 0), (6, 1),
            (9, 1), (10, 1), (11, 1), (12, 0), (13, 0), (14, 0),
        ], policy  # fmt: skip


# ----------------------------------------------------------------------------------------------
# Rule 5: dispatch.

PENDING_LOAD = f"""
_start:
    la   t1, data         # 0, 1
    lw   a1, 0(t1)        # 2
    li   a0, 0            # 3
    {EXIT}                # 4, 5
    .data
data: .word 7
"""


def test_slots_free_when_the_last_write_back_is_done() -> None:
    """Blocks of two warps of 4, GTO, global = 10. Block 0 is dispatched in cycle -1: warp 0
    issues 0-5 (its lw at 2: LSU cycle 3, a1 at 13), warp 1 6-11 (lw at 8: a1 at 19). Warp 0
    has exited at 6 but its slot is free only at 13, warp 1's at 19. With two slots, block 1
    enters at 19 and issues from 20; its last load is released at 29 + 10 = 39 = cycles.
    With three slots it enters at 13, into slots 0 and 2 (the lowest free), and issues from 14;
    its last load completes at 23 + 10 = 33."""
    image = assemble(PENDING_LOAD, "pending.S")
    config = SMConfig(latencies=Latencies(global_=10, **IDEAL))
    for slots, start, cycles, placement in ((2, 20, 39, [0, 1, 0, 1]), (3, 14, 33, [0, 1, 0, 2])):
        geometry = Geometry(warp_size=4, simd_width=4, warps=slots)
        sm = SM(image, LaunchConfig(grid=2, block=8, geometry=geometry), config, trace=True)
        result = sm.run()
        assert result.fault is None and result.metrics is not None
        expected = [(c, c // 6) for c in range(12)] + [(start + i, 2 + i // 6) for i in range(12)]
        assert [(r.cycle, r.warp) for r in result.trace] == expected
        assert result.metrics.cycles == cycles
        assert [w.slot for b in sm.blocks for w in b.warps] == placement


# ----------------------------------------------------------------------------------------------
# The selection rule over plain data.


def view(slot: int, age: int, *splits: SplitView, settled: int = 0, last_sid: int = -1) -> WarpView:
    return WarpView(slot, age, settled, last_sid, splits)


def test_gto_prefers_the_last_warp_then_the_oldest() -> None:
    warps = [view(0, 5, SplitView(0, 0)), view(1, 2, SplitView(0, 0)), view(2, 9, SplitView(0, 0))]
    pick = {"scheduler": Scheduler.GTO, "t": 0}
    assert select_views(warps, last_slot=2, greedy=True, **pick) == (2, 0)  # type: ignore[arg-type]
    assert select_views(warps, last_slot=2, greedy=False, **pick) == (1, 0)  # type: ignore[arg-type]


def test_lrr_goes_round_the_slots_after_the_last() -> None:
    warps = [view(0, 5, SplitView(0, 0)), view(1, 2, SplitView(0, 0)), view(3, 9, SplitView(0, 0))]
    pick = {"scheduler": Scheduler.LRR, "greedy": False, "t": 0}
    assert select_views(warps, last_slot=1, **pick) == (3, 0)  # type: ignore[arg-type]
    assert select_views(warps, last_slot=3, **pick) == (0, 0)  # type: ignore[arg-type]
    assert select_views(warps, last_slot=-1, **pick) == (0, 0)  # type: ignore[arg-type]


def test_readiness_conditions() -> None:
    """Rule 1 (the warp's V), rule 2 (ready time), the scoreboard, rules 3 and 6 (the LSU or
    the divider idle)."""
    pick = {"scheduler": Scheduler.GTO, "last_slot": -1, "greedy": False}
    splits = (SplitView(0, 4), SplitView(1, 0, hazard=True), SplitView(2, 0, unit_free=4))
    warp = view(0, 0, *splits, last_sid=-1)
    assert select_views([warp], t=3, **pick) is None  # type: ignore[arg-type]
    assert select_views([warp], t=4, **pick) == (0, 0)  # type: ignore[arg-type]
    later = view(0, 0, splits[1], splits[2], last_sid=-1)
    assert select_views([later], t=4, **pick) == (0, 2)  # type: ignore[arg-type]
    busy = view(0, 0, *splits, settled=5)
    assert select_views([busy], t=4, **pick) is None  # type: ignore[arg-type]


split_views = st.builds(
    SplitView,
    sid=st.integers(0, 7),
    ready_at=st.integers(0, 6),
    hazard=st.booleans(),
    unit_free=st.integers(0, 6),
)


@st.composite
def warp_views(draw: st.DrawFn) -> list[WarpView]:
    slots = draw(st.lists(st.integers(0, 7), min_size=1, max_size=5, unique=True))
    ages = draw(st.permutations(range(len(slots))))
    warps = []
    for slot, age in zip(slots, ages, strict=True):
        splits = draw(st.lists(split_views, max_size=4, unique_by=lambda s: s.sid))
        splits.sort(key=lambda s: s.sid)
        settled, last_sid = draw(st.integers(0, 6)), draw(st.integers(-1, 7))
        warps.append(WarpView(slot, age, settled, last_sid, tuple(splits)))
    return warps


@settings(max_examples=300, deadline=None)
@given(
    warp_views(),
    st.sampled_from(Scheduler),
    st.integers(-1, 7),
    st.booleans(),
    st.integers(0, 6),
)
def test_select_is_the_best_ranked_ready_split(
    warps: list[WarpView], scheduler: Scheduler, last_slot: int, greedy: bool, t: int
) -> None:
    """Brute force: rank every ready (warp, split) pair by an explicit key and take the least.
    GTO: (not the greedy warp, age); LRR: the distance of the slot after the last one; splits:
    those with a sid above the warp's last first, then by sid."""

    def warp_key(w: WarpView) -> tuple[int, ...]:
        if scheduler is Scheduler.GTO:
            return (not (greedy and w.slot == last_slot), w.age)
        return ((w.slot - last_slot - 1) % 64,)

    ready = [
        (warp_key(w), (s.sid <= w.last_sid, s.sid), (w.slot, s.sid))
        for w in warps
        for s in w.splits
        if t >= max(w.settled, s.ready_at, s.unit_free) and not s.hazard
    ]
    expected = min(ready)[2] if ready else None
    got = select_views(warps, scheduler, last_slot=last_slot, greedy=greedy, t=t)
    assert got == expected
