"""Stimulus for the dual-path stack with paired-path comparison (seed 003 Fig 4/5; DPS)."""

from __future__ import annotations

import random

from reconverge.golden.blocks.divergence import NEVER, Executed
from reconverge.golden.blocks.stack_twins import DualPathStackParams, DualPathStackTwin
from reconverge.golden.policies import Policy
from reconverge.testbench.lockstep import Scenario
from reconverge.testbench.scenarios import ScenarioSpec
from reconverge.testbench.scenarios.stacks import (
    Shadow,
    Values,
    current,
    execute,
    idle,
    issue,
    launch,
    random_stream,
    split_of,
    straight,
)

#: Parameter sets of the cocotb suite, one per mode: Fig 4's warp of 4 threads in implicit
#: PPC, W = 8 (the W = L = 8 geometry: the stack only sees W) in explicit PPC, the default
#: W = 32 as DPS.
DPS, PPC = Policy.DPS, Policy.PPC
PARAM_SETS = [
    DualPathStackParams(4, 4, 16, PPC, hints=False),
    DualPathStackParams(8, 8, 16, PPC, hints=True),
    DualPathStackParams(32, 8, 32, DPS, hints=True),
]
#: More shapes for the fast Amaranth-simulator tests: every mode on another size, a single
#: thread, a one-entry stack.
EXTRA_PARAM_SETS = [
    DualPathStackParams(4, 4, 16, PPC, hints=True),
    DualPathStackParams(8, 6, 12, DPS, hints=False),
    DualPathStackParams(16, 16, 24, PPC, hints=False),
    DualPathStackParams(1, 2, 8, PPC, hints=False),
    DualPathStackParams(4, 1, 12, PPC, hints=True),
]

# The unstructured loop with break of seed 002 Fig 10 (golden/tests/test_seed003_ppc.py):
# A (two instructions, then the cond1 branch to B), C (one, then the loop branch back to A),
# B (the break path, three instructions), D.
A, A_BR = 0x100, 0x108
C, C_BR = 0x10C, 0x110
B, D = 0x114, 0x120


def _state(model: DualPathStackTwin) -> list[list[tuple[int, int]]]:
    """Stack entries bottom to top, each as its paths' (PC, mask)."""
    assert model.unit is not None
    return [[(p.pc, p.mask) for p in e.paths] for e in model.unit.entries]


def _running(out: Values) -> int:
    """The one path PPC offers (its slot)."""
    valid = int(out["splits__valid"])  # type: ignore[call-overload]
    assert valid in (1, 2), f"PPC offers exactly one path, not {valid:02b}"
    return valid >> 1


def _ppc_step(sh: Shadow, out: Values, targets: dict[int, int], rpc: int | None) -> Scenario:
    return (yield from issue(sh, out, targets, _running(out), control=True, rpc=rpc))


def _ppc_straight(sh: Shadow, out: Values, n: int) -> Scenario:
    for _ in range(n):
        out = yield from straight(sh, out, 1, _running(out))
    return out


def fig4_implicit(model: DualPathStackTwin, rng: random.Random, cycles: int) -> Scenario:
    """seed 003 Fig 4/5, implicit PPC (no hints): threads 1, 3 break in the first iteration,
    0, 2 in the second. The divergent cond1 branch pushes both paths (Fig 5 line 4); the path
    with the smaller PC runs (Fig 4 lines 10-15) and, compared after every instruction
    (Fig 5 line 31), keeps running around the loop; when it arrives at B, where the breaking
    path waits, the two PCs are equal: the entry is deleted and the parent path continues at
    B with every thread (Fig 4 lines 2-7) — earlier than the IPDOM D."""
    sh = Shadow(model)
    yield from sh.drive(launch(model, A, 0b1111))
    out = yield from sh.drive(idle(model))
    out = yield from _ppc_straight(sh, out, 2)
    out = yield from _ppc_step(sh, out, {C: 0b0101, B: 0b1010}, None)  # Fig 5 line 4: push
    assert _state(sh.model) == [[(NEVER, 0b1111)], [(C, 0b0101), (B, 0b1010)]]
    assert split_of(out, _running(out)) == (C, 0b0101) and out["status__stack"] == 2  # C < B
    out = yield from _ppc_straight(sh, out, 1)
    out = yield from _ppc_step(sh, out, {A: 0b0101}, None)  # loop back: A < B
    assert split_of(out, _running(out)) == (A, 0b0101)
    out = yield from _ppc_straight(sh, out, 2)
    out = yield from _ppc_step(sh, out, {B: 0b0101}, None)  # cond1 for 0, 2: PCs equal
    assert _state(sh.model) == [[(B, 0b1111)]]
    assert split_of(out, _running(out)) == (B, 0b1111) and out["status__stack"] == 1


