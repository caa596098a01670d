"""The model's inventory of the divergence units (``hdl/blocks``): the stack-less control,
the SPS and dual-path stacks, the split and reconvergence tables."""

from __future__ import annotations

from reconverge.golden.blocks import (
    DualPathStackParams,
    SplitTablesParams,
    SpsStackParams,
    StacklessParams,
)
from reconverge.golden.blocks.split_tables import MAX_ADMITS, MAX_INSERTS
from reconverge.golden.cost.datapath import arbiter, popcount
from reconverge.golden.cost.inventory import Inventory, decode, reduce, select


def stackless(p: StacklessParams) -> Inventory:
    """Seed 000 Sec 3, 4.1, Fig 2/4: every thread's PC and SP, the live, waiting and active
    masks and the common SP:PC; the arbiter tree (Fig 4b) takes min(SP:PC) over the runnable
    threads from the registers in the update's second clock, or the common PC is incremented
    locally (Sec 4.1) and every runnable thread at the new common key joins the split (after
    an SP write, in a third clock at the key the tree found). The tree serves the load/store
    unit when the control does not use it (Sec 4.3, Fig 4a)."""
    inv, w, pcw, spw = Inventory(), p.warp_size, p.pc_width, p.sp_width
    key, kw = pcw + spw, p.tree.key_width
    inv.add("threads", ff=w * key)
    # pc' = the target, PC + 4 after a release, or the PC; sp' = the written SP or the SP;
    # a launch loads both
    inv.add("threads", add=w * pcw, mux=w * (2 * pcw + spw) + w * key)
    # live, waiting and active masks: the outcome's lanes gated by its valid, the next masks
    # and the runnable ones, the launch; whether to arbitrate
    inv.add("masks", ff=3 * w, mux=4 * w, gate=9 * w + 5 * reduce(w) + 6)
    # the update's clocks: the tree's (over every runnable thread or the split's), the
    # comparison's; busy, and the split shown only when not
    inv.add("clocks", ff=3, gate=6)
    inv.include(arbiter(p.tree), "tree")
    # the tree's inputs: the threads' SP:PC and the registered runnable mask (all, or the
    # split's), or the LSU's requests
    inv.add("tree", mux=w * kw + 3 * w, gate=2 * w)
    # the common SP:PC: the tree's minimum, the local increment or the registered key (the
    # comparison's), the launch, the enable; the LSU's result gated by its grant
    inv.add("common", ff=key, add=pcw, mux=4 * key + p.coalesce_width + w)
    inv.add("joins", eq=w * key, gate=w)
    inv.add("splits", mux=pcw, gate=w)
    return inv


def sps_stack(p: SpsStackParams) -> Inventory:
    """Seed 002 Sec 2.2, Fig 3: the entries below the top (``stack_depth - 1``: the highest
    is only ever the top) of (PC, mask, RPC, call flag) and the stack pointer; a copy of the
    top entry in registers; per entry its next state (the exits, the top's new PC, up to two
    pushes at ``base``, ``base + 1``, a release's top PC + 4, one adder on the top copy); the
    pop: the new top is the highest kept of the second push, the first, the top and the
    highest kept entry below the top (a priority encoder over the registers, whose one-hot
    selects it)."""
    inv, w, d, pcw = Inventory(), p.warp_size, p.stack_depth, p.pc_width
    n = d - 1  # entries in registers
    spb = d.bit_length()  # the stack pointer, 0..d
    fields = 2 * pcw + w + 1  # an entry: PC, mask, RPC, call flag
    inv.add("entries", ff=n * fields)
    inv.add("state", ff=spb + 2 * w + 1)  # sp, waiting and live masks, overflow flag
    inv.include(_decode(w, pcw))
    inv.include(_stack_outputs(w, pcw, spb))
    # the pushes (the groups other than the RPC, the higher first), the loop-exit replacement
    # of the top entry, the push base and the overflow check; the top entry's new PC
    inv.add(
        "push",
        eq=3 * pcw,
        add=2 + 4 * spb + 1,
        mux=pcw + w + 2 * pcw,
        gate=reduce(w) + 20,
    )
    # per entry: pushed first or second (base and base + 1 decoded), its next PC (release,
    # push, top or kept, and the case's selection), mask, RPC and call flag, each loaded on
    # the update's enable; the released top's PC + 4
    inv.add(
        "update",
        add=pcw,
        mux=n * (7 * pcw + 3 * w + 7),
        gate=n * (w + 8) + decode(spb, n) + decode(spb + 1, n),
    )
    # pop: compared before selected: each entry's own PC against RETURN and its RPC, the
    # top's possible PCs (the jump's group, its own, PC + 4 after a release; the RPC's compare
    # is the replacement's) and the pushed groups against RETURN, the top's also against its
    # RPC. Below the top: kept when not empty after the exits and not done, the highest kept
    # (a priority encoder, its depth) and its fields (a one-hot select); the candidates'
    # order (second push, first, top, below) gives the new sp (sp + 1, sp + 2 or the depth
    # below; each entry's sp > i + 1)
    inv.add(
        "pop",
        eq=(n - 1) * pcw + 3 * pcw,
        add=n * spb + spb + 6,
        mux=n * spb + 2 * spb,
        gate=n * (2 * w + 2 * pcw + 22) + 4 * reduce(pcw) + 2 * w + 24,  # RETURN: constant
    )
    # the top copy and whether a call entry is on the stack: loaded with the launch's entry
    # or the new top (the pushes' group, the top's next state, the entry below), its next PC
    inv.add("top", ff=fields + 1, mux=4 * fields + 4 * pcw + w + 2 * spb, gate=2 * w + 8)
    # a launch loads the bottom entry, the top copy and the masks; waiting and live follow
    # the update or release
    inv.add("state", mux=fields + 2 * w, gate=5 * w)
    return inv


