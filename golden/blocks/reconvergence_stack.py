"""The single-path IPDOM reconvergence stack, SPS (seed 002 Sec 2.2, Fig 3; GPGPU-Sim's
"IPDOM" of Fung et al.).

Each entry holds a PC, an active mask and the reconvergence PC (RPC) of the branch that created
it. Only the top-of-stack (TOS) entry issues. On a divergent branch the TOS entry becomes the
reconvergence entry (its PC is set to the branch's RPC, its mask stays the union), and one entry
per target is pushed, taken side first so that the fall-through side is on top; a side whose
target is the RPC itself gets no entry. When the TOS entry's PC reaches its RPC it is popped and
the entry below continues. A divergent branch whose RPC equals the TOS entry's own RPC (a loop
exit, a ``break``) replaces the TOS entry instead of keeping it as a reconvergence entry, since
the entry below already waits at that PC.

Calls (as GPGPU-Sim's call entries): a call pushes a call entry per target, and the caller's
entry waits at the return address. A call entry is popped when its threads execute the return
(``ret``), never by reaching a PC: with recursion the return address of a call is also a PC
inside the callee. A branch that only reconverges when the function returns
(:data:`RETURN`) pushes return entries, popped when their threads return; the entry that
diverged then counts as returned too.

The whole warp waits when the TOS threads wait at a barrier: the threads of the other entries
cannot reach it (Sec 3.3.3), which the SM reports as a barrier deadlock.

An instruction outcome is applied as the per-clock updates of the HDL stack
(:func:`~reconverge.golden.blocks.stack_update.stack_updates`, :meth:`ReconvergenceStack.update`;
the cycle twin is :class:`~reconverge.golden.blocks.stack_twins.SpsStackTwin`).
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
class StackEntry:
    pc: int
    mask: int
    rpc: int
    call: bool = False  # a call entry: popped when its threads return
    returned: bool = False  # its threads executed the return of the innermost call


class ReconvergenceStack(DivergenceUnit):
    occupancy_keys = ("stack",)

    def __init__(self, warp_size: int, valid: int, entry: int, depth: int) -> None:
        super().__init__(warp_size, valid, entry)
        self.depth = depth
        self.entries = [StackEntry(entry, valid, NEVER)]

    @property
    def top(self) -> StackEntry:
        return self.entries[-1]

    def splits(self) -> list[Split]:
        if not self.entries or self.top.mask & self.waiting:
            return []
        return [Split(len(self.entries) - 1, self.top.pc, self.top.mask)]

    def occupancy(self) -> dict[str, int]:
        return {"stack": len(self.entries)}

    @property
    def in_call(self) -> bool:
        """Some entry is a call entry: a ``ret`` now returns from it."""
        return any(e.call for e in self.entries)

    def execute(self, ex: Executed) -> int:
        """The updates of ``ex``, one clock each (:func:`stack_updates`). An outcome that
        moves the split on as a whole is one ``jump`` update, applied directly."""
        onward = ex.onward
        if onward is None:
            return execute_updates(self, ex, 0, "SPS")
        self.top.pc = onward
        self._reconverge()
        return 1

    def update(self, u: StackUpdate) -> int:
        """Apply one update (one clock of the HDL stack, returned). A continuation pushes its groups
        above the top; a call or divergent branch first sends the top entry to the RPC (or
        pops it when the entry below already waits there), then pushes one entry per target
        other than the RPC, the higher PC first. An update that does not fit raises
        TableOverflow before changing anything."""
        top = self.top
        kind = update_kind(u, self.in_call)
        pushes = [(pc, m) for pc, m in sorted(u.targets, reverse=True) if pc != u.rpc]
        replace = kind == "branch" and u.rpc == top.rpc and not top.call and len(self.entries) > 1
        if kind in ("cont", "call", "branch") and (
            len(self.entries) - replace + len(pushes) > self.depth
        ):
            raise TableOverflow(f"SPS stack overflow: more than {self.depth} entries")
        self.waiting |= u.barrier
        if u.exited:
            self.live &= ~u.exited
            for e in self.entries:
                e.mask &= ~u.exited
        if kind == "ret":
            top.returned = True
            top.pc = u.targets[0][0] if len(u.targets) == 1 else RETURN
        elif kind == "jump":
            ((top.pc, _),) = u.targets
        elif kind in ("call", "branch"):
            if replace:
                self.entries.pop()  # the entry below already waits at this RPC
            else:
                top.pc = u.rpc
        if kind in ("cont", "call", "branch"):
            self.entries += [StackEntry(pc, m, u.rpc, u.call) for pc, m in pushes]
        self._reconverge()
        return 1

    def _reconverge(self) -> None:
        """Pop the entries that are done: no threads left, at their RPC, or returned. An entry
        left waiting at RETURN once its return entries are gone has returned as well; a popped
        call entry's caller continues at the return address (its PC since the call)."""
        while self.entries:
            top = self.top
            finished = not top.mask or top.returned or top.pc == RETURN
            reached = len(self.entries) > 1 and not top.call and top.pc == top.rpc
            if not finished and not reached:
                return
            self.entries.pop()

    def release(self, lanes: int) -> int:
        """One clock: the top entry's waiting threads continue after the barrier."""
        self.waiting &= ~lanes
        if self.entries and self.top.mask & lanes:
            self.top.pc += 4
            self._reconverge()
        return 1
