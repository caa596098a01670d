"""Seed 002 (Multi-Path IPDOM): Fig 5 (issue slots of SPS and MP, ST/RT contents), Fig 6
(nested divergence, states 1-9), Fig 9 (masked scoreboard R-masks and dependency masks,
states 1-6), Fig 10/11 (opportunistic early reconvergence in a loop with break)."""

from __future__ import annotations

from reconverge.golden.asm import assemble
from reconverge.golden.blocks.divergence import NEVER, DivergenceUnit, Executed
from reconverge.golden.blocks.scoreboard import MaskedScoreboard, Scoreboard
from reconverge.golden.blocks.split_tables import SplitTables
from reconverge.golden.config import Latencies, ScoreboardKind, SMConfig
from reconverge.golden.functional import LaunchConfig, run
from reconverge.golden.geometry import Geometry
from reconverge.golden.policies import Policy
from reconverge.golden.sm.core import IssueRecord, SMResult
from reconverge.golden.sm.run import run_sm

W4 = Geometry(warp_size=4, simd_width=4, warps=1)


def tables(unit: SplitTables) -> tuple[set[tuple[int, int, int]], set[tuple[int, int, int]]]:
    """Valid ST entries as (PC, active mask, RPC) and RT entries as (PC, reconvergence mask,
    pending mask): the tables of Fig 5, 6 and 11 (only valid entries shown)."""
    st = {(e.pc, e.mask, unit.rpc_of(e)) for e in unit.st if e is not None}
    rt = {(e.pc, e.rmask, e.pending) for e in unit.rt if e is not None}
    return st, rt


def sid_at(unit: SplitTables, pc: int) -> int:
    (sid,) = [i for i, e in enumerate(unit.st) if e is not None and e.pc == pc]
    return sid


# ----------------------------------------------------------------------------------------------
# Fig 5: two dependent instructions per block; B1 and C1 take two cycles, everything else one.

FIG5 = """
_start:
    csrr t0, tid
    andi t1, t0, 1        # A1: odd threads take C
    rhint D
    bnez t1, C            # BR A -> B / C, reconverging at D
B:  mul  t2, t0, t0       # B1 (2 cycles)
    beq  t2, t2, D        # B2, depends on B1
C:  mul  t2, t0, t0       # C1 (2 cycles)
    add  t3, t2, t2       # C2, depends on C1
D:  li   a7, 93           # D1
    ecall                 # D2
"""
#: Fig 5's machine: one instruction a cycle, a branch resolved as it issues (the idealised
#: pipeline, execute = resolve = 0).
FIG5_LATENCIES = Latencies(alu=1, mul=2, branch=1, execute=0, resolve=0)


def run_fig5(policy: Policy) -> tuple[SMResult, list[tuple[IssueRecord, object]]]:
    seen: list[tuple[IssueRecord, object]] = []

    def observe(record: IssueRecord, unit: DivergenceUnit) -> None:
        seen.append((record, tables(unit) if isinstance(unit, SplitTables) else None))

    image = assemble(FIG5, "fig5.S")
    config = SMConfig(policy=policy, latencies=FIG5_LATENCIES)
    result = run_sm(image, LaunchConfig(grid=1, block=4, geometry=W4), config, observer=observe)
    assert result.fault is None
    return result, seen


def slots(result: SMResult) -> list[tuple[int, str, int]]:
    """(cycle, block label + instruction number in the block, mask) per issue."""
    image = assemble(FIG5, "fig5.S")
    starts = sorted((image.symbols[name], name) for name in ("_start", "B", "C", "D"))
    out = []
    for record in result.trace:
        start, name = max((s, n) for s, n in starts if s <= record.pc)
        out.append((record.cycle, f"{name}{(record.pc - start) // 4 + 1}", record.mask))
    return out


