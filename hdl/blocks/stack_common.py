"""What the two stack components share: decoding the ``outcome`` group (the kind of update,
the target groups in PC order; golden counterpart: ``golden.blocks.stack_update``,
``update_kind``) and driving the ``splits`` and ``status`` outputs from the registers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from amaranth.hdl import Cat, Module, Mux, Signal, Value

from reconverge.hdl.blocks.ports import BlockComponent


def split_outputs(
    block: BlockComponent, slot: int, valid: Value, pc: Value, mask: Value, sid: Value
) -> list[Any]:
    """The ``splits`` outputs of one slot: its PC, mask and sid, 0 when not valid."""
    splits = block.splits  # type: ignore[attr-defined]
    return [
        splits.valid[slot].eq(valid),
        splits.pc[slot].eq(Mux(valid, pc, 0)),
        splits.mask[slot].eq(Mux(valid, mask, 0)),
        splits.sid[slot].eq(Mux(valid, sid, 0)),
    ]


def status_outputs(
    block: BlockComponent, live: Value, waiting: Value, sp: Value, in_call: Value, overflow: Value
) -> list[Any]:
    """The ``status`` outputs of a stack (never busy: one update per clock)."""
    status = block.status  # type: ignore[attr-defined]
    return [
        status.live.eq(live),
        status.waiting.eq(waiting),
        status.stack.eq(sp),
        status.in_call.eq(in_call),
        status.overflow.eq(overflow),
    ]


def in_call_after(calls: list[Value], tops: list[Value]) -> Value:
    """Whether a call entry is on the stack after a clock whose pops leave entry ``i`` on top
    where ``tops[i]`` (at most one set, or the kept entries): the next ``status.in_call``,
    registered so that a return's decode starts at a flip-flop. An entry stays when it or an
    entry above it is the top."""
    stays, above = [], Value.cast(0)
    for top in reversed(tops):
        above = above | top
        stays.append(above)
    return Cat(*(c & k for c, k in zip(calls, reversed(stays), strict=True))).any()


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

    ``lo``/``hi``: the target groups in ascending PC order (the order the port takes two
    groups in); a single group is ``lo``.
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
    u = block.outcome  # type: ignore[attr-defined]
    pc0, pc1 = u.target_pc[0], u.target_pc[1]
    m0, m1 = u.target_mask[0], u.target_mask[1]
    p0, p1 = Signal(name="group0"), Signal(name="group1")
    # two groups come in ascending PC order (the port's contract): no comparator
    swap = Signal(name="groups_swapped")  # group 1 alone
    m.d.comb += [p0.eq(m0.any()), p1.eq(m1.any()), swap.eq(~p0)]
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
        cont.eq(u.cont),
        call.eq(~u.cont & u.call & lo.present),
        ret.eq(~u.cont & ~call & u.ret & in_call),
        branch.eq(~cont & ~call & ~ret & (hi.present | u.more)),
        jump.eq(~cont & ~call & ~ret & ~u.more & lo.present & ~hi.present),
    ]
    groups = Signal(range(3), name="groups")
    m.d.comb += groups.eq(p0 + p1)
    return Decoded(lo, hi, groups, cont, call, ret, branch, jump)
