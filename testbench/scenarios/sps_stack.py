"""Stimulus for the SPS reconvergence stack (seed 002 Sec 2.2, Fig 2/3)."""

from __future__ import annotations

import random

from reconverge.golden.blocks.divergence import NEVER, RETURN
from reconverge.golden.blocks.stack_twins import SpsStackTwin
from reconverge.testbench.lockstep import Scenario
from reconverge.testbench.scenarios import ScenarioSpec
from reconverge.testbench.scenarios.stacks import (
    Shadow,
    idle,
    issue,
    launch,
    random_stream,
    split_of,
    straight,
)

#: Parameter sets of the cocotb suite: Fig 3's warp of 4 threads, W = 8 (the W = L = 8
#: geometry: the stack only sees W), the default W = 32 with 16 entries.
PARAM_SETS = [
    {"warp_size": 4, "depth": 4, "pc_width": 16},
    {"warp_size": 8, "depth": 8, "pc_width": 16},
    {"warp_size": 32, "depth": 16, "pc_width": 32},
]
#: More shapes for the fast Amaranth-simulator tests: a single thread, a one-entry stack
#: (every divergence overflows), a deep one.
EXTRA_PARAM_SETS = [
    {"warp_size": 1, "depth": 2, "pc_width": 8},
    {"warp_size": 4, "depth": 1, "pc_width": 12},
    {"warp_size": 16, "depth": 32, "pc_width": 24},
]

# Fig 2: A (two instructions, the second is BR_{B-C}), B (two, the second jumps to D), C
# (two, falling through to D), D.
A, B, C, D = 0x100, 0x108, 0x110, 0x118


def _entries(model: SpsStackTwin) -> list[tuple[int, int, int]]:
    assert model.unit is not None
    return [(e.pc, e.mask, e.rpc) for e in model.unit.entries]


def fig3(model: SpsStackTwin, rng: random.Random, cycles: int) -> Scenario:
    """seed 002 Fig 3: the SPS stack runs Fig 2's if/else for a warp of 4 threads. (1) one
    entry A_1111; (2) BR_{B-C} sets its PC to the RPC D and pushes C_1010 and B_0101 (TOS),
    both with RPC D; only B may issue; (3) B reaches D and is popped, C runs; (4) C reaches D
    and is popped: D_1111."""
    sh = Shadow(model)
    yield from sh.drive(launch(model, A, 0b1111))
    out = yield from sh.drive(idle(model))
    assert split_of(out) == (A, 0b1111) and out["depth"] == 1  # (1)
    out = yield from straight(sh, out, 1)
    out = yield from issue(sh, out, {B: 0b0101, C: 0b1010}, control=True, rpc=D)
    assert _entries(sh.model) == [(D, 0b1111, NEVER), (C, 0b1010, D), (B, 0b0101, D)]  # (2)
    assert split_of(out) == (B, 0b0101) and out["depth"] == 3
    out = yield from straight(sh, out, 1)
    out = yield from issue(sh, out, {D: 0b0101}, control=True)  # B's jump to D
    assert _entries(sh.model) == [(D, 0b1111, NEVER), (C, 0b1010, D)]  # (3)
    assert split_of(out) == (C, 0b1010) and out["depth"] == 2
    out = yield from straight(sh, out, 2)  # C falls through to D
    assert _entries(sh.model) == [(D, 0b1111, NEVER)]  # (4)
    assert split_of(out) == (D, 0b1111) and out["depth"] == 1


def nested_calls(model: SpsStackTwin, rng: random.Random, cycles: int) -> Scenario:
    """Calls and returns (call entries, GPGPU-Sim style): a call pushes a call entry, a branch
    inside the callee that reconverges only at the return (RPC RETURN) pushes return
    entries; each side returns on its own, the caller continues at the return address with
    every thread; a barrier waits the warp until released."""
    f, ret_addr = 0x400, A + 4
    sh = Shadow(model)
    yield from sh.drive(launch(model, A, 0b1111))
    out = yield from sh.drive(idle(model))
    out = yield from issue(sh, out, {f: 0b1111}, control=True, call=True)
    assert split_of(out) == (f, 0b1111) and out["depth"] == 2 and out["in_call"] == 1
    out = yield from issue(sh, out, {f + 4: 0b0011, f + 0x40: 0b1100}, control=True, rpc=RETURN)
    assert out["depth"] == 4 and split_of(out) == (f + 4, 0b0011)
    out = yield from issue(sh, out, {ret_addr: 0b0011}, control=True, ret=True)
    assert out["depth"] == 3 and split_of(out) == (f + 0x40, 0b1100)
    out = yield from issue(sh, out, {ret_addr: 0b1100}, control=True, ret=True)
    assert out["depth"] == 1 and split_of(out) == (ret_addr, 0b1111) and out["in_call"] == 0
    out = yield from issue(sh, out, {}, barrier=0b1111)
    assert out["split_valid"] == 0
    yield from sh.drive(idle(model) | {"bar_release": 0b1111})
    out = yield from sh.drive(idle(model))
    assert split_of(out) == (ret_addr + 4, 0b1111)


def overflow(model: SpsStackTwin, rng: random.Random, cycles: int) -> Scenario:
    """Nested divergent branches until the stack is full: the one that does not fit raises
    ``overflow`` and changes nothing; the flag stays until the next launch."""
    sh = Shadow(model)
    yield from sh.drive(launch(model, A, (1 << model.warp_size) - 1))
    out = yield from sh.drive(idle(model))
    while not out["overflow"]:
        assert out["depth"] <= model.depth
        pc, mask = split_of(out)
        if mask.bit_count() < 2:
            return
        low = mask & -mask
        before = out["depth"]
        targets = {pc + 4: mask & ~low, pc + 0x100: low}  # the bigger group on top
        out = yield from issue(sh, out, targets, control=True, rpc=pc + 0x200)
        if out["overflow"]:
            assert out["depth"] == before  # unchanged
    yield from sh.drive(launch(model, A, 1))
    out = yield from sh.drive(idle(model))
    assert out["overflow"] == 0 and out["depth"] == 1


SCENARIOS = [
    ScenarioSpec("seed002_fig3_sps", fig3, lambda m: m.warp_size >= 4 and m.depth >= 3),
    ScenarioSpec("calls_returns_barrier", nested_calls, lambda m: m.depth >= 4 <= m.warp_size),
    ScenarioSpec("overflow", overflow, lambda m: m.warp_size >= 2),
    ScenarioSpec("random", random_stream),
]
