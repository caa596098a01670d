"""Stimulus for the plain and masked scoreboards (seed 002 Sec 3.3.2, Fig 8a/8b, Fig 9).

The same scenarios drive both blocks (same ports); the directed ones expect each table's own
answers (the plain one has Fig 9's false dependency). The scoreboards have no SIMD width: the
W = 8 set is the scoreboard of the W = L = 8 geometry.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from reconverge.golden.blocks.base import Values
from reconverge.golden.blocks.scoreboard import (
    OPERANDS,
    MaskedScoreboardParams,
    Scoreboard,
    ScoreboardBlock,
    ScoreboardParams,
    make_scoreboard,
)
from reconverge.testbench.lockstep import RESET, Scenario
from reconverge.testbench.scenarios import ScenarioSpec

#: Parameter sets of the cocotb suite (for both blocks): Fig 9's 4 threads with two lookup
#: ports and one write-back port; W = 8 (the W = L = 8 geometry) with the seed's 8 entries,
#: one lookup and two write-backs; W = 32 with 8 warps and the seed's ports.
PARAM_SETS = [
    {"warp_size": 4, "regs": 16, "warps": 2, "entries": 4, "lookups": 2, "writebacks": 1},
    {"warp_size": 8, "regs": 32, "warps": 4, "entries": 8, "lookups": 1, "writebacks": 2},
    {"warp_size": 32, "regs": 32, "warps": 8, "entries": 8, "lookups": 2, "writebacks": 2},
]
#: More shapes for the fast Amaranth-simulator tests: one warp of one thread with a single
#: entry, an odd number of warps, three ports of each kind, a table that never fills.
EXTRA_PARAM_SETS = [
    {"warp_size": 1, "regs": 4, "warps": 1, "entries": 1, "lookups": 1, "writebacks": 1},
    {"warp_size": 16, "regs": 8, "warps": 5, "entries": 3, "lookups": 3, "writebacks": 3},
    {"warp_size": 4, "regs": 8, "warps": 3, "entries": 7, "lookups": 2, "writebacks": 1},
]


def param_sets(masked: bool, sets: list[dict[str, int]]) -> list[ScoreboardParams]:
    """The parameter sets for the plain or the masked table."""
    cls = MaskedScoreboardParams if masked else ScoreboardParams
    return [cls(**values) for values in sets]


# Fig 9: R0..R5 are x10..x15 (as in golden/tests/test_seed002_multipath.py); lanes 0..3.
R = {f"R{i}": 10 + i for i in range(6)}
#: The instructions of Fig 9: (rs1, rs2, rd), active mask (I-mask).
FIG9 = {
    "I0": ((R["R5"], 0, R["R0"]), 0b1111),  # LOAD R0, 0(R5)
    "I1": ((R["R0"], 0, R["R1"]), 0b0101),  # LOAD R1, 0(R0)
    "I2": ((R["R4"], 0, R["R1"]), 0b1010),  # LOAD R1, 0(R4)
    "I3": ((R["R0"], R["R1"], R["R4"]), 0b1010),  # ADD R4, R0, R1
}


def idle(model: ScoreboardBlock) -> Values:
    return model.idle_inputs()


def _lookups(model: ScoreboardBlock, inputs: Values, checks: Sequence[tuple[int, tuple, int]]):
    """Put up to ``lookups`` (warp, (rs1, rs2, rd), mask) on the lookup ports."""
    warps, regs, masks = (
        [0] * model.params.lookups,
        [0] * OPERANDS * model.params.lookups,
        [0] * model.params.lookups,
    )
    for p, (warp, ops, mask) in enumerate(checks):
        warps[p], masks[p] = warp, mask
        regs[OPERANDS * p : OPERANDS * (p + 1)] = ops
    inputs.update(
        {
            "lookup__warp": tuple(warps),
            "lookup__operands": tuple(regs),
            "lookup__mask": tuple(masks),
        }
    )
    return inputs


def _issue(inputs: Values, warp: int, rd: int, mask: int) -> Values:
    inputs.update({"issue__valid": 1, "issue__warp": warp, "issue__rd": rd, "issue__mask": mask})
    return inputs


def _writebacks(model: ScoreboardBlock, inputs: Values, wbs: Sequence[tuple[int, int, int]]):
    valid = sum(1 << k for k in range(len(wbs)))
    pad = [(0, 0, 0)] * (model.params.writebacks - len(wbs))
    warps, rds, masks = zip(*(list(wbs) + pad), strict=True)
    inputs.update(
        {
            "writeback__valid": valid,
            "writeback__warp": warps,
            "writeback__rd": rds,
            "writeback__mask": masks,
        }
    )
    return inputs


def _check(
    model: ScoreboardBlock, warp: int, names: Sequence[str], inputs: Values | None = None
) -> Scenario:
    """Look the Fig 9 instructions up (with ``inputs`` for the rest of the cycle) and return
    their dependency masks as Fig 9 prints them, R1R0. Spreads over cycles when there are more
    instructions than lookup ports; only the first cycle carries ``inputs``."""
    found: dict[str, str] = {}
    pending = list(names)
    base = inputs
    while pending:
        now, pending = pending[: model.params.lookups], pending[model.params.lookups :]
        cycle_in = base if base is not None else idle(model)
        base = None
        out = yield _lookups(model, cycle_in, [(warp, *FIG9[n]) for n in now])
        for p, n in enumerate(now):
            dep = out["lookup__dep_mask"][p] >> R["R0"]
            found[n] = f"{dep >> 1 & 1}{dep & 1}"
    return found


def _rmasks(model: ScoreboardBlock, warp: int) -> Scenario:
    """Fig 9's scoreboard column, read back through lookups: for R0 and R1, one single-lane
    lookup per lane (lane i is reserved iff the lookup of lane i depends on the register)."""
    probes = [(name, lane) for name in ("R0", "R1") for lane in range(4)]
    bits: dict[str, int] = {"R0": 0, "R1": 0}
    for start in range(0, len(probes), model.params.lookups):
        now = probes[start : start + model.params.lookups]
        out = yield _lookups(model, idle(model), [(warp, (R[n], 0, 0), 1 << i) for n, i in now])
        for p, (name, lane) in enumerate(now):
            bits[name] |= (out["lookup__dep_mask"][p] >> R[name] & 1) << lane
    return {name: f"{m:04b}" for name, m in bits.items() if m}


def fig9(model: ScoreboardBlock, rng: random.Random, cycles: int) -> Scenario:
    """seed 002 Fig 9, states 1-6: the masked scoreboard's R-masks and the I-Buffer's
    dependency masks, the write-backs presented the cycle before the lookups that see them
    (states 4, 6);
    on the plain scoreboard (Fig 8a) I1 has the false dependency on I2's R1 and waits for
    its write-back. The registers are read back lane by lane after every state."""
    warp = model.params.warps - 1  # not warp 0: the set is selected by the warp id
    dep = yield from _check(model, warp, ["I0"])
    assert dep == {"I0": "00"}, "before 1"
    # 1: I0 issues (its lookup in the same cycle), R0 reserved for 1111
    yield _issue(_lookups(model, idle(model), [(warp, *FIG9["I0"])]), warp, R["R0"], 0b1111)
    assert (yield from _rmasks(model, warp)) == {"R0": "1111"}, "state 1"
    assert (yield from _check(model, warp, ["I1", "I2"])) == {"I1": "01", "I2": "00"}, "state 1"
    # 2: I2 issues, R1 reserved for 1010 (plain: for the whole warp)
    yield _issue(idle(model), warp, R["R1"], 0b1010)
    masked = model.params.masked
    want = {"R0": "1111", "R1": "1010" if masked else "1111"}
    assert (yield from _rmasks(model, warp)) == want, "state 2"
    i1 = "01" if masked else "11"  # plain: the false dependency on I2's R1
    assert (yield from _check(model, warp, ["I1"])) == {"I1": i1}, "state 2"
    # 3: I3 decoded
    assert (yield from _check(model, warp, ["I3"])) == {"I3": "11"}, "state 3"
    # 4: I0 writes R0 back, presented the cycle before (the lookups of that cycle still see
    # R0 reserved, those of the next one see it free)
    wb = _writebacks(model, idle(model), [(warp, R["R0"], 0b1111)])
    assert (yield from _check(model, warp, ["I3"], wb)) == {"I3": "11"}, "before state 4"
    want4 = {"I1": "00" if masked else "10", "I3": "10"}
    assert (yield from _check(model, warp, ["I1", "I3"])) == want4, "state 4"
    assert (yield from _rmasks(model, warp)) == {"R1": want["R1"]}, "state 4"
    if masked:
        # 5: I1 issues, R1 reserved by all lanes (odd: I1, even: I2)
        yield _issue(idle(model), warp, R["R1"], 0b0101)
        assert (yield from _rmasks(model, warp)) == {"R1": "1111"}, "state 5"
        assert (yield from _check(model, warp, ["I3"])) == {"I3": "10"}, "state 5"
        # 6: I2 writes R1 back: 0101 left, no lane in common with I3's 1010
        wb = _writebacks(model, idle(model), [(warp, R["R1"], 0b1010)])
        assert (yield from _check(model, warp, ["I3"], wb)) == {"I3": "10"}, "before state 6"
        assert (yield from _check(model, warp, ["I3"])) == {"I3": "00"}, "state 6"
        assert (yield from _rmasks(model, warp)) == {"R1": "0101"}, "state 6"
    else:
        # plain: I1 still waits; I2's write-back frees it (and I3), then I1 issues
        yield _writebacks(model, idle(model), [(warp, R["R1"], 0b1010)])
        dep = yield from _check(model, warp, ["I1", "I3"][: model.params.lookups])
        assert set(dep.values()) == {"00"}, "I2's write-back"
        yield _issue(idle(model), warp, R["R1"], 0b0101)
        assert (yield from _rmasks(model, warp)) == {"R1": "1111"}, "I1 issued"
        assert (yield from _check(model, warp, ["I3"])) == {"I3": "10"}, "I1 issued"


def set_full(model: ScoreboardBlock, rng: random.Random, cycles: int) -> Scenario:
    """seed 002 Fig 8: the warp's set holds ``entries`` registers. Filling it makes ``full``
    for a new destination (not for one already in the table, nor in another warp's set); a
    write-back (presented a cycle ahead) frees an entry that the lookups and a reservation of
    the next cycle reuse."""
    lane0, others = 1, model.boards[0].full_mask & ~1
    regs = list(range(1, model.params.entries + 1))
    new, newer = model.params.entries + 1, model.params.entries + 2
    for reg in regs:
        out = yield _lookups(model, idle(model), [(0, (0, 0, reg), lane0)])
        assert out["lookup__full"] == 0, f"x{reg} fits"
        yield _issue(idle(model), 0, reg, lane0)
    out = yield _lookups(model, idle(model), [(0, (0, 0, new), lane0)])
    assert out["lookup__full"] == 1, "a new destination in a full set"
    again = yield _lookups(model, idle(model), [(0, (0, 0, regs[0]), others or lane0)])
    if model.params.masked and others:
        assert again["lookup__full"] == 0 and again["lookup__dep_mask"][0] == 0, (
            "merges into its entry"
        )
    else:
        assert again["lookup__dep_mask"][0] == 1 << regs[0], (
            "reserved: a dependency, not a new entry"
        )
    if model.params.warps > 1:
        out = yield _lookups(model, idle(model), [(1, (0, 0, new), lane0)])
        assert out["lookup__full"] == 0, "another warp's set is empty"
    # the write-back of x1 frees an entry at the clock edge; the next reservation takes it
    cycle_in = _writebacks(model, idle(model), [(0, regs[0], lane0)])
    out = yield _lookups(model, cycle_in, [(0, (0, 0, new), lane0)])
    assert out["lookup__full"] == 1, "a write-back acts at the clock edge"
    out = yield _issue(_lookups(model, idle(model), [(0, (0, 0, new), lane0)]), 0, new, lane0)
    assert out["lookup__full"] == 0, "the write-back of the cycle before freed an entry"
    out = yield _lookups(model, idle(model), [(0, (0, 0, newer), lane0)])
    assert out["lookup__full"] == 1, "full again"


def _partition(rng: random.Random, width: int) -> list[int]:
    """The warp's lanes split into 1..4 disjoint non-empty masks (its warp splits)."""
    parts = [0] * rng.randint(1, min(4, width))
    for lane in range(width):
        parts[rng.randrange(len(parts))] |= 1 << lane
    return [p for p in parts if p]


def random_stream(model: ScoreboardBlock, rng: random.Random, cycles: int) -> Scenario:
    """An SM-like random stream, valid by construction: every warp runs as a few splits
    (re-partitioned now and then, like divergence and reconvergence); each cycle the lookup
    ports decode random instructions of random splits (operands from a small pool, so hazards
    and full sets are common), one of them that has no dependency and fits issues and
    reserves its destination, and write-backs come back 1..40 cycles later through the
    write-back ports (delayed when more are due than there are ports). A private copy of the
    functional scoreboards decides what may issue; a reset now and then."""
    w, warps = model.params.warp_size, model.params.warps
    pool = rng.sample(
        range(1, model.params.regs), min(model.params.regs - 1, 2 * model.params.entries + 2)
    )

    def fresh() -> tuple[list[Scoreboard], list[list[int]], list[tuple[int, int, int, int]]]:
        shadow = [
            make_scoreboard(model.params.masked, w, model.params.regs, model.params.entries)
            for _ in range(warps)
        ]
        return shadow, [_partition(rng, w) for _ in range(warps)], []

    shadow, splits, inflight = fresh()
    for cycle in range(cycles):
        if cycle % 997 == 500:
            yield RESET
            shadow, splits, inflight = fresh()
            continue
        inflight.sort()
        due = [i for i in inflight if i[0] <= cycle][: model.params.writebacks]
        for item in due:
            inflight.remove(item)
        wbs = [(warp, rd, mask) for _, warp, rd, mask in due]
        if rng.random() < 0.05:
            warp = rng.randrange(warps)
            if not any(i[1] == warp for i in inflight):
                splits[warp] = _partition(rng, w)  # reconverged / diverged differently
        checks = []
        for _ in range(model.params.lookups):
            warp = 0 if rng.random() < 0.5 else rng.randrange(warps)  # a busy warp fills its set
            mask = rng.choice(splits[warp]) if rng.random() < 0.9 else rng.getrandbits(w)
            ops = [rng.choice(pool) if rng.random() < 0.8 else 0 for _ in range(OPERANDS)]
            checks.append((warp, tuple(ops), mask))
        inputs = _lookups(model, idle(model), checks)
        # what may issue: the state before this cycle's write-back inputs (they act at the
        # clock edge, after the reservation)
        ready = [
            (warp, ops, mask)
            for warp, ops, mask in checks
            if mask
            and not shadow[warp].dependency_mask(ops, mask)
            and not shadow[warp].full(ops[-1], mask)
        ]
        if ready and rng.random() < 0.8:
            warp, ops, mask = rng.choice(ready)
            _issue(inputs, warp, ops[-1], mask)
            shadow[warp].reserve(ops[-1], mask)
            if ops[-1]:
                inflight.append((cycle + rng.randint(1, 40), warp, ops[-1], mask))
        elif rng.random() < 0.1:
            inputs = _issue(inputs, rng.randrange(warps), 0, rng.getrandbits(w))  # no rd
        warp, reg = rng.randrange(warps), rng.choice(pool)
        if (
            len(wbs) < model.params.writebacks
            and not shadow[warp].rmask[reg]
            and rng.random() < 0.03
        ):
            wbs.append((warp, reg, rng.getrandbits(w)))  # nothing in flight: changes nothing
        for warp, rd, mask in wbs:
            shadow[warp].release(rd, mask)
        yield _writebacks(model, inputs, wbs)


SCENARIOS = [
    ScenarioSpec(
        "seed002_fig9_scoreboard_states",
        fig9,
        lambda p: p.warp_size >= 4 and p.regs >= 16 and p.entries >= 2,
    ),
    ScenarioSpec("seed002_fig8_set_full", set_full, lambda p: p.entries + 2 < p.regs),
    ScenarioSpec("random", random_stream),
]
