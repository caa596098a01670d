"""Scoreboards of the SM (seed 002 Sec 3.3.2, Fig 8): the per-warp scoreboard (Fig 8a) and the
masked scoreboard with an R-mask per entry (Fig 8b). Golden: ``golden.blocks.scoreboard``.

A set-associative table: one set per warp (indexed by the warp id), ``entries`` entries per
set, each holding a register id and a valid bit (plain) or an R-mask of W bits (masked; the
entry is valid while its R-mask is not zero). Every clock edge::

    after write-backs   plain:  valid  &= ~(some write-back names this warp and register)
                        masked: rmask  &= ~(OR of the masks of the write-backs that name it)
    reservation         plain:  the first free entry of the warp takes (1, rd)
                        masked: the entry holding rd ORs the mask in (Fig 9 state 5), else the
                                first free entry takes (rd, mask)

and the lookups read the table *after* the write-backs (a bypass), so an instruction decoded
in the cycle of a write-back already sees it cleared, as in the golden SM. A lookup selects
its warp's set (a multiplexer per port, the SRAM read port of the seed's table), compares the
three operand ids with every entry, and for the masked table also ANDs each entry's R-mask
with the instruction's active mask. The dependency mask has bit r for operand r when it hit;
``full`` says the destination needs an entry and the set has none free.

The masked table costs W bits per entry instead of one, an AND/OR-reduce of W bits per entry
per lookup operand, the per-entry clearing by write-back masks and a merge comparator on the
reservation port: docs/area.md has the synthesised ratio.
"""

from __future__ import annotations

from amaranth.hdl import Array, Cat, Const, Module, Mux, Signal, Value

from reconverge.golden.blocks import scoreboard as golden
from reconverge.golden.blocks.base import bits_for
from reconverge.hdl.ports import BlockComponent

#: One table entry as seen by the lookups: (valid, register id, R-mask or None).
Entry = tuple[Value, Value, Value | None]


def _any(bits: list[Value]) -> Value:
    return Cat(*bits).any() if bits else Const(0)


def _first_one(bits: list[Value]) -> list[Value]:
    """One-hot of the lowest set bit (all zero when none)."""
    out, below = [], Const(0)
    for bit in bits:
        out.append(bit & ~below)
        below = below | bit
    return out