def test_fig5_sps_idles_two_cycles() -> None:
    """SPS: only the top-of-stack split issues, so the 2-cycle B1 and C1 leave a hole each.
    The figure's cycles + 1 (the csrr and the rhint are extra; our cycles count from 0)."""
    result, _ = run_fig5(Policy.SPS)
    assert slots(result)[4:] == [
        (4, "B1", 0b0101),
        (6, "B2", 0b0101),
        (7, "C1", 0b1010),
        (9, "C2", 0b1010),
        (10, "D1", 0b1111),
        (11, "D2", 0b1111),
    ]
    assert result.metrics is not None and result.metrics.idle_cycles == 2


def test_fig5_mp_interleaves_and_idles_none() -> None:
    """MP: B and C are both in the ST and hide each other's latency: no idle cycle, D two
    cycles earlier; the ST/RT contents follow states 1-5 of Fig 5."""
    result, seen = run_fig5(Policy.MP)
    assert slots(result)[4:] == [
        (4, "B1", 0b0101),
        (5, "C1", 0b1010),
        (6, "B2", 0b0101),
        (7, "C2", 0b1010),
        (8, "D1", 0b1111),
        (9, "D2", 0b1111),
    ]
    assert result.metrics is not None and result.metrics.idle_cycles == 0
    image = assemble(FIG5, "fig5.S")
    a, b, c, d = (image.symbols[n] for n in ("_start", "B", "C", "D"))
    states = [state for _, state in seen]
    assert states[0] == ({(a, 0b1111, NEVER)}, set())  # 1: A1111, RT empty
    assert states[3] == ({(b, 0b0101, d), (c, 0b1010, d)}, {(d, 0b1111, 0b1111)})  # 2
    after_b2 = states[6]  # 3: B reached D
    assert after_b2 == ({(c, 0b1010, d)}, {(d, 0b1111, 0b1010)})
    assert states[7] == ({(d, 0b1111, NEVER)}, set())  # 4 + 5: C arrived, D moved to ST


# ----------------------------------------------------------------------------------------------
# Fig 6: nested divergence. Block PCs stand for the basic blocks A..G.

A, B, C, D, E, F, G = (0x100 * k for k in range(1, 8))


def test_fig6_nested_divergence_states() -> None:
    unit = SplitTables(4, 0b1111, A, st_size=4, rt_size=4)
    assert tables(unit) == ({(A, 0b1111, NEVER)}, set())  # 1
    unit.execute(Executed(0, A, 0b1111, {B: 0b0101, C: 0b1010}, control=True, rpc=G))
    assert tables(unit) == ({(B, 0b0101, G), (C, 0b1010, G)}, {(G, 0b1111, 0b1111)})  # 2
    unit.execute(Executed(sid_at(unit, C), C, 0b1010, {D: 0b0010, E: 0b1000}, control=True, rpc=F))
    assert tables(unit) == (  # 3: C moved to the RT with PC F; D and E added
        {(B, 0b0101, G), (D, 0b0010, F), (E, 0b1000, F)},
        {(G, 0b1111, 0b1111), (F, 0b1010, 0b1010)},
    )
    unit.execute(Executed(sid_at(unit, B), B, 0b0101, {G: 0b0101}, control=True, rpc=None))
    assert tables(unit) == (  # 4: B reached G
        {(D, 0b0010, F), (E, 0b1000, F)},
        {(G, 0b1111, 0b1010), (F, 0b1010, 0b1010)},
    )
    unit.execute(Executed(sid_at(unit, E), E, 0b1000, {F: 0b1000}, control=True))
    assert tables(unit) == ({(D, 0b0010, F)}, {(G, 0b1111, 0b1010), (F, 0b1010, 0b0010)})  # 5
    unit.execute(Executed(sid_at(unit, D), D, 0b0010, {F: 0b0010}, control=True))
    # 6: F's pending mask is empty, so 7: F moves to the ST with its reconvergence mask.
    assert tables(unit) == ({(F, 0b1010, G)}, {(G, 0b1111, 0b1010)})
    unit.execute(Executed(sid_at(unit, F), F, 0b1010, {G: 0b1010}, control=True))
    assert tables(unit) == ({(G, 0b1111, NEVER)}, set())  # 8 + 9: G complete, back in the ST


