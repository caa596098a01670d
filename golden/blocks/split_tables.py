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

Overflowing the RT is an error (:class:`TableOverflow`): the threads of a warp could not be
tracked any more. The update that overflows changes nothing; ``overflow`` stays set (and
every further update is ignored) until the next launch.

**The hardware cycle.** The class is also the functional core of the HDL block's golden twin
(:class:`SplitTablesBlock`), so every update is defined as what the clock cycles of the block
do (:meth:`SplitTables.cycle`), with the hardware's limits. The block is pipelined: a cycle
either takes an operation or inserts, never both, so that no clock runs an update and an
associative search in series (the SM's clock, docs/sm-hardware.md):

1. *an operation cycle*: at most :data:`MAX_TARGETS` target groups per update (an indirect
   jump with more targets is presented as one update plus ``more`` cycles that insert the rest
   into the same reconvergence entry); exited threads leave every entry at once; a return
   clears its threads from every RT entry of its call context in parallel (with RPCs that
   follow the IPDOM structure, exactly the entries between the split and its call entry, which
   the atomic model walked by R-index); a barrier release advances every released split and
   lets each that reaches its RPC arrive, in parallel. The splits the operation makes (the
   targets, or with OREC the branching split itself) are *held* for the cycles after it;
2. *an insertion cycle* (any cycle without an operation): RT entries that have no threads
   left vanish; at most :data:`MAX_INSERTS` ST insertion with its associative search: the
   first held split, or else the first RT entry whose pending mask is zero; then at most
   :data:`MAX_ADMITS` queued splits enter free ST entries.

While splits are held, RT entries wait to move back or queued splits to be admitted to free
entries, the block is *busy* and takes no operation. :meth:`execute` and :meth:`release`, the
interface the cycle-level SM uses, run the operation's cycle and then the busy cycles until
the tables have settled (a divergence into two new splits takes three cycles, a split that
reaches its reconvergence point two: its arrival and the reconverged entry's move back), so
the SM (which charges its own branch latency) and the HDL block see the same tables. The
idealised machines of the seeds' worked examples (``pipelined`` off: no pipeline at all,
``golden.config.Latencies.pipelined``) insert up to :data:`MAX_TARGETS` splits in the
operation's own cycle, as the seeds' figures draw the tables.

The waiting queue holds at most W - ``st_size`` splits (the splits of a warp have disjoint,
non-empty masks) plus the insertions of one cycle before admission: :func:`queue_size`; none
when ``st_size`` >= W (the seed's choice, Sec 3.3.1).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from reconverge.golden.blocks.base import (
    Block,
    Group,
    Port,
    PortTree,
    PortValue,
    Values,
    check_range,
    param,
)
from reconverge.golden.blocks.divergence import (
    NEVER,
    RETURN,
    DivergenceUnit,
    Executed,
    Split,
    TableOverflow,
)
from reconverge.golden.blocks.divergence_ports import (
    DivergenceParams,
    UnitWidths,
    one_of,
    splits_values,
)
from reconverge.golden.geometry import Geometry, bits_for

NO_ENTRY = -1  # R-index of a split with no reconvergence entry (it only ends by exiting)

MAX_TARGETS = 2  # target groups per update
MAX_INSERTS = 1  # ST insertions (with their associative search) per insertion cycle
MAX_ADMITS = 2  # queued splits admitted to the ST per insertion cycle


def queue_size(warp_size: int, split_table: int) -> int:
    """Entries of the waiting queue: the W - ST splits that cannot have an ST entry (a warp's
    splits have disjoint, non-empty masks) plus an update's new splits before admission; none
    when the ST has an entry per thread."""
    return warp_size - split_table + MAX_TARGETS if split_table < warp_size else 0


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


#: What an operation leaves to insert: splits (with the ST entry they prefer) or the indices
#: of RT entries that move back to the ST.
_Inserts = list[tuple[StEntry | int, int | None]]


@dataclass(frozen=True)
class _Continuation:
    """What a ``more`` cycle needs of the divergence it continues: the RPC the targets are
    compared with, the reconvergence entry and the call context of the new splits."""

    rpc: int
    rindex: int
    context: int


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
        pipelined: bool = True,
    ) -> None:
        super().__init__(warp_size, valid, entry)
        self.orec = orec
        self.pipelined = pipelined
        self.st_size = st_size
        self.rt_size = rt_size
        self.queue_size = queue_size(warp_size, st_size)
        self.launch(valid, entry)

    def launch(self, valid: int, entry: int) -> None:
        """Start a warp: threads ``valid`` at ``entry`` in ST entry 0, everything else empty."""
        self.live = valid
        self.waiting = 0
        self.overflow = False
        self.st: list[StEntry | None] = [None] * self.st_size
        self.rt: list[RtEntry | None] = [None] * self.rt_size
        self.queue: list[StEntry] = []  # splits waiting for a free ST entry
        self.held: _Inserts = []  # an operation's new splits, inserted in the cycles after it
        self._cont: _Continuation | None = None
        if valid:
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
            "st": len(self.st) - self.st.count(None) + len(self.queue),
            "rt": len(self.rt) - self.rt.count(None),
        }

    @property
    def continues(self) -> bool:
        """The last update was a divergence whose further targets a ``more`` cycle takes."""
        return self._cont is not None

    @property
    def busy(self) -> bool:
        """Work is left from an earlier cycle: a held split to insert, an RT entry to move back
        or to drop, a queued split to admit to a free ST entry."""
        if self.held:
            return True
        for r in self.rt:  # (a loop: this runs several times per cycle)
            if r is not None and r.pending == 0:
                return True
        return bool(self.queue) and None in self.st

    # -- the interface of the cycle-level SM ---------------------------------------------------

    def execute(self, ex: Executed) -> int:
        """Apply the outcome of an issued instruction and let the tables settle: the update's
        cycle, ``more`` cycles for targets beyond the first :data:`MAX_TARGETS` (in ascending
        PC order, as one update would take them), busy cycles in between. Returns the number
        of cycles (:meth:`cycle` calls) it took."""
        targets = sorted(ex.targets.items())
        first = (
            ex if len(targets) <= MAX_TARGETS else replace(ex, targets=dict(targets[:MAX_TARGETS]))
        )
        self.update(first)
        cycles = 1 + self.settle()
        for i in range(MAX_TARGETS, len(targets), MAX_TARGETS):
            if self._cont is None:
                break  # not a divergence (a return): the other targets mean nothing here
            self.more(dict(targets[i : i + MAX_TARGETS]))
            cycles += 1 + self.settle()
        return cycles

    def release(self, lanes: int) -> int:
        """A barrier release and the busy cycles after it; returns the number of cycles."""
        self.resume(lanes)
        return 1 + self.settle()

    def settle(self) -> int:
        """Run busy cycles until the tables have settled; returns how many ran."""
        cycles = 0
        while self.busy and not self.overflow:
            self.cycle()
            cycles += 1
        return cycles

    # -- one clock cycle -----------------------------------------------------------------------

    def update(self, ex: Executed) -> None:
        """One cycle with an update (at most :data:`MAX_TARGETS` targets)."""
        if len(ex.targets) > MAX_TARGETS:
            raise ValueError(f"an update takes at most {MAX_TARGETS} targets")
        self.cycle(lambda: self._update(ex))

    def more(self, targets: Mapping[int, int]) -> None:
        """One cycle that inserts more targets of the last divergence (its RPC, reconvergence
        entry and call context)."""
        self.cycle(lambda: self._more(targets))

    def resume(self, lanes: int) -> None:
        """One cycle of a barrier release: ``lanes`` continue after the barrier."""
        self.cycle(lambda: self._release(lanes))

    def cycle(self, operation: Callable[[], _Inserts] | None = None) -> None:
        """One clock edge: ``operation`` (which returns the splits it makes, held for the
        cycles after it), or without one (an idle or busy cycle) an insertion and the
        admissions. Not ``pipelined`` (the idealised machines of the seeds' worked examples),
        the operation's cycle also inserts its splits, up to :data:`MAX_TARGETS`, or as many
        RT entries that reconverged, and admits. After an RT overflow the tables stay as they
        were until the next launch."""
        if self.overflow:
            return
        if operation is not None:
            if self.busy:
                raise ValueError("the split tables are busy: no update this cycle")
            self.held = operation()
            if self.pipelined:
                return
        inserts_per_cycle = MAX_INSERTS if self.pipelined else MAX_TARGETS
        reconverged = []  # RT entries whose threads have all arrived: they move back to the ST
        for i, r in enumerate(self.rt):
            if r is not None and r.pending == 0:
                if r.rmask:
                    reconverged.append(i)
                else:  # its threads have all gone
                    self.rt[i] = None
        if self.held:  # the held splits first, else the first RT entries that reconverged
            inserts = self.held[:inserts_per_cycle]
            self.held = self.held[inserts_per_cycle:]
        else:
            inserts = [(i, None) for i in reconverged[:inserts_per_cycle]]
        for entry, prefer in inserts:
            if isinstance(entry, int):  # an RT entry that moves back now
                r = self.rt[entry]
                assert r is not None
                self.rt[entry] = None
                self._insert(StEntry(r.pc, r.pc, r.rmask, r.rindex, r.call))
            else:
                self._insert(entry, prefer)
        for _ in range(MAX_ADMITS):
            if not self.queue:
                break
            free = _first_free(self.st)
            if free is None:
                break
            self.st[free] = self.queue.pop(0)

    # -- operations (the first part of a cycle) ------------------------------------------------

    def _update(self, ex: Executed) -> _Inserts:
        split = self.st[ex.sid]
        if split is None:
            raise ValueError(f"split {ex.sid} is not in the split table")
        targets = sorted(ex.targets.items())
        call = ex.call and bool(targets)
        ret = not call and ex.ret and split.call != NO_ENTRY
        rpc = (ex.pc + 4) & 0xFFFF_FFFF if call else NEVER if ex.rpc is None else ex.rpc
        divergent = call or (not ret and len(targets) > 1)
        new_entry = call or (divergent and rpc != RETURN and rpc != self.rpc_of(split))
        if new_entry and _first_free(self.rt) is None:
            self.overflow = True
            raise TableOverflow(
                f"reconvergence table overflow: the branch or call at pc {ex.pc:#010x} needs "
                f"more than {len(self.rt)} RT entries"
            )
        self._cont = None
        self._retire(ex)
        self._remove_threads(ex.exited)
        if self.st[ex.sid] is None:  # every thread exited
            return []
        if ret:
            self._return(ex.sid, split)
            return []
        if divergent:
            self.st[ex.sid] = None
            if not new_entry:  # same reconvergence point, or the return of the innermost call
                rindex = split.call if rpc == RETURN else split.rindex
            else:
                rindex = _first_free(self.rt)  # type: ignore[assignment]
                self.rt[rindex] = RtEntry(
                    rpc, split.mask, split.mask, split.rindex, split.call, returns=call
                )
            self._cont = _Continuation(rpc, rindex, rindex if call else split.call)
            return self._targets(targets)
        if not targets:
            return []
        ((split.next_pc, _),) = targets
        if ex.control:
            split.pc = split.next_pc
        if split.next_pc == self.rpc_of(split):
            self._arrive(ex.sid, split)
        elif ex.control and self.orec:
            self.st[ex.sid] = None  # re-inserted: the branch unit writes the new block PC
            return [(split, ex.sid)]
        return []

    def _more(self, targets: Mapping[int, int]) -> _Inserts:
        if self._cont is None:
            raise ValueError("no divergence to continue")
        return self._targets(sorted(targets.items()))

    def _targets(self, targets: list[tuple[int, int]]) -> _Inserts:
        """The new splits of a divergence; a target at the RPC arrives there at once."""
        cont = self._cont
        assert cont is not None
        inserts: _Inserts = []
        for pc, mask in targets:
            if pc == cont.rpc:
                target = self.rt[cont.rindex]
                assert target is not None
                target.pending &= ~mask
            else:
                inserts.append((StEntry(pc, pc, mask, cont.rindex, cont.context), None))
        return inserts

    def _release(self, lanes: int) -> _Inserts:
        """The barrier completed: the released splits continue after it (in parallel)."""
        self._cont = None
        self.waiting &= ~lanes
        for i, split in enumerate(self.st):
            if split is not None and split.mask & lanes:
                split.next_pc += 4
                if split.next_pc == self.rpc_of(split):
                    self._arrive(i, split)
        return []

    def _remove_threads(self, lanes: int) -> None:
        """Exited threads (the issuing split's: none of them waits in the queue) leave every
        entry; a split left without threads is invalidated."""
        if not lanes:
            return
        for i, e in enumerate(self.st):
            if e is not None:
                e.mask &= ~lanes
                if not e.mask:
                    self.st[i] = None
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
        """The split returned from its innermost call: its threads arrive at the call entry,
        and leave every entry of the call's context (the entries between the split and the
        call entry: they will not come back to them). In parallel: an entry of the context
        that is not on the split's way to the call entry holds none of its threads."""
        self.st[index] = None
        for r in self.rt:
            if r is not None and r.call == split.call:
                r.pending &= ~split.mask
                r.rmask &= ~split.mask
        call = self.rt[split.call]
        assert call is not None
        call.pending &= ~split.mask

    # -- insertion -----------------------------------------------------------------------------

    def _insert(self, entry: StEntry, prefer: int | None = None) -> None:
        """Insert into the first free ST entry (``prefer``: the entry the split had), after
        the associative search for early reconvergence; queue the split if the ST is full (or
        others already wait)."""
        if self.orec and self._early_reconvergence(entry):
            return
        free = prefer if prefer is not None and self.st[prefer] is None else _first_free(self.st)
        if free is None or self.queue:
            self.queue.append(entry)
            assert len(self.queue) <= self.queue_size, "split queue overflow"
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
            free = _first_free(self.rt)
            if free is None:
                return False  # no RT entry for the early point: keep running apart
            self.rt[free] = RtEntry(
                lead.next_pc, lead.mask | entry.mask, entry.mask, entry.rindex, entry.call
            )
            self.st[i] = None  # the leading split waits at the early reconvergence point
            entry.rindex = free
            return False
        return False


