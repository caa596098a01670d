"""The update the reconvergence stacks take per clock: one instruction outcome, at most two
target groups wide (the width of the hardware's update port).

The SM reports an issued instruction as an :class:`Executed` with any number of target groups
(an indirect jump can send its threads to k different PCs). The SPS stack
(:mod:`reconverge.golden.blocks.reconvergence_stack`) and the dual-path stack
(:mod:`reconverge.golden.blocks.dual_path_stack`) apply it as the sequence of
:class:`StackUpdate` s that :func:`stack_updates` makes, one per clock in the HDL, so the
golden SM and the hardware run the very same steps:

* at most two groups: one update carrying the whole outcome;
* k > 2 groups (ascending PCs g1 < ... < gk): k - 2 updates with one group each, the highest
  first, flagged ``more`` (another update of this instruction follows), then one with g1 and
  g2; every update after the first is flagged ``cont`` (continues the previous one). Exited
  and barrier lanes travel with the first update, the RPC and the call flag with each.
* a return from a call (``ret`` while the stack holds a call entry) is always one update: the
  returning path leaves whatever its targets.

``rpc`` is resolved for the stacks: the return address for a call, the reconvergence PC for a
branch, :data:`NEVER` when the program gives none.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from reconverge.golden.blocks.divergence import NEVER, Executed, TableOverflow

MASK32 = 0xFFFF_FFFF


@dataclass(frozen=True, slots=True)
class StackUpdate:
    """One clock of an instruction outcome for a stack.

    ``path``: the path of the top entry that issued (dual-path stack; 0 for SPS).
    ``targets``: at most two (pc, lane mask) groups with distinct PCs and non-empty masks."""

    path: int
    targets: tuple[tuple[int, int], ...]
    exited: int = 0
    barrier: int = 0
    rpc: int = NEVER
    call: bool = False
    ret: bool = False
    more: bool = False
    cont: bool = False

    def __post_init__(self) -> None:
        if len(self.targets) > 2:
            raise ValueError(f"a stack update carries at most two target groups: {self.targets}")
        if len({pc for pc, _ in self.targets}) != len(self.targets):
            raise ValueError(f"target groups of a stack update need distinct PCs: {self.targets}")


def stack_updates(ex: Executed, path: int, in_call: bool) -> list[StackUpdate]:
    """The updates that apply ``ex`` (module docstring); ``in_call``: the stack holds a call
    entry, so that a ``ret`` is a return rather than an indirect jump."""
    groups = sorted(ex.targets.items())
    rpc = NEVER if ex.rpc is None else ex.rpc
    if ex.call:
        rpc = (ex.pc + 4) & MASK32  # the return address
    ret = ex.ret and in_call
    if len(groups) <= 2 or ret:
        whole = tuple(groups) if len(groups) <= 2 else tuple(groups[:2])
        return [StackUpdate(path, whole, ex.exited, ex.barrier, rpc, ex.call, ret)]
    highest = groups[:1:-1]  # gk, ..., g3
    updates = [
        StackUpdate(
            path,
            (group,),
            ex.exited if i == 0 else 0,
            ex.barrier if i == 0 else 0,
            rpc,
            ex.call,
            more=True,
            cont=i > 0,
        )
        for i, group in enumerate(highest)
    ]
    updates.append(StackUpdate(path, tuple(groups[:2]), 0, 0, rpc, ex.call, cont=True))
    return updates


def update_kind(u: StackUpdate, in_call: bool) -> str:
    """What an update does to the top entry: ``cont`` (push the next groups of the
    instruction), ``call`` (with targets), ``ret`` (a return inside a call), ``branch`` (two
    groups, or ``more`` to follow), ``jump`` (one group) or ``none``."""
    if u.cont:
        return "cont"
    if u.call and u.targets:
        return "call"
    if u.ret and in_call:
        return "ret"
    if len(u.targets) > 1 or u.more:
        return "branch"
    return "jump" if u.targets else "none"


class _Stack(Protocol):
    depth: int

    @property
    def in_call(self) -> bool: ...

    def update(self, u: StackUpdate) -> int: ...


def execute_updates(stack: _Stack, ex: Executed, path: int, label: str) -> int:
    """A stack's ``execute``: the updates of ``ex`` in order; returns the clocks they take
    (each update's, as its ``update`` returns them); an overflow names the instruction
    (``label``: the stack's name in the message)."""
    updates = stack_updates(ex, path, stack.in_call)
    clocks = 0
    try:
        for u in updates:
            clocks += stack.update(u)
    except TableOverflow:
        what = "call" if ex.call else "divergent branch"
        raise TableOverflow(
            f"{label} stack overflow: the {what} at pc {ex.pc:#010x} needs more than "
            f"{stack.depth} entries"
        ) from None
    return clocks
