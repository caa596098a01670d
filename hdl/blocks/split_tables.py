"""Warp split table (ST) and reconvergence table (RT) of Multi-Path IPDOM (seed 002 Sec 3.3.1,
Fig 7), with opportunistic early reconvergence (Sec 4) and full-table back-pressure (Sec 5).

The golden twin (``golden.blocks.split_tables``: :class:`SplitTables` is its core) defines
what one clock cycle does; this is that cycle as registers and combinational logic:

* **registers**: per ST entry valid, block PC, next PC, active mask, R-index, call context and
  the cached RPC (the PC of its RT entry, all ones for none or a call entry: the I-buffer's
  RPC of Fig 7); per RT entry valid, PC, reconvergence and pending masks, R-index, call
  context, call-entry flag; the waiting queue (a shift register, head at 0) when ST < W; the
  live and barrier-waiting masks, the sticky overflow flag, and what a continuation (``MORE``)
  cycle needs of the divergence it continues. An R-index or call context of ``reconv_table``
  means none.
The block is pipelined as its twin's cycle says: a cycle runs phase A (an operation) or
phases B and C (an insertion and the admissions), never A and B in series.

* **phase A, the operation** (from the shared divergence ports: a launch, an outcome, an
  outcome with ``cont`` = MORE, or a release): EXECUTE reads the issuing split's entry (a mux
  by ``outcome.slot``),
  removes exited threads from every entry, and — by kind — allocates the first free RT entry
  (or raises the overflow flag and changes nothing), clears pending masks (arrival, a target at
  the RPC, a return: every RT entry of the split's call context in parallel), updates the
  split's PCs, and emits up to two splits to insert (the targets in ascending PC order, or the
  split itself to re-insert with OREC), which it *holds* in registers of their own (the first
  held split first). RELEASE advances every released split and lets those at their RPC
  arrive, in parallel. LAUNCH loads a warp into ST entry 0.
* **phase B, one insertion stage** in a cycle without an operation, fed by the first held
  split or else by the first RT entry whose pending mask is zero (moved back, its RPC read
  from its parent entry), all from registers; entries without threads vanish. The stage:
  the associative search over the ST (same block PC and R-index, not waiting; first match) —
  merge when the leading split is at the same PC, else a new RT entry at its next PC (the
  early reconvergence point) — then the preferred or first free ST entry, or the queue.
* **phase C, two admission stages** after it: the queue's head into the first free ST entry.

``busy`` (a held split, an RT entry to move back, a queued split and a free entry: no
operation this cycle) and every output are functions of the registers only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from amaranth.hdl import Array, Cat, Module, Mux, Signal, Value

from reconverge.golden.blocks.split_tables import MAX_ADMITS, MAX_TARGETS, SplitTablesParams
from reconverge.hdl.blocks.common import encode, first_set_named, named, named_all, one_hot
from reconverge.hdl.blocks.ports import BlockComponent


class _State:
    """The tables as combinational values: ``st`` / ``rt`` / ``q`` map a field to one value
    per entry; the rest are single values."""

    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)

    def copy(self) -> _State:
        out = {}
        for key, value in self.__dict__.items():
            out[key] = {f: list(v) for f, v in value.items()} if isinstance(value, dict) else value
        return _State(**out)


@dataclass(eq=False)
class _Item:
    """A split to insert in the ST (block PC = next PC = ``pc``), with the ST entry it prefers
    or the RT entry it comes from (one-hot)."""

    valid: Value
    pc: Value
    mask: Value
    rix: Value
    call: Value
    rpc: Value
    prefer: list[Value] | None = None
    move: list[Value] | None = None


class SplitTables(BlockComponent):
    """Ports and parameters: :class:`reconverge.golden.blocks.split_tables.SplitTablesParams`."""

    params: SplitTablesParams

    # -- helpers -------------------------------------------------------------------------------

    def _first(self, m: Module, name: str, bits: list[Value]) -> tuple[list[Signal], Signal]:
        """One-hot of the first set bit (lowest index), and whether any is set."""
        return first_set_named(m, name, bits)

    def _name(self, m: Module, prefix: str, state: _State) -> _State:
        """Materialise every value of ``state`` as a named signal (waveforms, and a cut in the
        expression trees)."""
        out = state.copy()

        def wire(name: str, width: int, value: Value) -> Value:
            return value if isinstance(value, Signal) else named(m, name, value, width)

        for table in ("st", "rt", "q"):
            for field, values in getattr(out, table).items():
                width = self.widths[table][field]
                values[:] = [
                    wire(f"{prefix}_{table}{i}_{field}", width, v) for i, v in enumerate(values)
                ]
        for field, width in self.widths["misc"].items():
            setattr(out, field, wire(f"{prefix}_{field}", width, getattr(out, field)))
        return out

    def _index(self, values: list[Value], index: Value) -> Value:
        return Array(values)[index] if len(values) > 1 else values[0]

    def _rt_rpc(self, m: Module, name: str, s: _State, rix: Value) -> Signal:
        """The RPC a split with R-index ``rix`` reconverges at: its RT entry's PC, all ones
        when it has none or it is a call entry (reached by returning)."""
        g = self.params
        hit = named_all(m, f"{name}_hit", [rix == j for j in range(g.reconv_table)])
        is_call = one_hot(hit, s.rt["ret"])
        found = Cat(*hit).any()
        return named(m, name, Mux(found & ~is_call, one_hot(hit, s.rt["pc"]), g.never))

    # -- elaboration ---------------------------------------------------------------------------

    def __init__(self, params: SplitTablesParams) -> None:
        super().__init__(params)
        g = params
        w, p, rb = g.warp_size, g.pc_width, g.index_bits
        self.none = g.reconv_table
        self.widths = {
            "st": {"v": 1, "bpc": p, "npc": p, "mask": w, "rix": rb, "call": rb, "rpc": p},
            "rt": {"v": 1, "pc": p, "rmask": w, "pend": w, "rix": rb, "call": rb, "ret": 1},
            "q": {"pc": p, "mask": w, "rix": rb, "call": rb, "rpc": p},
            "misc": {
                "qn": max(1, g.queue_size.bit_length()),
                "live": w,
                "waiting": w,
                "cont_v": 1,
                "cont_cmp": p,
                "cont_rix": rb,
                "cont_call": rb,
                "cont_rpc": p,
            },
        }
        sizes = {"st": g.split_table, "rt": g.reconv_table, "q": g.queue_size}
        #: the tables' registers (module docstring)
        self.regs = _State(
            **{
                t: {
                    f: [Signal(width, name=f"{t}{i}_{f}") for i in range(sizes[t])]
                    for f, width in self.widths[t].items()
                }
                for t in ("st", "rt", "q")
            },
            **{f: Signal(width, name=f) for f, width in self.widths["misc"].items()},
        )
        #: the splits an operation made, inserted in the cycles after it (the first first)
        self.held = [self._held(k) for k in range(MAX_TARGETS)]
        #: the sticky overflow flag
        self.overflow = Signal(name="overflow_q")

    def elaborate(self, platform: object) -> Module:
        m = Module()
        regs, held, overflow = self.regs, self.held, self.overflow
        busy = named(m, "busy_now", held[0].valid | self._busy(regs))
        m.d.comb += self.status.busy.eq(busy)

        # phase A: the operation, whose splits are held for the cycles after it
        active = ~overflow
        a, items, ovf_now = self._operation(m, regs, named(m, "accept", active & ~busy))
        a = self._name(m, "a", a)
        operation = named(m, "operation", ~busy & (self.outcome.valid | self.release.lanes.any()))
        # phase B, in a cycle without an operation: one insertion (the first held split, else
        # the first RT entry that reconverged)
        b = self._name(m, "vanish", self._vanish(regs))
        picked = self._pick(m, "i0", held[0].valid, held[0], self._drain(m, b))
        b = self._name(m, "b0", self._insert(m, 0, b, picked))
        # phase C: admissions
        c = b
        for k in range(MAX_ADMITS):
            c = self._name(m, f"c{k}", self._admit(m, k, c))

        # registers: launch, hold on overflow, an operation, else the insertion cycle
        with m.If(self.launch.valid):
            m.d.sync += self._assign(regs, self._launched(regs))
            m.d.sync += [overflow.eq(0), *(h.valid.eq(0) for h in held)]
        with m.Elif(ovf_now):
            m.d.sync += overflow.eq(1)
        with m.Elif(active & operation):
            m.d.sync += self._assign(regs, a)
            # the first valid split first (a target at the RPC makes none)
            first = items[0].valid
            m.d.sync += self._hold(held[0], [Mux(first, x, y) for x, y in
                                             zip(self._fields(items[0]), self._fields(items[1]),
                                                 strict=True)])  # fmt: skip
            m.d.sync += self._hold(held[1], [f & first if i == 0 else f for i, f in
                                             enumerate(self._fields(items[1]))])  # fmt: skip
            if held[0].prefer is not None:
                prefer = items[0].prefer or []
                m.d.sync += [h.eq(x & first) for h, x in zip(held[0].prefer, prefer, strict=True)]
        with m.Elif(active):
            m.d.sync += self._assign(regs, c)
            m.d.sync += self._hold(held[0], self._fields(held[1]))
            m.d.sync += held[1].valid.eq(0)
            if held[0].prefer is not None:
                m.d.sync += [h.eq(0) for h in held[0].prefer]
        self._outputs(m, regs, overflow)
        return m

    #: the fields of a held split
    FIELDS = ("valid", "pc", "mask", "rix", "call", "rpc")

    def _held(self, k: int) -> _Item:
        """The registers of held split ``k`` (the first with OREC also the ST entry it
        prefers: the entry a re-inserted split had)."""
        g, w = self.params, self.widths["st"]
        widths = {"valid": 1, "pc": w["npc"], "mask": w["mask"], "rix": w["rix"],
                  "call": w["call"], "rpc": w["rpc"]}  # fmt: skip
        regs = {f: Signal(widths[f], name=f"held{k}_{f}") for f in self.FIELDS}
        prefer = None
        if g.orec and k == 0:
            prefer = [Signal(name=f"held{k}_prefer{i}") for i in range(g.split_table)]
        return _Item(**regs, prefer=prefer)

    def _fields(self, item: _Item) -> list[Value]:
        return [getattr(item, f) for f in self.FIELDS]

    def _hold(self, item: _Item, values: list[Value]) -> list[Any]:
        return [getattr(item, f).eq(v) for f, v in zip(self.FIELDS, values, strict=True)]

    def _assign(self, regs: _State, new: _State) -> list[Any]:
        stmts = []
        for table in ("st", "rt", "q"):
            for field, sigs in getattr(regs, table).items():
                stmts += [s.eq(v) for s, v in zip(sigs, getattr(new, table)[field], strict=True)]
        for field in self.widths["misc"]:
            stmts.append(getattr(regs, field).eq(getattr(new, field)))
        return stmts

    def _busy(self, s: _State) -> Value:
        moving = Cat(*(v & (pend == 0) for v, pend in zip(s.rt["v"], s.rt["pend"], strict=True)))
        waiting = Value.cast(0)
        if self.params.queue_size:
            waiting = (s.qn != 0) & ~Cat(*s.st["v"]).all()
        return moving.any() | waiting

    def _launched(self, s: _State) -> _State:
        """LAUNCH: the warp's threads ``mask`` at ``pc`` in ST entry 0, nothing else."""
        g, launch = self.params, self.launch
        out = s.copy()
        out.st["v"] = [launch.mask.any()] + [Value.cast(0)] * (g.split_table - 1)
        out.rt["v"] = [Value.cast(0)] * g.reconv_table
        first = {"bpc": launch.pc, "npc": launch.pc, "mask": launch.mask, "rix": self.none,
                 "call": self.none, "rpc": g.never}  # fmt: skip
        for field, value in first.items():
            out.st[field][0] = Value.cast(value)
        out.qn = Value.cast(0)
        out.live, out.waiting, out.cont_v = launch.mask, Value.cast(0), Value.cast(0)
        return out

    # -- phase A ---------------------------------------------------------------------------------

    def _groups(self, m: Module) -> list[tuple[Value, Value, Value]]:
        """The target groups (valid, pc, mask) in ascending PC order."""
        (pc0, pc1), (mask0, mask1) = self.outcome.target_pc, self.outcome.target_mask
        v0, v1 = mask0.any(), mask1.any()
        swap = named(m, "targets_swap", v1 & (~v0 | (pc1 < pc0)))
        return [
            (
                named(m, f"{name}_valid", Mux(swap, va, vb)),
                named(m, f"{name}_pc", Mux(swap, pa, pb)),
                named(m, f"{name}_mask", Mux(swap, ma, mb)),
            )
            for name, (va, pa, ma), (vb, pb, mb) in (
                ("target_lo", (v1, pc1, mask1), (v0, pc0, mask0)),
                ("target_hi", (v0, pc0, mask0), (v1, pc1, mask1)),
            )
        ]

    def _operation(self, m: Module, s: _State, accept: Value) -> tuple[_State, list[_Item], Value]:
        g, u, w = self.params, self.outcome, named
        lanes = self.release.lanes
        a = s.copy()
        execute = w(m, "op_execute", accept & u.valid & ~u.cont)
        do_more = w(m, "op_more", accept & u.valid & u.cont & s.cont_v)
        do_release = w(m, "op_release", accept & ~u.valid & lanes.any())
        groups = self._groups(m)
        ntargets = w(m, "targets", groups[0][0] + groups[1][0])

        # the issuing split (its entry before this cycle)
        sp = {f: w(m, f"split_{f}", self._index(s.st[f], u.slot))
              for f in ("mask", "rix", "call", "rpc")}  # fmt: skip
        mask = w(m, "split_mask_left", sp["mask"] & ~u.exited)
        call = w(m, "kind_call", u.call & (ntargets != 0))
        ret = w(m, "kind_ret", ~call & u.ret & (sp["call"] != self.none))
        divergent = w(m, "kind_divergent", call | (~ret & (ntargets == 2)))
        returns_rpc = w(m, "rpc_is_return", ~call & (u.rpc == g.return_code))
        new_entry = w(m, "new_rt_entry", call | (divergent & ~returns_rpc & (u.rpc != sp["rpc"])))
        rt_free, rt_any_free = self._first(m, "rt_free", [~v for v in s.rt["v"]])
        ovf_now = w(m, "overflow_now", execute & new_entry & ~rt_any_free)
        go = w(m, "execute_go", execute & ~ovf_now)
        alive = w(m, "split_alive", go & (mask != 0))
        sid_hit = named_all(m, "sid_hit", [u.slot == i for i in range(g.split_table)])

        # retire: exited threads leave every entry, barrier threads wait
        gone = w(m, "gone", Mux(go, u.exited, 0))
        a.live = s.live & ~gone
        waiting = Mux(do_release, s.waiting & ~lanes, s.waiting)
        a.waiting = Mux(go, s.waiting | u.barrier, waiting)
        for i in range(g.split_table):
            left = w(m, f"st{i}_left", s.st["mask"][i] & ~gone)
            a.st["mask"][i] = left
            a.st["v"][i] = s.st["v"][i] & (left != 0)
        for j in range(g.reconv_table):
            a.rt["rmask"][j] = s.rt["rmask"][j] & ~gone
            a.rt["pend"][j] = s.rt["pend"][j] & ~gone

        clear: list[Value] = [Value.cast(0)] * g.reconv_table  # threads leaving a pending mask
        leave: list[Value] = [Value.cast(0)] * g.reconv_table  # ... and a reconvergence mask
        invalidate: list[Value] = [Value.cast(0)] * g.split_table

        # return: every RT entry of the call context, then the call entry itself
        do_ret = w(m, "do_return", alive & ret)
        for j in range(g.reconv_table):
            context = w(
                m, f"ret_context{j}", do_ret & s.rt["v"][j] & (s.rt["call"][j] == sp["call"])
            )
            leave[j] = Mux(context, mask, 0)
            clear[j] = Mux(context | (do_ret & (sp["call"] == j)), mask, 0)

        # divergence (or call): a new RT entry (or the split's own / the call entry)
        do_div = w(m, "do_divergence", alive & divergent)
        rindex = Mux(new_entry, encode(rt_free), Mux(returns_rpc, sp["call"], sp["rix"]))
        rindex = w(m, "div_rindex", rindex)
        compare = w(m, "div_rpc", u.rpc)  # a call's rpc is its return address
        for j in range(g.reconv_table):
            alloc = w(m, f"div_alloc{j}", do_div & new_entry & rt_free[j])
            entry = {"v": 1, "pc": compare, "rmask": mask, "pend": mask, "rix": sp["rix"],
                     "call": sp["call"], "ret": call}  # fmt: skip
            for field, value in entry.items():
                a.rt[field][j] = Mux(alloc, value, a.rt[field][j])
        a.cont_v = Mux(do_div, 1, Mux(go | do_release, 0, s.cont_v))
        a.cont_cmp = w(m, "cont_cmp_next", Mux(do_div, compare, s.cont_cmp))
        a.cont_rix = w(m, "cont_rix_next", Mux(do_div, rindex, s.cont_rix))
        a.cont_call = w(
            m, "cont_call_next", Mux(do_div, Mux(call, rindex, sp["call"]), s.cont_call)
        )
        rpc = Mux(call | returns_rpc, g.never, u.rpc)
        a.cont_rpc = w(m, "cont_rpc_next", Mux(do_div, rpc, s.cont_rpc))

        # the targets of a divergence or a MORE cycle: at the RPC they arrive, else insert
        items = []
        targets = w(m, "insert_targets", do_div | do_more)
        for k, (valid, pc, tmask) in enumerate(groups):
            at_rpc = w(m, f"target{k}_at_rpc", targets & valid & (pc == a.cont_cmp))
            for j in range(g.reconv_table):
                clear[j] = clear[j] | Mux(at_rpc & (a.cont_rix == j), tmask, 0)
            valid = w(m, f"target{k}_insert", targets & valid & ~at_rpc)
            items.append(_Item(valid, pc, tmask, a.cont_rix, a.cont_call, a.cont_rpc))

        # one target: the split continues; it arrives at its RPC, or (OREC) is re-inserted
        do_cont = w(m, "do_continue", alive & ~divergent & ~ret & (ntargets == 1))
        target = groups[0][1]
        arrive = w(m, "cont_arrive", do_cont & (target == sp["rpc"]))
        reinsert = w(m, "cont_reinsert", do_cont & ~arrive & u.control & g.orec)
        stay = w(m, "cont_stay", do_cont & ~arrive & ~reinsert)
        for j in range(g.reconv_table):
            clear[j] = clear[j] | Mux(arrive & (sp["rix"] == j), mask, 0)
        for i in range(g.split_table):
            a.st["npc"][i] = Mux(stay & sid_hit[i], target, s.st["npc"][i])
            a.st["bpc"][i] = Mux(stay & sid_hit[i] & u.control, target, s.st["bpc"][i])
            invalidate[i] = sid_hit[i] & (do_ret | do_div | arrive | reinsert)
        if g.orec:
            item = items[0]
            items[0] = _Item(
                w(m, "item0_valid", item.valid | reinsert),
                w(m, "item0_pc", Mux(reinsert, target, item.pc)),
                w(m, "item0_mask", Mux(reinsert, mask, item.mask)),
                w(m, "item0_rix", Mux(reinsert, sp["rix"], item.rix)),
                w(m, "item0_call", Mux(reinsert, sp["call"], item.call)),
                w(m, "item0_rpc", Mux(reinsert, sp["rpc"], item.rpc)),
                prefer=named_all(m, "item0_prefer", [reinsert & hit for hit in sid_hit]),
            )

        # barrier release: the released splits advance, those at their RPC arrive
        for i in range(g.split_table):
            advance = do_release & s.st["v"][i] & (s.st["mask"][i] & lanes).any()
            after = named(m, f"release{i}_pc", s.st["npc"][i] + 4, g.pc_width)
            at_rpc = w(m, f"release{i}_arrive", advance & (after == s.st["rpc"][i]))
            a.st["npc"][i] = Mux(advance, after, a.st["npc"][i])
            invalidate[i] = invalidate[i] | at_rpc
            for j in range(g.reconv_table):
                clear[j] = clear[j] | Mux(at_rpc & (s.st["rix"][i] == j), s.st["mask"][i], 0)

        for i in range(g.split_table):
            a.st["v"][i] = a.st["v"][i] & ~invalidate[i]
        for j in range(g.reconv_table):
            a.rt["pend"][j] = a.rt["pend"][j] & ~clear[j]
            a.rt["rmask"][j] = a.rt["rmask"][j] & ~leave[j]
        return a, items, ovf_now

    # -- phase B ---------------------------------------------------------------------------------

    def _vanish(self, s: _State) -> _State:
        """RT entries without threads (all exited or returned) are dropped."""
        out = s.copy()
        out.rt["v"] = [
            v & ~((pend == 0) & (rmask == 0))
            for v, pend, rmask in zip(s.rt["v"], s.rt["pend"], s.rt["rmask"], strict=True)
        ]
        return out

    def _drain(self, m: Module, s: _State) -> _Item:
        """The first RT entry whose pending mask is zero: it moves back to the ST."""
        rt = zip(s.rt["v"], s.rt["pend"], strict=True)
        zero = named_all(m, "drain_zero", [v & (pend == 0) for v, pend in rt])
        onehot, valid = self._first(m, "drain_sel", zero)
        rix = named(m, "drain_rix", one_hot(onehot, s.rt["rix"]))
        return _Item(
            valid,
            named(m, "drain_pc", one_hot(onehot, s.rt["pc"])),
            named(m, "drain_mask", one_hot(onehot, s.rt["rmask"])),
            rix,
            named(m, "drain_call", one_hot(onehot, s.rt["call"])),
            self._rt_rpc(m, "drain_rpc", s, rix),
            move=onehot,
        )

    def _pick(self, m: Module, name: str, use_ops: Value, op: _Item, drain: _Item) -> _Item:
        fields = [
            named(m, f"{name}_{f}", Mux(use_ops, getattr(op, f), getattr(drain, f)))
            for f in ("valid", "pc", "mask", "rix", "call", "rpc")
        ]
        prefer = (
            None
            if op.prefer is None
            else named_all(m, f"{name}_prefer", [use_ops & x for x in op.prefer])
        )
        move = (
            None
            if drain.move is None
            else named_all(m, f"{name}_move", [~use_ops & x for x in drain.move])
        )
        return _Item(*fields, prefer=prefer, move=move)

    def _insert(self, m: Module, k: int, s: _State, item: _Item) -> _State:
        """One insertion stage: (a moved RT entry leaves the RT,) the associative search, then
        the preferred or first free ST entry, or the queue."""
        g, w = self.params, named
        out = s.copy()
        valid = item.valid
        if item.move is not None:
            out.rt["v"] = named_all(
                m,
                f"i{k}_rt_v",
                [v & ~(valid & mv) for v, mv in zip(s.rt["v"], item.move, strict=True)],
            )
        rix, rpc, merged = item.rix, item.rpc, Value.cast(0)
        if g.orec:
            lead, found = self._first(m, f"i{k}_lead", self._same_block(s, item))
            lead_npc = named(m, f"i{k}_lead_npc", one_hot(lead, s.st["npc"]))
            lead_mask = one_hot(lead, s.st["mask"])
            merged = w(m, f"i{k}_merge", valid & found & (lead_npc == item.pc))
            rt_free, rt_any_free = self._first(m, f"i{k}_rt_free", [~v for v in out.rt["v"]])
            early = w(m, f"i{k}_early", valid & found & ~merged & rt_any_free)
            rmask = w(m, f"i{k}_early_rmask", lead_mask | item.mask)
            entry = {"v": 1, "pc": lead_npc, "rmask": rmask, "pend": item.mask,
                     "rix": item.rix, "call": item.call, "ret": 0}  # fmt: skip
            for j in range(g.reconv_table):
                alloc = w(m, f"i{k}_early_alloc{j}", early & rt_free[j])
                for field, value in entry.items():
                    out.rt[field][j] = Mux(alloc, value, out.rt[field][j])
            for i in range(g.split_table):
                out.st["mask"][i] = Mux(
                    merged & lead[i], s.st["mask"][i] | item.mask, s.st["mask"][i]
                )
                out.st["v"][i] = w(m, f"i{k}_st{i}_v", s.st["v"][i] & ~(early & lead[i]))
            rix = w(m, f"i{k}_rix", Mux(early, encode(rt_free), rix))
            rpc = w(m, f"i{k}_rpc", Mux(early, lead_npc, rpc))
        place = w(m, f"i{k}_place", valid & ~merged)
        free = [~v for v in out.st["v"]]
        first_free, any_free = self._first(m, f"i{k}_st_free", free)
        if item.prefer is not None:
            preferred = w(
                m,
                f"i{k}_preferred",
                Cat(*(p & f for p, f in zip(item.prefer, free, strict=True))).any(),
            )
            first_free = named_all(
                m,
                f"i{k}_slot",
                [Mux(preferred, p, f) for p, f in zip(item.prefer, first_free, strict=True)],
            )
        queued = Value.cast(0)
        if g.queue_size:
            queued = s.qn != 0
        to_st = w(m, f"i{k}_to_st", place & any_free & ~queued)
        fields = {"v": 1, "bpc": item.pc, "npc": item.pc, "mask": item.mask, "rix": rix,
                  "call": item.call, "rpc": rpc}  # fmt: skip
        for i in range(g.split_table):
            write = w(m, f"i{k}_write{i}", to_st & first_free[i])
            for field, value in fields.items():
                out.st[field][i] = Mux(write, value, out.st[field][i])
        if g.queue_size:
            push = w(m, f"i{k}_push", place & ~to_st)
            entry = {"pc": item.pc, "mask": item.mask, "rix": rix, "call": item.call, "rpc": rpc}
            for q in range(g.queue_size):
                write = w(m, f"i{k}_push{q}", push & (s.qn == q))
                for field, value in entry.items():
                    out.q[field][q] = Mux(write, value, out.q[field][q])
            out.qn = s.qn + push
        return out

    def _same_block(self, s: _State, item: _Item) -> list[Value]:
        """The associative search of OREC (Sec 4): the ST entries in the block ``item``
        enters (same block PC) with its R-index, none of whose threads waits."""
        st = zip(s.st["v"], s.st["bpc"], s.st["rix"], s.st["mask"], strict=True)
        return [
            v & (bpc == item.pc) & (rix == item.rix) & ~(mask & s.waiting).any()
            for v, bpc, rix, mask in st
        ]

    # -- phase C ---------------------------------------------------------------------------------

    def _admit(self, m: Module, k: int, s: _State) -> _State:
        """The queue's head enters the first free ST entry."""
        g = self.params
        if not g.queue_size:
            return s
        out = s.copy()
        first_free, any_free = self._first(m, f"c{k}_st_free", [~v for v in s.st["v"]])
        admit = named(m, f"c{k}_admit", (s.qn != 0) & any_free)
        head = {f: values[0] for f, values in s.q.items()}
        fields = {"v": 1, "bpc": head["pc"], "npc": head["pc"], "mask": head["mask"],
                  "rix": head["rix"], "call": head["call"], "rpc": head["rpc"]}  # fmt: skip
        for i in range(g.split_table):
            write = named(m, f"c{k}_write{i}", admit & first_free[i])
            for field, value in fields.items():
                out.st[field][i] = Mux(write, value, s.st[field][i])
        for field, values in s.q.items():
            shifted = values[1:] + values[-1:]
            out.q[field] = [Mux(admit, nxt, cur) for cur, nxt in zip(values, shifted, strict=True)]
        out.qn = s.qn - admit
        return out

    # -- outputs ---------------------------------------------------------------------------------

    def _outputs(self, m: Module, s: _State, overflow: Signal) -> None:
        g = self.params
        st, rt = s.st, s.rt
        issue = named_all(
            m,
            "st_issue",
            [v & ~(mk & s.waiting).any() for v, mk in zip(st["v"], st["mask"], strict=True)],
        )
        queued = s.qn if g.queue_size else 0
        m.d.comb += [
            self.splits.valid.eq(Cat(*issue)),
            self.status.overflow.eq(overflow),
            self.status.live.eq(s.live),
            self.status.waiting.eq(s.waiting),
            self.status.st.eq(sum(st["v"]) + queued),
            self.status.rt.eq(sum(rt["v"])),
            self.status.queued.eq(queued),
            self.status.continues.eq(s.cont_v),
            self.tables.st_valid.eq(Cat(*st["v"])),
            self.tables.rt_valid.eq(Cat(*rt["v"])),
            self.tables.rt_returns.eq(
                Cat(*(v & r for v, r in zip(rt["v"], rt["ret"], strict=True)))
            ),
        ]
        for i in range(g.split_table):
            m.d.comb += [
                self.splits.pc[i].eq(Mux(issue[i], st["npc"][i], 0)),
                self.splits.mask[i].eq(Mux(issue[i], st["mask"][i], 0)),
                self.splits.sid[i].eq(Mux(issue[i], i, 0)),
            ]
            for port, field in (("st_block", "bpc"), ("st_mask", "mask"), ("st_rpc", "rpc")):
                m.d.comb += getattr(self.tables, port)[i].eq(Mux(st["v"][i], st[field][i], 0))
        for port, field in (("rt_pc", "pc"), ("rt_rmask", "rmask"), ("rt_pending", "pend")):
            for j in range(g.reconv_table):
                m.d.comb += getattr(self.tables, port)[j].eq(Mux(rt["v"][j], rt[field][j], 0))