def test_fig6_new_entries_take_the_first_unallocated_slots() -> None:
    unit = SplitTables(4, 0b1111, A, st_size=4, rt_size=4)
    unit.execute(Executed(0, A, 0b1111, {B: 0b0101, C: 0b1010}, control=True, rpc=G))
    assert [e.pc if e else None for e in unit.st] == [B, C, None, None]
    unit.execute(Executed(1, C, 0b1010, {D: 0b0010, E: 0b1000}, control=True, rpc=F))
    assert [e.pc if e else None for e in unit.st] == [B, D, E, None]
    assert [e.pc if e else None for e in unit.rt] == [G, F, None, None]


FIG6 = """
_start:
    csrr t0, tid
    andi t1, t0, 1
    bnez t1, C            # if (id % 2 == 0) B else C
B:  li   a0, 7
    addi a0, a0, 1
    addi a0, a0, 1
    addi a0, a0, 1
    j    G
C:  li   t2, 1
    bne  t0, t2, E        # if (id == 1) D else E
D:  li   a0, 20
    j    F
E:  li   a0, 30
F:  addi a0, a0, 1
G:  addi a0, a0, 100
    li   a7, 93
    ecall
"""


def test_fig6_program_on_every_stack_policy() -> None:
    """The nested program, hint-free: its reconvergence PCs come from the binary's IPDOMs. MP
    reaches three concurrent splits (B, D, E: B is long enough to still run when C diverges)
    and two RT entries; SPS needs four stack entries (the G and F reconvergence entries, D and
    E); results equal the functional model's."""
    image = assemble(FIG6, "fig6.S")
    launch = LaunchConfig(grid=1, block=4, geometry=W4)
    reference = run(image, launch)
    assert reference.exit_codes.tolist() == [[110, 121, 110, 131]]
    for policy, occupancy in (
        (Policy.MP, {"st": 3, "rt": 2}),
        (Policy.SPS, {"stack": 4}),
    ):
        result = run_sm(image, launch, SMConfig(policy=policy))
        assert result.fault is None
        assert result.exit_codes.tolist() == reference.exit_codes.tolist()
        assert result.metrics is not None
        assert result.metrics.counters.max_occupancy == occupancy
        assert result.metrics.simd_efficiency == reference.thread_instructions.sum() / (
            4 * result.metrics.counters.warp_instructions
        )


# ----------------------------------------------------------------------------------------------
# Fig 9: masked scoreboard. R0..R5 are x10..x15; dependency masks are printed R1R0 as in the
# figure.

R = {f"R{i}": 10 + i for i in range(6)}
INSTRUCTIONS = {  # registers used, active mask
    "I0": ((R["R5"], R["R0"]), 0b1111),  # LOAD R0, 0(R5)
    "I1": ((R["R0"], R["R1"]), 0b0101),  # LOAD R1, 0(R0)
    "I2": ((R["R4"], R["R1"]), 0b1010),  # LOAD R1, 0(R4)
    "I3": ((R["R0"], R["R1"], R["R4"]), 0b1010),  # ADD R4, R0, R1
}


def dep(board: Scoreboard, name: str) -> str:
    regs, mask = INSTRUCTIONS[name]
    bits = board.dependency_mask(regs, mask) >> R["R0"]
    return f"{(bits >> 1) & 1}{bits & 1}"


def rmasks(board: Scoreboard) -> dict[str, str]:
    names = {v: k for k, v in R.items()}
    return {names[reg]: f"{m:04b}" for reg, m in board.reserved().items()}


