"""The barrier logic (hdl/sm/barrier.py) against rule 4 as golden applies it
(``golden.sm.core._check_barrier``, ``golden.faults.barrier_fault``), written out here per
block: random warp slots (blocks of a few windows, threads that exited, waiting and live
threads mostly aligned so that barriers often complete, bars at one of two PCs), Amaranth's
simulator, every output of every input set."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reconverge.golden.geometry import Geometry
from reconverge.golden.params import SMParams
from reconverge.hdl.sm.barrier import Barriers, warp_layout
from reconverge.hdl.sm.tests.harness import pack, simulate_amaranth

PARAMS = SMParams(geometry=Geometry(warp_size=4, simd_width=2, warps=4))
N, W = PARAMS.geometry.warps, PARAMS.geometry.warp_size
Warp = dict[str, int]


def expected(warps: list[Warp], window_exited: int, running: int) -> tuple[int, int]:
    """(release, fault) of rule 4, block by block."""
    release, fault = 0, 0
    warps = [{k: u.get(k, 0) for k in warp_layout(PARAMS).members} for u in warps]
    for b in range(N):
        slots = [w for w, u in enumerate(warps) if u["active"] and u["window"] == b]
        members = [warps[w] for w in slots]
        waiting = [w for w in slots if warps[w]["waiting"]]
        if any(u["live"] & ~u["waiting"] for u in members) or not waiting:
            continue  # a thread still runs, or nobody waits
        if not running or not all(u["quiet"] for u in members):
            continue  # an update is on its way
        lost = window_exited >> b & 1 or any(u["threads"] & ~u["live"] for u in members)
        first = warps[waiting[0]]["bar_pc"]
        differ = any(warps[w]["bar_mixed"] or warps[w]["bar_pc"] != first for w in waiting)
        if lost or differ:
            fault = 1
        else:
            release |= sum(1 << w for w in waiting)
    return release, fault


def mask(width: int) -> st.SearchStrategy[int]:
    return st.sampled_from([0, (1 << width) - 1]) | st.integers(0, (1 << width) - 1)


@st.composite
def warp(draw: st.DrawFn) -> Warp:
    threads = draw(st.sampled_from([(1 << W) - 1]) | st.integers(1, (1 << W) - 1))
    live = threads & draw(st.sampled_from([(1 << W) - 1]) | mask(W))
    waiting = live & draw(st.sampled_from([(1 << W) - 1]) | mask(W))
    return {
        "active": draw(st.sampled_from([1, 1, 0])),
        "window": draw(st.integers(0, 1) | st.integers(0, N - 1)),
        "threads": threads,
        "live": live,
        "waiting": waiting,
        "quiet": draw(st.sampled_from([1, 1, 1, 0])),
        "bar_pc": draw(st.sampled_from([0x100, 0x100, 0x104])),
        "bar_mixed": draw(st.sampled_from([0, 0, 0, 1])),
    }


inputs = st.tuples(
    st.lists(warp(), min_size=N, max_size=N),
    st.sampled_from([0, 0, 0]) | st.integers(0, (1 << N) - 1),
    st.sampled_from([1, 1, 0]),
)


@settings(max_examples=5, deadline=None)
@given(st.lists(inputs, min_size=40, max_size=40))
def test_barriers_release_and_fault_as_rule_4(sets: list) -> None:
    layout = warp_layout(PARAMS)
    cycles = [
        {
            "warp": sum(pack(layout, u) << i * layout.size for i, u in enumerate(warps)),
            "window_exited": exited,
            "running": running,
        }
        for warps, exited, running in sets
    ]
    out = simulate_amaranth(Barriers(PARAMS), cycles)
    got = [(o["release"], o["fault"]) for o in out]
    want = [expected(*s) for s in sets]
    assert got == want


def test_barrier_cases() -> None:
    """Directed: block 0 (slots 0 and 1) and block 1 (slot 2), slot 3 empty."""
    full = (1 << W) - 1
    waits = {"active": 1, "threads": full, "live": full, "waiting": full, "quiet": 1}
    base = [
        {**waits, "window": 0, "bar_pc": 0x100},
        {**waits, "window": 0, "bar_pc": 0x100},
        {**waits, "window": 1, "bar_pc": 0x200, "waiting": 0b0011},
        {},
    ]
    cases = {
        "block 0 complete, block 1 still running": (base, 0, (0b0011, 0)),
        "block 1 complete too": ([*base[:2], {**base[2], "waiting": full}, {}], 0, (0b0111, 0)),
        "an update on its way": ([base[0], {**base[1], "quiet": 0}, *base[2:]], 0, (0, 0)),
        "a thread of block 0 exited": (
            [base[0], {**base[1], "live": 0b0111, "waiting": 0b0111}, *base[2:]],
            0,
            (0, 1),
        ),
        "a warp of block 0 retired": (base, 0b0001, (0, 1)),
        "different bars": ([base[0], {**base[1], "bar_pc": 0x104}, *base[2:]], 0, (0, 1)),
        "one warp's threads at different bars": (
            [base[0], {**base[1], "bar_mixed": 1}, *base[2:]],
            0,
            (0, 1),
        ),
    }
    layout = warp_layout(PARAMS)
    cycles = [
        {
            "warp": sum(pack(layout, u) << i * layout.size for i, u in enumerate(warps)),
            "window_exited": exited,
            "running": 1,
        }
        for warps, exited, _ in cases.values()
    ]
    out = simulate_amaranth(Barriers(PARAMS), cycles)
    got = {name: (o["release"], o["fault"]) for name, o in zip(cases, out, strict=True)}
    assert got == {name: case[2] for name, case in cases.items()}
    # the oracle of the randomised test agrees on them
    assert {name: expected(*case[:2], 1) for name, case in cases.items()} == got
