"""Stimulus for the unified arbiter (seed 000 Sec 4.1-4.3, Fig 4b, Table 2)."""

from __future__ import annotations

import random

from reconverge.golden.blocks.arbiter import Arbiter, ArbiterParams, line_key, pc_key
from reconverge.golden.blocks.base import Values
from reconverge.testbench.lockstep import RESET, Scenario, hold
from reconverge.testbench.scenarios import ScenarioSpec

#: Parameter sets of the cocotb suite: Table 2's 4 threads, W = L = 8 registered at every
#: level, and W = 32 with a register stage every 2 levels (plus its root).
PARAM_SETS = [ArbiterParams(4, 8, 0), ArbiterParams(8, 16, 1), ArbiterParams(32, 24, 2)]
#: More shapes for the fast Amaranth-simulator tests (odd N, a single input, deep pipelines).
EXTRA_PARAM_SETS = [
    ArbiterParams(1, 4, 1),
    ArbiterParams(5, 6, 0),
    ArbiterParams(12, 12, 3),
    ArbiterParams(64, 16, 0),
]

PC_WIDTH = 4  # Table 2 labels its PCs 1..7

#: Seed 000 Table 2 (if-then-else, 4 threads): (PC, instruction, PC_i, NPC_i).
TABLE2 = [
    (1, "A", (1, 1, 1, 1), (2, 2, 2, 2)),
    (2, "if(!c) br 5", (2, 2, 2, 2), (3, 3, 5, 5)),
    (3, "B", (3, 3, 5, 5), (4, 4, 5, 5)),
    (4, "br 6", (4, 4, 5, 5), (6, 6, 5, 5)),
    (5, "C", (6, 6, 5, 5), (6, 6, 6, 6)),
    (6, "D", (6, 6, 6, 6), (7, 7, 7, 7)),
]
#: The condition c per thread: threads 2 and 3 take ``if(!c) br 5``.
TABLE2_C = (True, True, False, False)


def _table2_next(pc: int, thread: int) -> int:
    """The little program of seed 000 Fig 1 with its jumps (Table 2's Instruction column)."""
    if pc == 2:
        return 3 if TABLE2_C[thread] else 5
    if pc == 4:
        return 6
    return pc + 1


def _inputs(model: Arbiter, valid: int, keys: list[int]) -> Values:
    return {"valid": valid, "key": tuple(keys)}


def table2(model: Arbiter, rng: random.Random, cycles: int) -> Scenario:
    """seed 000 Table 2: PC-mode arbitration of the if-then-else trace (4 threads, SP:PC keys);
    each row's common PC, active mask and NPCs are checked."""
    sp = (1 << (model.params.key_width - PC_WIDTH)) - 1  # every thread at the same call depth
    pcs = [1, 1, 1, 1]
    for row, (pc, instruction, pc_i, npc_i) in enumerate(TABLE2, 1):
        where = f"seed 000 Table 2 row {row} ({instruction})"
        assert tuple(pcs) == pc_i, f"{where}: PC_i {pcs}, table {pc_i}"
        # threads beyond the four are disabled; their (smaller) keys must be ignored
        keys = [pc_key(sp, p, PC_WIDTH) for p in pcs] + [0] * (model.params.n - 4)
        out = yield from hold(_inputs(model, 0b1111, keys), model.latency)
        expected_mask = sum(1 << t for t in range(4) if pc_i[t] == pc)
        assert out["out_valid"] == 1, where
        assert out["min_key"] == pc_key(sp, pc, PC_WIDTH), f"{where}: PC {out['min_key']:#x}"
        assert out["mask"] == expected_mask, f"{where}: mask {out['mask']:04b}"
        pcs = [_table2_next(p, t) if out["mask"] >> t & 1 else p for t, p in enumerate(pcs)]
        assert tuple(pcs) == npc_i, f"{where}: NPC_i {pcs}, table {npc_i}"


