"""The divergence unit of one warp, on one signature for every policy (docs/sm-hardware.md,
"Target grouping"; golden: ``golden.sm.divergence``).

It wraps the policy's block — ``sps_stack`` (sps), ``dual_path_stack`` (dps, ppc with and
without hints), ``split_tables`` (mp, mp-orec), ``stackless`` — behind the ports the SM top
uses whatever the policy:

- ``launch``: a warp starts (threads ``mask`` at ``pc``, stack pointer ``sp``);
- ``resolve``: in the cycle before the update of an outcome the lanes resolved (a branch,
  jump, ``ecall``, stack-less sp write), the ``threads`` it sends somewhere with every
  thread's ``next_pc`` (and stack-less, ``sp_wdata``): the unit groups them (the stacks and
  tables) or keeps them (stack-less) in registers, so the update starts from registers;
- ``outcome``: the instruction split ``sid`` issued at ``pc`` with ``mask`` (``after`` = ``pc`` +
  4, computed a stage earlier): ``uniform``, the issue stage decided it alone (every thread to
  ``after``; a ``bar``'s threads in ``barrier``), else it is the resolved outcome of the
  previous cycle's ``resolve``; the
  threads that ``exited``, whether it was a ``control`` instruction, a ``call`` or a ``ret``,
  its ``rpc``, and the SP writes (``sp_we``, which only the stack-less control reads).
  ``uniform`` says which values the unit takes and may be set without ``valid`` (a fault
  withholds the update, not its kind); ``exited``, ``barrier``, ``ret`` and ``call`` are
  0 unless ``valid``, so the unit takes them as they come;
- ``release``: the block's barrier completed for these waiting ``lanes``;
- out ``splits`` (``valid``, ``sid``, ``pc``, ``mask`` per split slot), ``busy`` (the unit is still
  applying an update and exposes nothing), ``overflow``, ``live``, ``waiting``.

The stack and table blocks take at most two target groups per clock, so the unit groups the
per-thread next PCs (the lowest, second lowest and highest PC and the threads at each: from
comparisons of every two threads' PCs up to ``PAIRWISE_GROUPING`` threads, else arbiter trees,
seed 000 Fig 4b) in a stage of its own, the resolve cycle, one clock ahead of the block: one
update when the threads go to at most two PCs; an indirect jump to k > 2 PCs becomes the
sequence golden defines — for the stacks ``golden.blocks.stack_update.stack_updates`` (the
highest PCs first, then the lowest two, each once the block has settled the one before: a
dual-path stack's pops), for the split tables ``SplitTables.execute`` (ascending pairs,
``more`` cycles after the table settled), each clock's groups registered the clock before. A
return inside a call is always one update of the two lowest groups.

With ``stackless`` the ``coalesce`` group reaches the stack-less control's arbiter tree, which
the load/store unit shares (seed 000 Sec 4.3).
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from reconverge.golden.blocks.arbiter import ArbiterParams
from reconverge.golden.blocks.units import PAIRWISE_GROUPING, sm_unit
from reconverge.golden.params import PC_WIDTH, SP_WIDTH, SMParams
from reconverge.hdl.blocks.arbiter import Arbiter
from reconverge.hdl.registry import lookup


def divergence_signature(params: SMParams) -> wiring.Signature:
    """The ports every policy's unit has (seen from the unit)."""
    w, s, sid = params.geometry.warp_size, sm_unit(params).slots, sm_unit(params).sid_bits
    stackless = sm_unit(params).name == "stackless"
    resolve = {"valid": Out(1), "threads": Out(w), "next_pc": Out(data.ArrayLayout(PC_WIDTH, w))}
    if stackless:
        resolve["sp_wdata"] = Out(data.ArrayLayout(SP_WIDTH, w))
    members = {
        "launch": In(
            wiring.Signature(
                {"valid": Out(1), "mask": Out(w), "pc": Out(PC_WIDTH), "sp": Out(SP_WIDTH)}
            )
        ),
        "outcome": In(
            wiring.Signature(
                {
                    "valid": Out(1),
                    "sid": Out(sid),
                    "pc": Out(PC_WIDTH),
                    "after": Out(PC_WIDTH),
                    "mask": Out(w),
                    "control": Out(1),
                    "call": Out(1),
                    "ret": Out(1),
                    "rpc": Out(PC_WIDTH),
                    "exited": Out(w),
                    "barrier": Out(w),
                    "uniform": Out(1),
                    "sp_we": Out(w),
                }
            )
        ),
        "resolve": In(wiring.Signature(resolve)),
        "release": In(wiring.Signature({"lanes": Out(w)})),
        "splits": Out(
            wiring.Signature(
                {
                    "valid": Out(s),
                    "sid": Out(data.ArrayLayout(sid, s)),
                    "pc": Out(data.ArrayLayout(PC_WIDTH, s)),
                    "mask": Out(data.ArrayLayout(w, s)),
                }
            )
        ),
        "busy": Out(1),
        "overflow": Out(1),
        "live": Out(w),
        "waiting": Out(w),
    }
    if stackless:
        members["coalesce"] = In(
            wiring.Signature(
                {
                    "valid": Out(w),
                    "key": Out(data.ArrayLayout(params.line_key_bits, w)),
                    "granted": In(1),
                    "min_key": In(params.line_key_bits),
                    "mask": In(w),
                }
            )
        )
    return wiring.Signature(members)


