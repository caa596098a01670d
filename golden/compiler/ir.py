"""The compiler's intermediate representation: functions made of basic blocks of three-address
instructions over int32 values, first on source variables (what the front end emits), then in
SSA form (:mod:`~reconverge.golden.compiler.ssa`) and gated SSA form
(:mod:`~reconverge.golden.compiler.gsa`).

Instructions (``dest = op args``):

==========================  ==================================================================
``mov a``                   copy (a constant or a value)
``add sub mul div rem and   binary int32 operations (:data:`int32.BINARY`), comparisons give
or xor shl shr lt le gt ge  0 or 1
eq ne min max``
``neg inv lnot abs``        unary operations (:data:`int32.UNARY`)
``csr NAME``                thread/block identity (``tid``, ``ntid``, ... of docs/isa.md)
``param K``                 the K-th parameter of the function
``load addr``               the word at ``addr``
``store addr, v``           (no dest) write ``v`` at ``addr``
``atomic OP addr, v``       AMO ``OP`` (``golden.memory.AMO_OPS``) at ``addr``; the old value
``call F args``             call device function ``F``; its return value (if any)
``barrier``                 (no dest) block-wide barrier
``phi a@B1, b@B2, ...``     SSA join: the value coming from predecessor ``Bi``
==========================  ==================================================================

Terminators: ``jmp B``, ``br c, T, F`` (to ``T`` when ``c != 0``), ``ret [v]``.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from reconverge.golden.compiler.errors import Pos


class Value:
    """An int32 value. Before SSA construction a source variable is one Value assigned many
    times (``var`` is its name); afterwards every Value is assigned once, and ``var`` names the
    source variable it is a version of (None for temporaries)."""

    __slots__ = ("id", "name", "var")
    _ids = itertools.count()

    def __init__(self, name: str, var: str | None = None) -> None:
        self.id = next(Value._ids)
        self.name = name
        self.var = var

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True)
class Const:
    value: int

    def __repr__(self) -> str:
        return str(self.value)


Operand = Value | Const

#: Instructions without a result that must stay even when nothing uses them.
EFFECTS = frozenset({"store", "atomic", "call", "barrier"})
TERMINATORS = frozenset({"jmp", "br", "ret"})


@dataclass(eq=False)
class Instr:
    """One instruction. ``attr`` holds the operation's static operand: the CSR name, the
    parameter index, the atomic operation, the callee's name, the predecessor labels of a phi,
    the target labels of a terminator. ``gsa`` is filled by the GSA pass for phis."""

    op: str
    dest: Value | None
    args: list[Operand]
    attr: Any = None
    pos: Pos | None = None
    gsa: Any = None

    def uses(self) -> Iterator[Value]:
        for a in self.args:
            if isinstance(a, Value):
                yield a

    def __str__(self) -> str:
        return format_instr(self)


def format_instr(ins: Instr) -> str:
    args = ", ".join(map(repr, ins.args))
    if ins.op == "phi" and ins.gsa is not None:
        text = ins.gsa.format(ins.args)  # mu / gamma / eta (golden.compiler.gsa.Gate)
    elif ins.op == "phi":
        text = "phi " + ", ".join(f"{a!r}@{b}" for a, b in zip(ins.args, ins.attr, strict=True))
    elif ins.op == "jmp":
        text = f"jmp {ins.attr}"
    elif ins.op == "br":
        text = f"br {args}, {ins.attr[0]}, {ins.attr[1]}"
    elif ins.op in ("csr", "param", "call", "atomic"):
        text = f"{ins.op} {ins.attr}" + (f" {args}" if args else "")
    else:
        text = f"{ins.op} {args}" if args else ins.op
    return f"{ins.dest!r} = {text}" if ins.dest is not None else text


@dataclass(eq=False)
class Block:
    label: str
    instrs: list[Instr] = field(default_factory=list)
    term: Instr | None = None

    def succs(self) -> list[str]:
        if self.term is None or self.term.op == "ret":
            return []
        if self.term.op == "jmp":
            return [self.term.attr]
        then, other = self.term.attr
        return [then] if then == other else [then, other]

    @property
    def phis(self) -> list[Instr]:
        return [i for i in self.instrs if i.op == "phi"]

    def all(self) -> Iterator[Instr]:
        yield from self.instrs
        if self.term is not None:
            yield self.term


@dataclass(frozen=True)
class Param:
    name: str
    kind: str  # "int" or "array"
    pos: Pos


@dataclass(frozen=True)
class SharedArray:
    name: str
    words: int
    offset: int  # bytes from the start of the shared window
    pos: Pos


@dataclass(eq=False)
class Function:
    """A kernel or device function. ``blocks`` is in layout order (the order the code is
    emitted in); ``entry`` is the first block and ``exit`` the single block that returns."""

    name: str
    kind: str  # "kernel" or "device"
    params: list[Param]
    blocks: dict[str, Block]
    entry: str
    exit: str
    returns: bool
    pos: Pos
    shared: dict[str, SharedArray] = field(default_factory=dict)
    #: The source variables (before SSA construction; emptied by it).
    variables: set[Value] = field(default_factory=set)

    def succ(self, label: str) -> list[str]:
        return self.blocks[label].succs()

    def instructions(self) -> Iterator[tuple[Block, Instr]]:
        for block in self.blocks.values():
            for ins in block.all():
                yield block, ins

    def values(self) -> list[Value]:
        """Every value defined in the function, in layout order."""
        return [i.dest for _, i in self.instructions() if i.dest is not None]

    def defs(self) -> dict[Value, tuple[Block, Instr]]:
        return {i.dest: (b, i) for b, i in self.instructions() if i.dest is not None}

    def callees(self) -> list[str]:
        return list(dict.fromkeys(i.attr for _, i in self.instructions() if i.op == "call"))

    def signature(self) -> str:
        params = ", ".join(
            f"{p.name}: {'Array' if p.kind == 'array' else 'int'}" for p in self.params
        )
        return f"{self.kind} {self.name}({params})"

    def format(self, annotate: Any = None) -> str:
        """The function as text; ``annotate(instr)`` may return a comment for an instruction."""
        lines = [self.signature()]
        for name, arr in self.shared.items():
            lines.append(f"  shared {name}[{arr.words}] at +{arr.offset}")
        for block in self.blocks.values():
            lines.append(f"{block.label}:")
            for ins in block.all():
                note = annotate(ins) if annotate is not None else None
                lines.append(f"    {ins}" + (f"    ; {note}" if note else ""))
        return "\n".join(lines)


@dataclass(eq=False)
class Module:
    """A kernel and every device function it can call (transitively), by name, with the
    language objects (:class:`~reconverge.golden.compiler.lang.KernelFunction`) they come
    from."""

    kernel: Function
    functions: dict[str, Function]
    sources: dict[str, Any] = field(default_factory=dict)

    def format(self, annotate: Any = None) -> str:
        return "\n\n".join(f.format(annotate) for f in self.functions.values())
