"""The dual-path stack: DPS (Rhu and Erez, as seed 002 Sec 7 and seed 003 Sec III describe it)
and the dual-path stack with paired-path comparison, PPC (seed 003 Fig 4, 5).

A stack entry records both sides of a divergent branch as two *paths* (PC and mask each), and
the branch's reconvergence PC (RPC). The path that diverged stays in the entry below, suspended
until the entry above is popped.

* ``dps``: both paths of the top entry issue, interleaved, so each hides the other's latency; a
  path that reaches the RPC waits there; when both have, the entry is popped and the suspended
  parent path continues at the RPC.
* ``ppc`` with hints (explicit): one path runs at a time, the one with the smaller PC when the
  entry is pushed; it runs to the RPC (the paired-path comparison is made there, Fig 4), then
  the other path runs; when both PCs are equal the entry is deleted (Fig 4 line 3).
* ``ppc`` without hints (implicit): no RPC is known; the comparison is made after every
  instruction (Fig 5 line 31): equal PCs delete the entry and the parent path continues at that
  PC (early reconvergence wherever the paths meet); otherwise the path with the smaller PC runs.

Calls push a call entry (one path per target); a path that executes the return of the
innermost call has *returned* and waits. An entry whose paths have all returned is popped: a
call entry's parent continues at the return address, any other entry's parent has returned
too. So a branch that only reconverges when the function returns (:data:`RETURN`) needs no
PC, and recursion, where a return address is also a PC inside the callee, is never mistaken for
a reconvergence. An indirect jump can have more than two targets: k targets become a chain of
k - 1 entries, each holding one target and a suspended path for the remaining ones, with the two
lowest targets on top, pushed one per clock as the HDL stack takes them
(:func:`~reconverge.golden.blocks.stack_update.stack_updates`, :meth:`DualPathStack.update`;
the cycle twin is :class:`~reconverge.golden.blocks.stack_twins.DualPathStackTwin`). Exited
threads leave every mask; a path with no threads left counts as having reconverged.

On the hardware an update takes a clock (:meth:`DualPathStack.modify`) and one more for each
finished entry it pops (:meth:`DualPathStack.pop`), one a clock; the stack shows no path in
those clocks (docs/architecture.md, rule 1).
"""

from __future__ import annotations

from dataclasses import dataclass

from reconverge.golden.blocks.divergence import (
    NEVER,
    RETURN,
    DivergenceUnit,
    Executed,
    Split,
    TableOverflow,
)
from reconverge.golden.blocks.stack_update import StackUpdate, execute_updates, update_kind


@dataclass
class Path:
    pc: int
    mask: int
    done: bool = False  # waits at the entry's RPC
    suspended: bool = False  # its threads are in the entry above
    returned: bool = False  # executed the return of the innermost call

    @property
    def waits(self) -> bool:
        return self.done or self.returned or self.suspended


@dataclass
class DualEntry:
    paths: list[Path]
    rpc: int = NEVER
    current: int = 0  # the path that runs (ppc)
    call: bool = False  # a call entry: its paths leave it by returning

    def at_rpc(self, pc: int, implicit: bool) -> bool:
        """Whether a path at ``pc`` is done: it reached a real RPC (none in implicit PPC)."""
        return pc == self.rpc and not implicit and not self.call and pc not in (NEVER, RETURN)

    def finished(self, implicit: bool, waiting: int) -> bool:
        """Whether the entry can be popped: no threads left, every path at the RPC or returned,
        or (PPC implicit) the running paths at the same PC. Paths with threads waiting at a
        barrier never merge."""
        live = [p for p in self.paths if p.mask]
        if all(p.returned or p.done for p in live):
            return True
        if not implicit or self.call:
            return False
        running = [p for p in live if not p.returned]
        if any(p.suspended or p.mask & waiting for p in running):
            return False
        if len(running) == 1:
            return len(live) == 1
        return len(running) == 2 and running[0].pc == running[1].pc