#: A group in a grouping tree: (valid, PC, the threads at it among the node's leaves).
Group = tuple[Value, Value, Value]


def _lower(m: Module, name: str, x: Group, y: Group) -> tuple[Group, Value, Value]:
    """The lower of a group of a node's left leaves (``x``) and one of its right leaves
    (``y``): (the group over both, its mask both masks on a tie; x taken; a tie), with a
    comparator of its own. An invalid group loses."""
    (vx, kx, mx), (vy, ky, my) = x, y
    lt, eq = Signal(name=f"{name}_lt"), Signal(name=f"{name}_eq")
    take_x, tie = Signal(name=f"{name}_take_x"), Signal(name=f"{name}_tie")
    valid, key = Signal(name=f"{name}_v"), Signal.like(kx, name=f"{name}_pc")
    mask = Signal(len(mx) + len(my), name=f"{name}_mask")
    take_y = vy & (~vx | ~lt)
    m.d.comb += [
        lt.eq(kx < ky),
        eq.eq(kx == ky),
        take_x.eq(vx & (~vy | lt | eq)),
        tie.eq(vx & vy & eq),
        valid.eq(vx | vy),
        key.eq(Mux(take_x, kx, 0) | Mux(take_y, ky, 0)),
        mask.eq(Cat(Mux(take_x, mx, 0), Mux(take_y, my, 0))),
    ]
    return (valid, key, mask), take_x, tie