class Scoreboard(BlockComponent):
    """Ports and parameters: see :class:`reconverge.golden.blocks.scoreboard.ScoreboardBlock`."""

    twin_class: type[golden.ScoreboardBlock] = golden.ScoreboardBlock

    def __init__(
        self,
        warp_size: int = 32,
        registers: int = 32,
        warps: int = 8,
        entries: int = 8,
        lookups: int = 2,
        writebacks: int = 2,
    ) -> None:
        cls = self.twin_class
        super().__init__(lambda: cls(warp_size, registers, warps, entries, lookups, writebacks))

    def elaborate(self, platform: object) -> Module:
        m = Module()
        model = self.model
        sets: list[list[Entry]] = []  # per warp, per entry: the value after the write-backs
        state: dict[tuple[int, int], tuple[Signal, Signal]] = {}
        for w in range(model.warps):
            entries = []
            for e in range(model.entries):
                entry, state[w, e] = self._entry(m, w, e)
                entries.append(entry)
            sets.append(entries)
        self._reserve(m, sets, state)
        for p in range(model.lookups):
            self._lookup(m, p, sets)
        return m

    # -- state and write-backs -----------------------------------------------------------------

    def _entry(self, m: Module, w: int, e: int) -> tuple[Entry, tuple[Signal, Signal]]:
        """Entry ``e`` of warp ``w``: its value after this cycle's write-backs (what the
        lookups and the reservation see) and its registers (register id, valid or R-mask)."""
        model = self.model
        name = f"w{w}_e{e}"
        reg = Signal(bits_for(model.registers), name=f"{name}_reg")
        hits = [
            self.wb_valid[k] & (self.wb_warp[k] == w) & (reg == self.wb_rd[k])
            for k in range(model.writebacks)
        ]
        valid = Signal(name=f"{name}_valid_wb")
        if model.masked:
            rmask = Signal(model.warp_size, name=f"{name}_rmask")
            after = Signal(model.warp_size, name=f"{name}_rmask_wb")
            cleared = Value.cast(0)
            for k, hit in enumerate(hits):
                cleared = cleared | Mux(hit, self.wb_mask[k], 0)
            m.d.comb += [after.eq(rmask & ~cleared), valid.eq(after.any())]
            return (valid, reg, after), (reg, rmask)
        held = Signal(name=f"{name}_valid")
        m.d.comb += valid.eq(held & ~_any(hits))
        return (valid, reg, None), (reg, held)

    def _select(self, m: Module, sets: list[list[Entry]], warp: Value, name: str) -> list[Entry]:
        """The set of warp ``warp`` (a multiplexer over the warps: the table's read port)."""
        model = self.model
        rbits = bits_for(model.registers)
        width = 1 + rbits + (model.warp_size if model.masked else 0)
        rows = Array(
            Cat(*(Cat(v, r, *([] if a is None else [a])) for v, r, a in entries))
            for entries in sets
        )
        row = Signal(width * model.entries, name=f"{name}_set")
        m.d.comb += row.eq(rows[warp])
        out: list[Entry] = []
        for e in range(model.entries):
            field = row[e * width : (e + 1) * width]
            rmask = field[1 + rbits :] if model.masked else None
            out.append((field[0], field[1 : 1 + rbits], rmask))
        return out

    # -- reservation ---------------------------------------------------------------------------

    def _reserve(
        self,
        m: Module,
        sets: list[list[Entry]],
        state: dict[tuple[int, int], tuple[Signal, Signal]],
    ) -> None:
        model = self.model
        chosen = self._select(m, sets, self.issue_warp, "issue")
        present: list[Value] = []  # masked: the entry already holding rd takes the mask
        if model.masked:
            for e, (valid, reg, _) in enumerate(chosen):
                hit = Signal(name=f"issue_present{e}")
                m.d.comb += hit.eq(valid & (reg == self.issue_rd))
                present.append(hit)
        first = _first_one([~valid for valid, _, _ in chosen])
        alloc = Signal(name="issue_alloc")
        m.d.comb += alloc.eq(self.issue_valid & (self.issue_rd != 0) & ~_any(present))
        for w, entries in enumerate(sets):
            here = self.issue_warp == w
            for e, (valid, _, after) in enumerate(entries):
                reg, held = state[w, e]
                new = Signal(name=f"w{w}_e{e}_alloc")
                m.d.comb += new.eq(alloc & here & first[e])
                m.d.sync += reg.eq(Mux(new, self.issue_rd, reg))
                if after is None:
                    m.d.sync += held.eq(valid | new)
                else:
                    mask = self.issue_mask
                    merge = self.issue_valid & here & present[e]
                    m.d.sync += held.eq(Mux(new, mask, after | Mux(merge, mask, 0)))

    # -- lookups -------------------------------------------------------------------------------

    def _lookup(self, m: Module, p: int, sets: list[list[Entry]]) -> None:
        model = self.model
        chosen = self._select(m, sets, self.lookup_warp[p], f"lookup{p}")
        mask = self.lookup_mask[p]
        any_lane = mask.any()
        dep = Value.cast(Const(0, model.registers))
        present: Value = Const(0)
        for k in range(golden.OPERANDS):
            op = self.lookup_regs[golden.OPERANDS * p + k]
            match = [valid & (reg == op) for valid, reg, _ in chosen]
            if model.masked:
                lanes = [(a & mask).any() for _, _, a in chosen]  # type: ignore[operator]
                hit_bits = [mt & ln for mt, ln in zip(match, lanes, strict=True)]
                hit = _any(hit_bits)
            else:
                hit = _any(match) & any_lane
            hit_s = Signal(name=f"lookup{p}_op{k}_hit")
            m.d.comb += hit_s.eq(hit)
            dep = dep | Mux(hit_s, Const(1, model.registers) << op, 0)
            if k == golden.OPERANDS - 1:
                present = _any(match)  # the destination already has an entry
        needs = (self.lookup_regs[golden.OPERANDS * p + golden.OPERANDS - 1] != 0) & ~present
        if model.masked:
            needs = needs & any_lane
        free = _any([~valid for valid, _, _ in chosen])
        m.d.comb += [self.dep_mask[p].eq(dep), self.full[p].eq(needs & ~free)]


class MaskedScoreboard(Scoreboard):
    """Ports and parameters: see
    :class:`reconverge.golden.blocks.scoreboard.MaskedScoreboardBlock`."""

    twin_class = golden.MaskedScoreboardBlock
