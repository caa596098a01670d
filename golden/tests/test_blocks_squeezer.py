"""Golden squeezer twin (seed 001 Sec 4.1-4.3, Fig 4.3, Appendix A/C): against brute-force
properties and a transcription of the Appendix A listing, and the Fig 4.3 steps one by one."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reconverge.golden.blocks import SqueezerParams, squeeze, squeeze_steps
from reconverge.golden.blocks.squeezer import quarter_mask, sort_quarters
from reconverge.testbench.lockstep import run_golden
from reconverge.testbench.scenarios import rng_for
from reconverge.testbench.scenarios import squeezer as stimulus

GEOMETRIES = [
    (w, lsize) for w in (1, 2, 4, 8, 16, 32, 64) for lsize in (1, 2, 4, 8, 16, 32, 64) if lsize <= w
]


def appendix_a(tid_original: list[int], nq: int, lsize: int, literal: bool) -> list[int]:
    """Seed 001 Appendix A transcribed (4 quarters of 8 lanes generalised to nq of lsize).
    ``literal`` keeps the listing's two slips — ``thd_count_quar[l]`` indexed by a quarter id
    and the stale ``tid_original`` reads; without it the listing does what Sec 4.1 says."""
    thd_count_quar = [
        sum(t != -1 for t in tid_original[i * lsize : (i + 1) * lsize]) for i in range(nq)
    ]
    flag_quar = list(range(nq))
    for i in range(nq - 1):
        for j in range(i + 1, nq):
            if thd_count_quar[i] < thd_count_quar[j]:
                thd_count_quar[i], thd_count_quar[j] = thd_count_quar[j], thd_count_quar[i]
                flag_quar[i], flag_quar[j] = flag_quar[j], flag_quar[i]
    tid_squeez = list(tid_original)
    state = tid_original if literal else tid_squeez
    for i in range(nq - 1):
        l = flag_quar[i]
        if thd_count_quar[l if literal else i] == lsize:
            continue
        for j in range(lsize):
            if state[l * lsize + j] != -1:
                continue
            for k in range(nq - 1, i, -1):
                p = flag_quar[k]
                if state[p * lsize + j] == -1:
                    continue
                tid_squeez[l * lsize + j] = tid_squeez[p * lsize + j]
                tid_squeez[p * lsize + j] = -1
                break
    return tid_squeez


def layout(mask: int, w: int, lsize: int) -> list[int]:
    r = squeeze(mask, w, lsize)
    return [-1 if (t := r.thread(slot)) is None else t for slot in range(w)]


@st.composite
def warps(draw: st.DrawFn) -> tuple[int, int, int]:
    w, lsize = draw(st.sampled_from(GEOMETRIES))
    return draw(st.integers(0, (1 << w) - 1)), w, lsize


@given(warps())
def test_squeeze_against_brute_force(case: tuple[int, int, int]) -> None:
    mask, w, lsize = case
    r = squeeze(mask, w, lsize)
    threads = [r.thread(slot) for slot in range(w)]
    moved = [t for t in threads if t is not None]
    # a permutation of the active threads, each in its own lane
    assert sorted(moved) == [t for t in range(w) if mask >> t & 1]
    assert all(t is None or t % lsize == slot % lsize for slot, t in enumerate(threads))
    # as dense as any lane-preserving arrangement can be: passes = the busiest lane
    busiest = max(sum(mask >> (q + j) & 1 for q in range(0, w, lsize)) for j in range(lsize))
    assert r.passes == busiest == r.quarter_mask.bit_count()
    assert r.quarter_mask == quarter_mask(r.mask, w, lsize)
    # the occupied quarters are the first `passes` of the sorted order
    assert {q for q in r.order[: r.passes]} == {
        q for q in range(w // lsize) if r.quarter_mask >> q & 1
    }
    assert [q for q, _ in r.issue()] == list(r.order[: r.passes])
    # an empty slot names its own quarter
    assert all(r.src[s] == s // lsize for s in range(w) if not r.mask >> s & 1)


@given(warps())
def test_squeeze_is_appendix_a_as_narrated(case: tuple[int, int, int]) -> None:
    mask, w, lsize = case
    original = [t if mask >> t & 1 else -1 for t in range(w)]
    assert layout(mask, w, lsize) == appendix_a(original, w // lsize, lsize, literal=False)
    assert squeeze_steps(mask, w, lsize)[-1].layout == tuple(layout(mask, w, lsize))


def test_appendix_a_literal_slips_differ_and_are_not_densest() -> None:
    """Why the model follows the narrative: the literal listing leaves a warp that fits two
    quarters in three (a thread offered twice, the second offer an empty copy)."""
    # lane 0 holds threads in sorted #2 and #3 only; #0 and #1 have holes there
    nq, lsize = 4, 8
    mask = 0b11111110 | 0b01111110 << 8 | 0b00000001 << 16 | 0b00000001 << 24
    original = [t if mask >> t & 1 else -1 for t in range(32)]
    literal = appendix_a(original, nq, lsize, literal=True)
    assert literal != layout(mask, 32, lsize)
    assert squeeze(mask, 32, lsize).passes == 2
    assert sum(any(t != -1 for t in literal[q * 8 : (q + 1) * 8]) for q in range(nq)) == 3


def test_sort_is_appendix_a_exchange_sort() -> None:
    assert sort_quarters([2, 5, 1, 3]) == (1, 3, 0, 2)
    assert sort_quarters([4, 4, 8, 8]) == (2, 3, 0, 1)  # ties: not a stable sort
    assert sort_quarters([1, 1, 2]) == (2, 1, 0)


# Seed 001 Fig 4.3, permuted placement: sorted #0..#3 = physical quarters 1, 3, 0, 2 with 5, 3,
# 2, 1 threads. One row per step of Sec 4.1; "." is a hole, numbers are thread ids.
FIG43_MASK = sum(1 << t for t in (2, 6, 8, 9, 10, 11, 12, 23, 24, 25, 29))
FIG43_STEPS = [
    (
        "step 1: sort (logical, nothing moves)",
        None,
        None,
        ". . 2 . . . 6 . | 8 9 10 11 12 . . . | . . . . . . . 23 | 24 25 . . . 29 . .",
    ),
    (
        "step 2: #3 -> #0",
        0,
        3,
        ". . 2 . . . 6 . | 8 9 10 11 12 . . 23 | . . . . . . . . | 24 25 . . . 29 . .",
    ),
    (
        "step 3: #2 -> #0",
        0,
        2,
        ". . 2 . . . . . | 8 9 10 11 12 . 6 23 | . . . . . . . . | 24 25 . . . 29 . .",
    ),
    (
        "step 3: #1 -> #0",
        0,
        1,
        ". . 2 . . . . . | 8 9 10 11 12 29 6 23 | . . . . . . . . | 24 25 . . . . . .",
    ),
    (
        "step 4: #3 -> #1",
        1,
        3,
        ". . 2 . . . . . | 8 9 10 11 12 29 6 23 | . . . . . . . . | 24 25 . . . . . .",
    ),
    (
        "step 4: #2 -> #1 (densest: #2 and #3 empty)",
        1,
        2,
        ". . . . . . . . | 8 9 10 11 12 29 6 23 | . . . . . . . . | 24 25 2 . . . . .",
    ),
    (
        "step 4: #3 -> #2",
        2,
        3,
        ". . . . . . . . | 8 9 10 11 12 29 6 23 | . . . . . . . . | 24 25 2 . . . . .",
    ),
]


def _parse(row: str) -> tuple[int, ...]:
    return tuple(-1 if x == "." else int(x) for x in row.replace("|", " ").split())


def test_seed001_fig43_steps() -> None:
    """seed 001 Fig 4.3, step by step (Sec 4.1 steps 1-4), then Sec 4.2's quarter mask 0011
    (sorted labels) and warp size 16."""
    steps = squeeze_steps(FIG43_MASK, 32, 8)
    assert len(steps) == len(FIG43_STEPS)
    for step, (what, recipient, source, row) in zip(steps, FIG43_STEPS, strict=True):
        assert (step.recipient, step.source) == (recipient, source), what
        assert step.layout == _parse(row), what
    r = squeeze(FIG43_MASK, 32, 8)
    assert r.order == (1, 3, 0, 2)
    assert sum(1 << i for i, q in enumerate(r.order) if r.quarter_mask >> q & 1) == 0b0011
    assert r.passes * 8 == 16
    original = [t if FIG43_MASK >> t & 1 else -1 for t in range(32)]
    assert appendix_a(original, 4, 8, literal=True) == list(steps[-1].layout)


@pytest.mark.parametrize("spec", ["fig43", "fig41"])
def test_seed001_directed_scenarios_on_golden(spec: str) -> None:
    model = SqueezerParams(32, 8, 1).twin()
    run_golden(model, getattr(stimulus, spec)(model, rng_for(), 0))


def test_squeezer_cycle_behaviour() -> None:
    model = SqueezerParams(16, 4, 2).twin()
    idle = model.outputs(model.idle_inputs())
    assert idle["squeezed__order"] == (0, 1, 2, 3)
    assert idle["squeezed__src"] == tuple(s // 4 for s in range(16))
    inputs = {"warp__valid": 1, "warp__mask": 0x8421}
    assert [model.step(inputs) for _ in range(3)][-1] == model.compute(inputs)


@pytest.mark.parametrize(
    ("args", "message"),
    [((12, 4), "power of two"), ((8, 16), "no larger than"), ((8, 8, -1), "latency")],
)
def test_bad_parameters(args, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SqueezerParams(*args)
