"""Golden split/reconvergence tables twin (seed 002 Sec 3.3.1, Fig 7): the directed scenarios
(Fig 6, Fig 11, Sec 5, Sec 3.3.3, calls, overflow) on the twin alone, the hardware cycle's
limits (two targets per update and MORE cycles, two insertions and admissions per cycle, busy
cycles), invariants of the tables under random valid streams, and the input checks."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconverge.golden.blocks import SplitTables, SplitTablesBlock, SplitTablesParams
from reconverge.golden.blocks.divergence import Executed, TableOverflow
from reconverge.golden.blocks.split_tables import NO_ENTRY
from reconverge.golden.blocks.units import unit_params
from reconverge.golden.geometry import Geometry
from reconverge.golden.policies import variant
from reconverge.testbench.lockstep import Scenario, run_golden
from reconverge.testbench.scenarios import applicable, rng_for
from reconverge.testbench.scenarios import split_tables as stimulus

ALL_SETS = stimulus.PARAM_SETS + stimulus.EXTRA_PARAM_SETS
CASES = [
    pytest.param(params, spec, id=f"{params.label()}-{spec.name}")
    for params in ALL_SETS
    for spec in applicable(params)
]


@pytest.mark.parametrize(("params", "spec"), CASES)
def test_scenarios_on_the_twin(params: SplitTablesParams, spec) -> None:
    """Every scenario's own checks (the seed's tables after each step) hold on the twin."""
    model = params.twin()
    assert run_golden(model, spec.make(model, rng_for("twin", params, spec.name), 2000)) > 0


A, B, C, D, E = 0x100, 0x200, 0x300, 0x400, 0x500


def test_wide_divergence_is_an_update_and_more_cycles() -> None:
    """An indirect jump to four targets: the update takes the two lowest PCs, one MORE cycle
    the other two, all with the same reconvergence entry; ``execute`` does both. The block is
    pipelined: an operation cycle holds its new splits, and each following cycle inserts one
    (``execute`` counts them: the update, two insertions, the MORE cycle, two insertions)."""
    targets = {E: 0b1000, B: 0b0001, D: 0b0100, C: 0b0010}
    whole = SplitTables(4, 0b1111, A, st_size=4, rt_size=2)
    assert whole.execute(Executed(0, A, 0b1111, targets, control=True, rpc=0x600)) == 6
    cycles = SplitTables(4, 0b1111, A, st_size=4, rt_size=2)
    cycles.update(Executed(0, A, 0b1111, {B: 0b0001, C: 0b0010}, control=True, rpc=0x600))
    assert cycles.continues and cycles.busy and not any(cycles.st), "both held"
    assert [e.pc for e, _ in cycles.held] == [B, C]
    cycles.cycle()
    assert [e.pc for e in cycles.st if e] == [B] and cycles.busy, "one insertion a cycle"
    cycles.cycle()
    assert [e.pc for e in cycles.st if e] == [B, C] and not cycles.busy
    cycles.more({D: 0b0100, E: 0b1000})
    assert cycles.settle() == 2
    for unit in (whole, cycles):
        assert [(s.pc, s.mask) for s in unit.splits()] == sorted(targets.items())
        assert {e.rindex for e in unit.st if e} == {0}
        assert unit.occupancy() == {"st": 4, "rt": 1}
    with pytest.raises(ValueError, match="at most 2 targets"):
        cycles.update(Executed(1, C, 0b0010, {A: 1, B: 2, C: 4}, control=True))


def test_an_operation_and_an_insertion_never_share_a_cycle() -> None:
    """The pipelined cycle (module docstring): a split that reaches its RPC arrives in the
    operation's cycle and its completed RT entry moves back in the next; an OREC branch of a
    lone split re-inserts it (with its search) in the cycle after the branch; a plain
    instruction takes one cycle; an update while splits are held is refused."""
    unit = SplitTables(4, 0b11, A, st_size=4, rt_size=2)
    assert unit.execute(Executed(0, A, 0b11, {B: 0b01, C: 0b10}, control=True, rpc=D)) == 3
    b = next(s.sid for s in unit.splits() if s.pc == B)
    assert unit.execute(Executed(b, B, 0b01, {B + 4: 0b01})) == 1, "no insertion"
    assert unit.execute(Executed(b, B + 4, 0b01, {D: 0b01}, control=True)) == 1, "arrival"
    c = next(s.sid for s in unit.splits() if s.pc == C)
    unit.update(Executed(c, C, 0b10, {D: 0b10}, control=True))
    assert not any(unit.st) and unit.rt[0] is not None and unit.rt[0].pending == 0
    assert unit.busy, "the completed entry moves back in the next cycle"
    unit.cycle()
    assert [(s.pc, s.mask) for s in unit.splits()] == [(D, 0b11)] and not unit.busy
    orec = SplitTables(4, 0b11, A, st_size=4, rt_size=2, orec=True)
    assert orec.execute(Executed(0, A, 0b11, {B: 0b11}, control=True)) == 2, "re-inserted"
    assert [(s.sid, s.pc) for s in orec.splits()] == [(0, B)], "into its own entry"
    held = SplitTables(4, 0b11, A, st_size=4, rt_size=2)
    held.update(Executed(0, A, 0b11, {B: 0b01, C: 0b10}, control=True, rpc=D))
    with pytest.raises(ValueError, match="busy"):
        held.update(Executed(0, B, 0b01, {B + 4: 0b01}))


def _three_waiting() -> SplitTables:
    """Three splits, each the last pending one of its RT entry, wait at a barrier just before
    their RPC (seed 002 Sec 3.3.3: the other splits ran on)."""
    unit = SplitTables(8, 0xFF, A, st_size=8, rt_size=4)
    unit.execute(
        Executed(0, A, 0xFF, {B: 0x03, C: 0x0C, D: 0x30, E: 0xC0}, control=True, rpc=0x900)
    )

    def sid(pc: int) -> int:
        return next(s.sid for s in unit.splits() if s.pc == pc)

    for block, low, high in ((B, 0x01, 0x02), (C, 0x04, 0x08), (D, 0x10, 0x20)):
        rpc = block + 0x20
        split = {block + 8: low, block + 16: high}
        unit.execute(Executed(sid(block), block, low | high, split, control=True, rpc=rpc))
        unit.execute(Executed(sid(block + 8), block + 8, low, {rpc: low}, control=True))
        unit.execute(Executed(sid(block + 16), block + 16, high, {rpc - 4: high}, control=True))
        unit.execute(Executed(sid(rpc - 4), rpc - 4, high, {}, barrier=high))
    return unit


def test_three_reconvergences_at_one_release_take_a_busy_cycle_each() -> None:
    """The release completes three RT entries in its cycle; each moves back in an insertion
    cycle of its own, first RT entries first."""
    unit = _three_waiting()
    assert unit.waiting == 0x2A and unit.occupancy() == {"st": 4, "rt": 4}
    unit.resume(0x2A)  # one cycle: three entries complete
    assert unit.busy and sum(r is not None and r.pending == 0 for r in unit.rt) == 3
    for left in (2, 1):
        unit.cycle()
        assert unit.busy == bool(left)
        assert sum(r is not None and r.pending == 0 for r in unit.rt) == left
    unit.cycle()
    assert not unit.busy
    assert sorted((s.pc, s.mask) for s in unit.splits()) == [
        (B + 0x20, 0x03), (C + 0x20, 0x0C), (D + 0x20, 0x30), (E, 0xC0),
    ]  # fmt: skip
    settled = _three_waiting()
    assert settled.release(0x2A) == 4  # the SM's interface: the release and its busy cycles
    assert [(s.sid, s.pc, s.mask) for s in settled.splits()] == [
        (s.sid, s.pc, s.mask) for s in unit.splits()
    ]
    with pytest.raises(ValueError, match="busy"):
        busy = _three_waiting()
        busy.resume(0x2A)
        busy.update(Executed(0, E, 0xC0, {E + 4: 0xC0}))


def test_admissions_are_two_per_cycle() -> None:
    """Seed 002 Sec 5 with three ST entries: six single-thread splits, three wait in the
    queue, in order. When the three in the ST reach their RPC at one barrier release (their
    RT entry still waits for the queued three), the next cycle admits two queued splits and
    the cycle after the third."""
    rpc = 0x900
    unit = SplitTables(8, 0x3F, A, st_size=3, rt_size=2)
    unit.execute(Executed(0, A, 0x3F, {A + 4 * (t + 1): 1 << t for t in range(6)},
                          control=True, rpc=rpc))  # fmt: skip
    assert [e.pc for e in unit.st if e] == [A + 4, A + 8, A + 12]
    assert [e.pc for e in unit.queue] == [A + 16, A + 20, A + 24]
    assert unit.queue_size == 7 and unit.occupancy() == {"st": 6, "rt": 1}
    for sid in range(3):
        pc = A + 4 * (sid + 1)
        unit.execute(Executed(sid, pc, 1 << sid, {rpc - 4: 1 << sid}, control=True))
        unit.execute(Executed(sid, rpc - 4, 1 << sid, {}, barrier=1 << sid))
    assert unit.waiting == 0b111 and not unit.splits()
    unit.resume(0b111)
    assert not any(unit.st) and len(unit.queue) == 3, "the release frees all three"
    unit.cycle()
    assert [e.pc if e else None for e in unit.st] == [A + 16, A + 20, None]
    assert unit.busy and [e.pc for e in unit.queue] == [A + 24]
    unit.cycle()
    assert [e.pc for e in unit.st if e] == [A + 16, A + 20, A + 24] and not unit.busy


def test_rt_overflow_is_sticky_and_changes_nothing() -> None:
    unit = SplitTables(2, 0b11, A, st_size=2, rt_size=1)
    unit.execute(Executed(0, A, 0b11, {B: 1, C: 2}, control=True, rpc=D))
    before = (list(unit.st), list(unit.rt))
    with pytest.raises(TableOverflow, match="needs more than 1 RT entries"):
        unit.execute(Executed(0, B, 1, {0x800: 1}, control=True, call=True))
    assert unit.overflow and (unit.st, unit.rt) == before
    unit.update(Executed(1, C, 2, {D: 2}, control=True))  # ignored after the overflow
    assert (unit.st, unit.rt) == before
    unit.launch(0b11, A)
    assert not unit.overflow and [(s.pc, s.mask) for s in unit.splits()] == [(A, 0b11)]


def test_return_leaves_every_entry_of_its_call_context() -> None:
    """A return clears its threads from all RT entries of the call (in parallel): those on
    the split's way to the call entry, and none other holds its threads."""
    unit = SplitTables(4, 0b1111, A, st_size=4, rt_size=4)
    unit.execute(Executed(0, A, 0b1111, {0x800: 0b1111}, control=True, call=True))
    unit.execute(Executed(0, 0x800, 0b1111, {B: 0b0011, C: 0b1100}, control=True, rpc=0x900))
    unit.execute(Executed(0, B, 0b0011, {D: 0b0001, E: 0b0010}, control=True, rpc=0x880))
    d = next(s.sid for s in unit.splits() if s.pc == D)
    unit.execute(Executed(d, D, 0b0001, {A + 4: 0b0001}, control=True, ret=True))
    entries = {r.pc: (r.rmask, r.pending) for r in unit.rt if r}
    assert entries == {A + 4: (0b1111, 0b1110), 0x900: (0b1110, 0b1110), 0x880: (0b0010, 0b0010)}