def listing1_sp(model: Arbiter, rng: random.Random, cycles: int) -> Scenario:
    """seed 000 Sec 3 / Listing 1: the deeper call (smaller SP) wins over a smaller PC; on an
    SP tie the smaller PC wins; disabled threads are ignored."""
    pc_width = model.params.key_width // 2
    top, deeper = (
        (1 << (model.params.key_width - pc_width)) - 1,
        (1 << (model.params.key_width - pc_width)) - 2,
    )
    f_pc, after_if = (1 << pc_width) - 1, 1  # f() lies above the call site
    keys = [pc_key(after_if, 0, pc_width)] * model.params.n
    keys[: min(4, model.params.n)] = [
        pc_key(top, after_if, pc_width),
        pc_key(deeper, f_pc, pc_width),
        pc_key(top, after_if + 1, pc_width),
        pc_key(deeper, f_pc, pc_width),
    ][: model.params.n]
    enabled = (1 << min(4, model.params.n)) - 1
    out = yield from hold(_inputs(model, enabled, keys), model.latency)
    if model.params.n >= 4:
        assert out["mask"] == 0b1010, "threads inside f() (smaller SP) must be selected"
        out = yield from hold(_inputs(model, 0b0101, keys), model.latency)
        assert out["mask"] == 0b0001, "on an SP tie the smaller PC must win"


def coalescing(model: Arbiter, rng: random.Random, cycles: int) -> Scenario:
    """seed 000 Sec 4.2: memory mode, one cache line per pass, the other lanes replay until
    every request is served; passes = distinct lines, served in ascending line order."""
    line_bytes = 16  # the 128-bit line of seed 000 Fig 3
    lines = 1 << model.params.key_width
    spent = 0
    while spent < cycles:
        shape = rng.randrange(4)
        base = rng.randrange(lines) * line_bytes
        if shape == 0:  # all lanes in one line
            addresses = [base + 4 * (i % 4) for i in range(model.params.n)]
        elif shape == 1:  # unit stride words
            addresses = [(base + 4 * i) % (lines * line_bytes) for i in range(model.params.n)]
        elif shape == 2:  # a few hot lines
            hot = [rng.randrange(lines) * line_bytes for _ in range(rng.randint(1, 3))]
            addresses = [rng.choice(hot) + rng.randrange(line_bytes) for _ in range(model.params.n)]
        else:  # scattered
            addresses = [rng.randrange(lines * line_bytes) for _ in range(model.params.n)]
        keys = [line_key(a, line_bytes) for a in addresses]
        requesting = rng.getrandbits(model.params.n) | (1 << rng.randrange(model.params.n))
        pending, served_lines = requesting, []
        while pending:
            out = yield from hold(_inputs(model, pending, keys), model.latency)
            spent += model.latency + 1
            served = out["mask"]
            assert out["out_valid"] and served and served & ~pending == 0
            assert all(keys[i] == out["min_key"] for i in range(model.params.n) if served >> i & 1)
            served_lines.append(out["min_key"])
            pending &= ~served
        wanted = sorted({keys[i] for i in range(model.params.n) if requesting >> i & 1})
        assert served_lines == wanted, f"lines served {served_lines}, requested {wanted}"


def _random_keys(model: Arbiter, rng: random.Random) -> list[int]:
    top = (1 << model.params.key_width) - 1
    style = rng.randrange(5)
    if style == 0:  # few distinct values: many ties
        pool = [rng.randint(0, top) for _ in range(rng.randint(1, 3))]
        return [rng.choice(pool) for _ in range(model.params.n)]
    if style == 1:  # extremes
        return [rng.choice((0, 1, top - 1, top)) for _ in range(model.params.n)]
    if style == 2:  # all equal
        return [rng.randint(0, top)] * model.params.n
    return [rng.randint(0, top) for _ in range(model.params.n)]


def _random_valid(model: Arbiter, rng: random.Random) -> int:
    every = (1 << model.params.n) - 1
    style = rng.randrange(6)
    if style == 0:
        return 0
    if style == 1:
        return every
    if style == 2:
        return 1 << rng.randrange(model.params.n)
    if style == 3:
        return every & ~(1 << rng.randrange(model.params.n))
    return rng.getrandbits(model.params.n)


def random_stream(model: Arbiter, rng: random.Random, cycles: int) -> Scenario:
    """Random (valid, key) inputs every cycle: ties, extremes, empty and full valid masks,
    with an occasional synchronous reset mid-stream."""
    for cycle in range(cycles):
        if cycle % 997 == 500:
            yield RESET
        yield _inputs(model, _random_valid(model, rng), _random_keys(model, rng))


SCENARIOS = [
    ScenarioSpec(
        "seed000_table2_if_then_else",
        table2,
        lambda p: p.n >= 4 and p.key_width > PC_WIDTH,
    ),
    ScenarioSpec("seed000_listing1_sp_priority", listing1_sp, lambda p: p.key_width >= 4),
    ScenarioSpec("seed000_sec42_memory_coalescing", coalescing),
    ScenarioSpec("random", random_stream),
]
