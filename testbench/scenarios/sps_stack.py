"""Stimulus for the SPS reconvergence stack (seed 002 Sec 2.2, Fig 2/3)."""

from __future__ import annotations

import random

from reconverge.golden.blocks.divergence import NEVER, RETURN
from reconverge.golden.blocks.stack_twins import SpsStackParams, SpsStackTwin
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
PARAM_SETS = [SpsStackParams(4, 4, 16), SpsStackParams(8, 8, 16), SpsStackParams(32, 16, 32)]
#: More shapes for the fast Amaranth-simulator tests: a single thread, a one-entry stack
#: (every divergence overflows), a deep one.
EXTRA_PARAM_SETS = [SpsStackParams(1, 2, 8), SpsStackParams(4, 1, 12), SpsStackParams(16, 32, 24)]

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
    assert split_of(out) == (A, 0b1111) and out["status__stack"] == 1  # (1)
    out = yield from straight(sh, out, 1)
    out = yield from issue(sh, out, {B: 0b0101, C: 0b1010}, control=True, rpc=D)
    assert _entries(sh.model) == [(D, 0b1111, NEVER), (C, 0b1010, D), (B, 0b0101, D)]  # (2)
    assert split_of(out) == (B, 0b0101) and out["status__stack"] == 3
    out = yield from straight(sh, out, 1)
    out = yield from issue(sh, out, {D: 0b0101}, control=True)  # B's jump to D
    assert _entries(sh.model) == [(D, 0b1111, NEVER), (C, 0b1010, D)]  # (3)
    assert split_of(out) == (C, 0b1010) and out["status__stack"] == 2
    out = yield from straight(sh, out, 2)  # C falls through to D
    assert _entries(sh.model) == [(D, 0b1111, NEVER)]  # (4)
    assert split_of(out) == (D, 0b1111) and out["status__stack"] == 1


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
    assert (
        split_of(out) == (f, 0b1111) and out["status__stack"] == 2 and out["status__in_call"] == 1
    )
    out = yield from issue(sh, out, {f + 4: 0b0011, f + 0x40: 0b1100}, control=True, rpc=RETURN)
    assert out["status__stack"] == 4 and split_of(out) == (f + 4, 0b0011)
    out = yield from issue(sh, out, {ret_addr: 0b0011}, control=True, ret=True)
    assert out["status__stack"] == 3 and split_of(out) == (f + 0x40, 0b1100)
    out = yield from issue(sh, out, {ret_addr: 0b1100}, control=True, ret=True)
    assert (
        out["status__stack"] == 1
        and split_of(out) == (ret_addr, 0b1111)
        and out["status__in_call"] == 0
    )
    out = yield from issue(sh, out, {}, barrier=0b1111)
    assert out["splits__valid"] == 0
    yield from sh.drive(idle(model) | {"release__lanes": 0b1111})
    out = yield from sh.drive(idle(model))
    assert split_of(out) == (ret_addr + 4, 0b1111)


def overflow(model: SpsStackTwin, rng: random.Random, cycles: int) -> Scenario:
    """Nested divergent branches until the stack is full: the one that does not fit raises
    ``overflow`` and changes nothing; the flag stays until the next launch."""
    sh = Shadow(model)
    yield from sh.drive(launch(model, A, (1 << model.params.warp_size) - 1))
    out = yield from sh.drive(idle(model))
    while not out["status__overflow"]:
        assert out["status__stack"] <= model.params.stack_depth
        pc, mask = split_of(out)
        if mask.bit_count() < 2:
            return
        low = mask & -mask
        before = out["status__stack"]
        targets = {pc + 4: mask & ~low, pc + 0x100: low}  # the bigger group on top
        out = yield from issue(sh, out, targets, control=True, rpc=pc + 0x200)
        if out["status__overflow"]:
            assert out["status__stack"] == before  # unchanged
    yield from sh.drive(launch(model, A, 1))
    out = yield from sh.drive(idle(model))
    assert out["status__overflow"] == 0 and out["status__stack"] == 1


SCENARIOS = [
    ScenarioSpec("seed002_fig3_sps", fig3, lambda p: p.warp_size >= 4 and p.stack_depth >= 3),
    ScenarioSpec(
        "calls_returns_barrier", nested_calls, lambda p: p.stack_depth >= 4 <= p.warp_size
    ),
    ScenarioSpec("overflow", overflow, lambda p: p.warp_size >= 2),
    ScenarioSpec("random", random_stream),
]
