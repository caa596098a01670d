"""Scoreboards: the per-warp scoreboard (seed 002 Fig 8a) and the masked scoreboard with a
reserved mask (R-mask) per register (Sec 3.3.2, Fig 8b).

Both keep, for one warp, which registers have a write in flight. The plain scoreboard only
knows *that* a register is reserved, so any instruction of the warp that reads or writes it
waits, whichever split issued the write. The masked scoreboard ORs the active mask of the
writing instruction into the register's R-mask on issue and clears the written-back lanes, so
an instruction only waits when one of *its own* active threads has a write pending: splits on
parallel paths do not block each other (Fig 9). Masks are W-bit integers, lane i = bit i.

The dependency mask of an instruction (Fig 9, "Dep-mask") has one bit per register: bit r set
when the instruction uses register r and r is reserved for one of its active threads.

Fig 8 stores the reservations of a warp in a set of ``entries`` slots (a set-associative table
whose sets are indexed by the warp id): one entry per reserved register, holding its id and,
in the masked table, its R-mask (a second reservation of a register already in the table ORs
into its entry, Fig 9 state 5; the entry is free again once its R-mask is zero, state 4). An
instruction that writes a register not in the table needs a free entry: :meth:`full` is that
structural hazard. By default there is an entry for every register but x0, so the table
never fills. :class:`ScoreboardBlock` / :class:`MaskedScoreboardBlock` are the cycle twins of
the HDL tables, one set per warp of the SM, built on these classes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar, Self

from reconverge.golden.blocks.base import (
    Block,
    BlockParams,
    Group,
    Port,
    PortTree,
    PortValue,
    Values,
    check_range,
    param,
)
from reconverge.golden.geometry import Geometry, bits_for
from reconverge.golden.isa import NUM_REGS


class Scoreboard:
    """Per-warp scoreboard (plain): a register is reserved for the whole warp while a write
    to it is in flight. An instruction never issues while one of its operands, destination
    included, is reserved for its threads, so a register has at most one write in flight per
    thread and a release needs no counting."""

    masked = False

    def __init__(self, warp_size: int, registers: int = NUM_REGS, entries: int | None = None):
        if not 1 <= registers <= NUM_REGS:
            raise ValueError(f"registers must be in 1..{NUM_REGS}, not {registers}")
        self.warp_size = warp_size
        self.registers = registers
        self.entries = max(registers - 1, 1) if entries is None else entries
        if self.entries < 1:
            raise ValueError(f"a scoreboard needs at least 1 entry per warp, not {entries}")
        self.full_mask = (1 << warp_size) - 1
        self.rmask = [0] * registers  # masked: R-mask; plain: all ones while reserved

    def _check(self, reg: int) -> None:
        if not 0 <= reg < self.registers:
            raise ValueError(f"x{reg} is not one of the {self.registers} registers")

    def reserve(self, reg: int, mask: int) -> None:
        """An instruction writing ``reg`` issued with active ``mask``."""
        self._check(reg)
        if not reg:
            return
        pending = self.rmask[reg] & mask if self.masked else self.rmask[reg]
        if pending:
            raise ValueError(f"x{reg} reserved again for lanes {pending:#x}")
        if self.full(reg, mask):
            raise ValueError(f"x{reg}: no free scoreboard entry ({self.entries} in use)")
        self.rmask[reg] |= mask if self.masked else self.full_mask

    def release(self, reg: int, mask: int) -> None:
        """The write of ``reg`` by the instruction that had active ``mask`` is back."""
        self._check(reg)
        if reg:
            self.rmask[reg] &= ~mask if self.masked else 0

    def dependency_mask(self, regs: Sequence[int], mask: int) -> int:
        """Bit r set for each register r of ``regs`` (x0 never) reserved for a thread of
        ``mask``."""
        dep = 0
        for reg in regs:
            self._check(reg)
            if reg and self.rmask[reg] & mask:
                dep |= 1 << reg
        return dep

    def in_use(self) -> int:
        """Occupied entries: one per reserved register."""
        return len(self.rmask) - self.rmask.count(0)

    def needs_entry(self, reg: int, mask: int) -> bool:
        """Whether reserving ``reg`` for ``mask`` takes a new entry (the register is not in
        the table yet; a masked reservation of no lane takes none)."""
        return bool(reg) and not self.rmask[reg] and (bool(mask) or not self.masked)

    def full(self, reg: int, mask: int) -> bool:
        """The structural hazard: an instruction writing ``reg`` with active ``mask`` cannot
        issue because it needs an entry and the warp's set has none free."""
        self._check(reg)
        return self.needs_entry(reg, mask) and self.in_use() >= self.entries

    def copy(self) -> Scoreboard:
        other = type(self)(self.warp_size, self.registers, self.entries)
        other.rmask = list(self.rmask)
        return other

    def reserved(self) -> dict[int, int]:
        """The reserved registers and their R-masks (the table of Fig 9)."""
        return {reg: m for reg, m in enumerate(self.rmask) if m}


