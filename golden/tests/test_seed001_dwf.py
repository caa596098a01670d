"""Seed 001 dynamic warp formation: the en-DWF combination of Fig 4.5 / Appendix B step by
step, DWF's stricter rule, and DWF/en-DWF on the SM (results unchanged, en-DWF forms denser
warps than DWF)."""

from __future__ import annotations

import pytest

from reconverge.golden.asm import assemble
from reconverge.golden.config import SMConfig
from reconverge.golden.functional import LaunchConfig, run
from reconverge.golden.geometry import Geometry
from reconverge.golden.policies import WarpFormation
from reconverge.golden.sm.dwf import combine, squeeze_slots
from reconverge.golden.sm.run import run_sm

W, L = 32, 8


def slots(threads: list[int], base: int) -> list[int | None]:
    """A warp's slots holding threads ``base + slot``."""
    out: list[int | None] = [None] * W
    for t in threads:
        out[t - base] = t
    return out


# Fig 4.5 as Sec 4.4 narrates it: the female warp 0 and the male warp 1 do not conflict in
# lanes 0-2; in lane 3, thread 27 and thread 59 (slot 27) conflict; threads 20-23 and 52-55
# (slots 20-23, lanes 4-7) conflict.
FEMALE = slots([0, 1, 2, 8, 9, 10, 20, 21, 22, 23, 27], 0)
MALE = slots([48, 49, 50, 52, 53, 54, 55, 59], 32)


def test_fig45_en_dwf_moves_conflicting_threads_within_their_lane() -> None:
    """Appendix B: scanning lane by lane, thread 59 moves to the first position of lane 3 that
    is empty in both warps (quarter 0, slot 3), and 52-55 to quarter 0 of lanes 4-7; then the
    warps combine into one of 19 threads."""
    merged = combine(FEMALE, MALE, W, L, enhanced=True)
    assert merged is not None
    placed = {t: i for i, t in enumerate(merged) if t is not None}
    assert placed[59] == 3
    assert [placed[t] for t in (52, 53, 54, 55)] == [4, 5, 6, 7]
    assert [placed[t] for t in (48, 49, 50)] == [16, 17, 18]  # no conflict: not moved
    assert all(placed[t] == t for t in (0, 1, 2, 8, 9, 10, 20, 21, 22, 23, 27))
    assert all(slot % L == t % L for t, slot in placed.items())  # every thread in its lane
    assert len(placed) == 19


def test_fig45_plain_dwf_cannot_combine() -> None:
    """DWF only combines warps without a thread in the same position."""
    assert combine(FEMALE, MALE, W, L, enhanced=False) is None
    no_conflict = slots([48, 49, 50], 32)
    merged = combine(FEMALE, no_conflict, W, L, enhanced=False)
    assert merged is not None and [merged[i] for i in (16, 17, 18)] == [48, 49, 50]


def test_en_dwf_fails_when_a_lane_overflows() -> None:
    """A lane holds at most W/L = 4 threads: five threads of lane 0 never fit."""
    female = slots([0, 8, 16], 0)
    male = slots([32, 56], 32)
    assert combine(female, male, W, L, enhanced=True) is None
    assert combine(female, slots([32], 32), W, L, enhanced=True) is not None


def test_squeeze_slots_keeps_lanes() -> None:
    squeezed = squeeze_slots(slots([8, 17, 26, 3], 0), W, L)
    placed = {t: i for i, t in enumerate(squeezed) if t is not None}
    assert all(slot % L == t % L for t, slot in placed.items())
    assert max(placed.values()) < L  # one quarter suffices: four different lanes


# Fig 3.8 shape: two warps diverge at A into B and C. With ``xor`` the halves are
# complementary (warp 0 sends slots 0-15 to B, warp 1 slots 16-31), so DWF can merge the two B
# halves into one full warp; without it both warps send the same slots 0-7 to B, which only
# en-DWF can merge (into two quarters of the same lanes).
FIG38 = """
_start:
    csrr t0, laneid
    csrr t1, warpid
    srli t2, t0, {shift}  # 1 for the upper slots
    {xor}
    li   a0, 0
    bnez t2, C
B:  addi a0, a0, 1
    addi a0, a0, 2
    addi a0, a0, 3
    addi a0, a0, 4
    j    D
C:  addi a0, a0, 10
    addi a0, a0, 20
    addi a0, a0, 30
    addi a0, a0, 40
D:  li   a7, 93
    ecall
"""


def run_formations(source: str, hws: bool) -> dict[WarpFormation, object]:
    image = assemble(source, "fig38.S")
    launch = LaunchConfig(grid=1, block=64, geometry=Geometry(warp_size=W, simd_width=L))
    reference = run(image, launch)
    metrics = {}
    for formation in WarpFormation:
        result = run_sm(image, launch, SMConfig(warp_formation=formation, hws=hws), trace=True)
        assert result.fault is None, f"{formation}: {result.fault}"
        assert result.exit_codes.tolist() == reference.exit_codes.tolist()
        assert result.metrics is not None
        metrics[formation] = result
    return metrics


@pytest.mark.parametrize("hws", [False, True])
def test_fig38_dwf_merges_complementary_halves(hws: bool) -> None:
    """Each of B's five instructions runs once for both warps' halves under DWF (a full warp)
    where static warps run it twice at half occupancy."""
    results = run_formations(FIG38.format(shift=4, xor="xor  t2, t2, t1"), hws)
    image = assemble(FIG38.format(shift=4, xor="xor  t2, t2, t1"), "fig38.S")
    b = image.symbols["B"]
    for formation, result in results.items():
        in_b = [r for r in result.trace if r.pc == b]  # type: ignore[attr-defined]
        full = formation is not WarpFormation.STATIC
        assert [r.mask.bit_count() for r in in_b] == ([32] if full else [16, 16])


def test_en_dwf_merges_threads_in_the_same_slots() -> None:
    """Both warps send slots 0-7 to B: DWF cannot merge (same home slots), en-DWF places the
    second warp's threads in another quarter of the same lanes."""
    source = FIG38.format(shift=3, xor="")
    results = run_formations(source, hws=False)
    b = assemble(source, "fig38.S").symbols["B"]
    counts = {
        f: [r.mask.bit_count() for r in res.trace if r.pc == b]  # type: ignore[attr-defined]
        for f, res in results.items()
    }
    assert counts == {
        WarpFormation.STATIC: [8, 8],
        WarpFormation.DWF: [8, 8],
        WarpFormation.EN_DWF: [16],
    }
