"""The divergence unit's grouping stage against the threads' next PCs sorted in plain Python:
the two-lowest tree (``hdl.sm.divergence.two_lowest``) and the three groups of both forms
(pairwise comparisons, trees), random pending sets and PCs with many ties, for odd and even
warp sizes, in Amaranth's simulator."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from amaranth.hdl import Module, Signal
from amaranth.sim import Simulator
from hypothesis import given, settings
from hypothesis import strategies as st

from reconverge.golden.params import PC_WIDTH
from reconverge.hdl.sm.divergence import _Groups, two_lowest
from reconverge.testbench.amaranth_sim import run_simulator


def _sorted_groups(pending: int, pcs: list[int]) -> list[tuple[int, int]]:
    """(PC, threads) of every PC of the pending threads, in ascending order."""
    groups: dict[int, int] = {}
    for t, pc in enumerate(pcs):
        if pending >> t & 1:
            groups[pc] = groups.get(pc, 0) | 1 << t
    return sorted(groups.items())


def _expected(pending: int, pcs: list[int]) -> list[tuple[int, int]]:
    """(PC, threads) of the lowest and the second lowest PC among the pending threads."""
    return _sorted_groups(pending, pcs)[:2]


Steps = list[tuple[int, list[int]]]  # (pending threads, every thread's next PC) per step


@st.composite
def cases(draw: st.DrawFn) -> tuple[int, Steps]:
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


def _drive(
    w: int,
    steps: Steps,
    build: Callable[[Module, Signal, list[Signal]], Any],
    check: Callable[[Any, Any, int, list[int]], None],
) -> None:
    """Build the grouping logic of ``w`` threads (``build`` returns its outputs), then set each
    step's pending threads and PCs in Amaranth's simulator and ``check`` the outputs."""
    m = Module()
    pending = Signal(w)
    pcs = [Signal(PC_WIDTH, name=f"pc{t}") for t in range(w)]
    outputs = build(m, pending, pcs)
    sim = Simulator(m)

    async def bench(ctx: Any) -> None:
        for mask, values in steps:
            ctx.set(pending, mask)
            for sig, value in zip(pcs, values, strict=True):
                ctx.set(sig, value)
            check(ctx, outputs, mask, values)

    sim.add_testbench(bench)
    run_simulator(sim)


@settings(max_examples=40, deadline=None)
@given(case=cases())
def test_two_lowest_matches_sorted_pcs(case: tuple[int, Steps]) -> None:
    def check(ctx: Any, groups: Any, mask: int, values: list[int]) -> None:
        got = [(ctx.get(valid), ctx.get(pc), ctx.get(threads)) for valid, pc, threads in groups]
        want = _expected(mask, values)
        for k, (valid, pc, threads) in enumerate(got):
            if k < len(want):
                assert (valid, pc, threads) == (1, *want[k]), (mask, values, k)
            else:
                assert valid == 0 and threads == 0, (mask, values, k)

    _drive(*case, lambda m, pending, pcs: two_lowest(m, "groups", pending, pcs), check)


@pytest.mark.parametrize("pairwise", [True, False], ids=["pairwise", "trees"])
@settings(max_examples=30, deadline=None)
@given(case=cases())
def test_groups_are_the_lowest_two_and_the_highest(pairwise: bool, case: tuple[int, Steps]) -> None:
    """Both forms of the grouping stage give the same fields: the lowest, second lowest and
    highest PC with their threads (no threads where there is no such group, whose PC the
    unit does not read), whether two groups take every thread, and the threads below the
    highest and after the lowest two."""

    def check(ctx: Any, groups: _Groups, mask: int, values: list[int]) -> None:
        got = {k: ctx.get(v) for k, v in groups.fields.items()}
        for which in ("low", "second", "high"):
            if not got[f"{which}_mask"]:  # no such group: its PC is not read
                got[f"{which}_pc"] = 0
        ordered = _sorted_groups(mask, values)
        (low, low_mask), (second, second_mask) = [*ordered, (0, 0), (0, 0)][:2]
        high, high_mask = ordered[-1] if ordered else (0, 0)
        want = {
            "low_pc": low, "low_mask": low_mask,
            "second_pc": second, "second_mask": second_mask,
            "high_pc": high, "high_mask": high_mask,
            "at_most_two": int(len(ordered) <= 2),
        }  # fmt: skip
        assert got == want, (mask, values)
        assert ctx.get(groups.below_high) == mask & ~high_mask
        assert ctx.get(groups.rest) == mask & ~low_mask & ~second_mask

    def build(m: Module, pending: Signal, pcs: list[Signal]) -> _Groups:
        return _Groups(m, "groups", pending, pcs, pairwise=pairwise)

    _drive(*case, build, check)