def _top(d: int, spb: int, fields: int) -> Inventory:
    """A stack's copy of its top entry in registers: loaded with the entry on top after the
    update (a one-hot select of its ``fields`` bits over the new entries) or the launch's;
    each entry's ``sp == i + 1`` (sp decoded); whether a call entry stays on the stack
    (``stack_common.in_call_after``: the entries at or below the new top, a flag register)."""
    return Inventory().add(
        "top",
        ff=fields + 1,
        add=(d - 1) * spb,
        mux=d * fields + fields + 1,
        gate=decode(spb, d) + reduce(d) * fields + 2 * d + reduce(d),
    )


def _decode(w: int, pcw: int) -> Inventory:
    """``stack_common.decode_update``: the two groups in PC order (they come in that order:
    four selections by whether the first is present), present when their masks are not
    empty, the kind of update."""
    return Inventory().add("decode", mux=2 * (pcw + w), gate=2 * reduce(w) + 16)


def _stack_outputs(w: int, pcw: int, sid: int, slots: int = 1) -> Inventory:
    """A stack's split slots from the registers (PC, mask, sid; 0 when not valid), a slot
    valid when none of its threads waits; ``sp - 1`` for the sid."""
    return Inventory().add(
        "outputs",
        add=sid,
        mux=slots * (pcw + w + sid),
        gate=slots * (w + reduce(w)) + sid + 2,
    )


