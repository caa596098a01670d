"""Scoreboards of the SM (seed 002 Sec 3.3.2, Fig 8): the per-warp scoreboard (Fig 8a) and the
masked scoreboard with an R-mask per entry (Fig 8b). Golden: ``golden.blocks.scoreboard``.

A set-associative table: one set per warp (indexed by the warp id), ``entries`` entries per
set, each holding a register id and a valid bit (plain) or an R-mask of W bits (masked; the
entry is valid while its R-mask is not zero). The reservation port is registered: the
``issue`` of a cycle waits one clock in the *incoming* register (warp, rd, mask), which the
lookups see as one more entry of its warp, so the issue logic's decision ends at a register
rather than at the table's allocation. The write-back ports carry the releases of the *next*
cycle (the SM's write-back lines know them a cycle early), so they act at the clock edge and
the lookups start at the registers, with no bypass in front of them. Every clock edge::

    incoming            plain:  the first free entry of its warp takes (1, rd)
                        masked: the entry holding rd ORs the mask in (Fig 9 state 5), else the
                                first free entry takes (rd, mask)
    write-backs         plain:  valid  &= ~(some write-back names this warp and register)
                        masked: rmask  &= ~(OR of the masks of the write-backs that name it)
                        (this cycle's ``issue`` likewise, as it enters the incoming register)

Every read port (the reservation's and each lookup's) selects its warp's set (a multiplexer
over the warps: the read port of the seed's table). A lookup compares the three operand ids
with every entry of the set, and for the masked table also ANDs each entry's R-mask with the
instruction's active mask. The dependency mask has bit r for operand r when it hit, ``hazard``
says some operand hit (the OR of the three hits, which the SM's issue logic waits on instead of
reducing the mask); ``full`` says the destination needs an entry and the set has none free.

Seen from the ports this is the twin's timing (a reservation and a write-back count from the
next cycle on): the incoming entry hits the lookups as the table entry would, and ``full``
counts it where it takes a new entry (at least two free entries then, else one).

The masked table costs W bits per entry instead of one, an AND/OR-reduce of W bits per entry
per lookup operand, the per-entry clearing by write-back masks and a merge comparator on the
reservation port: docs/area.md has the synthesised ratio.
"""

from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal, Value

from reconverge.golden.blocks.scoreboard import OPERANDS, ScoreboardParams
from reconverge.hdl.blocks.common import any_of, first_set
from reconverge.hdl.blocks.ports import BlockComponent

#: One table entry as seen by the lookups: (valid, register id, R-mask or None).
Entry = tuple[Value, Value, Value | None]


