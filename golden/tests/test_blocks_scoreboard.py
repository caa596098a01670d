"""Golden scoreboard twins (seed 002 Sec 3.3.2, Fig 8a/8b, Fig 9): the functional classes against
a brute-force definition (R-mask = OR of the masks of the writes in flight), the set capacity,
the twins' cycle behaviour (write-back bypass, reservation at the edge) and the seed's worked
example on the twins."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconverge.golden.blocks import MaskedScoreboardParams, ScoreboardParams
from reconverge.golden.blocks.scoreboard import MaskedScoreboard, Scoreboard, make_scoreboard
from reconverge.testbench.lockstep import run_golden
from reconverge.testbench.scenarios import applicable, rng_for
from reconverge.testbench.scenarios import scoreboard as stimulus

PARAMS_CLASSES = (ScoreboardParams, MaskedScoreboardParams)


def _issue(rd: int, mask: int) -> dict[str, int]:
    return {"issue__valid": 1, "issue__rd": rd, "issue__mask": mask}


@pytest.mark.parametrize("cls", PARAMS_CLASSES, ids=lambda c: c.name)
@pytest.mark.parametrize("values", stimulus.PARAM_SETS + stimulus.EXTRA_PARAM_SETS)
def test_scenarios_on_the_twins(cls, values) -> None:
    """Every scenario's own checks (Fig 9 states 1-6, the set filling up) hold on the twins."""
    params = cls(**values)
    model = params.twin()
    for spec in applicable(params):
        assert run_golden(model, spec.make(model, rng_for(spec.name), 2000)) > 0


# A write in flight: (register, active mask of the writing instruction).
Ops = st.lists(
    st.tuples(
        st.sampled_from(("reserve", "release", "check")),
        st.integers(0, 7),  # register
        st.integers(0, 15),  # mask of 4 threads
        st.lists(st.integers(0, 7), min_size=1, max_size=3),
    ),
    max_size=40,
)


@settings(max_examples=300)
@given(Ops, st.booleans(), st.integers(1, 7))
def test_functional_scoreboard_is_or_of_writes_in_flight(ops, masked: bool, entries: int) -> None:
    """The R-mask of a register is the OR of the active masks of its writes in flight (plain:
    the whole warp while any is); an instruction depends on a register it uses when that
    R-mask shares a lane with its mask; an entry per reserved register, at most ``entries``.
    Invalid reservations (the register pending for a lane of the mask, no free entry) are
    refused with ValueError and change nothing."""
    board = make_scoreboard(masked, 4, registers=8, entries=entries)
    inflight: list[tuple[int, int]] = []

    def rmask(reg: int) -> int:
        lanes = 0
        for r, m in inflight:
            lanes |= (m if masked else 0b1111) if r == reg else 0
        return lanes

    for op, reg, mask, regs in ops:
        reserved = {r for r, _ in inflight if rmask(r)}
        if op == "reserve":
            conflict = reg and (rmask(reg) & mask if masked else rmask(reg))
            needs = reg and not rmask(reg) and (mask or not masked)
            if conflict or (needs and len(reserved) >= entries):
                with pytest.raises(ValueError):
                    board.reserve(reg, mask)
            else:
                assert board.full(reg, mask) is False
                board.reserve(reg, mask)
                if reg:
                    inflight.append((reg, mask))
        elif op == "release":
            ours = [(r, m) for r, m in inflight if r == reg]
            if ours:  # the oldest write of reg comes back
                inflight.remove(ours[0])
                board.release(reg, ours[0][1])
        expected = sum(1 << r for r in set(regs) if r and rmask(r) & mask)
        assert board.dependency_mask(regs, mask) == expected
        assert board.reserved() == {r: rmask(r) for r in range(8) if rmask(r)}
        assert board.in_use() == len({r for r, _ in inflight if rmask(r)}) <= entries


def test_capacity_and_errors() -> None:
    board = MaskedScoreboard(4, registers=8, entries=2)
    board.reserve(1, 0b0011)
    board.reserve(2, 0b0001)
    assert board.full(3, 0b0001) and not board.full(1, 0b1100)  # x1 merges into its entry
    assert not board.full(3, 0) and not board.full(0, 0b1111)  # no lane / x0: no entry
    board.reserve(1, 0b1100)
    assert board.reserved() == {1: 0b1111, 2: 0b0001}
    with pytest.raises(ValueError, match="no free scoreboard entry"):
        board.reserve(3, 0b0001)
    with pytest.raises(ValueError, match="reserved again"):
        board.reserve(2, 0b0011)
    with pytest.raises(ValueError, match="not one of the 8 registers"):
        board.dependency_mask([8], 1)
    plain = Scoreboard(4, registers=8, entries=1)
    plain.reserve(5, 0b0001)
    assert plain.full(6, 0b1000) and plain.dependency_mask([5], 0b1000) == 1 << 5
    with pytest.raises(ValueError, match="reserved again"):
        plain.reserve(5, 0b0010)  # plain: reserved for the whole warp
    # the default table has an entry per register but x0: it never fills
    default = MaskedScoreboard(32)
    for reg in range(1, 32):
        assert not default.full(reg, 1)
        default.reserve(reg, 1)