class MaskedScoreboard(Scoreboard):
    """Scoreboard with per-register R-masks (seed 002 Sec 3.3.2, Fig 8b)."""

    masked = True


def make_scoreboard(
    masked: bool, warp_size: int, registers: int = NUM_REGS, entries: int | None = None
) -> Scoreboard:
    cls = MaskedScoreboard if masked else Scoreboard
    return cls(warp_size, registers, entries)


#: Registers an instruction is checked on: rs1, rs2 and rd, in this order (0 = none); the
#: last one is the destination, which needs an entry (:func:`reconverge.golden.sm.core.operands`).
OPERANDS = 3
MAX_WARPS = 256
MAX_PORTS = 64  # write-back (release) ports
#: Lookup ports: the SM checks both instruction-buffer entries of every split slot of every
#: warp slot each cycle (``golden.blocks.units.sm_lookups``), 64 candidates at most.
MAX_LOOKUPS = 128


@dataclass(frozen=True)
class ScoreboardParams(BlockParams):
    """Parameters of the scoreboard of every warp of the SM (one set per warp id): ``warp_size``
    W, ``regs`` R registers per thread, ``warps``, ``entries`` per warp's set, ``lookups`` P
    decode ports, ``writebacks`` B release ports.

    Ports:

    - group ``issue`` in: ``valid``, ``warp``, ``rd``, ``mask`` (W): reserve ``rd`` for
      ``mask`` (the issued instruction's destination and active mask; rd 0 = none);
    - group ``writeback`` in: ``valid`` (B bits), ``warp`` [B], ``rd`` [B], ``mask`` [B] x W:
      release, one cycle ahead (the write-backs of the *next* cycle, with the active mask the
      instruction issued with: the SM's write-back lines know them a cycle early);
    - group ``lookup``: in ``warp`` [P], ``operands`` [3P] (rs1, rs2, rd of lookup p at
      3p..3p+2; 0 = none), ``mask`` [P] x W: the instructions being decoded; out
      ``dep_mask`` [P] x R: the dependency mask of each lookup (bit r = register r),
      ``hazard`` (P bits): lookup p's dependency mask is not empty (what the issue logic
      waits on, without reducing the mask), ``full`` (P bits): lookup p writes a register
      that needs an entry and its warp has none free.
    """

    name = "scoreboard"
    #: R-masks per entry (Fig 8b) instead of a valid bit (Fig 8a).
    masked: ClassVar[bool] = False

    @classmethod
    def of(cls, geometry: Geometry, lookups: int, writebacks: int) -> Self:
        """The scoreboard of every warp slot of an SM of ``geometry``."""
        g = geometry
        return cls(g.warp_size, g.regs, g.warps, g.scoreboard_entries, lookups, writebacks)

    warp_size: int = param(32, "threads per warp W (bits of an R-mask)")
    regs: int = param(NUM_REGS, "architectural registers per thread (bits of a dependency mask)")
    warps: int = param(8, "warps of the SM: one set of the table per warp id")
    entries: int = param(8, "entries per warp's set (seed 002 Sec 6.6: 8)")
    lookups: int = param(2, "decode lookup ports, 3 operands each")
    writebacks: int = param(2, "write-back (release) ports")

    def validate(self) -> None:
        check_range("warp_size", self.warp_size, 1, 64, " threads")
        check_range("regs", self.regs, 2, NUM_REGS)
        check_range("warps", self.warps, 1, MAX_WARPS)
        check_range("entries", self.entries, 1, self.regs - 1, " per warp")
        check_range("lookups", self.lookups, 1, MAX_LOOKUPS)
        check_range("writebacks", self.writebacks, 1, MAX_PORTS)

    @property
    def latency(self) -> int:
        return 0  # the lookups are combinational

    @property
    def warp_bits(self) -> int:
        return bits_for(self.warps)

    @property
    def reg_bits(self) -> int:
        return bits_for(self.regs)

    @property
    def ports(self) -> PortTree:
        w, wb, rb, p, b = (
            self.warp_size,
            self.warp_bits,
            self.reg_bits,
            self.lookups,
            self.writebacks,
        )
        return (
            Group(
                "issue",
                (
                    Port("valid", "in", 1),
                    Port("warp", "in", wb),
                    Port("rd", "in", rb),
                    Port("mask", "in", w),
                ),
            ),
            Group(
                "writeback",
                (
                    Port("valid", "in", b),
                    Port("warp", "in", wb, b),
                    Port("rd", "in", rb, b),
                    Port("mask", "in", w, b),
                ),
            ),
            Group(
                "lookup",
                (
                    Port("warp", "in", wb, p),
                    Port("operands", "in", rb, OPERANDS * p),
                    Port("mask", "in", w, p),
                    Port("dep_mask", "out", self.regs, p),
                    Port("hazard", "out", p),
                    Port("full", "out", p),
                ),
            ),
        )

    def twin(self) -> ScoreboardBlock:
        return ScoreboardBlock(self)


