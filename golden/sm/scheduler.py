"""The warp scheduler's selection rule: which warp split issues in a cycle (docs/architecture.md,
"Timing"; docs/sm-hardware.md, timing rules 1-3). Plain functions over plain data: the one
definition the golden SM (:mod:`reconverge.golden.sm.core`) runs and the HDL scheduler's tests
take as their reference.

* **Warp order.** Greedy-then-oldest (seed 002 Sec 5): the warp that issued last first, while
  it is resident, then the others oldest first (by dispatch order). Loose round robin: the warp
  slots in order, starting after the slot that issued last.
* **Split order.** A warp's splits in its divergence unit's order, round robin: starting at the
  first split whose sid is greater than the sid that issued last (``last_sid`` = -1 restarts
  at the first split: the SM sets it when an update did not simply continue the split).
* **Readiness** in cycle *t*: *t* >= the warp's settle time V (rule 1: no split of a warp
  issues while its divergence unit is busy), *t* >= the split's ready time (rule 2), no
  scoreboard hazard for the split's threads (a pending write to an operand, or no free entry
  for the destination: seed 002 Fig 8), for a load, store or AMO an idle LSU (rule 3), for a
  division an idle divider (rule 6).

The first ready split in warp order, then split order, issues.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Protocol, TypeVar

from reconverge.golden.config import Scheduler


class SchedulableWarp(Protocol):
    """What the scheduler reads of a warp: its slot and age (the warp order), its settle time
    V (rule 1) and the sid that issued last (the split order)."""

    @property
    def slot(self) -> int: ...

    @property
    def age(self) -> int: ...

    @property
    def settled(self) -> int: ...

    @property
    def last_sid(self) -> int: ...


class SchedulableSplit(Protocol):
    """What the split order reads of a split."""

    @property
    def sid(self) -> int: ...


W = TypeVar("W", bound=SchedulableWarp)
S = TypeVar("S", bound=SchedulableSplit)


@dataclass(frozen=True, slots=True)
class SplitView:
    """One exposed split as the scheduler sees it in a cycle."""

    sid: int
    ready_at: int  # rule 2
    hazard: bool = False  # the scoreboard holds it back
    unit_free: int = 0  # the first cycle in which the unit its instruction needs is idle


@dataclass(frozen=True, slots=True)
class WarpView:
    """One resident warp as the scheduler sees it in a cycle."""

    slot: int
    age: int  # dispatch order: smaller is older
    settled: int  # V of its last update (rule 1)
    last_sid: int  # the sid that issued last (-1: start at the first split)
    splits: tuple[SplitView, ...]  # in the divergence unit's order


def warp_order(warps: Sequence[W], scheduler: Scheduler, last_slot: int, greedy: bool) -> list[W]:
    """The order in which the warps are considered. ``last_slot`` is the slot that issued last
    (-1 before the first issue); ``greedy``: the warp in it is the one that issued (it has not
    retired since)."""
    if scheduler is Scheduler.GTO:
        oldest = sorted(warps, key=attrgetter("age"))
        if greedy:  # the warp that issued last, then the rest oldest first
            return [w for w in oldest if w.slot == last_slot] + [
                w for w in oldest if w.slot != last_slot
            ]
        return oldest
    return sorted(warps, key=lambda w: (w.slot <= last_slot, w.slot))


def split_order(splits: Sequence[S], last_sid: int) -> Sequence[S]:
    """A warp's splits, round robin after ``last_sid``."""
    if len(splits) < 2:
        return splits
    start = next((i for i, s in enumerate(splits) if s.sid > last_sid), 0)
    return [*splits[start:], *splits[:start]]


def select(
    warps: Sequence[W],
    scheduler: Scheduler,
    *,
    last_slot: int,
    greedy: bool,
    t: int,
    splits: Callable[[W], Sequence[S]],
    ready_at: Callable[[W, S], int],
    probe: Callable[[W, S], tuple[bool, int]],
) -> tuple[W, S] | None:
    """The (warp, split) that issues in cycle ``t``, or None. ``splits`` gives a warp's exposed
    splits, ``ready_at`` a split's ready time, ``probe`` whether a split's instruction has a
    scoreboard hazard and the first cycle in which the unit it alone may use is idle (the LSU
    for a memory instruction, the divider for a division, else 0); it is asked only about
    splits whose timing allows them to issue (the golden SM fetches the instruction then)."""
    for warp in warp_order(warps, scheduler, last_slot, greedy):
        if t < warp.settled:
            continue
        for split in split_order(splits(warp), warp.last_sid):
            if ready_at(warp, split) > t:
                continue
            hazard, unit_free = probe(warp, split)
            if not hazard and t >= unit_free:
                return warp, split
    return None


def select_views(
    warps: Sequence[WarpView],
    scheduler: Scheduler,
    *,
    last_slot: int,
    greedy: bool,
    t: int,
) -> tuple[int, int] | None:
    """:func:`select` over plain data: the (slot, sid) that issues in cycle ``t``, or None."""
    choice = select(
        warps,
        scheduler,
        last_slot=last_slot,
        greedy=greedy,
        t=t,
        splits=lambda w: w.splits,
        ready_at=lambda _, s: s.ready_at,
        probe=lambda _, s: (s.hazard, s.unit_free),
    )
    return None if choice is None else (choice[0].slot, choice[1].sid)
