"""Register allocation: linear scan (Poletto and Sarkar 1999) with a budget of registers per
thread, and the divergence-aware spill rewriting of seed 004 Ch. 4 (Fig 4.3).

Every allocator assigns registers the same way: live intervals over the layout order; at an
interval's start, when no register is free, the interval (the new one or an active one) that
ends last is spilled (ties: the one that started first). A spilled register is rewritten
"everywhere": each definition is followed by a store sequence and each use preceded by a load
sequence into a short-lived temporary that is never spilled, and allocation starts over on the
rewritten code until every interval has a register (this is how the reload temporaries of
Fig 4.2 share the three registers with the other values). A register live across a call is
always spilled (a call clobbers every allocatable register).

The allocators differ only in where a spilled value goes (Fig 4.3):

============  ==============================================================================
``linear``    per-thread local memory (the thread's frame, below ``sp``): Fig 4.2
``divergent`` values the Sec 3.4 analysis calls uniform: one slot per warp in shared memory
              (row ii); the rest in local memory (Sec 4.2.1)
``remat``     no memory for constants (row i: ``v = c``) and affine values with known
              coefficients (row iii: ``v = c1*T + c2``): rematerialised at each use; the
              rest in local memory
``affine``    all four rows with the degree-2 analysis: i and iii rematerialised, uniform
              values in shared memory (ii), affine ``c*T + x`` values as their uniform part
              ``x`` in shared memory, rebuilt as ``c*T + x`` (iv); the rest in local memory
============  ==============================================================================

Parameters live in the function's frame anyway (like PTX's parameter space): spilling one costs
no store under any allocator, and each use reloads it. Shared-memory slots are reached through
``gp``, which the kernel's prologue sets to its warp's slice of the spill area (so every
allocator has the same budget of value registers; the paper's Ocelot implementation took the
base register out of the budget, Sec 5.3). Functions in a recursive cycle of the call graph keep
every spill in local memory: one slot per warp cannot hold the values of several activations.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from reconverge.golden import graphs
from reconverge.golden.compiler.errors import CompileError
from reconverge.golden.compiler.machine import (
    PURE,
    MBlock,
    MFunction,
    MInstr,
    Reg,
    VReg,
    const_sequence,
    live_after,
    liveness,
)

WORD = 4
ALLOCATORS = ("linear", "divergent", "remat", "affine")
#: Registers the allocator may use, in the order it hands them out; ``--regs N`` takes the
#: first N. x0, ra, sp and gp have fixed roles (docs/compiler.md).
POOL = (
    "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2", "a3", "a4", "a5", "a6", "a7",
    "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6", "tp",
)  # fmt: skip
MIN_REGS = 3
MAX_REGS = len(POOL)

PARAM, LOCAL, SHARED, REMAT_CONST, REMAT_AFFINE, SHARED_AFFINE = (
    "param", "local", "shared", "remat constant", "remat affine", "shared affine",
)  # fmt: skip
#: Fig 4.3 row of each placement.
ROWS = {REMAT_CONST: "i", SHARED: "ii", REMAT_AFFINE: "iii", SHARED_AFFINE: "iv"}


@dataclass(frozen=True)
class Placement:
    """Where a spilled register lives: ``kind`` and its slot (the slot's index among the
    function's local or shared slots), or the constants that rebuild it."""

    kind: str
    slot: int | None = None
    slope: int | None = None  # c in c*T + x (rows iii, iv)
    offset: int | None = None  # the constant of rows i and iii

    @property
    def memory(self) -> str | None:
        """``local``, ``shared`` or None (rematerialised, or a parameter's home)."""
        return {LOCAL: "local", SHARED: "shared", SHARED_AFFINE: "shared"}.get(self.kind)


@dataclass
class Allocation:
    """The result for one function."""

    assignment: dict[VReg, str]
    spilled: dict[VReg, Placement]
    local_slots: int
    shared_slots: int
    rounds: int
    regs: int
    allocator: str
    shared_offset: Callable[[int], int] = field(default=lambda slot: WORD * slot)
    #: How often each spill pattern was used (seed 004 Fig 5.7): (placement, ``load`` or
    #: ``store``) -> the uses (load sequences) and definitions (store sequences, or none for a
    #: rematerialised value) of spilled registers in the final code.
    patterns: Counter[tuple[str, str]] = field(default_factory=Counter)


def choose_placement(v: VReg, allocator: str, shared_ok: bool, reassigned: bool = False) -> str:
    """The Fig 4.3 rule ``allocator`` applies to a spilled ``v`` (without its slot). A
    parameter is reloaded from its home only while the function never assigns it again
    (``reassigned``): otherwise its home would hold a stale value, and it spills like any
    other value."""
    if v.home is not None and not reassigned:
        return PARAM
    state = v.state
    if allocator == "divergent":
        return SHARED if shared_ok and v.uniform else LOCAL
    if allocator in ("remat", "affine") and state is not None:
        if state.constant is not None:
            return REMAT_CONST
        if state.slope is not None and state.offset is not None:
            return REMAT_AFFINE
        if allocator == "affine" and shared_ok:
            if state.is_uniform:
                return SHARED
            if state.slope is not None:
                return SHARED_AFFINE
    return LOCAL


def shared_unsafe(fn: MFunction) -> set[VReg]:
    """Registers that must not get one slot per warp, though uniform.

    Registers are per thread; a shared slot is per warp. Take a divergent branch ``B`` with
    successors ``a`` and ``b``, and the code the threads going to ``a`` run until they
    reconverge at ``B``'s immediate postdominator (around a loop when ``B`` leaves it). A
    register live on entry to ``b`` (the other threads still need its value) and defined in
    that code keeps one value per thread in a register or local slot, but would hold only the
    last writer's value in a shared slot. Two cases of it:

    * a value uniform inside a loop that threads leave at different iterations and read
      afterwards (sumTriangle's ``d_in``, read by ``d_out = eta(d_in)``: each thread needs
      its own last iteration's value);
    * values joined by a phi into one register where one of them is live across a divergent
      branch and another defined on one side of it.

    These registers stay out of shared memory (local memory, or rematerialised)."""
    live_in, _ = liveness(fn)
    ipdom = graphs.immediate_postdominators(fn.entry, fn.succ)
    defined: dict[str, set[VReg]] = {
        label: {d for i in b.instrs for d in i.defs if isinstance(d, VReg)}
        for label, b in fn.blocks.items()
    }
    out: set[VReg] = set()
    for label, block in fn.blocks.items():
        if not any(i.is_branch and i.divergent for i in block.instrs):
            continue
        stop = ipdom[label]
        succs = fn.succ(label)
        for a in succs:
            region: set[str] = set()
            work = [a]
            while work:
                node = work.pop()
                if node == stop or node in region:
                    continue
                region.add(node)
                work.extend(fn.succ(node))
            redefined = set().union(*(defined[n] for n in region))
            for b in succs:
                if b != a:
                    out |= live_in[b] & redefined
    return out


class _Allocator:
    def __init__(self, fn: MFunction, regs: int, allocator: str, shared_ok: bool) -> None:
        if allocator not in ALLOCATORS:
            raise CompileError(f"unknown allocator {allocator!r} (one of {', '.join(ALLOCATORS)})")
        if not MIN_REGS <= regs <= MAX_REGS:
            raise CompileError(
                f"--regs {regs}: the budget is {MIN_REGS} to {MAX_REGS} registers "
                "(x0, ra, sp and gp have fixed roles)"
            )
        self.fn = fn
        self.regs = regs
        self.allocator = allocator
        self.shared_ok = shared_ok
        self.spilled: dict[VReg, Placement] = {}
        self.patterns: Counter[tuple[str, str]] = Counter()
        self.local_slots = 0
        self.shared_slots = 0
        self.shared_base: Callable[[], int] = lambda: 0
        self.unshareable = shared_unsafe(fn) if shared_ok else set()

    # -- intervals ------------------------------------------------------------------------------

    def intervals(self) -> tuple[dict[VReg, tuple[int, int]], set[VReg]]:
        """Live interval of every register over the layout order (uses at even, definitions
        at odd positions) and the registers live across a call."""
        live_in, live_out = liveness(self.fn)
        span: dict[VReg, list[int]] = {}
        across: set[VReg] = set()

        def touch(v: VReg, pos: int) -> None:
            s = span.setdefault(v, [pos, pos])
            s[0], s[1] = min(s[0], pos), max(s[1], pos)

        index = 0
        for label, block in self.fn.blocks.items():
            if not block.instrs:
                continue
            first, last = 2 * index, 2 * (index + len(block.instrs) - 1) + 1
            for v in live_in[label]:
                touch(v, first)
            for v in live_out[label]:
                touch(v, last)
            after = live_after(block, live_out[label])
            for k, ins in enumerate(block.instrs):
                pos = 2 * (index + k)
                for u in ins.uses:
                    if isinstance(u, VReg):
                        touch(u, pos)
                for d in ins.defs:
                    if isinstance(d, VReg):
                        touch(d, pos + 1)
                if ins.clobbers:
                    across |= after[k]
            index += len(block.instrs)
        return {v: (s[0], s[1]) for v, s in span.items()}, across

    def scan(self, spans: dict[VReg, tuple[int, int]]) -> tuple[dict[VReg, str], list[VReg]]:
        pool = list(POOL[: self.regs])
        rank = {r: i for i, r in enumerate(pool)}
        free = list(pool)
        active: list[VReg] = []  # in order of start
        assignment: dict[VReg, str] = {}
        spill: list[VReg] = []
        for v in sorted(spans, key=lambda r: (spans[r][0], spans[r][1], r.id)):
            start, end = spans[v]
            for a in list(active):
                if spans[a][1] < start:
                    active.remove(a)
                    free.append(assignment[a])
            free.sort(key=rank.__getitem__)
            if free:
                assignment[v] = free.pop(0)
                active.append(v)
                continue
            candidates = [a for a in active if a.spillable]
            victim = max(candidates, key=lambda a: spans[a][1], default=None)
            if victim is not None and (spans[victim][1] > end or not v.spillable):
                assignment[v] = assignment.pop(victim)
                active.remove(victim)
                active.append(v)
                spill.append(victim)
            elif v.spillable:
                spill.append(v)
            else:
                needed = len(active) + 1
                raise CompileError(
                    f"{self.fn.name}: {self.regs} registers are not enough: the spill code needs "
                    f"{needed} at once; compile with --regs {needed} or more"
                )
        return assignment, spill

    # -- spill code -----------------------------------------------------------------------------

    def place(self, v: VReg) -> Placement:
        definitions = sum(d is v for b in self.fn.blocks.values() for i in b.instrs for d in i.defs)
        kind = choose_placement(
            v, self.allocator, self.shared_ok and v not in self.unshareable, definitions > 1
        )
        state = v.state
        if kind in (LOCAL, SHARED, SHARED_AFFINE):
            if kind == LOCAL:
                slot, self.local_slots = self.local_slots, self.local_slots + 1
            else:
                slot, self.shared_slots = self.shared_slots, self.shared_slots + 1
            slope = state.slope if kind == SHARED_AFFINE and state is not None else None
            return Placement(kind, slot, slope)
        if kind == REMAT_CONST:
            return Placement(kind, offset=state.constant)  # type: ignore[union-attr]
        if kind == REMAT_AFFINE:
            return Placement(kind, slope=state.slope, offset=state.offset)  # type: ignore[union-attr]
        return Placement(kind)

    def local_offset(self, slot: int) -> int:
        return WORD * (self.fn.params + slot)

    def memory_operand(self, p: Placement, v: VReg) -> tuple[str, int | Callable[[], int]]:
        if p.kind == PARAM:
            return "sp", v.home  # type: ignore[return-value]
        if p.kind == LOCAL:
            return "sp", self.local_offset(p.slot)  # type: ignore[arg-type]
        slot = p.slot

        def shared_offset(slot: int = slot) -> int:  # type: ignore[assignment]
            return self.shared_base() + WORD * slot

        return "gp", shared_offset

    def temp(self, origin: VReg | None, tag: str) -> VReg:
        """A spill temporary. The one a definition writes (``tag`` w) is that definition of
        ``origin`` and carries its abstract state (for the soundness check); reloads do not
        define the value and carry none."""
        state = origin.state if origin is not None and tag == "w" else None
        uniform = origin.uniform if origin is not None else False
        name = f"{origin.name}.{tag}" if origin is not None else tag
        return VReg(name, state, uniform, spillable=False, origin=origin)

    def const(self, rd: Reg, value: int, kind: str) -> list[MInstr]:
        return const_sequence(rd, value, spill=kind)

    def times_tid(self, rd: VReg, c: int, kind: str) -> list[MInstr]:
        """``rd = c * T``."""
        out = [MInstr("csrr", [rd], [], target="tid", spill=kind)]
        magnitude = abs(c)
        if magnitude != 1 and magnitude & (magnitude - 1) == 0:
            out.append(MInstr("slli", [rd], [rd], imm=magnitude.bit_length() - 1, spill=kind))
            if c < 0:
                out.append(MInstr("neg", [rd], [rd], spill=kind))
        elif c == -1:
            out.append(MInstr("neg", [rd], [rd], spill=kind))
        elif c != 1:
            k = self.temp(None, "c")
            out += self.const(k, c, kind)
            out.append(MInstr("mul", [rd], [rd, k], spill=kind))
        return out

    def load_sequence(self, v: VReg, p: Placement, t: VReg) -> list[MInstr]:
        if p.kind == REMAT_CONST:
            return self.const(t, p.offset, "remat")  # type: ignore[arg-type]
        if p.kind == REMAT_AFFINE:
            out = self.times_tid(t, p.slope, "remat")  # type: ignore[arg-type]
            if p.offset:
                if -2048 <= p.offset < 2048:
                    out.append(MInstr("addi", [t], [t], imm=p.offset, spill="remat"))
                else:
                    k = self.temp(None, "c")
                    out += self.const(k, p.offset, "remat")
                    out.append(MInstr("add", [t], [t, k], spill="remat"))
            return out
        base, offset = self.memory_operand(p, v)
        kind = "param" if p.kind == PARAM else p.memory
        if p.kind == SHARED_AFFINE:
            x = self.temp(None, "x")
            load = MInstr("lw", [x], [base], imm=offset, spill=kind)
            out = [load, *self.times_tid(t, p.slope, kind)]  # type: ignore[arg-type]
            out.append(MInstr("add", [t], [t, x], spill=kind))
            return out
        return [MInstr("lw", [t], [base], imm=offset, spill=kind)]

    def store_sequence(self, v: VReg, p: Placement, t: VReg) -> list[MInstr]:
        if p.kind in (PARAM, REMAT_CONST, REMAT_AFFINE):
            return []
        base, offset = self.memory_operand(p, v)
        if p.kind == SHARED_AFFINE:
            x = self.temp(None, "x")
            out = self.times_tid(x, p.slope, "shared")  # type: ignore[arg-type]
            out.append(MInstr("sub", [x], [t, x], spill="shared"))
            out.append(MInstr("sw", [], [x, base], imm=offset, spill="shared"))
            return out
        return [MInstr("sw", [], [t, base], imm=offset, spill=p.memory)]

    def rewrite(self, victims: list[VReg]) -> None:
        new = {v: self.place(v) for v in victims}
        self.spilled.update(new)
        for block in self.fn.blocks.values():
            self.rewrite_block(block, new)

    def rewrite_block(self, block: MBlock, new: dict[VReg, Placement]) -> None:
        out: list[MInstr] = []
        for ins in block.instrs:
            defs = [d for d in ins.defs if d in new]
            self.patterns.update((new[d].kind, "store") for d in dict.fromkeys(defs))  # type: ignore[index]
            rebuilt = any(new[d].kind in (PARAM, REMAT_CONST, REMAT_AFFINE) for d in defs)  # type: ignore[index]
            if rebuilt and ins.op in PURE and len(ins.defs) == 1:
                continue  # the value is rebuilt where used: its computation is dead
            pre: list[MInstr] = []
            renamed: dict[VReg, VReg] = {}
            for u in dict.fromkeys(u for u in ins.uses if u in new):
                self.patterns[new[u].kind, "load"] += 1  # type: ignore[index]
                t = self.temp(u, "r")  # type: ignore[arg-type]
                pre += self.load_sequence(u, new[u], t)  # type: ignore[index]
                renamed[u] = t  # type: ignore[index]
            ins.uses = [renamed.get(u, u) for u in ins.uses]  # type: ignore[arg-type, misc]
            post: list[MInstr] = []
            for d in dict.fromkeys(defs):
                t = self.temp(d, "w")  # type: ignore[arg-type]
                ins.defs = [t if x is d else x for x in ins.defs]
                post += self.store_sequence(d, new[d], t)  # type: ignore[arg-type, index]
            for extra in pre + post:
                extra.pos = ins.pos
            out += [*pre, ins, *post]
        block.instrs = out

    # -- driver ---------------------------------------------------------------------------------

    def run(self) -> Allocation:
        rounds = 0
        while True:
            rounds += 1
            spans, across = self.intervals()
            # In interval order, as scan() takes them: a set of VRegs iterates in id() order,
            # which would number the local slots differently from one process to the next.
            forced = sorted(across, key=lambda r: (spans[r][0], spans[r][1], r.id))
            if forced:
                self.rewrite(forced)
                continue
            assignment, victims = self.scan(spans)
            if not victims:
                break
            self.rewrite(victims)
        return Allocation(
            assignment,
            self.spilled,
            self.local_slots,
            self.shared_slots,
            rounds,
            self.regs,
            self.allocator,
            patterns=self.patterns,
        )


def allocate(
    fn: MFunction, regs: int, allocator: str, *, shared_ok: bool, shared_base: Callable[[], int]
) -> Allocation:
    """Allocate ``fn`` in place (its spill code is inserted). ``shared_ok`` allows shared-memory
    spill slots; ``shared_base()`` gives, at emission, the byte offset of the function's first
    shared slot in its warp's slice of the spill area."""
    alloc = _Allocator(fn, regs, allocator, shared_ok)
    alloc.shared_base = shared_base
    return alloc.run()