class DualPathStack(DivergenceUnit):
    """``paired`` selects PPC (one path at a time, min-PC choice); ``implicit`` (PPC without
    hints) makes the paired-path comparison after every instruction instead of at the RPC."""

    occupancy_keys = ("stack",)

    def __init__(
        self,
        warp_size: int,
        valid: int,
        entry: int,
        depth: int,
        *,
        paired: bool = False,
        implicit: bool = False,
        pipelined: bool = True,
    ) -> None:
        super().__init__(warp_size, valid, entry)
        self.depth = depth
        self.paired = paired
        self.implicit = implicit
        self.pipelined = pipelined
        self.entries = [DualEntry([Path(entry, valid)])]

    # -- queries ------------------------------------------------------------------------------

    def _runnable(self, path: Path) -> bool:
        return bool(path.mask) and not path.waits and not path.mask & self.waiting

    def splits(self) -> list[Split]:
        if not self.entries:
            return []
        level = len(self.entries) - 1
        top = self.entries[-1]
        indices = [top.current] if self.paired else range(len(top.paths))
        return [
            Split(2 * level + i, top.paths[i].pc, top.paths[i].mask)
            for i in indices
            if i < len(top.paths) and self._runnable(top.paths[i])
        ]

    def occupancy(self) -> dict[str, int]:
        return {"stack": len(self.entries)}

    # -- updates ------------------------------------------------------------------------------

    @property
    def in_call(self) -> bool:
        """Some entry is a call entry: a ``ret`` now returns from it."""
        return any(e.call for e in self.entries)

    def execute(self, ex: Executed) -> int:
        """The updates of ``ex`` (:func:`stack_updates`), each its clocks (:meth:`_settle`).
        An outcome that moves the split on as a whole is one ``jump`` update, applied
        directly."""
        onward = ex.onward
        if onward is None:
            return execute_updates(self, ex, ex.sid % 2, "PPC" if self.paired else "DPS")
        self._jump(ex.sid % 2, onward)
        self._tidy()
        return self._settle()

    def update(self, u: StackUpdate) -> int:
        """Apply one update for path ``u.path`` of the top entry (:meth:`modify`, then the
        pops); returns its clocks."""
        self.modify(u)
        return self._settle()

    def modify(self, u: StackUpdate) -> None:
        """The first clock of an update: everything but the pops of finished entries, which
        the following clocks make (:meth:`pop`). A call or divergent branch suspends the path
        at the RPC and pushes one entry: the (one or two) target groups, or with ``more`` a
        chain entry holding the group and a suspended path for the rest of the path's
        threads; a continuation pushes the next entry of the chain, whose parent is the top's
        suspended path. An update that does not fit raises TableOverflow before changing
        anything."""
        top = self.entries[-1]
        kind = update_kind(u, self.in_call)
        rpc = u.rpc if u.call or not self.implicit else NEVER
        replaced = kind == "branch" and self._replacement(top, top.paths[u.path], u, rpc)
        if kind in ("cont", "call", "branch") and not replaced and len(self.entries) >= self.depth:
            raise TableOverflow(f"dual-path stack overflow: more than {self.depth} entries")
        self.live &= ~u.exited
        self.waiting |= u.barrier
        for entry in self.entries:
            for p in entry.paths:
                p.mask &= ~u.exited
        if kind == "cont":
            self._push(top.paths[0], u, rpc)
        elif kind != "none":
            path = top.paths[u.path]
            if kind == "ret":
                path.returned = True
            elif kind == "jump":
                ((pc, _),) = u.targets
                self._jump(u.path, pc)
            elif replaced:
                self._replace(top, path, u, rpc)
            else:
                path.suspended = True
                path.pc = rpc
                self._push(path, u, rpc)
        self._tidy()

    def _jump(self, index: int, pc: int) -> None:
        """Path ``index`` of the top entry continues at ``pc`` (done if that is the RPC)."""
        top = self.entries[-1]
        path = top.paths[index]
        path.pc = pc
        path.done = top.at_rpc(pc, self.implicit)

    def _replacement(self, top: DualEntry, path: Path, u: StackUpdate, rpc: int) -> bool:
        """A two-way branch with the same reconvergence point as the entry (a loop exit, a
        break) replaces the path when the groups not going to the RPC and the entry's other
        live paths not at the RPC fit in the entry's two paths."""
        if u.more or not top.at_rpc(rpc, self.implicit) or len(self.entries) == 1:
            return False
        groups = [g for g in u.targets if g[0] != rpc]
        kept = [p for p in top.paths if p is not path and p.mask and not p.done]
        return len(groups) + len(kept) <= 2

    def _replace(self, top: DualEntry, path: Path, u: StackUpdate, rpc: int) -> None:
        """The threads going to the RPC are done; the path takes the lowest other group and a
        second one becomes a new path (the done and empty paths leave the entry)."""
        (path.pc, path.mask), *more = sorted(g for g in u.targets if g[0] != rpc)
        top.paths = [p for p in top.paths if (p.mask and not p.done) or p is path]
        top.paths += [Path(pc, mask) for pc, mask in more]

    def _push(self, parent: Path, u: StackUpdate, rpc: int) -> None:
        """Push one entry above ``parent``'s: the target groups in ascending PC order or, with
        ``more``, a chain entry [the rest of ``parent``'s threads, suspended; the group]."""
        entry = DualEntry([], rpc, call=u.call)
        if u.more:
            ((pc, mask),) = u.targets
            entry.paths = [Path(rpc, parent.mask & ~mask, suspended=True), Path(pc, mask)]
        else:
            entry.paths = [Path(pc, mask) for pc, mask in sorted(u.targets)]
        for p in entry.paths:
            p.done = not p.suspended and entry.at_rpc(p.pc, self.implicit)
        self.entries.append(entry)

    def _choose(self, entry: DualEntry) -> None:
        """PPC: run the path with the smaller PC (Fig 4 lines 10-15); explicit mode keeps the
        running path until it reaches the RPC. A path whose threads wait at a barrier is passed
        over (Fig 4 does not consider barriers): the other path must be able to reach it."""
        runnable = [i for i, p in enumerate(entry.paths) if self._runnable(p)]
        if not runnable:
            return
        if self.implicit or entry.current not in runnable:
            entry.current = min(runnable, key=lambda i: entry.paths[i].pc)

    @property
    def popping(self) -> bool:
        """The top entry is finished and not the bottom one: the next clock pops it."""
        return len(self.entries) > 1 and self.entries[-1].finished(self.implicit, self.waiting)

    def pop(self) -> None:
        """One clock of the settle: pop the finished top entry, resuming (or returning) its
        parent path in the entry below."""
        popped = self.entries.pop()
        live = [p for p in popped.paths if p.mask]
        below = self.entries[-1]
        parent = next(p for p in below.paths if p.suspended)
        parent.suspended = False
        if popped.call:
            parent.pc = popped.rpc  # back from the call, at the return address
        elif live and all(p.returned for p in live):
            parent.returned = True  # its threads returned on its behalf
        elif self.implicit and live:
            parent.pc = next(p.pc for p in live if not p.returned)
        parent.done = below.at_rpc(parent.pc, self.implicit) and not parent.returned
        self._tidy()

    def _tidy(self) -> None:
        """The end of every clock: a warp whose threads all exited leaves the stack at once
        (the bottom entry holds the live threads); else the top entry chooses its path."""
        if self.entries and not any(p.mask for p in self.entries[0].paths):
            self.entries.clear()
        elif self.entries:
            self._choose(self.entries[-1])

    def _settle(self) -> int:
        """The pops that follow a first clock (:meth:`modify`, :meth:`release_paths`): while
        the top entry is finished it is popped. Returns the clocks of the update: on the
        hardware (``pipelined``) the first and one per pop (the HDL stack pops one entry a
        clock, from its registers), else one."""
        pops = 0
        while self.popping:
            self.pop()
            pops += 1
        return 1 + pops if self.pipelined else 1

    def release(self, lanes: int) -> int:
        """The barrier's release (:meth:`release_paths`) and the pops that follow; returns
        its clocks (:meth:`_settle`)."""
        self.release_paths(lanes)
        return self._settle()

    def release_paths(self, lanes: int) -> None:
        """The first clock of a release: every path whose threads waited at the barrier (in
        any entry: a path below the top may have reached it before the paths above were
        pushed) continues after it."""
        self.waiting &= ~lanes
        for entry in self.entries:
            for path in entry.paths:
                if path.mask & lanes and not path.waits:
                    path.pc += 4
                    path.done = entry.at_rpc(path.pc, self.implicit)
        self._tidy()