class Scoreboard(BlockComponent):
    """Ports and parameters: :class:`reconverge.golden.blocks.scoreboard.ScoreboardParams`;
    with :class:`~reconverge.golden.blocks.scoreboard.MaskedScoreboardParams` the masked
    table (:class:`MaskedScoreboard`)."""

    params: ScoreboardParams

    def __init__(self, params: ScoreboardParams) -> None:
        super().__init__(params)
        rbits = params.reg_bits
        #: per warp, per entry: (register id, valid bit or R-mask)
        self.table = [
            [
                (
                    Signal(rbits, name=f"w{w}_e{e}_reg"),
                    Signal(params.warp_size, name=f"w{w}_e{e}_rmask")
                    if params.masked
                    else Signal(name=f"w{w}_e{e}_valid"),
                )
                for e in range(params.entries)
            ]
            for w in range(params.warps)
        ]
        #: the incoming reservation (last cycle's issue, less last cycle's write-backs)
        self.inc_valid = Signal(name="incoming_valid")
        self.inc_warp = Signal(params.warp_bits, name="incoming_warp")
        self.inc_rd = Signal(rbits, name="incoming_rd")
        self.inc_mask = Signal(params.warp_size, name="incoming_mask")

    def elaborate(self, platform: object) -> Module:
        m = Module()
        params = self.params
        issue, table = self.issue, self.table
        inc_valid, inc_warp, inc_rd, inc_mask = (
            self.inc_valid, self.inc_warp, self.inc_rd, self.inc_mask
        )  # fmt: skip
        rows = Array(Cat(*(Cat(reg, held) for reg, held in entries)) for entries in table)
        # the incoming reservation: this cycle's issue, less this cycle's write-backs
        held_issue = issue.mask if params.masked else issue.valid
        issue_live, issue_after = self._written_back(m, "issue", issue.warp, issue.rd, held_issue)
        m.d.sync += [
            inc_valid.eq(issue.valid & issue_live),
            inc_warp.eq(issue.warp),
            inc_rd.eq(issue.rd),
            inc_mask.eq(issue.mask if issue_after is None else issue_after),
        ]
        # (x0 is never reserved: tested after the register, not on the issue's path)
        incoming = (inc_valid & (inc_rd != 0), inc_rd, inc_mask if params.masked else None)
        chosen = self._read(m, rows, inc_warp, "incoming")
        new, merge = self._reserve(m, chosen, incoming)
        # the next state: the reservation taken, then this cycle's write-backs (the entry
        # taking the reservation is cleared as the incoming register is)
        held_in = inc_mask if params.masked else inc_valid
        inc_kept, inc_after = self._written_back(m, "incoming", inc_warp, inc_rd, held_in)
        for w, entries in enumerate(table):
            for e, (reg, held) in enumerate(entries):
                valid, after = self._written_back(m, f"w{w}_e{e}", Const(w), reg, held)
                here = inc_warp == w
                alloc = Signal(name=f"w{w}_e{e}_alloc")
                m.d.comb += alloc.eq(here & new[e])
                m.d.sync += reg.eq(Mux(alloc, inc_rd, reg))
                if after is None:
                    m.d.sync += held.eq(valid | (alloc & inc_kept))
                else:
                    assert inc_after is not None
                    m.d.sync += held.eq(
                        Mux(alloc, inc_after, after | Mux(here & merge[e], inc_after, 0))
                    )
        # the incoming entry takes a new entry of its warp's set (not merged into one)
        takes = Signal(name="incoming_takes_entry")
        m.d.comb += takes.eq(any_of(new))
        for p in range(params.lookups):
            ours = self.lookup.warp[p] == inc_warp
            extra = (incoming[0] & ours, inc_rd, incoming[2])
            self._lookup(
                m, p, self._read(m, rows, self.lookup.warp[p], f"lookup{p}"), extra, takes & ours
            )
        return m

    def _written_back(
        self, m: Module, name: str, warp: Value, reg: Value, held: Value
    ) -> tuple[Value, Value | None]:
        """(valid, R-mask or None) of an entry of warp ``warp`` once this cycle's write-back
        inputs act (at the clock edge): those that name its warp and register clear it (plain)
        or clear their lanes from its R-mask (masked)."""
        params, wb = self.params, self.writeback
        hits = [
            wb.valid[k] & (wb.warp[k] == warp) & (reg == wb.rd[k]) for k in range(params.writebacks)
        ]
        valid = Signal(name=f"{name}_valid_wb")
        if not params.masked:
            m.d.comb += valid.eq(held & ~any_of(hits))
            return valid, None
        cleared = Value.cast(0)
        for k, hit in enumerate(hits):
            cleared = cleared | Mux(hit, wb.mask[k], 0)
        after = Signal(params.warp_size, name=f"{name}_rmask_wb")
        m.d.comb += [after.eq(held & ~cleared), valid.eq(after.any())]
        return valid, after

    def _read(self, m: Module, rows: Array, warp: Value, name: str) -> list[Entry]:
        """A read port: the set of warp ``warp`` (a multiplexer over the warps, the table's
        read port), each entry's (valid, register id, R-mask or None)."""
        params = self.params
        rbits, held = params.reg_bits, params.warp_size if params.masked else 1
        width = rbits + held
        row = Signal(width * params.entries, name=f"{name}_set")
        m.d.comb += row.eq(rows[warp])
        out: list[Entry] = []
        for e in range(params.entries):
            field = row[e * width : (e + 1) * width]
            reg, stored = field[:rbits], field[rbits:]
            out.append((stored.any(), reg, stored if params.masked else None))
        return out

    # -- reservation ---------------------------------------------------------------------------

    def _reserve(
        self, m: Module, chosen: list[Entry], incoming: Entry
    ) -> tuple[list[Value], list[Value]]:
        """Per entry of the incoming reservation's set: (takes it as a new entry, ORs its mask
        in). Plain: the first free entry; masked: the entry already holding rd (Fig 9 state
        5), else the first free one."""
        params = self.params
        live, rd, _ = incoming
        present: list[Value] = []
        if params.masked:
            for e, (valid, reg, _) in enumerate(chosen):
                hit = Signal(name=f"incoming_present{e}")
                m.d.comb += hit.eq(live & valid & (reg == rd))
                present.append(hit)
        alloc = Signal(name="incoming_alloc")
        m.d.comb += alloc.eq(live & ~any_of(present))
        first = first_set([~valid for valid, _, _ in chosen])
        new = []
        for e in range(params.entries):
            sig = Signal(name=f"incoming_new{e}")
            m.d.comb += sig.eq(alloc & first[e])
            new.append(sig)
        return new, present

    # -- lookups -------------------------------------------------------------------------------

    def _lookup(
        self, m: Module, p: int, chosen: list[Entry], incoming: Entry, takes: Value
    ) -> None:
        """Dependency mask and ``full`` of lookup port ``p`` from its warp's set and the
        incoming reservation (when its warp's; ``takes``: it takes one of the set's free
        entries)."""
        params, lookup = self.params, self.lookup
        table = chosen
        chosen = [*chosen, incoming]
        mask = lookup.mask[p]
        any_lane = mask.any()
        dep = Value.cast(Const(0, params.regs))
        hits = []
        present: Value = Const(0)
        shared = []  # per entry: its R-mask shares a lane with the instruction (masked)
        for e, (_, _, rmask) in enumerate(chosen):
            if rmask is not None:
                lanes = Signal(name=f"lookup{p}_e{e}_lanes")
                m.d.comb += lanes.eq((rmask & mask).any())
                shared.append(lanes)
        for k in range(OPERANDS):
            op = lookup.operands[OPERANDS * p + k]
            match = [valid & (reg == op) for valid, reg, _ in chosen]
            if params.masked:
                hit = any_of([mt & ln for mt, ln in zip(match, shared, strict=True)])
            else:
                hit = any_of(match) & any_lane
            hit_s = Signal(name=f"lookup{p}_op{k}_hit")
            m.d.comb += hit_s.eq(hit)
            hits.append(hit_s)
            dep = dep | Cat(hit_s & (op == r) for r in range(params.regs))
            if k == OPERANDS - 1:
                present = any_of(match)  # the destination already has an entry
        needs = (lookup.operands[OPERANDS * p + OPERANDS - 1] != 0) & ~present
        if params.masked:
            needs = needs & any_lane
        free_bits = [~valid for valid, _, _ in table]
        free = any_of(free_bits)
        two_free = any_of([a & b for i, a in enumerate(free_bits) for b in free_bits[i + 1 :]])
        free = Mux(takes, two_free, free)
        m.d.comb += [
            lookup.dep_mask[p].eq(dep),
            lookup.hazard[p].eq(any_of(hits)),
            lookup.full[p].eq(needs & ~free),
        ]


class MaskedScoreboard(Scoreboard):
    """The masked table (Fig 8b): the same component, built from a
    :class:`~reconverge.golden.blocks.scoreboard.MaskedScoreboardParams`."""

    def __init__(self, params: ScoreboardParams) -> None:
        if not params.masked:
            raise ValueError("a masked scoreboard takes MaskedScoreboardParams")
        super().__init__(params)
