"""The HDL warp scheduler against golden's selection rule (``golden.sm.scheduler``): random
residency, ready sets, ages, last warp and last sids, under GTO and LRR, in Amaranth's
simulator."""

from __future__ import annotations

from dataclasses import replace

from amaranth.sim import Simulator
from hypothesis import given, settings
from hypothesis import strategies as st

from reconverge.golden.blocks.units import sm_unit
from reconverge.golden.config import Scheduler
from reconverge.golden.geometry import Geometry
from reconverge.golden.params import COSIM, SMParams
from reconverge.golden.policies import Policy
from reconverge.golden.sm.scheduler import SplitView, WarpView, select_views
from reconverge.hdl.sm.scheduler import Scheduler as HdlScheduler
from reconverge.testbench.amaranth_sim import run_simulator

WARPS, SLOTS = 4, 4


def _params(kind: Scheduler) -> SMParams:
    geometry = replace(COSIM.geometry, warps=WARPS, split_table=SLOTS)
    return replace(COSIM, geometry=geometry, config=replace(COSIM.config, policy=Policy.MP,
                                                             scheduler=kind))  # fmt: skip


@st.composite
def cycles(draw: st.DrawFn) -> dict:
    """One cycle's inputs: per warp slot, resident or not, an age, a last sid and its exposed
    splits (sids increasing with the slot), each ready or not."""
    ages = draw(st.permutations(range(WARPS)))
    warps = []
    for w in range(WARPS):
        if not draw(st.booleans()):
            continue
        sids = sorted(draw(st.sets(st.integers(0, SLOTS - 1), min_size=1, max_size=SLOTS)))
        slots = sorted(draw(st.sets(st.integers(0, SLOTS - 1), min_size=len(sids),
                                    max_size=len(sids))))  # fmt: skip
        splits = [(slot, sid, draw(st.booleans())) for slot, sid in zip(slots, sids, strict=True)]
        last_sid = draw(st.integers(-1, SLOTS - 1))
        warps.append({"slot": w, "age": ages[w] + 10, "last_sid": last_sid, "splits": splits})
    last = draw(st.integers(-1, WARPS - 1))
    greedy = last >= 0 and draw(st.booleans())
    return {"warps": warps, "last": last, "greedy": greedy}


def _golden(case: dict, kind: Scheduler) -> tuple[int, int] | None:
    views = [
        WarpView(
            slot=w["slot"],
            age=w["age"],
            settled=0,
            last_sid=w["last_sid"],
            splits=tuple(SplitView(sid, 0 if ready else 1) for _, sid, ready in w["splits"]),
        )
        for w in case["warps"]
    ]
    return select_views(views, kind, last_slot=case["last"], greedy=case["greedy"], t=0)


def _hdl(cases: list[dict], kind: Scheduler) -> list[tuple[int, int] | None]:
    dut = HdlScheduler(_params(kind))
    out: list[tuple[int, int] | None] = []

    async def bench(ctx) -> None:
        for case in cases:
            ready = valid_sids = 0
            for w in case["warps"]:
                slot = w["slot"]
                ctx.set(dut.age[slot], w["age"])
                ctx.set(dut.last_sid[slot], max(w["last_sid"], 0))
                valid_sids |= (w["last_sid"] >= 0) << slot
                for s, sid, r in w["splits"]:
                    ctx.set(dut.sid[slot * SLOTS + s], sid)
                    ready |= r << (slot * SLOTS + s)
            ctx.set(dut.last_sid_valid, valid_sids)
            ctx.set(dut.ready, ready)
            ctx.set(dut.last_warp, max(case["last"], 0))
            ctx.set(dut.issued, case["last"] >= 0)
            ctx.set(dut.greedy, case["greedy"])
            if not ctx.get(dut.valid):
                out.append(None)
                continue
            warp, slot = ctx.get(dut.warp), ctx.get(dut.slot)
            sid = next(s for x in case["warps"] if x["slot"] == warp
                       for sl, s, _ in x["splits"] if sl == slot)  # fmt: skip
            out.append((warp, sid))

    sim = Simulator(dut)
    sim.add_testbench(bench)
    run_simulator(sim)
    return out


@settings(max_examples=40, deadline=None)
@given(st.lists(cycles(), min_size=1, max_size=8), st.sampled_from(list(Scheduler)))
def test_selection_matches_golden(cases: list[dict], kind: Scheduler) -> None:
    assert _hdl(cases, kind) == [_golden(c, kind) for c in cases]


def test_one_candidate_per_split_slot_of_every_warp() -> None:
    params = replace(COSIM, geometry=Geometry(warp_size=8, simd_width=8, warps=3))
    dut = HdlScheduler(params)
    assert dut.ready.shape().width == 3 * sm_unit(params).slots
    Simulator(dut)  # elaborates
