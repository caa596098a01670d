"""The split and reconvergence tables' properties (seed 002 Sec 3.3.1, Fig 7; Sec 4, Fig 11;
``hdl/blocks/split_tables.py``), with and without OREC, over free ``launch``, ``outcome`` and
``release`` inputs limited by the interface contract of ``golden.blocks.split_tables``
(what ``SplitTablesBlock`` raises on, and what the SM drives):

* at most one of a launch, an outcome and a release per cycle, no outcome or release while
  the block is ``busy``; a launch starts a non-empty warp at a real PC (an instruction's:
  aligned and below ``pc_limit``); ``exited``, ``barrier``, ``call`` and ``ret`` are 0 unless
  ``valid``;
* an outcome comes from a split that may issue (``outcome.slot``), at a real PC: its target
  groups, exited and barrier lanes are disjoint and together the split's threads (at a
  ``bar``, neither a call nor a return, all of them wait); two groups have distinct PCs;
  target PCs are aligned (the SM faults on fetching one that is no instruction's), the RPC a
  real PC, NEVER or RETURN, a call's its return address. The
  continuation cycles of an indirect jump to more than two PCs (``cont``) are not driven;
* a release names the waiting lanes (the barrier completed for all of them).

A split is an ST entry, a queued split or a held one (an operation's, inserted in the cycles
after it); the threads *parked* at an RT entry are its reconvergence mask less its pending
mask (they arrived and wait for the others). Rules:

* ``splits_partition_the_live_threads`` (Sec 3.3.1: the splits of a warp have disjoint masks):
  the splits and the parked threads are pairwise disjoint, none empty, and together exactly
  the threads that have not exited; the waiting threads are live; the queue holds at most its
  entries: no thread is lost, duplicated or left behind while the tables settle;
* ``pending_holds_its_splits`` (Fig 7: the pending mask is the threads that have not arrived
  at the RT entry yet): an RT entry's pending mask is within its reconvergence mask, and the
  entry an R-index names (a split's, an RT entry's) is valid and holds the threads of what
  names it in its pending mask; a split's call context is a valid call entry holding them in
  its pending mask. Not equality: a branch that reconverges only at the return (RPC = RETURN)
  takes its threads to the call entry and leaves them pending in the entries between, until
  they return (the cover below reaches such a state);
* ``orec_merges_only_at_the_same_pc_and_entry`` (Sec 4, Fig 11 step 4): an ST entry's threads
  grow only with OREC, and only by the split inserted in that clock (the first held split, or
  else the RT entry that moved back), which was at the entry's block PC, with its R-index,
  while the entry was at its block PC with none of its threads waiting; the entry's PCs and
  R-index stay as they were;
* ``overflow_is_a_full_table`` (Sec 5: the overflow is flagged, never silent): the overflow
  flag rises exactly in the clock of an outcome that needs a new RT entry (a call, or a
  divergence whose RPC is neither RETURN nor the split's own) while every entry is valid, and
  stays up until the next launch;
* ``overflow_changes_nothing_else``: the clock that raises the overflow flag leaves every
  register of the tables as it was: the update is refused, not partly applied;
* ``threads_are_on_their_chain`` (Fig 7: the R-index links a split to the entries it will
  reconverge at, innermost first): a thread's *way* is the R-index chain from where it is (its
  split's R-index, or the entry it is parked at). Every entry on the way holds the thread in
  its reconvergence mask, and in its pending mask above where it is parked. Any other entry
  that holds it is *stale*: a branch to the return (RPC = RETURN) took the thread to its call
  entry and left it pending there; the stale entry's call context is on the way (or none: at
  the kernel's top level), and its chain meets the way only at that call entry, so that the
  return clears the thread from every stale entry at once;
* ``entries_are_well_formed``: the registers behind the tables: a split's call context and
  cached RPC are what its R-index gives (the entry itself when it is a call entry, else its
  context; its PC, NEVER for a call entry or none); PCs are aligned, an RT entry's PC is one or
  NEVER (a branch's RPC: then no thread is parked there); the R-index chains leave the table
  (no cycle); a split's threads wait all or none, and only ST entries hold waiting threads;
  the second held split only with the first.

The rules are asserted together (``check.JOINT``), each the others' strengthening, and proven
by k-induction: no reachable state breaks them, at any depth (the induction closes at 3
cycles).

Covers: a divergence (two splits in the ST), a split in the queue (an ST smaller than W), an
early reconvergence point (OREC: an RT entry whose reconvergence mask is more than its pending
mask while both splits run), a merge (OREC), a reconvergence back to one split with every live
thread after a divergence, a call entry, a pending mask larger than what names its entry, an
overflow, a barrier release.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import reduce

from amaranth.hdl import Assert, Assume, Cat, Const, Cover, Module, Mux, Value

from reconverge.golden.blocks.split_tables import SplitTablesParams
from reconverge.hdl.blocks.common import one_hot
from reconverge.hdl.blocks.split_tables import SplitTables
from reconverge.hdl.formal.check import Claim, Harness, previous, real_pc
from reconverge.hdl.formal.check import harnesses as block_harnesses
from reconverge.hdl.formal.stacks import outcome_partitions, overflow_changes_nothing_else


@dataclass(frozen=True)
class Split:
    """A split of the tables: whether it is one, its threads, R-index and call context."""

    valid: Value
    mask: Value
    rix: Value
    call: Value


@dataclass(frozen=True)
class Seen:
    """What a rule reads: the tables, their parameters and values of the cycle before."""

    dut: SplitTables
    params: SplitTablesParams
    before: dict[str, Value]

    def splits(self) -> list[Split]:
        """Every split: the ST entries, the queued splits, the held splits."""
        regs, g = self.dut.regs, self.params
        st = [Split(regs.st["v"][i], *(regs.st[f][i] for f in ("mask", "rix", "call")))
              for i in range(g.split_table)]  # fmt: skip
        queued = [Split(regs.qn > q, *(regs.q[f][q] for f in ("mask", "rix", "call")))
                  for q in range(g.queue_size)]  # fmt: skip
        held = [Split(h.valid, h.mask, h.rix, h.call) for h in self.dut.held]
        return st + queued + held

    def parked(self, j: int) -> Value:
        """The threads parked at RT entry ``j``: arrived, waiting for the pending ones."""
        rt = self.dut.regs.rt
        return Mux(rt["v"][j], rt["rmask"][j] & ~rt["pend"][j], 0)

    def inserted(self) -> dict[str, Value]:
        """The split an insertion clock inserts: the first held split, else the first RT entry
        that reconverged and has threads (the block's ``_drain`` after ``_vanish``)."""
        dut, rt = self.dut, self.dut.regs.rt
        h = dut.held[0]
        drains = [v & (p == 0) & (r != 0) for v, p, r in zip(rt["v"], rt["pend"], rt["rmask"],
                                                              strict=True)]  # fmt: skip
        first = [d & ~Cat(*drains[:j]).any() for j, d in enumerate(drains)]
        return {
            "valid": h.valid | Cat(*drains).any(),
            "pc": Mux(h.valid, h.pc, one_hot(first, rt["pc"])),
            "mask": Mux(h.valid, h.mask, one_hot(first, rt["rmask"])),
            "rix": Mux(h.valid, h.rix, one_hot(first, rt["rix"])),
        }

    def overflows(self) -> Value:
        """An outcome that needs a new RT entry while every entry is valid: a call, or a
        divergence (two targets, not a return) whose RPC is neither RETURN nor the split's
        own (golden ``SplitTables._update``)."""
        dut, g = self.dut, self.params
        out, st = dut.outcome, dut.regs.st
        targets = out.target_mask[0].any() + out.target_mask[1].any()
        call = out.call & (targets != 0)
        context = one_hot([out.slot == i for i in range(g.split_table)], st["call"])
        ret = ~call & out.ret & (context != dut.none)
        divergent = call | (~ret & (targets == 2))
        rpc = out.rpc
        new = call | (divergent & (rpc != g.return_code) & (rpc != dut.tables.st_rpc[out.slot]))
        return out.valid & new & dut.tables.rt_valid.all()

    def state(self) -> dict[str, Value]:
        """Every register of the tables (what ``overflow_changes_nothing_else`` compares)."""
        regs, out = self.dut.regs, {}
        for table in ("st", "rt", "q"):
            for field, values in getattr(regs, table).items():
                out |= {f"{table}{i}_{field}": v for i, v in enumerate(values)}
        for field in self.dut.widths["misc"]:
            out[field] = getattr(regs, field)
        for k, h in enumerate(self.dut.held):
            out |= {f"held{k}_{f}": getattr(h, f) for f in SplitTables.FIELDS}
        return out


def contract(m: Module, dut: SplitTables, params: SplitTablesParams, claim: Claim = Assume) -> None:
    """The interface contract of ``golden.blocks.split_tables`` (module docstring), each clause
    stated with ``claim``: ``Assume`` for the block's own proof, ``Assert`` where the SM drives
    the block (hdl/formal/sm.py)."""
    launch, out, lanes = dut.launch, dut.outcome, dut.release.lanes
    split_valid = dut.splits.valid.bit_select(out.slot, 1)
    split_pc, split_mask = dut.splits.pc[out.slot], dut.splits.mask[out.slot]
    m.d.comb += claim(launch.valid + out.valid + lanes.any() <= 1)
    m.d.comb += claim(~out.cont)
    with m.If(out.valid | lanes.any()):
        m.d.comb += claim(~dut.status.busy)
    with m.If(launch.valid):
        m.d.comb += claim((launch.mask != 0) & real_pc(launch.pc, params.pc_width))
    groups = outcome_partitions(m, out, split_mask, claim)
    with m.If(out.valid):
        m.d.comb += claim((out.slot < params.split_table) & split_valid)
        m.d.comb += claim(real_pc(split_pc, params.pc_width))
        with m.If(groups[0].any() & groups[1].any()):
            m.d.comb += claim(out.target_pc[0] != out.target_pc[1])
        for pc, mask in zip(out.target_pc, out.target_mask, strict=True):
            with m.If(mask.any()):
                m.d.comb += claim(pc[:2] == 0)
        with m.If(out.call & (groups[0] | groups[1]).any()):
            m.d.comb += claim(out.rpc == split_pc + 4)
        codes = (out.rpc == params.never) | (out.rpc == params.return_code)
        m.d.comb += claim(real_pc(out.rpc, params.pc_width) | codes)
    m.d.comb += claim((lanes == 0) | (lanes == dut.status.waiting))


def splits_partition_the_live_threads(m: Module, s: Seen) -> None:
    regs, g = s.dut.regs, s.params
    parts = [Mux(sp.valid, sp.mask, 0) for sp in s.splits()]
    parts += [s.parked(j) for j in range(g.reconv_table)]
    for i, a in enumerate(parts):
        for b in parts[i + 1 :]:
            m.d.comb += Assert((a & b) == 0)
    m.d.comb += Assert(reduce(Value.__or__, parts) == regs.live)
    for sp in s.splits():
        m.d.comb += Assert(~sp.valid | (sp.mask != 0))
    m.d.comb += Assert((regs.waiting & ~regs.live) == 0)
    if g.queue_size:
        m.d.comb += Assert(regs.qn <= g.queue_size)


def pending_holds_its_splits(m: Module, s: Seen) -> None:
    rt, g = s.dut.regs.rt, s.params
    none = s.dut.none

    def within(index: Value, mask: Value, call: bool) -> None:
        """The entry ``index`` names is valid (a call entry, for a call context) and holds
        ``mask`` in its pending mask."""
        with m.If(index != none):
            m.d.comb += Assert(index < g.reconv_table)
            for j in range(g.reconv_table):
                with m.If(index == j):
                    m.d.comb += Assert(rt["v"][j] & ((mask & ~rt["pend"][j]) == 0))
                    if call:
                        m.d.comb += Assert(rt["ret"][j])

    for j in range(g.reconv_table):
        with m.If(rt["v"][j]):
            m.d.comb += Assert((rt["pend"][j] & ~rt["rmask"][j]) == 0)
            within(rt["rix"][j], rt["rmask"][j], call=False)
            within(rt["call"][j], rt["rmask"][j], call=True)
    for sp in s.splits():
        with m.If(sp.valid):
            within(sp.rix, sp.mask, call=False)
            within(sp.call, sp.mask, call=True)


def entries_are_well_formed(m: Module, s: Seen) -> None:
    dut, g = s.dut, s.params
    regs, rt, none = dut.regs, dut.regs.rt, dut.none

    def entry(index: Value, field: str) -> Value:
        return one_hot([index == j for j in range(g.reconv_table)], rt[field])

    def context(index: Value) -> Value:
        """The call context of what names RT entry ``index``: the entry itself when it is a
        call entry, else its own context; none for none."""
        return Mux(index == none, none, Mux(entry(index, "ret"), index, entry(index, "call")))

    def rpc(index: Value) -> Value:
        """The RPC cached with a split of R-index ``index`` (the block's ``_rt_rpc``)."""
        found = (index != none) & entry(index, "v") & ~entry(index, "ret")
        return Mux(found, entry(index, "pc"), g.never)

    st, q = regs.st, regs.q
    cached = [(st["v"][i], st["rix"][i], st["call"][i], st["rpc"][i])
              for i in range(g.split_table)]  # fmt: skip
    cached += [(regs.qn > k, q["rix"][k], q["call"][k], q["rpc"][k]) for k in range(g.queue_size)]
    cached += [(h.valid, h.rix, h.call, h.rpc) for h in dut.held]
    for valid, rix, call, own in cached:
        with m.If(valid):
            m.d.comb += Assert((call == context(rix)) & (own == rpc(rix)))
    for i in range(g.split_table):
        with m.If(st["v"][i]):
            m.d.comb += Assert((st["bpc"][i][:2] == 0) & (st["npc"][i][:2] == 0))
            waits = st["mask"][i] & regs.waiting
            m.d.comb += Assert((waits == 0) | (waits == st["mask"][i]))
    running = reduce(Value.__or__, (Mux(v, mk, 0) for v, mk in zip(st["v"], st["mask"],
                                                                   strict=True)))  # fmt: skip
    m.d.comb += Assert((regs.waiting & ~running) == 0)
    for k in range(g.queue_size):
        with m.If(regs.qn > k):
            m.d.comb += Assert(q["pc"][k][:2] == 0)
    for h in dut.held:
        with m.If(h.valid):
            m.d.comb += Assert(h.pc[:2] == 0)
    m.d.comb += Assert(~dut.held[1].valid | dut.held[0].valid)
    for j in range(g.reconv_table):
        with m.If(rt["v"][j]):
            never = rt["pc"][j] == g.never  # (a branch's RPC of NEVER): no thread arrives
            m.d.comb += Assert((rt["pc"][j][:2] == 0) | (~rt["ret"][j] & never))
            m.d.comb += Assert(~never | (rt["rmask"][j] == rt["pend"][j]))
            m.d.comb += Assert(rt["call"][j] == context(rt["rix"][j]))
            chain = rt["rix"][j]  # no cycle: the R-index chain leaves the table
            for _ in range(g.reconv_table):
                chain = Mux(chain == none, none, entry(chain, "rix"))
            m.d.comb += Assert(chain == none)


def threads_are_on_their_chain(m: Module, s: Seen) -> None:
    dut, g = s.dut, s.params
    rt, none, n = dut.regs.rt, dut.none, g.reconv_table

    def chain(index: Value) -> list[Value]:
        """Per RT entry: whether it is on the R-index chain from ``index`` (that entry, its
        parent, ...)."""
        on = [Const(0)] * n
        for _ in range(n):
            on = [o | (index == j) for j, o in enumerate(on)]
            index = Mux(index == none, none, one_hot([index == j for j in range(n)], rt["rix"]))
        return on

    splits = [(sp, chain(sp.rix)) for sp in s.splits()]
    parked = [(s.parked(j), chain(Const(j, len(rt["rix"][j])))) for j in range(n)]
    for t in range(g.warp_size):
        way = [Const(0)] * n
        for sp, on in splits:
            way = [w | (sp.valid & sp.mask[t] & o) for w, o in zip(way, on, strict=True)]
        for here, on in parked:
            way = [w | (here[t] & o) for w, o in zip(way, on, strict=True)]
        for j in range(n):
            held, waits = rt["v"][j] & rt["rmask"][j][t], rt["pend"][j][t]
            m.d.comb += Assert(~way[j] | held)
            m.d.comb += Assert(~way[j] | s.parked(j)[t] | waits)
            context = rt["call"][j]
            left = (context == none) | one_hot([context == k for k in range(n)], way)
            m.d.comb += Assert(~held | way[j] | (waits & left))
            parent = rt["rix"][j]  # a stale entry meets the way only at its call entry
            joins = (parent != none) & one_hot([parent == k for k in range(n)], way)
            m.d.comb += Assert(~held | way[j] | ~joins | (parent == context))


def orec_merges_only_at_the_same_pc_and_entry(m: Module, s: Seen) -> None:
    st, before, g = s.dut.regs.st, s.before, s.params
    for i in range(g.split_table):
        old = before[f"st{i}_mask"]
        grew = (before[f"st{i}_v"] & st["v"][i] & ~before["launch"]
                & ((old & ~st["mask"][i]) == 0) & (st["mask"][i] != old))  # fmt: skip
        if not g.orec:
            m.d.comb += Assert(~grew)
            continue
        with m.If(grew):
            pc = before[f"st{i}_bpc"]
            m.d.comb += [
                Assert(before["inserted_valid"] & (before["inserted_pc"] == pc)),
                Assert(before["inserted_rix"] == before[f"st{i}_rix"]),
                Assert(before[f"st{i}_npc"] == pc),
                Assert((old & before["waiting"]) == 0),
                Assert(st["mask"][i] == (old | before["inserted_mask"])),
                Assert((st["bpc"][i] == pc) & (st["npc"][i] == pc)),
                Assert(st["rix"][i] == before[f"st{i}_rix"]),
            ]


def overflow_is_a_full_table(m: Module, s: Seen) -> None:
    dut, before = s.dut, s.before
    m.d.comb += Assert(dut.overflow == (~before["launch"] & (before["overflow"] | before["full"])))
    m.d.comb += Assert(dut.status.overflow == dut.overflow)


PROPERTIES: dict[str, tuple[Callable[[Module, Seen], None], str]] = {
    "splits_partition_the_live_threads": (
        splits_partition_the_live_threads,
        "seed 002 Sec 3.3.1",
    ),
    "pending_holds_its_splits": (pending_holds_its_splits, "seed 002 Sec 3.3.1, Fig 7"),
    "orec_merges_only_at_the_same_pc_and_entry": (
        orec_merges_only_at_the_same_pc_and_entry,
        "seed 002 Sec 4, Fig 11",
    ),
    "overflow_is_a_full_table": (overflow_is_a_full_table, "seed 002 Sec 5"),
    "threads_are_on_their_chain": (threads_are_on_their_chain, "seed 002 Sec 3.3.1, Fig 7"),
    "entries_are_well_formed": (entries_are_well_formed, "hdl/blocks/split_tables.py"),
    "overflow_changes_nothing_else": (overflow_changes_nothing_else, "seed 002 Sec 5"),
}


def covers(m: Module, s: Seen) -> None:
    dut, before, g = s.dut, s.before, s.params
    regs, rt = dut.regs, dut.regs.rt
    st_valid = Cat(*regs.st["v"])
    m.d.comb += Cover(sum(regs.st["v"]) >= 2)
    if g.queue_size:
        m.d.comb += Cover(regs.qn != 0)
    if g.orec:
        m.d.comb += Cover(
            Cat(v & (pend != 0) & (rmask != pend) for v, rmask, pend
                in zip(rt["v"], rt["rmask"], rt["pend"], strict=True)).any()
            & (sum(regs.st["v"]) >= 2)
        )  # fmt: skip
        m.d.comb += Cover(
            Cat(before[f"st{i}_v"] & regs.st["v"][i] & (before[f"st{i}_mask"] != 0)
                & (regs.st["mask"][i] != before[f"st{i}_mask"])
                & ((before[f"st{i}_mask"] & ~regs.st["mask"][i]) == 0)
                for i in range(g.split_table)).any()
        )  # fmt: skip
    one = sum(regs.st["v"]) == 1
    alone = one_hot(list(regs.st["v"]), regs.st["mask"]) == regs.live
    m.d.comb += Cover((before["rt"] != 0) & (sum(rt["v"]) == 0) & one & alone & (regs.live != 0))
    m.d.comb += Cover(dut.tables.rt_returns.any())
    children = [Const(0, g.warp_size)] * g.reconv_table
    for sp in s.splits():
        for j in range(g.reconv_table):
            children[j] = children[j] | Mux(sp.valid & (sp.rix == j), sp.mask, 0)
    for k in range(g.reconv_table):
        for j in range(g.reconv_table):
            children[j] = children[j] | Mux(rt["v"][k] & (rt["rix"][k] == j), rt["rmask"][k], 0)
    m.d.comb += Cover(
        Cat(v & ((pend & ~c) != 0) for v, pend, c in zip(rt["v"], rt["pend"], children,
                                                       strict=True)).any()
        & ~st_valid.all() & (regs.qn == 0) & ~dut.overflow
    )  # fmt: skip
    m.d.comb += Cover(dut.overflow)
    m.d.comb += Cover((before["waiting"] != 0) & (regs.waiting == 0) & (regs.live != 0))


def observe(m: Module, dut: SplitTables, params: SplitTablesParams) -> Seen:
    """What the rules read of the tables ``dut``, with the values of the cycle before that
    they compare with (the registers, the split an insertion clock inserts, the flags)."""
    now = Seen(dut, params, {})
    inserted = {f"inserted_{k}": v for k, v in now.inserted().items()}
    watched = {**now.state(), **inserted, "overflow": dut.overflow,
               "launch": dut.launch.valid, "rt": dut.tables.rt_valid,
               "full": now.overflows()}  # fmt: skip
    return Seen(dut, params, previous(m, watched))


def harnesses(
    params: SplitTablesParams, make: Callable[[SplitTablesParams], SplitTables] = SplitTables
) -> dict[str, Callable[[], Harness]]:
    """Per property, together, and for the covers, what builds the tables' formal top;
    ``make`` builds the block (a broken variant, in the tests)."""

    def setup(m: Module) -> tuple[Seen, Sequence[Value]]:
        m.submodules.dut = dut = make(params)
        contract(m, dut, params)
        ports = [dut.port(p.name) for p in params.flat_ports]
        return observe(m, dut, params), ports

    rules = {name: rule for name, (rule, _) in PROPERTIES.items()}
    return block_harnesses(setup, rules, covers, joint=True)
