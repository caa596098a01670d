"""What the two stack components share: decoding the update port (the kind of update, the
target groups in PC order), one-hot selection and the pop-priority encoder.
Golden counterpart: ``golden.blocks.stack_update`` (``update_kind``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from amaranth.hdl import Module, Mux, Signal, Value

from reconverge.hdl.blocks.ports import BlockComponent


def one_hot(selects: Sequence[Value], values: Sequence[Value | int]) -> Value:
    """The value whose select bit is set (selects one-hot or all zero: then 0)."""
    result = Value.cast(0)
    for sel, value in zip(selects, values, strict=True):
        result = result | Mux(sel, value, 0)
    return result


def highest_kept(m: Module, keep: Sequence[Value], width: int) -> Signal:
    """1 + the highest index whose ``keep`` bit is set, 0 when none: the depth left after
    popping every entry above the highest one that stays."""
    depth = Value.cast(0)
    for i, k in enumerate(keep):
        depth = Mux(k, i + 1, depth)
    out = Signal(width, name="kept_depth")
    m.d.comb += out.eq(depth)
    return out


def nested(sp: Value, depth: int) -> Value:
    """``sp > 1``: the top entry is not the bottom one (constant 0 for a one-entry stack, where
    Verilator would flag the comparison as constant)."""
    return sp > 1 if depth > 1 else Value.cast(0)


@dataclass
class Group:
    """A target group (pc, lane mask) and whether it is present (non-empty mask)."""

    pc: Value
    mask: Value
    present: Value


@dataclass
class Decoded:
    """The update port, decoded as ``update_kind`` does (``u`` = update).

    ``lo``/``hi``: the target groups in ascending PC order; a single group is ``lo``.
    Kinds, exclusive: ``cont``; ``call`` (with targets); ``ret`` (inside a call); ``branch``
    (two groups, or ``more``); ``jump`` (one group)."""

    lo: Group
    hi: Group
    groups: Value  # number of present groups, 0..2
    cont: Value
    call: Value
    ret: Value
    branch: Value
    jump: Value


def decode_update(m: Module, block: BlockComponent, in_call: Value) -> Decoded:
    pc0, pc1 = block.target_pc[0], block.target_pc[1]
    m0, m1 = block.target_mask[0], block.target_mask[1]
    p0, p1 = Signal(name="group0"), Signal(name="group1")
    swap = Signal(name="groups_swapped")  # group 1 alone, or below group 0
    m.d.comb += [p0.eq(m0.any()), p1.eq(m1.any()), swap.eq(~p0 | (p1 & (pc1 < pc0)))]
    lo = Group(Signal.like(pc0, name="lo_pc"), Signal.like(m0, name="lo_mask"), Signal(name="lo"))
    hi = Group(Signal.like(pc0, name="hi_pc"), Signal.like(m0, name="hi_mask"), Signal(name="hi"))
    m.d.comb += [
        lo.pc.eq(Mux(swap, pc1, pc0)),
        lo.mask.eq(Mux(swap, m1, m0)),
        lo.present.eq(p0 | p1),
        hi.pc.eq(Mux(swap, pc0, pc1)),
        hi.mask.eq(Mux(swap, m0, m1)),
        hi.present.eq(p0 & p1),
    ]
    cont, call, ret = Signal(name="kind_cont"), Signal(name="kind_call"), Signal(name="kind_ret")
    branch, jump = Signal(name="kind_branch"), Signal(name="kind_jump")
    m.d.comb += [
        cont.eq(block.cont),
        call.eq(~block.cont & block.call & lo.present),
        ret.eq(~block.cont & ~call & block.ret & in_call),
        branch.eq(~cont & ~call & ~ret & (hi.present | block.more)),
        jump.eq(~cont & ~call & ~ret & ~block.more & lo.present & ~hi.present),
    ]
    groups = Signal(range(3), name="groups")
    m.d.comb += groups.eq(p0 + p1)
    return Decoded(lo, hi, groups, cont, call, ret, branch, jump)
