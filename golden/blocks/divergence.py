"""The interface every divergence unit offers the SM: which warp splits of one warp may issue,
and how one issued warp instruction changes them. The units are the SPS reconvergence stack,
the stack-less min(SP:PC) control, the dual-path stack (with or without paired-path comparison)
and the split/reconvergence tables (with or without opportunistic early reconvergence).

Masks are W-bit integers, lane i = bit i. A *split* is a set of threads of one warp that are
all at the same PC and issue together; its ``sid`` names it inside the unit (stack level and
path, split-table entry, ...). The unit is told the outcome of each instruction the SM issued
for one of its splits (:class:`Executed`); comparing the splits before and after, the SM can
tell which splits were redirected (a new split, or a known one at a new PC other than
the next instruction) and charge them the branch / reconvergence latency.
"""

from __future__ import annotations

import abc
from dataclasses import KW_ONLY, dataclass, field

#: A reconvergence PC no thread ever reaches: the threads of the split only meet again when
#: they exit (a branch of the kernel whose immediate postdominator is the end of the program).
NEVER = 0xFFFF_FFFF
#: The reconvergence point of a branch inside a device function whose immediate postdominator
#: is the function's end: the threads meet again when they have returned from the innermost
#: call (the unit knows it from its call entry). Units also use it as the PC of an entry whose
#: threads have all returned.
RETURN = 0xFFFF_FFFE


class TableOverflow(Exception):
    """A divergence unit ran out of entries (stack depth, reconvergence table)."""


def lanes_of(mask: int) -> list[int]:
    """The lane numbers of the set bits of ``mask``, increasing."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def popcount(mask: int) -> int:
    return mask.bit_count()


@dataclass(frozen=True, slots=True)
class Split:
    """A schedulable warp split: the threads of ``mask`` all at ``pc``."""

    sid: int
    pc: int
    mask: int


@dataclass(frozen=True, slots=True)
class Executed:
    """The outcome of one warp instruction issued for split ``sid`` at ``pc`` with ``mask``.

    ``targets`` maps each next PC to the lanes that continue there (exited lanes and lanes
    that wait at a barrier excluded); ``control`` marks branches and jumps (the instructions
    after which the stack-less unit arbitrates, seed 000 Sec 4.1); ``rpc`` is the
    reconvergence PC of a control instruction when the program provides one (``rhint`` or the
    binary's immediate postdominator, or :data:`RETURN`), else None. ``call`` marks a jump that
    links (``jal``/``jalr`` with rd != x0) and ``ret`` a return (``jalr`` x0 through ra or t0,
    the RISC-V return convention): the stack and table units give the callee its own entry,
    which its threads leave by returning, as GPGPU-Sim's call entries do, so that a recursive
    call cannot be mistaken for reaching a reconvergence PC of its caller."""

    sid: int
    pc: int
    mask: int
    targets: dict[int, int] = field(default_factory=dict)
    _: KW_ONLY
    exited: int = 0
    barrier: int = 0
    control: bool = False
    rpc: int | None = None
    call: bool = False
    ret: bool = False
    sp_written: bool = False

    @property
    def divergent(self) -> bool:
        return len(self.targets) > 1

    @property
    def onward(self) -> int | None:
        """The one PC every thread of the split continues at after an instruction that is no
        branch, jump, call or return and neither exits nor waits at a barrier (the units' fast
        path: the split moves on as a whole), else None."""
        if self.control or self.call or self.ret or self.exited or self.barrier:
            return None
        if len(self.targets) != 1:
            return None
        return next(iter(self.targets))


class DivergenceUnit(abc.ABC):
    """One warp's divergence state. ``valid`` is the mask of the warp's threads (a partial last
    warp has fewer than W) that all start at ``entry``."""

    #: Occupancy counters this unit reports (names of :meth:`occupancy` keys).
    occupancy_keys: tuple[str, ...] = ()

    def __init__(self, warp_size: int, valid: int, entry: int) -> None:
        self.warp_size = warp_size
        self.live = valid  # threads that have not exited
        self.waiting = 0  # threads waiting at a barrier

    @abc.abstractmethod
    def splits(self) -> list[Split]:
        """The splits that may issue now (timing aside), in the unit's round-robin order."""

    @abc.abstractmethod
    def execute(self, ex: Executed) -> int:
        """Apply the outcome of an issued instruction; returns the clocks the update takes
        (the SM shows the new splits that many cycles after the outcome reaches the unit:
        docs/sm-hardware.md, timing rule 1)."""

    @abc.abstractmethod
    def release(self, lanes: int) -> int:
        """The block's barrier completed: ``lanes`` (waiting here) continue after it; returns
        the clocks the release takes (timing rule 4)."""

    def occupancy(self) -> dict[str, int]:
        """Current entry counts (stack depth, split/reconvergence table entries)."""
        return {}

    @property
    def done(self) -> bool:
        return self.live == 0

    def _retire(self, ex: Executed) -> None:
        """Common bookkeeping: exited threads leave, barrier threads wait."""
        self.live &= ~ex.exited
        self.waiting |= ex.barrier