# -- invariants under random valid streams -----------------------------------------------------


def check_invariants(t: SplitTables) -> None:
    """Splits (ST and queue) have non-empty, disjoint masks of live threads; a pending mask is
    within its reconvergence mask; every running split's threads are pending at its RT entry;
    the ST and queue hold at most W splits; a waiting thread is in a split."""
    splits = [e for e in t.st if e] + t.queue
    seen = 0
    for e in splits:
        assert e.mask and not e.mask & seen and not e.mask & ~t.live
        seen |= e.mask
        if e.rindex != NO_ENTRY:
            r = t.rt[e.rindex]
            assert r is not None and e.mask & ~r.pending == 0
    for r in t.rt:
        if r is not None:
            assert r.pending & ~r.rmask == 0
    assert len(splits) <= t.warp_size and len(t.queue) <= t.queue_size
    assert t.waiting & ~seen == 0


def with_invariants(model: SplitTablesBlock, scenario: Scenario) -> Scenario:
    """``scenario``, checking the invariants after every clock edge that left the tables
    settled."""
    step = next(scenario)
    while True:
        out = yield step
        if not model.core.busy and not model.core.overflow:
            check_invariants(model.core)
        try:
            step = scenario.send(out)
        except StopIteration:
            return


@settings(max_examples=25, deadline=None)
@given(index=st.integers(0, len(ALL_SETS) - 1), seed=st.integers(0, 2**32), storm=st.booleans())
def test_invariants_hold_on_random_streams(index: int, seed: int, storm: bool) -> None:
    model = ALL_SETS[index].twin()
    make = stimulus.storm if storm else stimulus.random_stream
    assert run_golden(model, with_invariants(model, make(model, rng_for(seed), 600))) > 0