def _first_free(table: list[StEntry | None] | list[RtEntry | None]) -> int | None:
    return table.index(None) if None in table else None


# -- the golden twin of the HDL block ----------------------------------------------------------


@dataclass(frozen=True)
class SplitTablesParams(DivergenceParams):
    """Parameters of the split and reconvergence tables (seed 002 Sec 3.3.1, Fig 7): warp size
    W, ``split_table`` ST entries (the split slots), ``reconv_table`` RT entries, ``pc_width``
    P bits of PC, ``orec``: opportunistic early reconvergence (Sec 4). PCs are multiples of 4
    below 2^P - 4; an RPC of all ones is :data:`NEVER`, all ones - 1 is :data:`RETURN`.

    Ports: the divergence units' shared groups
    (:mod:`reconverge.golden.blocks.divergence_ports`): ``launch``, ``outcome`` (``slot`` =
    the ST entry that issued; ``cont``: more targets of the last divergence, an indirect jump
    with more than two; ``more`` is not used), ``release``, ``splits`` (one per ST entry, the
    splits that may issue: no thread waits), ``status`` (``busy``: work left from an earlier
    cycle, no update but a launch this cycle; ``overflow``: an update found the RT full;
    ``st``: splits in the ST and the queue, the SM's ``st`` metric; ``rt``: RT entries;
    ``queued``: splits waiting for an ST entry; ``continues``: the last update was a
    divergence, so an outcome with ``cont`` inserts more of its targets); and ``tables``, the
    tables of Fig 7 (fields of invalid entries read as zero): ``st_valid``, ``st_block``
    (block PC), ``st_mask``, ``st_rpc`` (its RT entry's PC; NEVER for none or a call entry)
    per ST entry;
    ``rt_valid``, ``rt_pc``, ``rt_rmask``, ``rt_pending``, ``rt_returns`` (call entries) per
    RT entry."""

    name = "split_tables"

    warp_size: int = param(32, "threads per warp W")
    split_table: int = param(32, "split table entries (seed 002: W suffice)")
    reconv_table: int = param(16, "reconvergence table entries")
    pc_width: int = param(32, "PC bits")
    orec: bool = param(True, "opportunistic early reconvergence (0/1)")

    def validate(self) -> None:
        self.check_warp_size()
        check_range("split_table", self.split_table, 1, 64, " entries")
        check_range("reconv_table", self.reconv_table, 1, 64, " entries")
        check_range("pc_width", self.pc_width, 6, 32, " bits")

    @classmethod
    def of(cls, geometry: Geometry, widths: UnitWidths, **fixed: object) -> SplitTablesParams:
        g = geometry
        return cls(g.warp_size, g.split_table, g.reconv_table, widths.pc, **fixed)  # type: ignore[arg-type]

    def make_unit(
        self, valid: int, entry: int, regs: np.ndarray, *, pipelined: bool = True
    ) -> SplitTables:
        return SplitTables(
            self.warp_size,
            valid,
            entry,
            self.split_table,
            self.reconv_table,
            orec=self.orec,
            pipelined=pipelined,
        )

    @property
    def slots(self) -> int:  # type: ignore[override]
        return self.split_table

    @property
    def sid_bits(self) -> int:
        return bits_for(self.split_table)

    @property
    def queue_size(self) -> int:
        """Entries of the waiting queue (:func:`queue_size`)."""
        return queue_size(self.warp_size, self.split_table)

    @property
    def pc_limit(self) -> int:
        """PCs stay below this (room for the codes and for PC + 4)."""
        return (1 << self.pc_width) - 4

    @property
    def index_bits(self) -> int:
        """Bits of an R-index or call context: an RT entry, or ``reconv_table`` for none."""
        return bits_for(self.reconv_table + 1)

    @property
    def ports(self) -> PortTree:
        w, p, s, r = self.warp_size, self.pc_width, self.split_table, self.reconv_table
        return (
            self.launch_group(),
            self.outcome_group(),
            self.release_group(),
            self.splits_group(),
            self.status_group(
                Port("st", "out", (s + self.queue_size).bit_length()),
                Port("rt", "out", r.bit_length()),
                Port("queued", "out", max(1, self.queue_size.bit_length())),
                Port("continues", "out", 1),
            ),
            Group(
                "tables",
                (
                    Port("st_valid", "out", s),
                    Port("st_block", "out", p, s),
                    Port("st_mask", "out", w, s),
                    Port("st_rpc", "out", p, s),
                    Port("rt_valid", "out", r),
                    Port("rt_pc", "out", p, r),
                    Port("rt_rmask", "out", w, r),
                    Port("rt_pending", "out", w, r),
                    Port("rt_returns", "out", r),
                ),
            ),
        )

    def twin(self) -> SplitTablesBlock:
        return SplitTablesBlock(self)