def fig4_explicit(model: DualPathStackTwin, rng: random.Random, cycles: int) -> Scenario:
    """seed 003 Fig 4, explicit PPC: with the RPC D from the hint the running path keeps
    running until it reaches D (the comparison is made at the reconvergence instruction); the
    paths meeting at B go unnoticed and B runs once per path; at D the other path runs; when
    both PCs are D the entry is deleted."""
    sh = Shadow(model)
    yield from sh.drive(launch(model, A, 0b1111))
    out = yield from sh.drive(idle(model))
    out = yield from _ppc_straight(sh, out, 2)
    out = yield from _ppc_step(sh, out, {C: 0b0101, B: 0b1010}, D)
    assert split_of(out, _running(out)) == (C, 0b0101)
    out = yield from _ppc_straight(sh, out, 1)
    out = yield from _ppc_step(sh, out, {A: 0b0101}, D)
    out = yield from _ppc_straight(sh, out, 2)
    out = yield from _ppc_step(sh, out, {B: 0b0101}, D)  # same PC as the other path
    assert _state(sh.model) == [[(D, 0b1111)], [(B, 0b0101), (B, 0b1010)]]
    assert split_of(out, _running(out)) == (B, 0b0101) and out["status__stack"] == 2
    out = yield from _ppc_straight(sh, out, 3)  # reaches D: the other path runs B
    assert split_of(out, _running(out)) == (B, 0b1010)
    out = yield from _ppc_straight(sh, out, 3)  # both at D: the entry is popped
    assert _state(sh.model) == [[(D, 0b1111)]]
    assert split_of(out, _running(out)) == (D, 0b1111) and out["status__stack"] == 1


def dps_both_paths(model: DualPathStackTwin, rng: random.Random, cycles: int) -> Scenario:
    """DPS (seed 002 Sec 7, seed 003 Sec III): both paths of the top entry are offered and
    issue interleaved; a path at the RPC waits there; when both have arrived the entry is
    popped, in a clock of its own, and the parent continues at the RPC with every thread."""
    sh = Shadow(model)
    yield from sh.drive(launch(model, A, 0b1111))
    out = yield from sh.drive(idle(model))
    out = yield from straight(sh, out, 2)
    out = yield from issue(sh, out, {C: 0b0101, B: 0b1010}, control=True, rpc=D)
    assert out["splits__valid"] == 0b11 and out["status__stack"] == 2
    assert (split_of(out, 0), split_of(out, 1)) == ((C, 0b0101), (B, 0b1010))
    for _ in range(2):  # interleaved: B, then C
        out = yield from straight(sh, out, 1, path=1)
        out = yield from straight(sh, out, 1, path=0)
    out = yield from issue(sh, out, {D: 0b0101}, path=0, control=True)  # C jumps to D
    assert out["splits__valid"] == 0b10 and out["status__busy"] == 0  # C waits at D
    sid, pc, mask = current(sh.model, out, 1)
    (fall,) = execute(sh.model, Executed(sid, pc, mask, {pc + 4: mask}))  # B falls through
    out = yield from sh.drive(fall)
    # the entry is finished: the next clock pops it (busy, no split), one clock
    out = yield from sh.drive(idle(sh.model))
    assert out["status__busy"] == 1 and out["splits__valid"] == 0 and out["status__stack"] == 2
    out = yield from sh.drive(idle(sh.model))
    assert out["status__busy"] == 0 and out["splits__valid"] == 0b01
    assert out["status__stack"] == 1 and split_of(out, 0) == (D, 0b1111)


def k_way(model: DualPathStackTwin, rng: random.Random, cycles: int) -> Scenario:
    """An indirect jump to four targets takes three update cycles (``more``, ``cont``): a
    chain of three entries, each holding one target and a suspended path for the rest, the
    two lowest targets on top; the groups then meet at one PC and every entry is popped."""
    sh = Shadow(model)
    targets = {0x200: 0b0001, 0x300: 0b0010, 0x400: 0b0100, 0x500: 0b1000}
    join = 0x600
    yield from sh.drive(launch(model, A, 0b1111))
    out = yield from sh.drive(idle(model))
    rpc = None if model.params.implicit else join
    out = yield from issue(sh, out, targets, control=True, rpc=rpc)
    r = NEVER if rpc is None else rpc
    assert _state(sh.model) == [
        [(r, 0b1111)],
        [(r, 0b0111), (0x500, 0b1000)],
        [(r, 0b0011), (0x400, 0b0100)],
        [(0x200, 0b0001), (0x300, 0b0010)],
    ]
    assert out["status__stack"] == 4
    while out["status__stack"] > 1:  # every offered path jumps to the join point
        slot = 0 if int(out["splits__valid"]) & 1 else 1  # type: ignore[call-overload]
        out = yield from issue(sh, out, {join: split_of(out, slot)[1]}, slot, control=True)
    assert split_of(out, 0 if int(out["splits__valid"]) & 1 else 1) == (join, 0b1111)  # type: ignore[call-overload]


#: The three designs: DPS, PPC explicit (with hints), PPC implicit (without).
MODES = ("dps", "ppc-explicit", "ppc-implicit")


def mode(params: DualPathStackParams) -> str:
    if not params.paired:
        return "dps"
    return "ppc-implicit" if params.implicit else "ppc-explicit"


def _mode(*modes: str, depth: int = 2, w: int = 4):  # type: ignore[no-untyped-def]
    return lambda p: mode(p) in modes and p.stack_depth >= depth and p.warp_size >= w


SCENARIOS = [
    ScenarioSpec("seed003_fig4_ppc_implicit", fig4_implicit, _mode("ppc-implicit")),
    ScenarioSpec("seed003_fig4_ppc_explicit", fig4_explicit, _mode("ppc-explicit")),
    ScenarioSpec("dps_both_paths", dps_both_paths, _mode("dps")),
    ScenarioSpec("k_way_indirect_chain", k_way, _mode(*MODES, depth=4)),
    ScenarioSpec("random", random_stream),
]
