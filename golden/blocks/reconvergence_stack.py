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

    def _in_call(self) -> bool:
        return any(e.call for e in self.entries)

    def execute(self, ex: Executed) -> None:
        self._retire(ex)
        for e in self.entries:
            e.mask &= ~ex.exited
        top = self.top
        if ex.call and ex.targets:
            self._push(top, ex, (ex.pc + 4) & 0xFFFF_FFFF, call=True)
        elif ex.ret and self._in_call():
            top.returned = True
            (top.pc,) = ex.targets if len(ex.targets) == 1 else (RETURN,)
        elif ex.divergent:
            self._push(top, ex, NEVER if ex.rpc is None else ex.rpc, call=False)
        elif ex.targets:
            (top.pc,) = ex.targets
        self._reconverge()

    def _push(self, top: StackEntry, ex: Executed, rpc: int, *, call: bool) -> None:
        if not call and rpc == top.rpc and not top.call and len(self.entries) > 1:
            self.entries.pop()  # the entry below already waits at this RPC
        else:
            top.pc = rpc
        for pc in sorted(ex.targets, reverse=True):  # lowest PC (fall-through) on top
            if pc != rpc:
                if len(self.entries) >= self.depth:
                    raise TableOverflow(
                        f"SPS stack overflow: the {'call' if call else 'divergent branch'} at pc "
                        f"{ex.pc:#010x} needs more than {self.depth} entries"
                    )
                self.entries.append(StackEntry(pc, ex.targets[pc], rpc, call))

    def _reconverge(self) -> None:
        """Pop the entries that are done: no threads left, at their RPC, or returned. An entry
        left waiting at RETURN once its return entries are gone has returned as well; a popped
        call entry's caller continues at the return address."""
        while self.entries:
            top = self.top
            finished = not top.mask or top.returned or top.pc == RETURN
            reached = len(self.entries) > 1 and not top.call and top.pc == top.rpc
            if not finished and not reached:
                return
            self.entries.pop()
            if self.entries and top.returned and not top.call and self.top.pc != RETURN:
                raise AssertionError("a return entry's parent must wait for the return")

    def release(self, lanes: int) -> None:
        self.waiting &= ~lanes
        if self.entries and self.top.mask & lanes:
            self.top.pc += 4
            self._reconverge()
