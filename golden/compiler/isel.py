"""Instruction selection: a function in GSA form to machine IR over virtual registers.

Out of SSA first: the values joined by a phi share a virtual register when their live ranges do
not interfere and the analyses give them the same abstract state (so ``d_in`` and ``d_out`` of
seed 004 Fig 2.2 stay apart when one is uniform and the other divergent, and can be placed in
different memories when spilled); the other phis become parallel copies at the end of the
predecessors (on split critical edges, laid out just before the join). Comparisons used only by
a branch become compare-and-branch instructions. Calls follow the memory calling convention of
docs/compiler.md: arguments are stored into the callee's frame, below the caller's ``sp``, the
result comes back in ``a0``, and a call clobbers every allocatable register.
"""

from __future__ import annotations

from collections.abc import Callable

from reconverge.golden import graphs
from reconverge.golden.compiler import int32
from reconverge.golden.compiler.analysis import FunctionAnalysis
from reconverge.golden.compiler.ir import Const, Function, Instr, Operand, Value
from reconverge.golden.compiler.machine import MBlock, MFunction, MInstr, Reg, VReg
from reconverge.golden.compiler.machine import const_sequence as constant

WORD = 4

_R_OPS = {"add": "add", "sub": "sub", "mul": "mul", "div": "div", "rem": "rem", "and": "and",
          "or": "or", "xor": "xor", "shl": "sll", "shr": "sra"}  # fmt: skip
_I_OPS = {"add": "addi", "and": "andi", "or": "ori", "xor": "xori", "shl": "slli", "shr": "srai"}
_COMMUTATIVE = frozenset({"add", "mul", "and", "or", "xor", "eq", "ne", "min", "max"})
#: Compare-and-branch for ``a OP b``: (instruction, operands swapped).
_BRANCH = {"lt": ("blt", False), "ge": ("bge", False), "gt": ("blt", True), "le": ("bge", True),
           "eq": ("beq", False), "ne": ("bne", False)}  # fmt: skip


def fits12(value: int) -> bool:
    return -2048 <= value < 2048


# ----------------------------------------------------------------------------------------------
# Coalescing


def ssa_interference(fn: Function) -> dict[Value, set[Value]]:
    """Which SSA values are live at the same time (a value interferes with everything live
    where it is defined; phi results are defined together at the top of their block; a phi's
    operand is used at the end of its predecessor)."""
    blocks = fn.blocks
    phi_uses: dict[str, set[Value]] = {label: set() for label in blocks}
    for b in blocks.values():
        for phi in b.phis:
            for arg, pred in zip(phi.args, phi.attr, strict=True):
                if isinstance(arg, Value):
                    phi_uses[pred].add(arg)
    gen: dict[str, set[Value]] = {}
    kill: dict[str, set[Value]] = {}
    for label, b in blocks.items():
        defined = {p.dest for p in b.phis}
        used: set[Value] = set()
        for ins in b.all():
            if ins.op != "phi":
                used |= set(ins.uses()) - defined  # type: ignore[operator]
                defined.add(ins.dest)
        gen[label] = used | (phi_uses[label] - defined)  # type: ignore[operator]
        kill[label] = defined - {None}  # type: ignore[operator]
    _, out = graphs.live_sets(fn.entry, fn.succ, gen, kill)  # type: ignore[arg-type]
    edges: dict[Value, set[Value]] = {}

    def conflict(a: Value, others: set[Value]) -> None:
        for o in others:
            if o is not a:
                edges.setdefault(a, set()).add(o)
                edges.setdefault(o, set()).add(a)

    for label, b in blocks.items():
        live = set(out[label]) | phi_uses[label]
        for ins in reversed([i for i in b.all() if i.op != "phi"]):
            if ins.dest is not None:
                conflict(ins.dest, live)  # type: ignore[arg-type]
                live.discard(ins.dest)
            live |= set(ins.uses())
        for phi in b.phis:
            conflict(phi.dest, live)  # type: ignore[arg-type]
    return edges


