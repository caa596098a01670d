"""Stimulus for the squeezer (seed 001 Sec 4.1-4.3, Fig 4.1/4.3, Appendix A/C)."""

from __future__ import annotations

import random

from reconverge.golden.blocks.squeezer import Squeezer, SqueezerParams
from reconverge.testbench.lockstep import RESET, Scenario, hold
from reconverge.testbench.scenarios import ScenarioSpec

#: Parameter sets of the cocotb suite: the seed's W = 32 / L = 8 combinational, a pipelined
#: W = 16 / L = 4, and W = L = 8 (one quarter: nothing to squeeze) registered once.
PARAM_SETS = [SqueezerParams(32, 8, 0), SqueezerParams(16, 4, 2), SqueezerParams(8, 8, 1)]
#: More shapes for the fast Amaranth-simulator tests.
EXTRA_PARAM_SETS = [
    SqueezerParams(64, 8, 3),
    SqueezerParams(8, 2, 0),
    SqueezerParams(4, 1, 1),
    SqueezerParams(32, 32, 0),
]


def _seed_geometry(params: SqueezerParams) -> bool:
    return params.warp_size == 32 and params.simd_width == 8


def _mask(threads: list[int]) -> int:
    return sum(1 << t for t in threads)


def _warp(valid: int, mask: int) -> dict[str, int]:
    """The inputs: a warp with this active mask."""
    return {"warp__valid": valid, "warp__mask": mask}


def _squeeze_and_check(
    model: Squeezer, threads: list[int], layout: dict[int, list[int]], order: tuple[int, ...]
) -> Scenario:
    """Drive one warp and check the squeezed result against a hand-derived ``layout``
    (physical quarter -> its threads lane by lane, -1 for a hole) and sort ``order``."""
    lsize = model.params.simd_width
    out = yield from hold(_warp(1, _mask(threads)), model.latency)
    out = {name.removeprefix("squeezed__"): value for name, value in out.items()}
    assert out["valid"] == 1
    assert out["order"] == order, f"sorted quarters {out['order']}, expected {order}"
    for q in range(model.params.quarters):
        expected = layout.get(q, [-1] * lsize)
        got = [
            out["src"][q * lsize + j] * lsize + j if out["mask"] >> (q * lsize + j) & 1 else -1
            for j in range(lsize)
        ]
        assert got == expected, f"quarter {q}: threads {got}, expected {expected}"
    assert out["quarter_mask"] == sum(1 << q for q in layout)
    assert out["passes"] == len(layout)
    return out


def fig43(model: Squeezer, rng: random.Random, cycles: int) -> Scenario:
    """seed 001 Fig 4.3 (Sec 4.1 steps 1-4, Sec 4.2): a warp whose quarters #0..#3 hold 5, 3,
    2, 1 threads squeezes into #0 and #1 after the second recipient round; quarter mask 0011
    in sorted labels, warp size 16 (2 passes). Run with the quarters in sorted order and
    permuted (#2, #0, #3, #1 in physical quarters 0..3)."""
    # Sorted labels: #0 lanes 0-4, #1 lanes 0, 1, 5, #2 lanes 2, 6, #3 lane 7. Identity
    # placement (quarter q holds #q), then #0 in q1, #1 in q3, #2 in q0, #3 in q2.
    placements = [
        (
            [0, 1, 2, 3, 4, 8, 9, 13, 18, 22, 31],
            {0: [0, 1, 2, 3, 4, 13, 22, 31], 1: [8, 9, 18, -1, -1, -1, -1, -1]},
            (0, 1, 2, 3),
        ),
        (
            [2, 6, 8, 9, 10, 11, 12, 23, 24, 25, 29],
            {1: [8, 9, 10, 11, 12, 29, 6, 23], 3: [24, 25, 2, -1, -1, -1, -1, -1]},
            (1, 3, 0, 2),
        ),
    ]
    for threads, layout, order in placements:
        out = yield from _squeeze_and_check(model, threads, layout, order)
        sorted_label_mask = sum(
            1 << i for i, q in enumerate(out["order"]) if out["quarter_mask"] >> q & 1
        )
        assert sorted_label_mask == 0b0011, "Sec 4.2: quarter mask 0011 in sorted labels"


def fig41(model: Squeezer, rng: random.Random, cycles: int) -> Scenario:
    """seed 001 Fig 4.1 as Sec 4.1 describes it: after the branch, warp B (threads 0-3 and
    12-15) squeezes to 8 threads — 12-15 move into the first quarter-warp — and warp C (the
    other 24) to 24 threads (3 passes)."""
    b = list(range(4)) + list(range(12, 16))
    yield from _squeeze_and_check(model, b, {0: b}, (0, 1, 2, 3))
    c = [t for t in range(32) if t not in b]
    # counts 4, 4, 8, 8 -> Appendix A's exchange sort gives q2, q3, q0, q1
    yield from _squeeze_and_check(
        model,
        c,
        {0: [8, 9, 10, 11, 4, 5, 6, 7], 2: list(range(16, 24)), 3: list(range(24, 32))},
        (2, 3, 0, 1),
    )


def _some_bits(rng: random.Random, width: int, count: int) -> int:
    bits = 0
    for _ in range(count):
        bits |= 1 << rng.randrange(width)
    return bits


def _structured_mask(model: Squeezer, rng: random.Random) -> int:
    w, lsize = model.params.warp_size, model.params.simd_width
    every = (1 << w) - 1
    style = rng.randrange(8)
    if style == 0:
        return 0
    if style == 1:
        return every
    if style == 2:  # whole quarters
        return sum(((1 << lsize) - 1) << q for q in range(0, w, lsize) if rng.random() < 0.5)
    if style == 3:  # one lane in several quarters: cannot squeeze
        j = rng.randrange(lsize)
        return sum(1 << (q + j) for q in range(0, w, lsize) if rng.random() < 0.7)
    if style == 4:  # sparse
        return _some_bits(rng, w, rng.randint(1, 3))
    if style == 5:  # dense with a few holes
        return every & ~_some_bits(rng, w, rng.randint(1, 4))
    if style == 6:  # if/else halves: threads below a random split
        return (1 << rng.randrange(w + 1)) - 1
    return rng.getrandbits(w)


def random_stream(model: Squeezer, rng: random.Random, cycles: int) -> Scenario:
    """Random and structured active masks every cycle (empty, full, whole quarters, single
    lanes, sparse, nearly full), random valid, an occasional synchronous reset."""
    for cycle in range(cycles):
        if cycle % 997 == 500:
            yield RESET
        yield _warp(rng.getrandbits(1), _structured_mask(model, rng))


def exhaustive(model: Squeezer, rng: random.Random, cycles: int) -> Scenario:
    """Every active mask of a small warp (W <= 12), once each."""
    for mask in range(1 << model.params.warp_size):
        yield _warp(1, mask)


SCENARIOS = [
    ScenarioSpec("seed001_fig43_squeeze_steps", fig43, _seed_geometry),
    ScenarioSpec("seed001_fig41_warps_b_c", fig41, _seed_geometry),
    ScenarioSpec("random", random_stream),
    ScenarioSpec("exhaustive", exhaustive, lambda p: p.warp_size <= 12),
]