def test_fig9_masked_scoreboard_states() -> None:
    board = MaskedScoreboard(4)
    board.reserve(R["R0"], 0b1111)  # 1: I0 issued
    assert rmasks(board) == {"R0": "1111"}
    assert (dep(board, "I1"), dep(board, "I2")) == ("01", "00")
    board.reserve(R["R1"], 0b1010)  # 2: I2 issued
    assert rmasks(board) == {"R0": "1111", "R1": "1010"}
    assert dep(board, "I1") == "01"  # no false dependency on I2's R1 (other threads)
    assert dep(board, "I3") == "11"  # 3: I3 decoded
    board.release(R["R0"], 0b1111)  # 4: I0 writes R0
    assert rmasks(board) == {"R1": "1010"}
    assert (dep(board, "I1"), dep(board, "I3")) == ("00", "10")
    board.reserve(R["R1"], 0b0101)  # 5: I1 issued, R1 reserved by all lanes
    assert rmasks(board) == {"R1": "1111"}
    board.release(R["R1"], 0b1010)  # 6: I2 writes R1
    assert rmasks(board) == {"R1": "0101"}
    assert dep(board, "I3") == "00"


def test_fig9_plain_scoreboard_has_the_false_dependency() -> None:
    """Fig 8a: the per-warp scoreboard blocks I1 on I2's pending R1 although they run on
    different threads, until I2 writes back."""
    board = Scoreboard(4)
    board.reserve(R["R0"], 0b1111)
    board.reserve(R["R1"], 0b1010)
    assert dep(board, "I1") == "11"
    board.release(R["R0"], 0b1111)
    assert dep(board, "I1") == "10"
    board.release(R["R1"], 0b1010)
    assert dep(board, "I1") == "00"


FIG9 = """
_start:
    csrr t0, tid
    la   a4, data
    la   a5, data
    lw   a0, 0(a5)        # I0: LOAD R0, 0(R5)
    andi t1, t0, 1
    rhint done
    bnez t1, odd
    lw   a1, 0(a0)        # I1: LOAD R1, 0(R0)
    j    done
odd:
    lw   a1, 0(a4)        # I2: LOAD R1, 0(R4)
    add  a4, a0, a1       # I3: ADD R4, R0, R1
done:
    li   a7, 93
    mv   a0, a1
    ecall
    .data
data: .word data
"""


def test_fig9_masked_scoreboard_lets_i1_issue_first() -> None:
    """On the SM with MP: with the masked scoreboard I1 issues while I2's load is in flight;
    the plain scoreboard holds I1 until I2 has written R1 back."""
    image = assemble(FIG9, "fig9.S")
    launch = LaunchConfig(grid=1, block=4, geometry=W4)
    issue: dict[str, int] = {}
    for kind in ScoreboardKind:
        config = SMConfig(policy=Policy.MP, scoreboard=kind)
        result = run_sm(image, launch, config, trace=True)
        assert result.fault is None
        i1 = image.symbols["odd"] - 8
        i2 = image.symbols["odd"]
        cycles = {r.pc: r.cycle for r in result.trace}
        issue[kind.value] = cycles[i1] - cycles[i2]
    assert issue["masked"] < SMConfig().latencies.global_ <= issue["plain"]


# ----------------------------------------------------------------------------------------------
# Fig 10/11: do { A: if (cond1) { B; break; } else { C } } while (cond2); D