@pytest.mark.parametrize("cls", PARAMS_CLASSES, ids=lambda c: c.name)
def test_twin_writebacks_and_reservation_act_at_the_edge(cls) -> None:
    """The write-back ports carry the next cycle's releases: neither the write-backs nor the
    reservation of a cycle are seen by its lookups, both act at the clock edge, the
    reservation first: state' = (state + reservation) - write-backs."""
    params = cls(warp_size=4, regs=8, warps=2, entries=2, lookups=1, writebacks=1)
    twin = params.twin()
    dep = "lookup__dep_mask"
    look = twin.idle_inputs() | {
        "lookup__warp": (1,),
        "lookup__operands": (3, 0, 0),
        "lookup__mask": (0b0001,),
    }
    issue = look | {"issue__warp": 1} | _issue(3, 0b0011)
    assert twin.step(issue)[dep] == (0,)  # not yet
    assert twin.outputs(look)[dep] == (1 << 3,)
    assert twin.outputs(look | {"lookup__warp": (0,)})[dep] == (0,)  # another warp
    wb = look | {
        "writeback__valid": 1,
        "writeback__warp": (1,),
        "writeback__rd": (3,),
        "writeback__mask": (0b0011,),
    }
    assert twin.step(wb)[dep] == (1 << 3,)  # not yet
    assert twin.outputs(look)[dep] == (0,)
    # a reservation and the write-back of the same register in one cycle: reserved first,
    # so the write-back clears the lanes it names
    twin.clock(wb | {"issue__warp": 1} | _issue(3, 0b0111))
    assert twin.boards[1].reserved() == ({3: 0b0100} if params.masked else {})
    twin.reset()
    assert twin.outputs(look)[dep] == (0,)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"warp_size": 0}, "warp_size must be in 1..64"),
        ({"regs": 1}, "regs must be in 2..32"),
        ({"warps": 0}, "warps must be in"),
        ({"entries": 32}, "entries must be in 1..31 per warp"),
        ({"lookups": 0}, "lookups must be in"),
        ({"writebacks": 65}, "writebacks must be in 1..64"),
    ],
)
def test_twin_rejects_bad_parameters(params, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ScoreboardParams(**params)


def test_twin_rejects_bad_inputs() -> None:
    twin = MaskedScoreboardParams(warp_size=4, regs=8, warps=3, entries=1, lookups=1).twin()
    with pytest.raises(ValueError, match="warp 3 is not one of the 3 warps"):
        twin.outputs(twin.idle_inputs() | {"lookup__warp": (3,)})
    twin.clock(twin.idle_inputs() | _issue(1, 1))
    with pytest.raises(ValueError, match="no free scoreboard entry"):
        twin.clock(twin.idle_inputs() | _issue(2, 1))


def test_sm_geometry_gives_the_scoreboard_parameters() -> None:
    from reconverge.golden.geometry import Geometry

    g = Geometry(warp_size=8, simd_width=4, warps=4, regs=16, scoreboard_entries=6)
    assert ScoreboardParams.of(g, lookups=8, writebacks=5) == ScoreboardParams(8, 16, 4, 6, 8, 5)
    masked = MaskedScoreboardParams.of(g, 1, 1)
    assert masked.masked and not ScoreboardParams.of(g, 1, 1).masked


LOADS = """
_start:
    la   a5, data
    lw   a0, 0(a5)
    lw   a1, 4(a5)
    lw   a2, 8(a5)
    add  a0, a0, a1
    add  a0, a0, a2
    li   a7, 93
    ecall
    .data
data: .word 1, 2, 3
"""


@pytest.mark.parametrize("kind", ["plain", "masked"])
def test_sm_waits_for_a_free_scoreboard_entry(kind: str) -> None:
    """The golden SM with ``Geometry.scoreboard_entries``: with one entry per warp the second
    load waits for the first one's write-back (a structural hazard of Fig 8's table); with the
    default (an entry per register) only for the LSU. Same results either way."""
    from dataclasses import replace

    from reconverge.golden.asm import assemble
    from reconverge.golden.config import ScoreboardKind, SMConfig
    from reconverge.golden.functional import LaunchConfig
    from reconverge.golden.geometry import Geometry
    from reconverge.golden.sm.run import run_sm

    image = assemble(LOADS, "loads.S")
    config = SMConfig(scoreboard=ScoreboardKind(kind))
    geometry = Geometry(warp_size=4, simd_width=4, warps=1)
    gaps = {}
    for entries in (1, geometry.scoreboard_entries):
        launch = LaunchConfig(
            grid=1, block=4, geometry=replace(geometry, scoreboard_entries=entries)
        )
        result = run_sm(image, launch, config, trace=True)
        assert result.fault is None and result.exit_codes.tolist() == [[6] * 4]
        lw = [r.cycle for r in result.trace if r.pc in (image.entry + 8, image.entry + 12)]
        gaps[entries] = lw[1] - lw[0]
    # Timing rule 3 (docs/sm-hardware.md): the first lw issues at t in one pass, executes at
    # t + execute, its one LSU cycle is L = t + execute + 1, so the LSU is idle again at L + 1
    # and a0 is written back at L + global_.
    lat = config.latencies
    assert gaps[31] == lat.execute + 2 and gaps[1] == lat.execute + 1 + lat.global_
    with pytest.raises(ValueError, match="scoreboard_entries"):
        Geometry(scoreboard_entries=32)
