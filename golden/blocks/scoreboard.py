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
"""

from __future__ import annotations

from collections.abc import Sequence

from reconverge.golden.isa import NUM_REGS


class Scoreboard:
    """Per-warp scoreboard (plain): a register is reserved for the whole warp while a write
    to it is in flight. An instruction never issues while one of its operands, destination
    included, is reserved for its threads, so a register has at most one write in flight per
    thread and a release needs no counting."""

    masked = False

    def __init__(self, warp_size: int) -> None:
        self.warp_size = warp_size
        self.full = (1 << warp_size) - 1
        self.rmask = [0] * NUM_REGS  # masked: R-mask; plain: all ones while reserved

    def reserve(self, reg: int, mask: int) -> None:
        """An instruction writing ``reg`` issued with active ``mask``."""
        if not reg:
            return
        if self.rmask[reg] & mask:
            raise ValueError(f"x{reg} reserved again for lanes {self.rmask[reg] & mask:#x}")
        self.rmask[reg] |= mask if self.masked else self.full

    def release(self, reg: int, mask: int) -> None:
        """The write of ``reg`` by the instruction that had active ``mask`` is back."""
        if reg:
            self.rmask[reg] &= ~mask if self.masked else 0

    def dependency_mask(self, regs: Sequence[int], mask: int) -> int:
        """Bit r set for each register r of ``regs`` (x0 never) reserved for a thread of
        ``mask``."""
        dep = 0
        for reg in regs:
            if reg and self.rmask[reg] & mask:
                dep |= 1 << reg
        return dep

    def reserved(self) -> dict[int, int]:
        """The reserved registers and their R-masks (the table of Fig 9)."""
        return {reg: m for reg, m in enumerate(self.rmask) if m}


class MaskedScoreboard(Scoreboard):
    """Scoreboard with per-register R-masks (seed 002 Sec 3.3.2, Fig 8b)."""

    masked = True


def make_scoreboard(masked: bool, warp_size: int) -> Scoreboard:
    return MaskedScoreboard(warp_size) if masked else Scoreboard(warp_size)
