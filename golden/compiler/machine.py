"""Machine IR: RV32IM + SIMT instructions over virtual registers, before and during register
allocation. Every :class:`MInstr` is exactly one machine instruction (constants that need two
are split into ``lui`` + ``addi`` when lowering), so PCs can be computed from positions.

Operands are :class:`VReg` (allocated later) or physical register names (``"sp"``, ``"gp"``,
``"zero"``, ``"a0"``, ...) for the fixed roles of the calling convention.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from reconverge.golden import graphs
from reconverge.golden.asm import hi20, lo12
from reconverge.golden.compiler import int32
from reconverge.golden.compiler.affine import State
from reconverge.golden.compiler.errors import Pos
from reconverge.golden.isa import SPECS


class VReg:
    """A virtual register: one SSA value or a class of coalesced SSA values (``name``), with
    the abstract states the divergence-aware allocators read: ``state`` (degree-2 affine
    analysis) and ``uniform`` (Sec 3.4). ``home`` is the frame offset of a parameter (its
    value is always there, so spilling it needs no store). Temporaries created by spill code
    are not ``spillable``; ``origin`` is the register whose value a temporary holds."""

    __slots__ = ("home", "id", "name", "origin", "spillable", "state", "uniform", "values")
    _ids = itertools.count()

    def __init__(
        self,
        name: str,
        state: State | None = None,
        uniform: bool = False,
        *,
        home: int | None = None,
        spillable: bool = True,
        origin: VReg | None = None,
    ) -> None:
        self.id = next(VReg._ids)
        self.name = name
        self.state = state
        self.uniform = uniform
        self.home = home
        self.spillable = spillable
        self.origin = origin
        self.values: list[Any] = []  # the SSA values (golden.compiler.ir.Value) it holds

    def __repr__(self) -> str:
        return f"%{self.name}"


Reg = VReg | str

R_TYPE = frozenset(
    {"add", "sub", "mul", "div", "rem", "and", "or", "xor", "sll", "sra", "slt", "sltu"}
)
I_TYPE = frozenset({"addi", "slti", "sltiu", "xori", "ori", "andi", "slli", "srai"})
UNARY = frozenset({"mv", "neg", "not", "seqz", "snez"})
BRANCHES = frozenset({"beq", "bne", "blt", "bge", "bltu", "bgeu"})
ZERO_BRANCHES = frozenset({"beqz", "bnez"})
AMOS = frozenset(spec.name for spec in SPECS if spec.amo_op is not None)
#: Instructions without side effects: removable when nothing uses what they define.
PURE = R_TYPE | I_TYPE | UNARY | {"li", "lui", "csrr", "lw"}

INVERSE = {
    "beq": "bne", "bne": "beq", "blt": "bge", "bge": "blt", "bltu": "bgeu", "bgeu": "bltu",
    "beqz": "bnez", "bnez": "beqz",
}  # fmt: skip


@dataclass(eq=False)
class MInstr:
    """One machine instruction. ``imm`` may be a callable resolved at emission (frame sizes
    of other functions). ``divergent`` marks a conditional branch the analysis does not prove
    uniform (it gets a reconvergence hint). ``spill`` names the kind of spill code this
    instruction is part of (``local``, ``shared``, ``remat``, ``param``), if any."""

    op: str
    defs: list[Reg] = field(default_factory=list)
    uses: list[Reg] = field(default_factory=list)
    imm: int | Callable[[], int] | None = None
    target: str | None = None
    divergent: bool = False
    pos: Pos | None = None
    spill: str | None = None
    note: str = ""
    clobbers: bool = False  # a call: every allocatable register is dead after it
    partial: bool = False  # writes an intermediate value of its destination (more follow)

    @property
    def is_branch(self) -> bool:
        return self.op in BRANCHES or self.op in ZERO_BRANCHES

    @property
    def is_jump(self) -> bool:
        return self.op == "j"

    @property
    def ends_block(self) -> bool:
        return self.op in ("j", "ret") or (self.op == "ecall")

    def vregs(self) -> Iterator[VReg]:
        for r in (*self.defs, *self.uses):
            if isinstance(r, VReg):
                yield r

    def immediate(self) -> int:
        imm = self.imm
        return imm() if callable(imm) else int(imm or 0)

    def format(self, name: Callable[[Reg], str] = str) -> str:
        """Assembly text; ``name`` gives each register's name (after allocation)."""
        template = _TEMPLATES.get(self.op, "{op}")
        imm = self.immediate() if "{imm}" in template else None
        d = [name(r) for r in self.defs]
        u = [name(r) for r in self.uses]
        return template.format(op=self.op, d=d, u=u, imm=imm, target=self.target)


