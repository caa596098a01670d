"""The single-path IPDOM reconvergence stack, SPS (seed 002 Sec 2.2, Fig 3; GPGPU-Sim's
"IPDOM" of Fung et al.).

Each entry holds a PC, an active mask and the reconvergence PC (RPC) of the branch that created
it. Only the top-of-stack (TOS) entry issues. On a divergent branch the TOS entry becomes the
reconvergence entry (its PC is set to the branch's RPC, its mask stays the union), and one entry
per target is pushed, taken side first so that the fall-through side is on top; a side whose
target is the RPC itself gets no entry. When the TOS entry's PC reaches its RPC it is popped and
the entry below continues. A divergent branch whose RPC equals the TOS entry's own RPC (a loop
exit, a ``break``) replaces the TOS entry instead of keeping it as a reconvergence entry, since
the entry below already waits at that PC. A call pushes a call entry per target that
reconverges at the return address, and a branch that only reconverges when the function returns
(:data:`RETURN`) takes the return address of the innermost call entry. The whole warp waits
when the TOS threads wait at a barrier: the threads of the other entries cannot reach it (Sec
3.3.3), which the SM reports as a barrier deadlock.
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
    call: bool = False


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

    def execute(self, ex: Executed) -> None:
        self._retire(ex)
        for e in self.entries:
            e.mask &= ~ex.exited
        if ex.call and ex.targets:
            self._push(self.top, ex, (ex.pc + 4) & 0xFFFF_FFFF, call=True)
        elif ex.divergent:
            self._push(self.top, ex, self._rpc(ex.rpc), call=False)
        elif ex.targets:
            (self.top.pc,) = ex.targets
        self._reconverge()

    def _rpc(self, rpc: int | None) -> int:
        """The branch's RPC, with RETURN resolved to the innermost call's return address."""
        if rpc is None:
            return NEVER
        if rpc == RETURN:
            return next((e.rpc for e in reversed(self.entries) if e.call), NEVER)
        return rpc

    def _push(self, top: StackEntry, ex: Executed, rpc: int, *, call: bool) -> None:
        if rpc == top.rpc and len(self.entries) > 1:
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
        """Pop entries that reached their RPC or lost all their threads."""
        while self.entries and (
            self.top.mask == 0 or (len(self.entries) > 1 and self.top.pc == self.top.rpc)
        ):
            self.entries.pop()

    def release(self, lanes: int) -> None:
        self.waiting &= ~lanes
        if self.entries and self.top.mask & lanes:
            self.top.pc += 4
            self._reconverge()

    def occupancy(self) -> dict[str, int]:
        return {"stack": len(self.entries)}