def coalesce(fa: FunctionAnalysis) -> dict[Value, Value]:
    """The representative of every value after merging non-interfering phi-related values
    with equal abstract states."""
    fn = fa.function
    edges = ssa_interference(fn)
    rep: dict[Value, Value] = {v: v for v in fn.values()}
    members: dict[Value, set[Value]] = {v: {v} for v in rep}

    def find(v: Value) -> Value:
        while rep[v] is not v:
            v = rep[v]
        return v

    def same_state(a: Value, b: Value) -> bool:
        return fa.affine[2][a] == fa.affine[2][b] and fa.simple[a] == fa.simple[b]

    for _, phi in fn.instructions():
        if phi.op != "phi":
            continue
        for arg in phi.args:
            if not isinstance(arg, Value):
                continue
            x, y = find(phi.dest), find(arg)  # type: ignore[arg-type]
            if x is y or not same_state(x, y):
                continue
            if any(edges.get(m, set()) & members[y] for m in members[x]):
                continue
            rep[y] = x
            members[x] |= members.pop(y)
    return {v: find(v) for v in rep}


# ----------------------------------------------------------------------------------------------
# Lowering


class _Lowering:
    def __init__(self, fa: FunctionAnalysis, frame_of: Callable[[str], int]) -> None:
        self.fa = fa
        self.fn = fa.function
        self.frame_of = frame_of
        self.rep = coalesce(fa)
        self.vregs: dict[Value, VReg] = {}
        self.blocks: dict[str, MBlock] = {}
        self.cur: MBlock | None = None
        self.uses = self._use_counts()
        self.calls = any(i.op == "call" for _, i in self.fn.instructions())

    def label(self, ir_label: str) -> str:
        return f"{self.fn.name}.{ir_label}"

    def _use_counts(self) -> dict[Value, int]:
        counts: dict[Value, int] = {}
        for _, ins in self.fn.instructions():
            for u in ins.uses():
                counts[u] = counts.get(u, 0) + 1
        return counts

    def vreg(self, value: Value) -> VReg:
        r = self.rep[value]
        if r not in self.vregs:
            state = self.fa.affine[2][r]
            self.vregs[r] = VReg(r.name, state, self.fa.simple[r] == "U")
        vr = self.vregs[r]
        if value not in vr.values:
            vr.values.append(value)
        return vr

    def temp(self, value: int | None = None) -> VReg:
        """A register for an intermediate result (a constant's when ``value`` is given)."""
        from reconverge.golden.compiler.affine import State

        state = State.const(2, value) if value is not None else None
        return VReg("t" if value is None else f"k{value}", state, value is not None)

    def emit(self, op: str, defs: list[Reg], uses: list[Reg], **kw: object) -> MInstr:
        ins = MInstr(op, defs, uses, **kw)  # type: ignore[arg-type]
        assert self.cur is not None
        self.cur.instrs.append(ins)
        return ins

    def load_const(self, rd: Reg, value: int, pos: object = None) -> None:
        self.cur.instrs += constant(rd, value, pos=pos)  # type: ignore[union-attr]

    def reg(self, operand: Operand, pos: object = None) -> Reg:
        """``operand`` in a register: x0 for 0, a fresh register for other constants."""
        if isinstance(operand, Value):
            return self.vreg(operand)
        if operand.value == 0:
            return "zero"
        t = self.temp(operand.value)
        self.load_const(t, operand.value, pos)
        return t

    # -- functions ------------------------------------------------------------------------------

    def run(self) -> MFunction:
        for label in self.fn.blocks:
            self.blocks[self.label(label)] = MBlock(self.label(label))
        for label, block in self.fn.blocks.items():
            self.cur = self.blocks[self.label(label)]
            for ins in block.instrs:
                if ins.op != "phi":
                    self.instr(ins)
            self.terminator(block.term, label)  # type: ignore[arg-type]
        self.phi_copies()
        exit_label = self.label(self.fn.exit) if self.fn.exit else None
        return MFunction(
            self.fn.name, self.fn.kind, self.blocks, exit_label, len(self.fn.params), self.calls
        )

    def instr(self, ins: Instr) -> None:
        op, pos = ins.op, ins.pos
        d = self.vreg(ins.dest) if ins.dest is not None else None
        a = ins.args
        if op == "mov":
            if isinstance(a[0], Const):
                self.load_const(d, a[0].value, pos)  # type: ignore[arg-type]
            else:
                self.emit("mv", [d], [self.vreg(a[0])], pos=pos)  # type: ignore[list-item]
        elif op == "param":
            d.home = WORD * ins.attr  # type: ignore[union-attr]
            self.emit("lw", [d], ["sp"], imm=WORD * ins.attr, pos=pos)  # type: ignore[list-item]
        elif op == "csr":
            self.emit("csrr", [d], [], target=ins.attr, pos=pos)  # type: ignore[list-item]
        elif op == "load":
            self.emit("lw", [d], [self.reg(a[0], pos)], imm=0, pos=pos)  # type: ignore[list-item]
        elif op == "store":
            self.emit("sw", [], [self.reg(a[1], pos), self.reg(a[0], pos)], imm=0, pos=pos)
        elif op == "atomic":
            addr, val = self.reg(a[0], pos), self.reg(a[1], pos)
            self.emit(f"amo{ins.attr}.w", [d], [addr, val], pos=pos)  # type: ignore[list-item]
        elif op == "call":
            self.call(ins, d)
        elif op == "barrier":
            self.emit("bar", [], [], pos=pos)
        elif op in int32.UNARY:
            self.unary(op, d, a[0], pos)  # type: ignore[arg-type]
        elif op in ("min", "max"):
            self.minmax(op, d, a[0], a[1], pos)  # type: ignore[arg-type]
        elif op in int32.COMPARISONS:
            if not self.fused(ins):
                self.compare(op, d, a[0], a[1], pos)  # type: ignore[arg-type]
        else:
            self.binary(op, d, a[0], a[1], pos)  # type: ignore[arg-type]

    def binary(self, op: str, d: VReg, a: Operand, b: Operand, pos: object) -> None:
        if isinstance(a, Const) and op in _COMMUTATIVE:
            a, b = b, a
        if isinstance(b, Const) and isinstance(a, Value):
            c = b.value
            if op == "sub" and fits12(-c):
                self.emit("addi", [d], [self.vreg(a)], imm=-c, pos=pos)
                return
            if op == "mul" and c > 0 and c & (c - 1) == 0:
                self.emit("slli", [d], [self.vreg(a)], imm=c.bit_length() - 1, pos=pos)
                return
            if op in ("shl", "shr"):
                self.emit(_I_OPS[op], [d], [self.vreg(a)], imm=c & 31, pos=pos)
                return
            if op in _I_OPS and fits12(c):
                self.emit(_I_OPS[op], [d], [self.vreg(a)], imm=c, pos=pos)
                return
        self.emit(_R_OPS[op], [d], [self.reg(a, pos), self.reg(b, pos)], pos=pos)

    def unary(self, op: str, d: VReg, a: Operand, pos: object) -> None:
        x = self.reg(a, pos)
        if op == "abs":
            t = self.temp()
            self.emit("srai", [t], [x], imm=31, pos=pos)
            self.emit("xor", [d], [x, t], pos=pos, partial=True)
            self.emit("sub", [d], [d, t], pos=pos)
            return
        self.emit({"neg": "neg", "inv": "not", "lnot": "seqz"}[op], [d], [x], pos=pos)

    def minmax(self, op: str, d: VReg, a: Operand, b: Operand, pos: object) -> None:
        """Branch-free: ``min = b ^ ((a ^ b) & -(a < b))``, ``max = a ^ ((a ^ b) & -(a < b))``."""
        x, y = self.reg(a, pos), self.reg(b, pos)
        t, u = self.temp(), self.temp()
        self.emit("slt", [t], [x, y], pos=pos)
        self.emit("neg", [t], [t], pos=pos)
        self.emit("xor", [u], [x, y], pos=pos)
        self.emit("and", [u], [u, t], pos=pos)
        self.emit("xor", [d], [y if op == "min" else x, u], pos=pos)

    def compare(self, op: str, d: VReg, a: Operand, b: Operand, pos: object) -> None:
        if op in ("eq", "ne"):
            t = self.temp()
            if isinstance(b, Const) and fits12(-b.value) and isinstance(a, Value):
                self.emit("addi", [t], [self.vreg(a)], imm=-b.value, pos=pos)
            else:
                self.emit("xor", [t], [self.reg(a, pos), self.reg(b, pos)], pos=pos)
            self.emit("seqz" if op == "eq" else "snez", [d], [t], pos=pos)
            return
        if op in ("gt", "le"):
            a, b = b, a  # a > b is b < a; a <= b is not (b < a)
        if isinstance(b, Const) and fits12(b.value) and isinstance(a, Value):
            first = MInstr("slti", [], [self.vreg(a)], imm=b.value, pos=pos)  # type: ignore[arg-type]
        else:
            first = MInstr("slt", [], [self.reg(a, pos), self.reg(b, pos)], pos=pos)  # type: ignore[arg-type]
        if op in ("lt", "gt"):
            first.defs = [d]
            self.cur.instrs.append(first)  # type: ignore[union-attr]
            return
        t = self.temp()
        first.defs = [t]
        self.cur.instrs.append(first)  # type: ignore[union-attr]
        self.emit("xori", [d], [t], imm=1, pos=pos)

    def fused(self, ins: Instr) -> bool:
        """Whether comparison ``ins`` is used only by its block's branch (then the branch
        compares)."""
        block = next(b for b in self.fn.blocks.values() if ins in b.instrs)
        term = block.term
        return (
            term is not None
            and term.op == "br"
            and term.args[0] is ins.dest
            and self.uses.get(ins.dest, 0) == 1  # type: ignore[arg-type]
        )

    def call(self, ins: Instr, d: VReg | None) -> None:
        callee = ins.attr
        for k, arg in enumerate(ins.args):
            r = self.reg(arg, ins.pos)

            def offset(k: int = k, callee: str = callee) -> int:
                return WORD * k - self.frame_of(callee)

            self.emit(
                "sw", [], [r, "sp"], imm=offset, pos=ins.pos, note=f"argument {k} of {callee}"
            )
        # The caller moves sp to the callee's frame *before* jumping: from the jal on, the
        # calling threads have a lower SP than the threads that did not call, so the
        # stack-less policy (min SP:PC) runs the call first even though the callee lies at
        # higher addresses (seed 000 Listing 1).
        self.emit("addi", ["sp"], ["sp"], imm=lambda: -self.frame_of(callee), pos=ins.pos)
        self.emit("jal", [], [], target=callee, pos=ins.pos, clobbers=True)
        self.emit("addi", ["sp"], ["sp"], imm=lambda: self.frame_of(callee), pos=ins.pos)
        if d is not None:
            self.emit("mv", [d], ["a0"], pos=ins.pos)

    def terminator(self, term: Instr, label: str) -> None:
        pos = term.pos
        if term.op == "jmp":
            self.emit("j", [], [], target=self.label(term.attr), pos=pos)
            return
        if term.op == "ret":
            if self.fn.kind == "kernel":
                self.emit("exit", [], [], pos=pos)
            else:
                uses: list[Reg] = [self.reg(term.args[0], pos)] if term.args else []
                if uses:
                    self.emit("mv", ["a0"], uses, pos=pos)
                self.emit("ret", [], [], pos=pos)
            return
        cond = term.args[0]
        then, other = (self.label(t) for t in term.attr)
        divergent = not self.fa.branch_uniform(label)
        block = self.fn.blocks[label]
        defining = next((i for i in block.instrs if i.dest is cond), None)
        if defining is not None and defining.op in _BRANCH and self.fused(defining):
            op, swap = _BRANCH[defining.op]
            a, b = defining.args
            if swap:
                a, b = b, a
            regs = [self.reg(a, pos), self.reg(b, pos)]
            self.emit(op, [], regs, target=then, divergent=divergent, pos=pos)
        else:
            self.emit("bnez", [], [self.reg(cond, pos)], target=then, divergent=divergent, pos=pos)
        self.emit("j", [], [], target=other, pos=pos)

    # -- out of SSA -----------------------------------------------------------------------------

    def phi_copies(self) -> None:
        for label, block in self.fn.blocks.items():
            phis = block.phis
            if not phis:
                continue
            for k, pred in enumerate(phis[0].attr):
                copies: list[tuple[VReg, Operand]] = []
                for phi in phis:
                    dest = self.vreg(phi.dest)  # type: ignore[arg-type]
                    arg = phi.args[k]
                    if isinstance(arg, Value) and self.vreg(arg) is dest:
                        continue
                    copies.append((dest, arg))
                if copies:
                    self.place_copies(self.label(pred), self.label(label), copies, phis[0].pos)

    def place_copies(
        self, pred: str, join: str, copies: list[tuple[VReg, Operand]], pos: object
    ) -> None:
        block = self.blocks[pred]
        if self.preds(join) == [pred]:
            target = self.blocks[join]
            rest, target.instrs = target.instrs, []
            self.cur = target
            self.parallel_copy(copies, pos)
            target.instrs += rest
            return
        if len(block.succs()) == 1:
            tail = block.instrs.pop()  # the jump
            self.cur = block
            self.parallel_copy(copies, pos)
            block.instrs.append(tail)
            return
        edge = f"{pred}.to.{join.rsplit('.', 1)[1]}"
        for ins in block.instrs:
            if ins.target == join and (ins.is_branch or ins.is_jump):
                ins.target = edge
        new = MBlock(edge)
        order = list(self.blocks)
        index = order.index(join)
        items = list(self.blocks.items())
        items.insert(index, (edge, new))
        self.blocks = dict(items)
        self.cur = new
        self.parallel_copy(copies, pos)
        self.emit("j", [], [], target=join)

    def preds(self, label: str) -> list[str]:
        return [b.label for b in self.blocks.values() if label in b.succs()]

    def parallel_copy(self, copies: list[tuple[VReg, Operand]], pos: object) -> None:
        """Sequentialise ``dest_i = src_i`` (all read before any is written)."""
        pending: dict[VReg, Reg | Const] = {}
        for dest, src in copies:
            pending[dest] = self.vreg(src) if isinstance(src, Value) else src
        while pending:
            sources = {s for s in pending.values() if isinstance(s, VReg)}
            ready = next((d for d in pending if d not in sources), None)
            if ready is not None:
                src = pending.pop(ready)
                if isinstance(src, Const):
                    self.load_const(ready, src.value, pos)
                else:
                    self.emit("mv", [ready], [src], pos=pos)
                continue
            # A cycle: save one destination's old value and read it from there.
            dest = next(iter(pending))
            saved = VReg(f"{dest.name}.old", None, dest.uniform)
            self.emit("mv", [saved], [dest], pos=pos)
            pending = {d: (saved if s is dest else s) for d, s in pending.items()}


def lower(fa: FunctionAnalysis, frame_of: Callable[[str], int]) -> MFunction:
    """``fa``'s function in machine IR; ``frame_of(name)`` gives a function's frame size (read
    when the code is emitted, after every function is allocated)."""
    return _Lowering(fa, frame_of).run()