class SplitTablesBlock(Block):
    """Cycle twin of ``reconverge.hdl.blocks.split_tables.SplitTables``: the warp's ST and RT
    (seed 002 Sec 3.3.1, Fig 7) with their control, one operation per cycle (a launch, an
    outcome, a MORE cycle = an outcome with ``cont``, or a release). Its behaviour is
    :class:`SplitTables`' (:meth:`SplitTables.cycle`, the core of this twin); the ports only
    encode it (:class:`SplitTablesParams`). The outputs are registers (nothing combinational
    from the inputs)."""

    params: SplitTablesParams

    def __init__(self, params: SplitTablesParams) -> None:
        super().__init__(params)
        self.core = self._empty()

    def _empty(self) -> SplitTables:
        p = self.params
        return SplitTables(p.warp_size, 0, 0, p.split_table, p.reconv_table, orec=p.orec)

    def reset(self) -> None:
        self.core = self._empty()

    # -- outputs -------------------------------------------------------------------------------

    def outputs(self, inputs: Mapping[str, PortValue]) -> Values:
        t, p = self.core, self.params
        st = [(i, e) for i, e in enumerate(t.st) if e is not None]
        rt = [(i, e) for i, e in enumerate(t.rt) if e is not None]

        def array(n: int, items: list[tuple[int, int]]) -> tuple[int, ...]:
            out = [0] * n
            for i, v in items:
                out[i] = v
            return tuple(out)

        s, r = p.split_table, p.reconv_table
        issue = [(i, i, e.next_pc, e.mask) for i, e in st if not e.mask & t.waiting]
        return splits_values(p, issue) | {
            "status__busy": int(t.busy),
            "status__overflow": int(t.overflow),
            "status__live": t.live,
            "status__waiting": t.waiting,
            "status__st": len(st) + len(t.queue),
            "status__rt": len(rt),
            "status__queued": len(t.queue),
            "status__continues": int(t.continues),
            "tables__st_valid": sum(1 << i for i, _ in st),
            "tables__st_block": array(s, [(i, e.pc) for i, e in st]),
            "tables__st_mask": array(s, [(i, e.mask) for i, e in st]),
            "tables__st_rpc": array(s, [(i, p.pc_out(t.rpc_of(e))) for i, e in st]),
            "tables__rt_valid": sum(1 << i for i, _ in rt),
            "tables__rt_pc": array(r, [(i, p.pc_out(e.pc)) for i, e in rt]),
            "tables__rt_rmask": array(r, [(i, e.rmask) for i, e in rt]),
            "tables__rt_pending": array(r, [(i, e.pending) for i, e in rt]),
            "tables__rt_returns": sum(1 << i for i, e in rt if e.returns),
        }

    # -- one clock edge ------------------------------------------------------------------------

    def check_inputs(self, inputs: Mapping[str, PortValue]) -> None:
        super().check_inputs(inputs)
        one_of(dict(inputs), self.name)

    def clock(self, inputs: Mapping[str, PortValue]) -> None:
        v: Mapping[str, Any] = inputs
        t = self.core
        if v["launch__valid"]:
            self._check_pc(v["launch__pc"])
            t.launch(v["launch__mask"], v["launch__pc"])
        elif t.overflow or not (v["outcome__valid"] or v["release__lanes"]):
            t.cycle()  # after an overflow every operation is ignored until the next launch
        elif t.busy:
            raise ValueError(f"{self.name}: an operation while the block is busy")
        elif not v["outcome__valid"]:
            if v["release__lanes"] & ~t.waiting:
                raise ValueError(
                    f"{self.name}: release of lanes {v['release__lanes']:#x} that do not wait"
                )
            t.resume(v["release__lanes"])
        elif v["outcome__cont"]:
            if not t.continues:
                raise ValueError(f"{self.name}: a continuation without a divergence to continue")
            t.more(self._targets(v, t.live))
        else:
            self._execute(v)

    def _check_pc(self, pc: int) -> None:
        limit = self.params.pc_limit
        if pc % 4 or pc >= limit:
            raise ValueError(f"{self.name}: pc {pc:#x} is not a multiple of 4 below {limit:#x}")

    def _targets(self, v: Mapping[str, Any], within: int) -> dict[int, int]:
        """The non-empty target groups: distinct PCs, disjoint masks within ``within``."""
        targets: dict[int, int] = {}
        for pc, mask in zip(v["outcome__target_pc"], v["outcome__target_mask"], strict=True):
            if mask:
                self._check_pc(pc)
                if pc in targets or mask & sum(targets.values()) or mask & ~within:
                    raise ValueError(f"{self.name}: target groups overlap or leave the split")
                targets[pc] = mask
        return targets

    def _execute(self, v: Mapping[str, Any]) -> None:
        t, p, sid = self.core, self.params, v["outcome__slot"]
        split = t.st[sid] if sid < len(t.st) else None
        if split is None or split.mask & t.waiting:
            raise ValueError(f"{self.name}: split {sid} cannot issue")
        targets = self._targets(v, split.mask)
        covered = 0
        for part in (*targets.values(), v["outcome__exited"], v["outcome__barrier"]):
            if part & covered:
                covered = -1
                break
            covered |= part
        # a divergence's further targets may follow in continuation cycles
        wide = len(targets) == MAX_TARGETS and covered & ~split.mask == 0
        if covered != split.mask and not wide:
            raise ValueError(f"{self.name}: targets, exited and barrier must partition split {sid}")
        rpc = v["outcome__rpc"]
        call = bool(v["outcome__call"])
        if call and targets and rpc != split.next_pc + 4:
            raise ValueError(
                f"{self.name}: the rpc of a call is its return address {split.next_pc + 4:#x}, "
                f"not {rpc:#x}"
            )
        if rpc not in (p.never, p.return_code):
            self._check_pc(rpc)
        ex = Executed(
            sid,
            split.next_pc,
            split.mask,
            targets,
            exited=v["outcome__exited"],
            barrier=v["outcome__barrier"],
            control=bool(v["outcome__control"]),
            rpc=p.pc_in(rpc),
            call=call,
            ret=bool(v["outcome__ret"]),
        )
        with suppress(TableOverflow):  # the overflow output goes high, the tables stay as they were
            t.update(ex)
