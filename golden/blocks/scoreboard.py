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

from reconverge.golden.blocks.base import Block, Port, PortValue, Values, bits_for
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
        return sum(1 for m in self.rmask if m)

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
MAX_PORTS = 8


class ScoreboardBlock(Block):
    """Cycle twin of ``reconverge.hdl.blocks.scoreboard.Scoreboard``: the scoreboard of every
    warp of the SM (one :class:`Scoreboard` per warp: the set of that warp id), with one reservation
    port (issue), ``writebacks`` release ports and ``lookups`` decode ports.

    Ports (W = ``warp_size``, R = ``registers``, P = ``lookups``, B = ``writebacks``):

    - in ``issue_valid``, ``issue_warp``, ``issue_rd``, ``issue_mask`` (W): reserve ``issue_rd``
      for ``issue_mask`` (the issued instruction's destination and active mask; rd 0 = none);
    - in ``wb_valid`` (B bits), ``wb_warp`` [B], ``wb_rd`` [B], ``wb_mask`` [B] x W: release
      (the write-backs of this cycle, with the active mask the instruction issued with);
    - in ``lookup_warp`` [P], ``lookup_regs`` [3P] (rs1, rs2, rd of lookup p at 3p..3p+2),
      ``lookup_mask`` [P] x W: the instructions being decoded;
    - out ``dep_mask`` [P] x R: the dependency mask of each lookup (bit r = register r);
    - out ``full`` (P bits): lookup p writes a register that needs an entry and its warp has
      none free.

    Timing: the lookups see this cycle's write-backs (bypass) but not this cycle's reservation,
    which takes effect at the clock edge after the write-backs: state' = (state - releases) +
    reservation. This is the golden SM's order (write-backs due at t, then issue at t).
    Invalid input (a double reservation, a reservation with no free entry, a warp or register
    out of range) is a ValueError: the issue logic must not present it.
    """

    name = "scoreboard"
    masked = False
    latency = 0  # the lookups are combinational

    def __init__(
        self,
        warp_size: int = 32,
        registers: int = NUM_REGS,
        warps: int = 8,
        entries: int = 8,
        lookups: int = 2,
        writebacks: int = 2,
    ) -> None:
        if not 1 <= warp_size <= 64:
            raise ValueError(f"warp size W={warp_size} must be in 1..64")
        if not 2 <= registers <= NUM_REGS:
            raise ValueError(f"registers must be in 2..{NUM_REGS}, not {registers}")
        if not 1 <= warps <= MAX_WARPS:
            raise ValueError(f"warps must be in 1..{MAX_WARPS}, not {warps}")
        if not 1 <= entries < registers:
            raise ValueError(f"entries per warp must be in 1..{registers - 1}, not {entries}")
        for what, n in (("lookups", lookups), ("writebacks", writebacks)):
            if not 1 <= n <= MAX_PORTS:
                raise ValueError(f"{what} must be in 1..{MAX_PORTS}, not {n}")
        self.warp_size, self.registers, self.warps = warp_size, registers, warps
        self.entries, self.lookups, self.writebacks = entries, lookups, writebacks
        wbits, rbits = bits_for(warps), bits_for(registers)
        self._ports = (
            Port("issue_valid", "in", 1),
            Port("issue_warp", "in", wbits),
            Port("issue_rd", "in", rbits),
            Port("issue_mask", "in", warp_size),
            Port("wb_valid", "in", writebacks),
            Port("wb_warp", "in", wbits, writebacks),
            Port("wb_rd", "in", rbits, writebacks),
            Port("wb_mask", "in", warp_size, writebacks),
            Port("lookup_warp", "in", wbits, lookups),
            Port("lookup_regs", "in", rbits, OPERANDS * lookups),
            Port("lookup_mask", "in", warp_size, lookups),
            Port("dep_mask", "out", registers, lookups),
            Port("full", "out", lookups),
        )
        self.boards: list[Scoreboard] = []
        self.reset()

    @property
    def ports(self) -> tuple[Port, ...]:
        return self._ports

    def reset(self) -> None:
        self.boards = [
            make_scoreboard(self.masked, self.warp_size, self.registers, self.entries)
            for _ in range(self.warps)
        ]

    def _warp(self, warp: int) -> int:
        if warp >= self.warps:
            raise ValueError(f"warp {warp} is not one of the {self.warps} warps")
        return warp

    def _released(self, inputs: Mapping[str, PortValue]) -> list[Scoreboard]:
        """The boards after this cycle's write-backs (copies where they change)."""
        boards = list(self.boards)
        valid = inputs["wb_valid"]
        assert isinstance(valid, int)
        for k in range(self.writebacks):
            if valid >> k & 1:
                w = self._warp(inputs["wb_warp"][k])  # type: ignore[index]
                if boards[w] is self.boards[w]:
                    boards[w] = boards[w].copy()
                boards[w].release(inputs["wb_rd"][k], inputs["wb_mask"][k])  # type: ignore[index]
        return boards

    def outputs(self, inputs: Mapping[str, PortValue]) -> Values:
        boards = self._released(inputs)
        deps, full = [], 0
        for p in range(self.lookups):
            board = boards[self._warp(inputs["lookup_warp"][p])]  # type: ignore[index]
            regs = inputs["lookup_regs"][OPERANDS * p : OPERANDS * (p + 1)]  # type: ignore[index]
            mask = inputs["lookup_mask"][p]  # type: ignore[index]
            deps.append(board.dependency_mask(regs, mask))
            full |= board.full(regs[-1], mask) << p
        return {"dep_mask": tuple(deps), "full": full}

    def clock(self, inputs: Mapping[str, PortValue]) -> None:
        boards = self._released(inputs)
        if inputs["issue_valid"]:
            w = self._warp(inputs["issue_warp"])  # type: ignore[arg-type]
            if boards[w] is self.boards[w]:
                boards[w] = boards[w].copy()
            boards[w].reserve(inputs["issue_rd"], inputs["issue_mask"])  # type: ignore[arg-type]
        self.boards = boards


class MaskedScoreboardBlock(ScoreboardBlock):
    """Cycle twin of ``reconverge.hdl.blocks.scoreboard.MaskedScoreboard``: the same ports as
    :class:`ScoreboardBlock`, one :class:`MaskedScoreboard` per warp (Fig 8b)."""

    name = "masked_scoreboard"
    masked = True