def dual_path_stack(p: DualPathStackParams) -> Inventory:
    """Seed 003 Fig 4/5 (DPS: seed 002 Sec 7): the entries below the top (``stack_depth - 1``:
    the highest is only ever the top) of (RPC, call flag, current path, two paths?) and two
    paths (PC, mask, done, suspended, returned), a copy of the top entry; an update's clock
    *modifies* (per entry: a release, the push, the top's new state or the exits), each later
    clock *pops* the finished top entry (the entry below, selected by sp, resumes its
    suspended path), and every clock *chooses* (PPC: the paired-path comparison of the new
    top's two PCs) and registers whether the new top is finished. Implicit PPC has no RPCs to
    compare; a mode drops what it does not use."""
    inv, w, d, pcw = Inventory(), p.warp_size, p.stack_depth, p.pc_width
    n = d - 1  # entries in registers
    spb, sid = d.bit_length(), (2 * d - 1).bit_length()
    path = pcw + w + 3  # PC, mask, done, suspended, returned
    entry = pcw + 2 + p.paired + 2 * path  # RPC, call, two, (current), the two paths
    # a real RPC reached (explicit modes): per path of a release (its PC + 4; every entry's
    # and the top's), the resume (both PCs it may resume at, compared before the selection),
    # the top's jump and the push, against the RPCs; each RPC is neither NEVER nor RETURN
    at_rpc = 0 if p.implicit else (2 * (n + 1) + 2 * 2 + 4) * pcw
    sentinels = 0 if p.implicit else (n + 4) * decode(pcw, 2)
    inv.add("entries", ff=n * entry)
    # sp, waiting and live masks, overflow flag, the pop of the next clock
    inv.add("state", ff=spb + 2 * w + 2)
    inv.include(_decode(w, pcw))
    # two split slots: a path runnable when live, not waiting, done, suspended or returned
    inv.include(_stack_outputs(w, pcw, sid, slots=2))
    inv.add("outputs", add=sid, gate=2 * (reduce(w) + 6))
    # modify: per entry (and the top copy) the release (each running path whose threads
    # waited moves to PC + 4), the exits leaving its masks, and the choice of release, push,
    # top or kept (3 levels); the top after the modify (released, pushed or the top's new
    # state)
    inv.add(
        "modify",
        eq=at_rpc,
        add=(n + 1) * 2 * pcw,
        mux=(n + 1) * 2 * (pcw + 1) + n * 3 * entry + 2 * entry,
        gate=(n + 1) * (2 * (2 * w + reduce(w) + 4)) + sentinels,
    )
    # the top entry: the issuing path jumps, returns or is suspended at the RPC; the pushed
    # entry (the groups, or a chain entry); the waiting mask; every thread exited
    inv.add(
        "modify",
        mux=2 * (2 * pcw + 1) + 2 * path + 3 * w,
        gate=2 * w + 2 * w + 3 * w + 20 + reduce(w) + w,
    )
    if not p.implicit:  # a branch with the entry's own RPC replaces the path (Fig 5)
        inv.add(
            "replace",
            eq=3 * pcw,
            add=4,
            mux=(pcw + w) + 2 * (w + 1) + 5 * path + 2 * (pcw + w) + 1,
            gate=2 * reduce(w) + 20,
        )
    else:  # no RPC but a call's return address
        inv.add("replace", mux=pcw)
    # pop: the entry below the top (sp decoded, a one-hot select) resumes its suspended path
    # (at the return address, or implicit at the popped path's PC); sp - 1
    resume_pc = 3 if p.implicit else 1
    inv.add(
        "pop",
        add=spb,
        mux=n * entry + 2 * resume_pc * pcw + (pcw if p.implicit else 0) + 4,
        gate=decode(spb, n) + reduce(n) * entry + 4 * reduce(w) + 26,
    )
    # finished, the modified top and the resumed entry (every live path done or returned;
    # implicit: one running path, or two at one PC, none blocked)
    inv.add(
        "finished",
        eq=2 * pcw if p.implicit else 0,
        gate=2 * (4 * reduce(w) + 12 + (2 * (w + reduce(w) + 3) if p.implicit else 0)),
    )
    if p.paired:  # choose: on the top after the clock, the runnable path with the smaller
        # PC; each entry's current path
        inv.add("choose", add=2 * pcw, mux=2 * (2 + d), gate=4 * (w + reduce(w) + 5))
    # the registers: each entry (and the top copy) from the launch, the pop or the modify;
    # whether a call entry is on the stack after either
    inv.add(
        "registers",
        ff=entry + 1,
        mux=(n + 1) * 2 * entry,
        gate=2 * (2 * d + reduce(d)) + decode(spb, d) + n,
    )
    # a launch loads entry 0 and the masks
    inv.add("state", mux=entry + 2 * w + spb, gate=2 * w)
    return inv


