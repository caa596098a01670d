"""Multi-Path IPDOM: the warp split table (ST) and the reconvergence table (RT) that replace the
stack (seed 002 Sec 3, Fig 5-7), with opportunistic early reconvergence (Sec 4, Fig 10-11).

* The ST holds the splits that run in parallel basic blocks: the first PC of the block the
  split executes, its active mask, and the R-index of its reconvergence entry in the RT. Every
  valid entry may issue. The table admits ``st_size`` entries; a split that finds it full
  waits, in order, until an entry is invalidated (Sec 5: "the new warp split is not considered
  for scheduling until an ST entry is invalidated").
* The RT holds the reconvergence points: the reconvergence PC, the reconvergence mask (the
  threads that meet there), the pending mask (those that have not arrived yet) and the R-index
  of the entry the reconverged split reconverges at next.
* A divergent branch moves the diverging split's entry to the first free RT entry (PC := RPC,
  both masks := its mask) and inserts one ST entry per target into the first free ST entries;
  a target that is the RPC itself only clears its threads from the pending mask; a branch whose
  RPC is the split's own reconvergence point adds no RT entry (Sec 3.2, the two special cases).
* A split reaching its reconvergence PC is invalidated and clears its threads from the pending
  mask; when the pending mask becomes zero the RT entry moves back to the first free ST entry
  with the reconvergence mask.
* A call is handled like a divergence whose reconvergence point is the return: the calling
  split's entry moves to the RT (a *call entry*, PC = the return address) and the callee splits
  arrive there by executing the return, never by reaching its PC (with recursion the return
  address is also a PC inside the callee). Each split records its call context (the RT entry of
  its innermost call), and a branch that only reconverges when the function returns
  (:data:`RETURN`) reconverges at that call entry.
* With ``orec``, every insertion into the ST (a new split, a split that branched to another
  block, an entry coming back from the RT) searches the ST associatively for a split in the same
  block (same block PC) with the same reconvergence entry; if found, a new RT entry at the
  leading split's next PC (the early reconvergence point) gathers both, the leading split
  waits there, and the trailing split reconverges with it there (Fig 11 steps 2-4).

Overflowing the RT is an error (:class:`TableOverflow`): the stack-less threads of a warp
could not be tracked any more.
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

NO_ENTRY = -1  # R-index of a split with no reconvergence entry (it only ends by exiting)


@dataclass
class StEntry:
    """A warp split (Fig 7): block PC, next PC (the I-buffer's), active mask, R-index; and the
    RT entry of its innermost call."""

    pc: int
    next_pc: int
    mask: int
    rindex: int = NO_ENTRY
    call: int = NO_ENTRY


@dataclass
class RtEntry:
    """A reconvergence point (Fig 7): PC, reconvergence mask, pending mask, R-index; and the
    call context the reconverged split continues in."""

    pc: int
    rmask: int
    pending: int
    rindex: int = NO_ENTRY
    call: int = NO_ENTRY
    returns: bool = False  # a call entry: its threads arrive by returning


class SplitTables(DivergenceUnit):
    occupancy_keys = ("st", "rt")

    def __init__(
        self,
        warp_size: int,
        valid: int,
        entry: int,
        st_size: int,
        rt_size: int,
        *,
        orec: bool = False,
    ) -> None:
        super().__init__(warp_size, valid, entry)
        self.orec = orec
        self.st: list[StEntry | None] = [None] * st_size
        self.rt: list[RtEntry | None] = [None] * rt_size
        self.queue: list[StEntry] = []  # splits waiting for a free ST entry
        self.st[0] = StEntry(entry, entry, valid)

    # -- queries ------------------------------------------------------------------------------

    def splits(self) -> list[Split]:
        return [
            Split(i, e.next_pc, e.mask)
            for i, e in enumerate(self.st)
            if e is not None and not e.mask & self.waiting
        ]

    def rpc_of(self, entry: StEntry) -> int:
        """The PC at which the split reconverges by arriving (NEVER for a call entry, which
        its threads reach by returning)."""
        target = self.rt[entry.rindex] if entry.rindex != NO_ENTRY else None
        return NEVER if target is None or target.returns else target.pc

    def occupancy(self) -> dict[str, int]:
        return {
            "st": sum(e is not None for e in self.st) + len(self.queue),
            "rt": sum(e is not None for e in self.rt),
        }

    # -- updates ------------------------------------------------------------------------------

    def execute(self, ex: Executed) -> None:
        self._retire(ex)
        self._remove_threads(ex.exited)
        split = self.st[ex.sid]
        if split is None:
            raise ValueError(f"split {ex.sid} is not in the split table")
        if ex.call and ex.targets:
            self._diverge(ex.sid, split, ex, (ex.pc + 4) & 0xFFFF_FFFF, call=True)
        elif ex.ret and split.call != NO_ENTRY:
            self._return(ex.sid, split)
        elif ex.divergent:
            self._diverge(ex.sid, split, ex, NEVER if ex.rpc is None else ex.rpc, call=False)
        elif ex.targets:
            (split.next_pc,) = ex.targets
            if ex.control:
                split.pc = split.next_pc
            if split.next_pc == self.rpc_of(split):
                self._arrive(ex.sid, split)
            elif ex.control and self.orec:
                self.st[ex.sid] = None  # re-inserted: the branch unit writes the new block PC
                self._insert(split, prefer=ex.sid)
        self._drain()

    def release(self, lanes: int) -> None:
        self.waiting &= ~lanes
        for i, split in enumerate(self.st):
            if split is not None and split.mask & lanes:
                split.next_pc += 4
                if split.next_pc == self.rpc_of(split):
                    self._arrive(i, split)
        self._drain()

    def _remove_threads(self, lanes: int) -> None:
        if not lanes:
            return
        for e in (*self.st, *self.queue):
            if e is not None:
                e.mask &= ~lanes
        for r in self.rt:
            if r is not None:
                r.rmask &= ~lanes
                r.pending &= ~lanes

    def _arrive(self, index: int, split: StEntry) -> None:
        """The split reached its reconvergence PC: invalidate it, mark its threads arrived."""
        self.st[index] = None
        target = self.rt[split.rindex]
        assert target is not None
        target.pending &= ~split.mask

    def _return(self, index: int, split: StEntry) -> None:
        """The split returned from its innermost call: its threads arrive at the call entry
        (and, should its reconvergence entry lie inside the function, leave that entry's
        pending mask: they will not come back to it)."""
        self.st[index] = None
        rindex = split.rindex
        while rindex != split.call and rindex != NO_ENTRY:
            inner = self.rt[rindex]
            assert inner is not None
            inner.pending &= ~split.mask
            inner.rmask &= ~split.mask
            rindex = inner.rindex
        call = self.rt[split.call]
        assert call is not None
        call.pending &= ~split.mask

    def _diverge(self, index: int, split: StEntry, ex: Executed, rpc: int, *, call: bool) -> None:
        """Split ``split`` over the targets, reconverging at ``rpc`` (a call: when the callees
        return, in a new call context; RETURN: at the innermost call entry)."""
        self.st[index] = None
        if not call and (rpc == RETURN or rpc == self.rpc_of(split)):
            # Same reconvergence point (or the return of the innermost call): no new RT entry.
            rindex = split.call if rpc == RETURN else split.rindex
        else:
            entry = RtEntry(rpc, split.mask, split.mask, split.rindex, split.call, returns=call)
            rindex = self._allocate_rt(entry, ex.pc)
        context = rindex if call else split.call
        for pc, mask in sorted(ex.targets.items()):
            if pc == rpc:
                target = self.rt[rindex]
                assert target is not None
                target.pending &= ~mask
            else:
                self._insert(StEntry(pc, pc, mask, rindex, context))

    def _allocate_rt(self, entry: RtEntry, pc: int) -> int:
        free = self._free(self.rt)
        if free is None:
            raise TableOverflow(
                f"reconvergence table overflow: the branch or call at pc {pc:#010x} needs more "
                f"than {len(self.rt)} RT entries"
            )
        self.rt[free] = entry
        return free

    @staticmethod
    def _free(table: list[StEntry | None] | list[RtEntry | None]) -> int | None:
        return next((i for i, e in enumerate(table) if e is None), None)

    def _insert(self, entry: StEntry, prefer: int | None = None) -> None:
        """Insert into the first free ST entry (``prefer``: the entry the split had), after
        the associative search for early reconvergence; queue the split if the ST is full."""
        if self.orec and self._early_reconvergence(entry):
            return
        free = prefer if prefer is not None and self.st[prefer] is None else self._free(self.st)
        if free is None or self.queue:
            self.queue.append(entry)
        else:
            self.st[free] = entry

    def _early_reconvergence(self, entry: StEntry) -> bool:
        """Seed 002 Sec 4: a split in the same block with the same reconvergence entry gives an
        early reconvergence point. Returns True when ``entry`` was merged (nothing to insert)."""
        for i, lead in enumerate(self.st):
            if (
                lead is None
                or lead.pc != entry.pc
                or lead.rindex != entry.rindex
                or lead.mask & self.waiting
            ):
                continue
            if lead.next_pc == entry.next_pc:  # both at the same instruction: merge now
                lead.mask |= entry.mask
                return True
            free = self._free(self.rt)
            if free is None:
                return False  # no RT entry for the early point: keep running apart
            self.rt[free] = RtEntry(
                lead.next_pc, lead.mask | entry.mask, entry.mask, entry.rindex, entry.call
            )
            self.st[i] = None  # the leading split waits at the early reconvergence point
            entry.rindex = free
            return False
        return False

    def _drain(self) -> None:
        """Move complete RT entries back to the ST; admit queued splits to free ST entries."""
        moved = True
        while moved:
            moved = False
            for i, r in enumerate(self.rt):
                if r is not None and r.pending == 0:
                    self.rt[i] = None
                    if r.rmask:
                        self._insert(StEntry(r.pc, r.pc, r.rmask, r.rindex, r.call))
                    moved = True
        for i, e in enumerate(self.st):
            if e is not None and e.mask == 0:
                self.st[i] = None
        self.queue = [e for e in self.queue if e.mask]
        while self.queue and (free := self._free(self.st)) is not None:
            self.st[free] = self.queue.pop(0)