def test_fig11_opportunistic_early_reconvergence_states() -> None:
    b_r = B + 4  # the leading split has executed B's first instruction
    unit = SplitTables(4, 0b1111, A, st_size=4, rt_size=4, orec=True)
    unit.execute(Executed(0, A, 0b1111, {B: 0b1010, C: 0b0101}, control=True, rpc=D))
    unit.execute(Executed(sid_at(unit, B), B, 0b1010, {b_r: 0b1010}))  # B split runs B1
    unit.execute(Executed(sid_at(unit, C), C, 0b0101, {A: 0b0101}, control=True, rpc=D))
    assert tables(unit) == ({(A, 0b0101, D), (B, 0b1010, D)}, {(D, 0b1111, 0b1111)})  # 1
    unit.execute(Executed(sid_at(unit, A), A, 0b0101, {B: 0b0101}, control=True, rpc=D))
    # 2-3: the associative search finds B1010 in block B with the same RPC: a new RT entry at
    # its next PC (B_R) gathers both; B1010 waits there, B0101 reconverges at B_R.
    assert tables(unit) == (
        {(B, 0b0101, b_r)},
        {(D, 0b1111, 0b1111), (b_r, 0b1111, 0b0101)},
    )
    unit.execute(Executed(sid_at(unit, B), B, 0b0101, {b_r: 0b0101}))
    assert tables(unit) == ({(b_r, 0b1111, D)}, {(D, 0b1111, 0b1111)})  # 4


def test_fig11_without_orec_the_splits_stay_apart() -> None:
    unit = SplitTables(4, 0b1111, A, st_size=4, rt_size=4)
    unit.execute(Executed(0, A, 0b1111, {B: 0b1010, C: 0b0101}, control=True, rpc=D))
    unit.execute(Executed(sid_at(unit, B), B, 0b1010, {B + 4: 0b1010}))
    unit.execute(Executed(sid_at(unit, C), C, 0b0101, {A: 0b0101}, control=True, rpc=D))
    unit.execute(Executed(sid_at(unit, A), A, 0b0101, {B: 0b0101}, control=True, rpc=D))
    assert tables(unit) == ({(B, 0b0101, D), (B, 0b1010, D)}, {(D, 0b1111, 0b1111)})


LOOP_WITH_BREAK = """
# Fig 10: thread t breaks out in iteration t + 1; B (the break path) is long, so a thread that
# breaks later finds the earlier ones still inside B.
_start:
    csrr t0, tid
    li   s0, 0
    li   s1, 8
A:  addi s0, s0, 1
    addi t1, t0, 1
{hint_a}
    beq  s0, t1, B        # cond1: break
C:  addi s2, s2, 3        # else block
{hint_c}
    blt  s0, s1, A        # while (cond2)
    j    D
B:  mul  s3, s0, s0
    mul  s3, s3, s3
    mul  s3, s3, s3
    addi s3, s3, 1
    addi s3, s3, 1
    addi s3, s3, 1
D:  add  a0, s2, s3
    li   a7, 93
    ecall
"""


def loop_with_break(hints: bool) -> str:
    hint = "    rhint D" if hints else ""
    return LOOP_WITH_BREAK.format(hint_a=hint, hint_c=hint)


def test_fig10_loop_with_break_orec_reconverges_early() -> None:
    """MP with OREC executes the break path for several threads at once; basic MP (like SPS)
    runs it once per thread. Same results; OREC has fewer warp instructions and higher SIMD
    efficiency (seed 002 Sec 6.1)."""
    image = assemble(loop_with_break(hints=True), "fig10.S")
    launch = LaunchConfig(grid=1, block=4, geometry=W4)
    reference = run(image, launch)
    results = {}
    for policy in (Policy.SPS, Policy.MP, Policy.MP_OREC):
        result = run_sm(image, launch, SMConfig(policy=policy), trace=True)
        assert result.fault is None
        assert result.exit_codes.tolist() == reference.exit_codes.tolist()
        results[policy] = result
    b, d = image.symbols["B"], image.symbols["D"]
    in_b = {p: sum(b <= r.pc < d for r in res.trace) for p, res in results.items()}
    assert in_b[Policy.SPS] == in_b[Policy.MP] == 4 * 6  # B's six instructions once per thread
    assert in_b[Policy.MP_OREC] < in_b[Policy.MP]
    mp, orec = (results[p].metrics for p in (Policy.MP, Policy.MP_OREC))
    assert mp is not None and orec is not None
    assert orec.counters.warp_instructions < mp.counters.warp_instructions
    assert orec.simd_efficiency > mp.simd_efficiency
