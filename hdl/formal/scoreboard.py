"""The scoreboards' properties (seed 002 Sec 3.3.2, Fig 8, Fig 9; ``hdl/blocks/scoreboard.py``),
the plain table (Fig 8a) and the masked one (Fig 8b), over free ``issue``, ``writeback`` and
``lookup`` inputs limited by the interface contract of ``golden.blocks.scoreboard`` (what
``ScoreboardBlock`` raises on):

* every warp and register a valid port names is one of the table's;
* an issue never reserves a register again for a lane that has a write to it pending (plain:
  while any write to it is pending), and never needs an entry its warp's set has not free:
  the SM's issue logic waits on ``hazard`` and ``full``.

The rules compare the table with the *reservations* (:func:`reservations`), the twin's state
kept beside it: per warp and register the lanes with a write pending (plain: every lane while
one is), ORed in by an issue and cleared by the write-backs that name it, both at the clock
edge (state' = (state + issue) - releases, the twin's order).

Rules:

* ``dependency_mask_is_the_pending_writes`` (Sec 3.3.2, Fig 9's Dep-mask): bit r of a lookup's
  dependency mask is set exactly when r (not x0) is one of its operands and r has a write
  pending for one of its active lanes (plain: for the warp, with some lane active), and
  ``hazard`` is the mask not empty: the issue logic that waits on it issues no instruction
  while one of its registers is pending for its threads (masked) or its warp (plain);
* ``full_is_a_set_without_a_free_entry`` (Fig 8, Sec 6.6's entries per warp): a lookup is
  ``full`` exactly when its destination is not reserved yet, needs an entry (not x0; masked:
  with an active lane) and its warp already reserves as many registers as the set has
  entries;
* ``entries_are_the_reservations``: the table's entries and the incoming register hold exactly
  the reservations: each valid entry a reserved register (not x0, no two entries of a set the
  same register) with its R-mask, every reservation in an entry or the incoming register, no
  set over its entries: no entry leaks (every entry an issue took is free again once its
  write-backs are in) and none is lost.

The rules are asserted together (``check.JOINT``), the last one the strengthening the others
need for k-induction.

Covers: a full set; an entry freed and taken again by another register; masked: an R-mask that
grows by a second reservation of its register while it is pending (Fig 9 state 5), a lookup
of a pending register that does not wait because its lanes are not the pending ones (Fig 9:
the parallel paths do not block each other); plain: a lookup that waits on a pending
register.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import reduce

from amaranth.hdl import Assert, Assume, Cat, Const, Cover, Module, Mux, Signal, Value

from reconverge.golden.blocks.scoreboard import OPERANDS, ScoreboardParams
from reconverge.hdl.blocks.common import any_of
from reconverge.hdl.blocks.scoreboard import MaskedScoreboard, Scoreboard
from reconverge.hdl.formal.check import Harness, previous
from reconverge.hdl.formal.check import harnesses as block_harnesses


@dataclass(frozen=True)
class Seen:
    """What a rule reads: the table, its parameters, the reservations (per warp, per register
    its pending lanes) and values of the cycle before."""

    dut: Scoreboard
    params: ScoreboardParams
    pending: list[list[Value]]
    before: dict[str, Value]

    def held(self, value: Value) -> Value:
        """The lanes a reservation of ``value`` holds: its mask (masked), every lane (plain)."""
        return value if self.params.masked else Mux(value, (1 << self.params.warp_size) - 1, 0)

    def in_use(self, warp: Value) -> Value:
        """How many registers warp ``warp`` reserves."""
        out: Value = Const(0)
        for w, regs in enumerate(self.pending):
            out = Mux(warp == w, sum(Value.cast(lanes.any()) for lanes in regs), out)
        return out

    def lanes(self, warp: Value, reg: Value) -> Value:
        """The pending lanes of register ``reg`` of warp ``warp``."""
        out: Value = Const(0, self.params.warp_size)
        for w, regs in enumerate(self.pending):
            for r, lanes in enumerate(regs):
                out = out | Mux((warp == w) & (reg == r), lanes, 0)
        return out


def reservations(m: Module, dut: Scoreboard, params: ScoreboardParams) -> list[list[Value]]:
    """The reservations as the twin counts them: per warp, per register, the lanes with a write
    pending (x0 never); an issue ORs its lanes in, the write-backs that name the register clear
    theirs, at the clock edge."""
    issue, wb = dut.issue, dut.writeback
    full = (1 << params.warp_size) - 1
    pending = []
    for w in range(params.warps):
        regs: list[Value] = [Const(0, params.warp_size)]
        for r in range(1, params.regs):
            lanes = Signal(params.warp_size, name=f"pending_w{w}_r{r}")
            issued = issue.valid & (issue.warp == w) & (issue.rd == r)
            added = Mux(issued, issue.mask if params.masked else full, 0)
            cleared = reduce(
                Value.__or__,
                (
                    Mux(
                        wb.valid[k] & (wb.warp[k] == w) & (wb.rd[k] == r),
                        wb.mask[k] if params.masked else full,
                        0,
                    )
                    for k in range(params.writebacks)
                ),
            )
            m.d.sync += lanes.eq((lanes | added) & ~cleared)
            regs.append(lanes)
        pending.append(regs)
    return pending


def contract(m: Module, s: Seen) -> None:
    """The interface contract of ``golden.blocks.scoreboard`` (module docstring)."""
    dut, params = s.dut, s.params
    issue, wb, lookup = dut.issue, dut.writeback, dut.lookup
    for p in range(params.lookups):
        m.d.comb += Assume(lookup.warp[p] < params.warps)
        for k in range(OPERANDS):
            m.d.comb += Assume(lookup.operands[OPERANDS * p + k] < params.regs)
    for k in range(params.writebacks):
        with m.If(wb.valid[k]):
            m.d.comb += Assume((wb.warp[k] < params.warps) & (wb.rd[k] < params.regs))
    with m.If(issue.valid):
        m.d.comb += Assume((issue.warp < params.warps) & (issue.rd < params.regs))
        lanes = s.lanes(issue.warp, issue.rd)
        m.d.comb += Assume((lanes & s.held(issue.mask if params.masked else 1)) == 0)
        needs = (issue.rd != 0) & (lanes == 0)
        if params.masked:
            needs = needs & issue.mask.any()
        with m.If(needs):
            m.d.comb += Assume(s.in_use(issue.warp) < params.entries)


def _operands(s: Seen, p: int) -> list[Value]:
    return [s.dut.lookup.operands[OPERANDS * p + k] for k in range(OPERANDS)]


def dependency_mask_is_the_pending_writes(m: Module, s: Seen) -> None:
    lookup, params = s.dut.lookup, s.params
    for p in range(params.lookups):
        ops, active = _operands(s, p), lookup.mask[p]
        expected = Cat(
            any_of([op == r for op in ops]) & (s.lanes(lookup.warp[p], r) & active).any()
            if r
            else Const(0)
            for r in range(params.regs)
        )
        m.d.comb += [
            Assert(lookup.dep_mask[p] == expected),
            Assert(lookup.hazard[p] == expected.any()),
        ]


def full_is_a_set_without_a_free_entry(m: Module, s: Seen) -> None:
    lookup, params = s.dut.lookup, s.params
    for p in range(params.lookups):
        rd, warp = _operands(s, p)[-1], lookup.warp[p]
        needs = (rd != 0) & (s.lanes(warp, rd) == 0)
        if params.masked:
            needs = needs & lookup.mask[p].any()
        m.d.comb += Assert(lookup.full[p] == (needs & (s.in_use(warp) >= params.entries)))


def entries_are_the_reservations(m: Module, s: Seen) -> None:
    dut, params = s.dut, s.params
    incoming = dut.inc_valid & (dut.inc_rd != 0)
    m.d.comb += Assert(~dut.inc_valid | (dut.inc_warp < params.warps))
    if params.masked:
        m.d.comb += Assert(~dut.inc_valid | dut.inc_mask.any())
    for w, entries in enumerate(dut.table):
        valid = [held.any() for _, held in entries]
        for e, (reg, _) in enumerate(entries):
            with m.If(valid[e]):
                m.d.comb += Assert((reg != 0) & (reg < params.regs))
                for f in range(e + 1, len(entries)):
                    m.d.comb += Assert(~valid[f] | (entries[f][0] != reg))
        here = incoming & (dut.inc_warp == w)
        if not params.masked:  # the plain incoming register is never already in the set
            for e, (reg, _) in enumerate(entries):
                m.d.comb += Assert(~(here & valid[e] & (reg == dut.inc_rd)))
        for r in range(1, params.regs):
            kept = zip(valid, entries, strict=True)
            held = reduce(Value.__or__, (Mux(v & (reg == r), s.held(h), 0) for v, (reg, h) in kept))
            inc = s.held(dut.inc_mask if params.masked else Const(1))
            held = held | Mux(here & (dut.inc_rd == r), inc, 0)
            m.d.comb += Assert(held == s.pending[w][r])
        m.d.comb += Assert(s.in_use(Const(w)) <= params.entries)


PROPERTIES: dict[str, tuple[Callable[[Module, Seen], None], str]] = {
    "dependency_mask_is_the_pending_writes": (
        dependency_mask_is_the_pending_writes,
        "seed 002 Sec 3.3.2, Fig 9",
    ),
    "full_is_a_set_without_a_free_entry": (
        full_is_a_set_without_a_free_entry,
        "seed 002 Fig 8, Sec 6.6",
    ),
    "entries_are_the_reservations": (entries_are_the_reservations, "hdl/blocks/scoreboard.py"),
}


def covers(m: Module, s: Seen) -> None:
    dut, before, lookup = s.dut, s.before, s.dut.lookup
    reg, held = dut.table[0][0]
    m.d.comb += Cover(lookup.full[0])
    m.d.comb += Cover(before["ever"] & held.any() & (reg != before["last_reg"]))
    if s.params.masked:
        grown = (held != before["held"]) & ((held & before["held"]) == before["held"])
        m.d.comb += Cover(before["held"].any() & (before["reg"] == reg) & grown)
    pending = s.lanes(lookup.warp[0], _operands(s, 0)[0]) != 0
    m.d.comb += Cover(pending & lookup.mask[0].any() & (lookup.hazard[0] != s.params.masked))


def harnesses(
    params: ScoreboardParams, make: Callable[[ScoreboardParams], Scoreboard] | None = None
) -> dict[str, Callable[[], Harness]]:
    """Per property, and for the covers, what builds its formal top; ``make`` builds the block
    (a broken variant, in the tests; by default the plain or masked table as ``params`` is)."""
    build = make or (MaskedScoreboard if params.masked else Scoreboard)

    def setup(m: Module) -> tuple[Seen, Sequence[Value]]:
        m.submodules.dut = dut = build(params)
        pending = reservations(m, dut, params)
        reg, held = dut.table[0][0]
        # the register entry 0 of warp 0 last held, and whether it ever held one
        last_reg, ever = Signal.like(reg, name="last_reg"), Signal(name="ever_held")
        with m.If(held.any()):
            m.d.sync += [last_reg.eq(reg), ever.eq(1)]
        before = {**previous(m, {"reg": reg, "held": held}), "last_reg": last_reg, "ever": ever}
        seen = Seen(dut, params, pending, before)
        contract(m, seen)
        ports = [dut.port(p.name) for p in params.flat_ports]
        return seen, ports

    rules = {name: rule for name, (rule, _) in PROPERTIES.items()}
    return block_harnesses(setup, rules, covers, joint=True)