@dataclass(frozen=True)
class MaskedScoreboardParams(ScoreboardParams):
    """Parameters of the masked scoreboard (Fig 8b): as :class:`ScoreboardParams`."""

    name = "masked_scoreboard"
    masked: ClassVar[bool] = True

    def twin(self) -> MaskedScoreboardBlock:
        return MaskedScoreboardBlock(self)


class ScoreboardBlock(Block):
    """Cycle twin of ``reconverge.hdl.blocks.scoreboard.Scoreboard``: one :class:`Scoreboard`
    per warp, the set of that warp id, with one reservation port
    (``issue``), ``writebacks`` release ports and ``lookups`` decode ports
    (:class:`ScoreboardParams`).

    Timing: the write-back ports carry the releases of the next cycle, so both this cycle's
    reservation and this cycle's write-back inputs take effect at the clock edge, the
    reservation first: state' = (state + reservation) - releases; the lookups see the state
    only. Seen from the SM this is the golden SM's order (the write-backs due at t, then the
    issue at t, against the state after them): the write-back lines present at t - 1 what they
    release at t, and an instruction that issues at t - 1 is never released at t (it leaves its
    line at least ``latency >= 2`` cycles after its last pass), nor reserves a register that is
    (its lookup would have found it).
    Invalid input (a double reservation, a reservation with no free entry, a warp or register
    out of range) is a ValueError: the issue logic must not present it.
    """

    params: ScoreboardParams

    def __init__(self, params: ScoreboardParams) -> None:
        super().__init__(params)
        self.boards: list[Scoreboard] = []
        self.reset()

    def reset(self) -> None:
        p = self.params
        self.boards = [
            make_scoreboard(p.masked, p.warp_size, p.regs, p.entries) for _ in range(p.warps)
        ]

    def _warp(self, warp: int) -> int:
        if warp >= self.params.warps:
            raise ValueError(f"warp {warp} is not one of the {self.params.warps} warps")
        return warp

    def _board(self, boards: list[Scoreboard], warp: int) -> Scoreboard:
        """Warp ``warp``'s board in ``boards``, copied there first if it is still shared with
        the state."""
        w = self._warp(warp)
        if boards[w] is self.boards[w]:
            boards[w] = boards[w].copy()
        return boards[w]

    def outputs(self, inputs: Mapping[str, PortValue]) -> Values:
        deps, hazard, full = [], 0, 0
        for p in range(self.params.lookups):
            board = self.boards[self._warp(inputs["lookup__warp"][p])]  # type: ignore[index]
            regs = inputs["lookup__operands"][OPERANDS * p : OPERANDS * (p + 1)]  # type: ignore[index]
            mask = inputs["lookup__mask"][p]  # type: ignore[index]
            deps.append(board.dependency_mask(regs, mask))
            hazard |= (deps[-1] != 0) << p
            full |= board.full(regs[-1], mask) << p
        return {"lookup__dep_mask": tuple(deps), "lookup__hazard": hazard, "lookup__full": full}

    def clock(self, inputs: Mapping[str, PortValue]) -> None:
        boards = list(self.boards)
        if inputs["issue__valid"]:
            board = self._board(boards, inputs["issue__warp"])  # type: ignore[arg-type]
            board.reserve(inputs["issue__rd"], inputs["issue__mask"])  # type: ignore[arg-type]
        valid = inputs["writeback__valid"]
        assert isinstance(valid, int)
        for k in range(self.params.writebacks):
            if valid >> k & 1:
                board = self._board(boards, inputs["writeback__warp"][k])  # type: ignore[index]
                board.release(inputs["writeback__rd"][k], inputs["writeback__mask"][k])  # type: ignore[index]
        self.boards = boards


class MaskedScoreboardBlock(ScoreboardBlock):
    """Cycle twin of ``reconverge.hdl.blocks.scoreboard.MaskedScoreboard``: the same ports as
    :class:`ScoreboardBlock`, one :class:`MaskedScoreboard` per warp (Fig 8b)."""

    params: MaskedScoreboardParams