def two_lowest(m: Module, name: str, pending: Value, pcs: list[Value]) -> tuple[Group, Group]:
    """The lowest and the second lowest PC among the ``pending`` threads, each with its
    threads (masks in thread order): an arbiter tree (seed 000 Fig 4b) whose nodes carry two
    groups. A node compares its children's lowest groups and, in parallel, the three pairs the
    second lowest can come from (both seconds on a tie, else the first's second against the
    other's lowest), then selects: one comparator delay per level, where a second tree over
    the threads the first left would add a whole tree behind it."""
    w = len(pcs)
    nodes: list[tuple[Group, Group]] = [
        ((pending[t], pcs[t], pending[t]), (Const(0), Const(0, PC_WIDTH), Const(0, 1)))
        for t in range(w)
    ]  # leaves: one thread each, no second group
    level = 0
    while len(nodes) > 1:
        level += 1
        merged = []
        for i in range(len(nodes) // 2):
            (a1, a2), (b1, b2) = nodes[2 * i], nodes[2 * i + 1]
            tag = f"{name}_l{level}_{i}"
            first, a_first, tie = _lower(m, f"{tag}_first", a1, b1)
            seconds, _, _ = _lower(m, f"{tag}_seconds", a2, b2)  # on a tie of the lowest
            after_a, _, _ = _lower(m, f"{tag}_after_a", a2, b1)  # a's lowest is the lowest
            after_b, _, _ = _lower(m, f"{tag}_after_b", a1, b2)  # b's lowest is
            second = tuple(
                Mux(tie, both, Mux(a_first, x, y))
                for both, x, y in zip(seconds, after_a, after_b, strict=True)
            )
            merged.append((first, second))
        if len(nodes) % 2:
            merged.append(nodes[-1])
        nodes = merged
    return nodes[0]  # type: ignore[return-value]


def _trees(m: Module, name: str, pending: Value, pcs: list[Value]) -> list[tuple[Value, Value]]:
    """The lowest, the second lowest and the highest group (PC, threads) from trees:
    :func:`two_lowest` and an arbiter tree on the inverted PCs."""
    (_, low_pc, low_mask), (_, second_pc, second_mask) = two_lowest(m, f"{name}_low", pending, pcs)
    high = m.submodules[f"{name}_high"] = Arbiter(ArbiterParams(len(pcs), PC_WIDTH))
    for t, pc in enumerate(pcs):
        m.d.comb += high.key[t].eq(~pc)
    m.d.comb += high.valid.eq(pending)
    return [(low_pc, low_mask), (second_pc, second_mask), (~high.min_key, high.mask)]


def _ranked(m: Module, name: str, pending: Value, pcs: list[Value]) -> list[tuple[Value, Value]]:
    """The same three groups from every two threads' next PCs compared once (``below[t, u]``:
    thread t's PC is below thread u's). A pending thread is at the lowest PC when no pending
    thread's PC is below its own, at the highest when none is above it, at the second lowest
    when it is not at the lowest and no pending thread outside the lowest group is below it; a
    group's PC is the OR of its threads' PCs (all equal; 0 without threads). One comparator
    delay and a few gate levels from the inputs, where the trees take one per level."""
    w = len(pcs)
    below: dict[tuple[int, int], Value] = {}
    for t in range(w):
        for u in range(t + 1, w):
            lt, eq = Signal(name=f"{name}_{t}_lt_{u}"), Signal(name=f"{name}_{t}_eq_{u}")
            m.d.comb += [lt.eq(pcs[t] < pcs[u]), eq.eq(pcs[t] == pcs[u])]
            below[t, u], below[u, t] = lt, ~lt & ~eq

    def group(tag: str, among: Value, lower: Callable[[int, int], Value]) -> tuple[Value, Value]:
        """The threads of ``among`` that no thread of ``among`` is ``lower`` than, and their PC."""
        mask, pc = Signal(w, name=f"{name}_{tag}_mask"), Signal(PC_WIDTH, name=f"{name}_{tag}_pc")
        for t in range(w):
            beaten = Cat(among[u] & lower(u, t) for u in range(w) if u != t)
            m.d.comb += mask[t].eq(among[t] & (beaten == 0))
        held = (Mux(mask[t], pcs[t], 0) for t in range(w))
        m.d.comb += pc.eq(functools.reduce(operator.or_, held))
        return pc, mask

    low = group("low", pending, lambda u, t: below[u, t])
    second = group("second", pending & ~low[1], lambda u, t: below[u, t])
    return [low, second, group("high", pending, lambda u, t: below[t, u])]


class _Groups:
    """The target groups of a set of threads (``pending``) with their next PCs (``pcs``): the
    lowest PC, the second lowest and the highest, each with its threads; up to
    :data:`~reconverge.golden.blocks.units.PAIRWISE_GROUPING` threads from pairwise
    comparisons (:func:`_ranked`), else from trees (:func:`_trees`), or as ``pairwise`` says."""

    def __init__(
        self, m: Module, name: str, pending: Value, pcs: list[Value], pairwise: bool | None = None
    ) -> None:
        w = len(pcs)
        if pairwise is None:
            pairwise = w <= PAIRWISE_GROUPING
        (low_pc, low_mask), (second_pc, second_mask), (high_pc, high_mask) = (
            _ranked if pairwise else _trees
        )(m, name, pending, pcs)
        self.fields = {
            "low_pc": low_pc,
            "low_mask": low_mask,
            "second_pc": second_pc,
            "second_mask": second_mask,
            "high_pc": high_pc,
            "high_mask": high_mask,
            # at most two groups: the lowest and the highest take every thread
            "at_most_two": (low_mask | high_mask) == pending,
        }
        #: the threads after the highest group (the stacks' next update), after the lowest two
        #: (the tables')
        self.below_high = Signal(w, name=f"{name}_below_high")
        self.rest = Signal(w, name=f"{name}_rest")
        m.d.comb += [
            self.below_high.eq(pending & ~high_mask),
            self.rest.eq(pending & ~low_mask & ~second_mask),
        ]


def _stage_layout(warp_size: int) -> data.StructLayout:
    """The grouping stage's register: the groups of one update (:class:`_Groups`)."""
    group = {"pc": PC_WIDTH, "mask": warp_size}
    return data.StructLayout(
        {f"{which}_{k}": v for which in ("low", "second", "high") for k, v in group.items()}
        | {"at_most_two": 1}
    )


class DivergenceUnit(wiring.Component):
    """One warp's divergence unit for ``params.policy`` (module docstring)."""

    def __init__(self, params: SMParams) -> None:
        self.params = params
        #: the policy's block (its parameters ``unit``), built here so that a formal harness
        #: of the SM (``hdl/formal/sm.py``) can state its rules
        self.unit = sm_unit(params)
        self.block = lookup(self.unit.name).build(self.unit)
        super().__init__(divergence_signature(params))

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.block = block = self.block
        glue = {"stackless": self._stackless, "split_tables": self._tables}
        glue.get(self.unit.name, self._stack)(m, block)
        return m

    # -- the resolve stage: next PCs kept, threads grouped -------------------------------------
    def _resolved_pcs(self, m: Module) -> list[Signal]:
        """The resolved outcome's next PCs, kept from the resolve cycle on."""
        r = self.resolve
        pcs = [Signal(PC_WIDTH, name=f"seq_pc{t}") for t in range(self.params.geometry.warp_size)]
        with m.If(r.valid):
            m.d.sync += [pc.eq(r.next_pc[t]) for t, pc in enumerate(pcs)]
        return pcs

    def _after(self) -> Value:
        """The PC after the outcome's instruction: a decided outcome's target, a call's RPC."""
        return self.outcome.after

    def _grouping(self, m: Module, advance: Signal, below: str) -> tuple[data.View, Signal]:
        """The grouping stage: in the resolve cycle the trees group ``resolve.threads``, and
        the groups are registered (``stage``) for the update of the next cycle; an update
        spread over several clocks keeps its remaining threads (``pend``, the groups' ``below``
        threads) and groups them in the cycle the unit consumes a stage and ``advance`` says
        there is a next one, so the stage always runs one clock ahead of the block (whose
        glue knows when a stage is there to take: the outcome, a continuation)."""
        w = self.params.geometry.warp_size
        r = self.resolve
        kept = self._resolved_pcs(m)
        pend = Signal(w, name="seq_pending")
        threads = Signal(w, name="group_threads")
        m.d.comb += threads.eq(Mux(r.valid, r.threads, pend))
        pcs = [Signal(PC_WIDTH, name=f"group_pc{t}") for t in range(w)]
        m.d.comb += [pc.eq(Mux(r.valid, r.next_pc[t], kept[t])) for t, pc in enumerate(pcs)]
        groups = _Groups(m, "groups", threads, pcs)
        stage = Signal(_stage_layout(w), name="stage")
        with m.If(r.valid | advance):
            m.d.sync += [getattr(stage, k).eq(v) for k, v in groups.fields.items()]
            m.d.sync += pend.eq(getattr(groups, below))
        return stage, pend

    # -- the stack-less control --------------------------------------------------------------
    def _stackless(self, m: Module, block: wiring.Component) -> None:
        w = self.params.geometry.warp_size
        o, r = self.outcome, self.resolve
        target = self._after()
        kept = self._resolved_pcs(m)
        sp_kept = [Signal(SP_WIDTH, name=f"seq_sp{t}") for t in range(w)]
        with m.If(r.valid):
            m.d.sync += [sp.eq(r.sp_wdata[t]) for t, sp in enumerate(sp_kept)]
        going = Signal(w, name="going")
        m.d.comb += going.eq(Mux(o.valid, o.mask & ~o.exited & ~o.barrier, 0))  # 0 unless valid
        m.d.comb += [
            block.launch.valid.eq(self.launch.valid),
            block.launch.mask.eq(self.launch.mask),
            block.launch.pc.eq(self.launch.pc),
            block.launch.sp.eq(self.launch.sp),
            block.outcome.valid.eq(o.valid),
            block.outcome.control.eq(o.control),
            block.outcome.next_mask.eq(going),
            block.outcome.exited.eq(o.exited),
            block.outcome.barrier.eq(o.barrier),
            block.outcome.sp_we.eq(o.sp_we),
            block.release.lanes.eq(self.release.lanes),
        ]
        for t in range(w):
            m.d.comb += [
                block.outcome.next_pc[t].eq(Mux(o.uniform, target, kept[t])),
                block.outcome.sp_wdata[t].eq(sp_kept[t]),
            ]
        wiring.connect(m, wiring.flipped(self.coalesce), block.coalesce)
        self._splits(m, block, block.splits.valid)
        self._status(m, block.status.busy, block.status.overflow, block.status.live,
                     block.status.waiting)  # fmt: skip

    def _splits(self, m: Module, block: wiring.Component, valid: Value) -> None:
        """The block's splits, those of ``valid`` exposed."""
        for s in range(sm_unit(self.params).slots):
            m.d.comb += [
                self.splits.valid[s].eq(valid[s]),
                self.splits.sid[s].eq(block.splits.sid[s]),
                self.splits.pc[s].eq(block.splits.pc[s]),
                self.splits.mask[s].eq(block.splits.mask[s]),
            ]

    def _targets(self, m: Module, block: wiring.Component, stage: data.View, high: Value) -> None:
        """The block's two target groups: a decided outcome's one, else the stage's lowest two,
        or its highest alone where ``high``."""
        o, bo = self.outcome, block.outcome
        # a decided outcome's single group: its threads that go on (not a bar's), to PC + 4
        target = self._after()
        going = Signal(self.params.geometry.warp_size, name="decided_threads")
        m.d.comb += going.eq(o.mask & ~o.barrier)
        with m.If(o.uniform):
            m.d.comb += [bo.target_pc[0].eq(target), bo.target_mask[0].eq(going)]
        with m.Elif(high):
            m.d.comb += [bo.target_pc[0].eq(stage.high_pc), bo.target_mask[0].eq(stage.high_mask)]
        with m.Else():
            m.d.comb += [
                bo.target_pc[0].eq(stage.low_pc),
                bo.target_mask[0].eq(stage.low_mask),
                bo.target_pc[1].eq(stage.second_pc),
                bo.target_mask[1].eq(stage.second_mask),
            ]

    def _common(self, m: Module, block: wiring.Component) -> None:
        """The block's launch and release, and what an update takes from the outcome alone in
        its first clock."""
        o, bo = self.outcome, block.outcome
        m.d.comb += [
            block.launch.valid.eq(self.launch.valid),
            block.launch.mask.eq(self.launch.mask),
            block.launch.pc.eq(self.launch.pc),
            block.release.lanes.eq(self.release.lanes),
            # (the core sends exits, barrier lanes and a return only with a valid outcome,
            # never in the later clocks of an update of several target groups)
            bo.exited.eq(o.exited),
            bo.barrier.eq(o.barrier),
            bo.ret.eq(o.ret),
        ]

    # -- the SPS and dual-path stacks ----------------------------------------------------------
    def _stack(self, m: Module, block: wiring.Component) -> None:
        o, bo, busy = self.outcome, block.outcome, block.status.busy
        first = o.valid
        active = Signal(name="seq_active")  # an update of several clocks is under way
        update, step = Signal(name="update"), Signal(name="seq_step")
        # its next update follows once the block has settled the previous one (a dual-path
        # stack's pops)
        m.d.comb += [step.eq(active & ~busy), update.eq(first | step)]
        # a decided outcome, a return inside a call, or at most two groups: one update; else
        # the highest group, and the others follow, one update per clock
        single = Signal(name="single_update")
        advance = Signal(name="seq_advance")
        stage, _ = self._grouping(m, advance, "below_high")
        m.d.comb += [
            single.eq(o.uniform | stage.at_most_two | (o.ret & block.status.in_call)),
            advance.eq(update & ~single),
        ]
        later = {  # the outcome's fields for the later updates of the same instruction
            "rpc": Signal(PC_WIDTH, name="seq_rpc"),
            "call": Signal(name="seq_call"),
            "slot": Signal.like(bo.slot, name="seq_slot"),
        }
        rpc = Mux(o.call, self._after(), o.rpc)
        slot = o.sid[: len(bo.slot)]  # dual-path: the path (sid = 2 x level + path)
        with m.If(first):
            m.d.sync += [later["rpc"].eq(rpc), later["call"].eq(o.call), later["slot"].eq(slot)]
        self._common(m, block)
        m.d.comb += [
            bo.valid.eq(update),
            bo.slot.eq(Mux(first, slot, later["slot"])),
            bo.rpc.eq(Mux(first, rpc, later["rpc"])),
            bo.call.eq(Mux(first, o.call, later["call"] & step)),  # 0 unless valid
            bo.control.eq(first & o.control),
            bo.more.eq(advance),
            bo.cont.eq(step),
        ]
        self._targets(m, block, stage, ~single)
        with m.If(advance):
            m.d.sync += active.eq(1)
        with m.Elif(update | self.launch.valid):
            m.d.sync += active.eq(0)
        self._splits(m, block, Mux(active, 0, block.splits.valid))
        self._status(m, active | busy, block.status.overflow, block.status.live,
                     block.status.waiting)  # fmt: skip

    def _status(self, m: Module, busy: Value, overflow: Value, live: Value, waiting: Value) -> None:
        m.d.comb += [
            self.busy.eq(busy),
            self.overflow.eq(overflow),
            self.live.eq(live),
            self.waiting.eq(waiting),
        ]

    # -- the split and reconvergence tables ----------------------------------------------------
    def _tables(self, m: Module, block: wiring.Component) -> None:
        o, bo, busy = self.outcome, block.outcome, block.status.busy
        first = o.valid
        # further targets follow in MORE cycles (outcome with cont) once the tables settled,
        # when the update was a divergence (the tables say so: a return from a tracked call is
        # none, a return without one is an indirect jump)
        more = Signal(name="seq_more")
        more_now = Signal(name="more_now")
        m.d.comb += more_now.eq(more & block.status.continues)
        step = Signal(name="more_step")
        m.d.comb += step.eq(~first & more_now & ~busy)
        consumed = Signal(name="stage_consumed")
        m.d.comb += consumed.eq(first | step)
        advance = Signal(name="seq_advance")
        stage, pend = self._grouping(m, advance, "rest")
        m.d.comb += advance.eq(consumed & ~o.uniform & (pend != 0))
        self._common(m, block)
        m.d.comb += [
            bo.valid.eq(consumed),
            bo.cont.eq(step),
            bo.slot.eq(o.sid),
            bo.control.eq(o.control),
            bo.call.eq(first & o.call),
            bo.rpc.eq(Mux(o.call, self._after(), o.rpc)),
        ]
        self._targets(m, block, stage, Const(0))
        with m.If(self.launch.valid):
            m.d.sync += more.eq(0)
        with m.Elif(consumed):
            m.d.sync += more.eq(advance)
        with m.Elif(~more_now):
            m.d.sync += more.eq(0)
        self._splits(m, block, Mux(busy | more_now, 0, block.splits.valid))
        self._status(m, busy | more_now, block.status.overflow, block.status.live,
                     block.status.waiting)  # fmt: skip