#: Assembly syntax of each instruction: ``d`` are the defined, ``u`` the used registers.
_TEMPLATES: dict[str, str] = {
    **dict.fromkeys(R_TYPE, "{op} {d[0]}, {u[0]}, {u[1]}"),
    **dict.fromkeys(I_TYPE, "{op} {d[0]}, {u[0]}, {imm}"),
    **dict.fromkeys(UNARY, "{op} {d[0]}, {u[0]}"),
    **dict.fromkeys(("li", "lui"), "{op} {d[0]}, {imm}"),
    **dict.fromkeys(AMOS, "{op} {d[0]}, {u[1]}, ({u[0]})"),
    **dict.fromkeys(BRANCHES, "{op} {u[0]}, {u[1]}, {target}"),
    **dict.fromkeys(ZERO_BRANCHES, "{op} {u[0]}, {target}"),
    **dict.fromkeys(("j", "rhint"), "{op} {target}"),
    "csrr": "csrr {d[0]}, {target}",
    "lw": "lw {d[0]}, {imm}({u[0]})",
    "sw": "sw {u[0]}, {imm}({u[1]})",
    "jal": "jal ra, {target}",
}


def const_sequence(rd: Reg, value: int, **kw: object) -> list[MInstr]:
    """``rd = value``: ``li`` when it fits 12 bits, else ``lui`` (+ ``addi``), as GNU ``as``
    expands ``li`` on RV32, but as separate instructions so every MInstr is one word."""
    value = int32.wrap(value)
    if -2048 <= value < 2048:
        return [MInstr("li", [rd], [], imm=value, **kw)]  # type: ignore[arg-type]
    seq = [MInstr("lui", [rd], [], imm=hi20(value), **kw)]  # type: ignore[arg-type]
    if lo12(value):
        seq[0].partial = True
        seq.append(MInstr("addi", [rd], [rd], imm=lo12(value), **kw))  # type: ignore[arg-type]
    return seq


@dataclass(eq=False)
class MBlock:
    label: str
    instrs: list[MInstr] = field(default_factory=list)

    def succs(self) -> list[str]:
        out = [i.target for i in self.instrs if i.is_branch or i.is_jump]
        return list(dict.fromkeys(t for t in out if t is not None))


@dataclass(eq=False)
class MFunction:
    """A function in machine IR: blocks in layout order, the entry first."""

    name: str
    kind: str
    blocks: dict[str, MBlock]
    exit: str | None
    params: int
    calls: bool
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def entry(self) -> str:
        return next(iter(self.blocks))

    def succ(self, label: str) -> list[str]:
        return self.blocks[label].succs()

    def instructions(self) -> Iterator[tuple[MBlock, MInstr]]:
        for b in self.blocks.values():
            for i in b.instrs:
                yield b, i

    def vregs(self) -> list[VReg]:
        return list(dict.fromkeys(r for _, i in self.instructions() for r in i.vregs()))

    def format(self, name: Callable[[Reg], str] = str) -> str:
        lines = [f"{self.kind} {self.name}:"]
        for b in self.blocks.values():
            lines.append(f"{b.label}:")
            lines += [f"    {i.format(name)}" for i in b.instrs]
        return "\n".join(lines)


def liveness(fn: MFunction) -> tuple[dict[str, set[VReg]], dict[str, set[VReg]]]:
    """Virtual registers live on entry to and on exit from each block."""
    gen: dict[str, set[VReg]] = {}
    kill: dict[str, set[VReg]] = {}
    for label, b in fn.blocks.items():
        g: set[VReg] = set()
        k: set[VReg] = set()
        for ins in b.instrs:
            g |= {u for u in ins.uses if isinstance(u, VReg) and u not in k}
            k |= {d for d in ins.defs if isinstance(d, VReg)}
        gen[label], kill[label] = g, k
    return graphs.live_sets(fn.entry, fn.succ, gen, kill)  # type: ignore[return-value]


def live_after(block: MBlock, live_out: set[VReg]) -> list[set[VReg]]:
    """The virtual registers live right after each instruction of ``block``."""
    live = set(live_out)
    after: list[set[VReg]] = [set()] * len(block.instrs)
    for k in range(len(block.instrs) - 1, -1, -1):
        ins = block.instrs[k]
        after[k] = set(live)
        live -= {d for d in ins.defs if isinstance(d, VReg)}
        live |= {u for u in ins.uses if isinstance(u, VReg)}
    return after