# -- input checks ------------------------------------------------------------------------------


def _launched() -> SplitTablesBlock:
    model = SplitTablesParams(4, 4, 4, 12, orec=True).twin()
    model.clock(stimulus.launch(model, 0b1111, A))
    return model


@pytest.mark.parametrize(
    ("inputs", "message"),
    [
        (lambda m: stimulus.execute(m, 1, A, {B: 0b1111}), "split 1 cannot issue"),
        (
            lambda m: {**stimulus.execute(m, 0, A, {B: 0b1111}, call=True), "outcome__rpc": A},
            "the rpc of a call is its return address 0x104",
        ),
        (lambda m: stimulus.execute(m, 0, A, {B: 0b0011}), "must partition split 0"),
        (lambda m: stimulus.execute(m, 0, A, {B: 0b0011, C: 0b0110}), "overlap"),
        (lambda m: stimulus.execute(m, 0, A, {0x202: 0b1111}), "not a multiple of 4"),
        (lambda m: stimulus.execute(m, 0, A, {0xFFC: 0b1111}), "below 0xffc"),
        (lambda m: stimulus.release(m, 0b0001), "do not wait"),
        (lambda m: stimulus.more(m, {B: 1}), "a continuation without a divergence"),
    ],
)
def test_invalid_inputs_are_rejected(inputs, message: str) -> None:
    model = _launched()
    with pytest.raises(ValueError, match=message):
        model.clock(inputs(model))


