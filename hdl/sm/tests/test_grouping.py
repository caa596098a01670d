"""The divergence unit's two-lowest grouping tree (``hdl.sm.divergence.two_lowest``) against
the threads' next PCs sorted in plain Python: random pending sets and PCs with many ties, for
odd and even warp sizes, in Amaranth's simulator."""

from __future__ import annotations

from amaranth.hdl import Module, Signal
from amaranth.sim import Simulator
from hypothesis import given, settings
from hypothesis import strategies as st

from reconverge.golden.params import PC_WIDTH
from reconverge.hdl.sm.divergence import two_lowest
from reconverge.testbench.amaranth_sim import run_simulator


def _expected(pending: int, pcs: list[int]) -> list[tuple[int, int]]:
    """(PC, threads) of the lowest and the second lowest PC among the pending threads."""
    groups: dict[int, int] = {}
    for t, pc in enumerate(pcs):
        if pending >> t & 1:
            groups[pc] = groups.get(pc, 0) | 1 << t
    return sorted(groups.items())[:2]


@st.composite
def cases(draw: st.DrawFn) -> tuple[int, list[tuple[int, list[int]]]]:
    w = draw(st.sampled_from([1, 2, 3, 4, 5, 8]))
    pool = draw(st.lists(st.integers(0, (1 << PC_WIDTH) - 1), min_size=1, max_size=3))
    steps = draw(
        st.lists(
            st.tuples(
                st.integers(0, (1 << w) - 1),
                st.lists(st.sampled_from(pool), min_size=w, max_size=w),
            ),
            min_size=1,
            max_size=12,
        )
    )
    return w, steps


@settings(max_examples=40, deadline=None)
@given(case=cases())
def test_two_lowest_matches_sorted_pcs(case: tuple[int, list[tuple[int, list[int]]]]) -> None:
    w, steps = case
    m = Module()
    pending = Signal(w)
    pcs = [Signal(PC_WIDTH, name=f"pc{t}") for t in range(w)]
    low, second = two_lowest(m, "groups", pending, pcs)
    sim = Simulator(m)

    async def bench(ctx: object) -> None:
        for mask, values in steps:
            ctx.set(pending, mask)  # type: ignore[attr-defined]
            for sig, value in zip(pcs, values, strict=True):
                ctx.set(sig, value)  # type: ignore[attr-defined]
            got = [
                (ctx.get(valid), ctx.get(pc), ctx.get(threads))  # type: ignore[attr-defined]
                for valid, pc, threads in (low, second)
            ]
            want = _expected(mask, values)
            for k, (valid, pc, threads) in enumerate(got):
                if k < len(want):
                    assert (valid, pc, threads) == (1, *want[k]), (mask, values, k)
                else:
                    assert valid == 0 and threads == 0, (mask, values, k)

    sim.add_testbench(bench)
    run_simulator(sim)