def split_tables(p: SplitTablesParams) -> Inventory:
    """Seed 002 Sec 3.3.1, Fig 7 (OREC: Sec 4; back-pressure: Sec 5): the warp split table
    (ST), the reconvergence table (RT) and the waiting queue in flip-flops. Phase A, the
    operation: the issuing split read by its slot, exits and barriers, the RT entry a
    divergence allocates, pending masks cleared in parallel, a release's splits advanced, the
    new splits held; in a cycle without an operation phase B, one insertion stage (OREC: the
    associative search of the ST, a merge or an early reconvergence entry), fed by the first
    held split or an RT entry moving back, and phase C, two admissions from the queue."""
    inv = Inventory()
    w, s, r, pcw, rb, q = (
        p.warp_size,
        p.split_table,
        p.reconv_table,
        p.pc_width,
        p.index_bits,
        p.queue_size,
    )
    qb = max(1, q.bit_length())
    st = 1 + 3 * pcw + w + 2 * rb  # valid, block PC, next PC, mask, R-index, call, RPC
    rt = 1 + pcw + 2 * w + 2 * rb + 1  # valid, PC, R- and pending masks, R-index, call, ret
    qe = 2 * pcw + w + 2 * rb  # a queued split: PC, mask, R-index, call, RPC
    split = pcw + w + 2 * rb + 1  # a split to insert: valid, PC, mask, R-index, call, RPC
    cont = 1 + 2 * pcw + 2 * rb  # what a MORE cycle needs of its divergence
    inv.add("st", ff=s * st)
    inv.add("rt", ff=r * rt)
    inv.add("queue", ff=q * qe)
    # the queue's count, live and waiting masks, the MORE state, the overflow flag
    misc = (qb if q else 0) + 2 * w + cont
    inv.add("state", ff=misc + 1)
    # the operation's splits, held for the insertion cycles (valid, PC, mask, R-index, call,
    # RPC; with OREC the first one's preferred ST entry): loaded by an operation (the first
    # valid one first), shifted by an insertion. The second is only ever a divergence's
    # target, whose R-index, call context and RPC are the MORE state's: the same registers
    held = 1 + 2 * pcw + w + 2 * rb
    second = 1 + pcw + w
    prefer = s if p.orec else 0
    inv.add("held", ff=held + second + prefer, mux=3 * held + prefer, gate=held + 2 * prefer)
    # the insertion cycle works from the registers, beside the operation: its own tests of
    # the RT entries (no pending threads, no threads at all) and the two phases' enables
    inv.add("state", gate=r * (w + 2) + 2 * w + 56)
    # the tables' next state, the operation's or the insertion cycle's: a selection only
    # where both change a field (an ST entry's valid bit, mask and PCs; an RT entry's valid
    # bit, and with OREC, which allocates RT entries in both, all its fields; the queue's
    # count), elsewhere the insertion's multiplexers fold into it
    inv.add("state", mux=s * (1 + w + 2 * pcw) + (r * rt if p.orec else r) + (qb if q else 0))
    # phase A: the target groups in PC order; the issuing split (read by its slot); the kind
    # of update; the first free RT entry
    inv.add(
        "operation",
        add=pcw + 2,
        eq=3 * pcw + rb,
        mux=2 * (pcw + w + 1) + select(s, w + 2 * rb + pcw),
        gate=3 * reduce(w) + 2 * reduce(r) + 30,
    )
    # exits leave every entry, barrier threads wait; an ST entry without threads is freed
    inv.add("operation", mux=3 * w, gate=3 * w + s * (w + reduce(w) + 2) + r * 2 * w)
    # per RT entry: a return clears the call context's entries (the call's R-index decoded);
    # a divergence allocates it (an encoder of the free entry, a load of every field); the
    # targets at the RPC, an arrival and the released splits at theirs clear pending masks
    # (the continuing split's, the split's and each ST entry's R-index decoded)
    clears = 2 + 1 + s  # two targets, the split's arrival, each released split
    inv.add(
        "operation",
        mux=r * (2 * w + rt) + select(r, rb) + 2 * rb + cont + pcw,
        gate=r * (6 + 2 * w) + reduce(r) * rb + r * clears * (w + 1) + (2 + s) * decode(rb, r),
    )
    inv.add("operation", mux=r * clears * w)
    # the targets (at the RPC, or to insert), the continuing split (arrives, stays, OREC:
    # re-inserted); a release moves each released split to PC + 4, arriving at its RPC
    inv.add(
        "operation",
        eq=3 * pcw + s * pcw,
        add=s * pcw,
        mux=s * 3 * pcw,
        gate=12 + s * (w + reduce(w) + 8),
    )
    if p.orec:
        inv.add("operation", mux=split + pcw, gate=s)
    # phase B: RT entries without threads vanish; the first with no pending threads moves
    # back to the ST (a one-hot read of its fields, its RPC from its parent entry)
    inv.add(
        "drain",
        mux=r * (2 * pcw + w + 2 * rb + 1) + pcw,
        gate=decode(rb, r)  # the drained entry's parent (R-index) decoded
        + r * (2 * reduce(w) + 4)
        + reduce(r) * (2 * pcw + w + 2 * rb + 2)
        + 2 * r
        + reduce(r),
    )
    stages = MAX_INSERTS
    # each insertion stage: the held split or a drained one; the first free ST entry (or the
    # queue) takes it
    inv.add(
        "insert",
        eq=stages * q * qb,
        add=stages * qb,
        mux=stages * (split + s * st + q * qe),
        gate=stages * (2 * r + 2 * reduce(s) + s + q + 6),
    )
    if p.orec:  # the associative search: same block PC and R-index, not waiting; the
        # leader's next PC and mask; a merge, or an early reconvergence entry in the RT
        inv.add(
            "orec",
            eq=stages * (s * (pcw + rb) + pcw),
            mux=stages * (s * (pcw + w) + r * rt + s * w + select(r, rb) + rb + pcw),
            gate=stages
            * (
                s * (w + reduce(w) + 3)
                + 2 * reduce(s)
                + reduce(s) * (pcw + w)
                + 2 * reduce(r)
                + reduce(r) * rb
                + w
                + s * (w + 2)
                + r
                + 6
            ),
        )
    if q:  # phase C: the queue's head into the first free ST entry, the queue shifts
        inv.add(
            "admit",
            add=MAX_ADMITS * qb,
            mux=MAX_ADMITS * (s * st + q * qe),
            gate=MAX_ADMITS * (2 * reduce(s) + s + 2),
        )
    # a launch loads ST entry 0 and clears the tables
    inv.add("state", mux=s + st + r + qb + 2 * w + 1)
    # outputs: the splits that may issue (no thread waits), the tables of Fig 7 (invalid
    # entries read 0), the occupancy counts
    sid = max(1, (s - 1).bit_length())
    inv.add(
        "outputs",
        add=popcount(s) + popcount(r) + (qb if q else 0),
        mux=s * (pcw + w + sid) + s * (2 * pcw + w) + r * (pcw + 2 * w),
        gate=s * (w + reduce(w) + 1) + r * (1 + reduce(w) + 1) + reduce(r) + reduce(s) + 4,
    )
    return inv