def test_one_operation_per_cycle() -> None:
    model = _launched()
    both = stimulus.execute(model, 0, A, {B: 0b1111}) | {"release__lanes": 1}
    with pytest.raises(ValueError, match="launch, outcome and release in the same cycle"):
        model.check_inputs(both)


def test_parameters_are_checked() -> None:
    """The parameter dataclass names the parameter it rejects; the queue size and the widths
    are its derived values; an SM geometry derives the tables' parameters."""
    with pytest.raises(ValueError, match=r"split_table must be in 1\.\.64"):
        SplitTablesParams(4, 0, 4)
    with pytest.raises(ValueError, match="orec=2 is not 0 or 1"):
        SplitTablesParams(4, 4, 4, 16, 2)  # type: ignore[arg-type]
    assert SplitTablesParams(32, 32, 16).queue_size == 0
    assert SplitTablesParams(8, 4, 4).queue_size == 8 - 4 + 2
    assert SplitTablesParams(8, 4, 4).twin().core.queue_size == 6
    p = SplitTablesParams(4, 4, 4, pc_width=12)
    assert (p.never, p.return_code, p.pc_limit, p.sid_bits) == (0xFFF, 0xFFE, 0xFFC, 2)
    geometry = Geometry(warp_size=8, simd_width=4, split_table=4, reconv_table=6)
    assert unit_params(variant("mp"), geometry) == SplitTablesParams(8, 4, 6, 32, orec=False)
    assert unit_params(variant("mp-orec"), geometry).orec
