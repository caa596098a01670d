"""The assembler: RISC-V assembly text (GNU ``as`` syntax) -> a loadable
:class:`~reconverge.golden.image.Image`.

Base instructions are parsed from the operand syntax recorded in
:data:`reconverge.golden.isa.SPECS` (no second opcode table). On top of them: the usual
pseudo-instructions, each expanded exactly as GNU ``as`` (binutils 2.40) expands it without
relaxation, so the bytes equal those of GNU ``as -mno-relax`` + ``ld`` (``test_asm.py`` checks
every form); labels (numeric local labels ``1:`` / ``1b`` / ``1f`` included); expressions with
GNU's operators, precedence and 64-bit arithmetic, and ``%hi``, ``%lo``, ``%pcrel_hi`` and
``%pcrel_lo``; and the directives programs need. A symbol set by ``.equ``/``.set``/``=`` has,
at each use, its latest value before that use (its first value for a use before any).

Like GNU ``as``, a conditional branch to a label beyond ±4 KiB or in another section becomes
the inverted branch over a ``jal x0``. Unlike it: a branch to a numeric address is encoded
directly (as the disassembler prints targets); ``li rd, label`` (``lui`` + ``addi`` of the
absolute address), ``lw rd, constant``, ``fence 0, ...`` (an empty set) and the ``.rodata``
directive are accepted; ``li`` of a value outside 32 bits is an error.

Layout: executable sections from :data:`~reconverge.golden.memmap.GLOBAL_BASE` (read-only data
after them) form the ``rx`` segment; writable data and ``.bss`` follow, 16-byte aligned, as the
``rw`` segment whose zero-filled tail is ``.bss``. Within a segment the sections follow each
other at their own alignment (4 for ``.text``, else 1 unless raised by ``.align``), and a code
section ends padded with ``nop`` to its alignment, as GNU ``as`` + ``ld`` place them. The entry
point is ``_start``, else the start of ``.text``. Every error is an :class:`AsmError` reading
``file:line: message``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from reconverge.golden.errors import UserError
from reconverge.golden.image import Image, Segment
from reconverge.golden.isa import (
    CSR_NAMES,
    MASK32,
    REG_NUMBERS,
    SPEC_BY_NAME,
    SPECS,
    EncodingError,
    Fmt,
    Instr,
    Spec,
    Syntax,
    encode,
    imm_range,
    sext,
)
from reconverge.golden.memmap import GLOBAL_BASE

DATA_ALIGN = 16  # alignment of the rw segment
MAX_ALIGN = 1 << 16  # the largest .align boundary accepted
REG_RA, REG_T1 = 1, 6
NOP = 0x0000_0013  # addi x0, x0, 0
C_NOP = 0x0001  # the 2-byte nop GNU as pads code with (even without the C extension)


class AsmError(UserError, ValueError):
    """An assembly error; the message starts with ``file:line:``."""


class _Error(Exception):
    """An error inside one statement, located by the caller."""


# ----------------------------------------------------------------------------------------------
# Expressions


_TOKEN = re.compile(
    r"""\s*(?:
      (?P<local>[0-9]+[bf])(?![0-9a-zA-Z_$.])
    | (?P<num>0[xX][0-9a-fA-F]+|0[bB][01]+|[0-9]+)
    | (?P<char>'(?:\\.|[^\\])'?)
    | (?P<reloc>%[a-z_]+)
    | (?P<name>[A-Za-z_.$][A-Za-z0-9_.$]*)
    | (?P<op><<|>>|<>|<=|>=|==|!=|&&|\|\||[-+*/%&|^~()!<>])
    )""",
    re.VERBOSE,
)

_RELOCS = ("%hi", "%lo", "%pcrel_hi", "%pcrel_lo")


def _divide(a: int, b: int) -> int:
    """C division (truncating toward zero), as GNU as computes."""
    if b == 0:
        raise _Error("division by zero in expression")
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _shift(a: int, b: int, left: bool) -> int:
    if not 0 <= b < 64:
        raise _Error(f"shift count {b} out of range 0..63")
    return a << b if left else (a & (1 << 64) - 1) >> b  # GNU: >> is logical on 64 bits


#: Binary operators: (precedence, function), GNU as precedence (higher binds tighter).
#: Comparisons give -1 for true, as GNU as does.
_BINARY: dict[str, tuple[int, Callable[[int, int], int]]] = {
    "||": (1, lambda a, b: int(bool(a) or bool(b))),
    "&&": (2, lambda a, b: int(bool(a) and bool(b))),
    "+": (3, lambda a, b: a + b),
    "-": (3, lambda a, b: a - b),
    "==": (3, lambda a, b: -(a == b)),
    "!=": (3, lambda a, b: -(a != b)),
    "<>": (3, lambda a, b: -(a != b)),
    "<": (3, lambda a, b: -(a < b)),
    ">": (3, lambda a, b: -(a > b)),
    "<=": (3, lambda a, b: -(a <= b)),
    ">=": (3, lambda a, b: -(a >= b)),
    "|": (4, lambda a, b: a | b),
    "&": (4, lambda a, b: a & b),
    "^": (4, lambda a, b: a ^ b),
    "!": (4, lambda a, b: a | ~b),
    "*": (5, lambda a, b: a * b),
    "/": (5, _divide),
    "%": (5, lambda a, b: a - b * _divide(a, b)),
    "<<": (5, lambda a, b: _shift(a, b, True)),
    ">>": (5, lambda a, b: _shift(a, b, False)),
}
_UNARY: dict[str, Callable[[int], int]] = {
    "-": lambda a: -a,
    "~": lambda a: ~a,
    "!": lambda a: int(not a),
}

_ESCAPES = {"n": 10, "t": 9, "r": 13, "0": 0, "\\": 92, "'": 39, '"': 34, "b": 8, "f": 12}


@dataclass(frozen=True)
class Expr:
    """A parsed expression: ``op`` is "num", "sym", a unary or binary operator or a relocation
    function; ``args`` its operands (an int or str for leaves)."""

    op: str
    args: tuple[Expr | int | str, ...]

    def symbols(self) -> set[str]:
        if self.op == "sym":
            return {str(self.args[0])}
        return set().union(*(a.symbols() for a in self.args if isinstance(a, Expr)))


class _Parser:
    """Precedence climbing over the tokens of one expression."""

    def __init__(self, text: str, local_ref: Callable[[str], str]) -> None:
        self.text = text.strip()
        self.tokens: list[tuple[str, str]] = []
        pos = 0
        while pos < len(self.text):
            m = _TOKEN.match(self.text, pos)
            if not m or m.end() == pos:
                raise _Error(f"cannot parse expression {self.text!r} at {self.text[pos:]!r}")
            kind = m.lastgroup or ""
            self.tokens.append((kind, m[kind]))
            pos = m.end()
            while pos < len(self.text) and self.text[pos].isspace():
                pos += 1
        self.pos = 0
        self.local_ref = local_ref

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        if tok is None:
            raise _Error(f"expression {self.text!r} ends too early")
        self.pos += 1
        return tok

    def expect(self, value: str) -> None:
        tok = self.take()
        if tok[1] != value:
            raise _Error(f"expected {value!r} in expression {self.text!r}, found {tok[1]!r}")

    def parse(self) -> Expr:
        if not self.tokens:
            raise _Error("missing expression")
        expr = self.binary(1)
        extra = self.peek()
        if extra is not None:
            raise _Error(f"unexpected {extra[1]!r} in expression {self.text!r}")
        return expr

    def binary(self, level: int) -> Expr:
        left = self.unary()
        while True:
            tok = self.peek()
            if tok is None or tok[0] != "op" or tok[1] not in _BINARY:
                return left
            prec = _BINARY[tok[1]][0]
            if prec < level:
                return left
            self.take()
            left = Expr(tok[1], (left, self.binary(prec + 1)))

    def unary(self) -> Expr:
        kind, value = self.take()
        if kind == "op" and value == "+":
            return self.unary()
        if kind == "op" and value in _UNARY:
            return Expr("u" + value, (self.unary(),))
        if kind == "op" and value == "(":
            inner = self.binary(1)
            self.expect(")")
            return inner
        if kind == "num":
            return Expr("num", (_number(value),))
        if kind == "char":
            body = value[1:].removesuffix("'") or "'"
            if body.startswith("\\"):
                if body[1:] not in _ESCAPES:
                    raise _Error(f"unknown escape in character {value!r}")
                return Expr("num", (_ESCAPES[body[1:]],))
            return Expr("num", (ord(body),))
        if kind == "local":
            return Expr("sym", (self.local_ref(value),))
        if kind == "name":
            return Expr("sym", (value,))
        if kind == "reloc":
            if value not in _RELOCS:
                raise _Error(f"unknown relocation {value} (known: {', '.join(_RELOCS)})")
            self.expect("(")
            inner = self.binary(1)
            self.expect(")")
            return Expr(value, (inner,))
        raise _Error(f"unexpected {value!r} in expression {self.text!r}")


def _number(text: str) -> int:
    """The value of a number token as GNU as reads it (``017`` is octal); a number of more than
    64 bits is an error, as GNU as's bignum is for an instruction operand (it is not wrapped)."""
    octal = len(text) > 1 and text[0] == "0" and text.isdigit()
    digits = text[2:] if text[:2].lower() in ("0x", "0b") else text
    shown = text if len(text) <= 24 else f"{text[:12]}...{text[-6:]} ({len(text)} characters)"
    too_big = _Error(f"number {shown} does not fit in 64 bits")
    if len(digits.lstrip("0")) > 64:  # more than 64 bits in any base (and past int()'s limit)
        raise too_big
    try:
        value = int(text, 8) if octal else int(text, 0)
    except ValueError:
        raise _Error(f"{text} is not an octal number (a leading 0 means octal)") from None
    if value >> 64:
        raise too_big
    return value


def hi20(value: int) -> int:
    """The upper 20 bits that, with :func:`lo12` added, rebuild ``value`` (``%hi``)."""
    return ((value + 0x800) & MASK32) >> 12


def lo12(value: int) -> int:
    """The sign-extended low 12 bits of ``value`` (``%lo``)."""
    return sext(value, 12)


# ----------------------------------------------------------------------------------------------
# Statements and sections


@dataclass
class _Stmt:
    """One statement of a section: an instruction (``kind`` "insn"), a data directive with
    expressions ("data"), bytes known in pass 1 ("bytes": strings, fills) or alignment padding
    ("align", sized when the section is placed). ``offset`` is its place in the section."""

    line: int
    section: str
    kind: str
    name: str  # mnemonic or directive
    operands: list[str] = field(default_factory=list)
    locals_: dict[str, str] = field(default_factory=dict)  # 1b/1f bound at this statement
    equs_before: int = 0  # symbol definitions made before this statement
    data: bytes = b""
    size: int = 0
    offset: int = 0
    align: int = 1  # "align": the boundary
    fill: int | None = None  # "align": the fill byte, None for zeros (data) or nops (code)
    relax: bool = False  # a conditional branch, 8 bytes when GNU as expands it


@dataclass(frozen=True)
class _Place:
    """A place in a section: before its ``index``-th statement (labels, ``.`` of ``.equ``)."""

    section: str
    index: int


@dataclass(frozen=True)
class _Equ:
    """One definition of a symbol by ``.equ``/``.set``/``=``; ``.`` in it is its place, and
    ``index`` counts the definitions (of any symbol) before it."""

    expr: Expr
    index: int
    place: _Place


@dataclass
class _Section:
    name: str
    executable: bool
    writable: bool
    nobits: bool
    align: int = 1
    stmts: list[_Stmt] = field(default_factory=list)
    size: int = 0
    base: int = 0

    def offset(self, index: int) -> int:
        """The offset of the place before statement ``index`` (the end after the last)."""
        return self.stmts[index].offset if index < len(self.stmts) else self.size

    def place(self) -> None:
        """Give every statement its offset, and alignment padding its size."""
        offset = 0
        for stmt in self.stmts:
            stmt.offset = offset
            if stmt.kind == "align":
                stmt.size = -offset % stmt.align
            offset += stmt.size
        self.size = offset


_DATA_SIZES = {
    ".word": 4, ".long": 4, ".4byte": 4, ".int": 4,
    ".half": 2, ".short": 2, ".2byte": 2,
    ".byte": 1,
}  # fmt: skip
_IGNORED = frozenset(
    {".type", ".size", ".file", ".ident", ".attribute", ".option", ".local", ".weak", ".hidden",
     ".cfi_startproc", ".cfi_endproc", ".cfi_def_cfa_offset", ".cfi_offset", ".cfi_restore",
     ".cfi_def_cfa", ".cfi_sections", ".addrsig", ".addrsig_sym"}
)  # fmt: skip
_SYMBOL = re.compile(r"[A-Za-z_.$][A-Za-z0-9_.$]*")


def _new_section(name: str, flags: str | None, nobits: bool) -> _Section:
    """A section with the kind its flags, else its name, give. GNU as gives ``.text`` an
    alignment of 4 and every other section 1."""
    if flags is not None:
        sec = _Section(name, "x" in flags, "w" in flags, nobits)
    elif name.startswith(".text") or name == ".init":
        sec = _Section(name, True, False, False)
    elif name.startswith((".rodata", ".srodata")):
        sec = _Section(name, False, False, False)
    elif name.startswith((".bss", ".sbss", ".tbss")):
        sec = _Section(name, False, True, True)
    else:
        sec = _Section(name, False, True, nobits)
    sec.align = 4 if name == ".text" else 1
    return sec


def _rank(sec: _Section) -> int:
    """The place of a section in GNU ld's default linker script (ties keep their order of
    creation): ``.init``, code, ``.rodata``, other read-only data, then from :data:`_RW_RANK`
    on (the rw segment) ``.data``, other writable data, ``.srodata``, ``.sdata``, ``.sbss``,
    ``.bss`` and other zero-filled sections."""

    def named(prefix: str) -> bool:
        return sec.name == prefix or sec.name.startswith(prefix + ".")

    if sec.executable:
        return 0 if sec.name == ".init" else 1
    if named(".srodata"):
        return 6
    if not sec.writable:
        return 2 if named(".rodata") else 3
    if sec.nobits:
        return 8 if named(".sbss") else 9
    return 4 if named(".data") else 7 if named(".sdata") else 5


_RW_RANK = 4


def _code_padding(size: int) -> bytes:
    """Padding in code, as GNU as makes it: a zero byte to reach an even address, one 2-byte
    ``c.nop`` to reach a word boundary, then ``nop`` words."""
    head = bytes(size % 2) + (C_NOP.to_bytes(2, "little") if size % 4 in (2, 3) else b"")
    return head + NOP.to_bytes(4, "little") * ((size - len(head)) // 4)


_LITERAL = re.compile(r"\"(?:\\.|[^\\\"])*\"|'(?:\\.|[^\\])'?")


def _statements(line: str) -> list[str]:
    """The statements of one line: cut at a ``#`` comment and split at ``;``, neither inside a
    string or character literal."""
    pieces, start, i = [], 0, 0
    while i < len(line):
        literal = _LITERAL.match(line, i)
        if literal:
            i = literal.end()
        elif line[i] == "#":
            break
        elif line[i] == ";":
            pieces.append(line[start:i])
            start = i = i + 1
        else:
            i += 1
    pieces.append(line[start:i])
    return [p.strip() for p in pieces]


def _split_operands(text: str) -> list[str]:
    """Split at top-level commas (not inside parentheses or literals)."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        literal = _LITERAL.match(text, i)
        if literal:
            i = literal.end()
            continue
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
        elif text[i] == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
        i += 1
    tail = text[start:].strip()
    return [*parts, tail] if tail or parts else []


def _string_literal(text: str) -> bytes:
    text = text.strip()
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        raise _Error(f"expected a string in double quotes, not {text!r}")
    out, i, body = bytearray(), 0, text[1:-1]
    while i < len(body):
        ch = body[i]
        if ch != "\\" or i + 1 == len(body):
            out += ch.encode()
            i += 1
            continue
        octal = re.match(r"[0-7]{1,3}", body[i + 1 :])
        hexa = re.match(r"x([0-9a-fA-F]+)", body[i + 1 :])
        if octal:
            out.append(int(octal[0], 8) & 0xFF)
            i += 1 + len(octal[0])
        elif hexa:
            out.append(int(hexa[1], 16) & 0xFF)
            i += 1 + len(hexa[0])
        elif body[i + 1] in _ESCAPES:
            out.append(_ESCAPES[body[i + 1]])
            i += 2
        else:
            raise _Error(f"unknown escape \\{body[i + 1]} in {text}")
    return bytes(out)


# ----------------------------------------------------------------------------------------------
# Operands of one instruction


_MEMORY_OPERAND = re.compile(r"(.*)\(\s*([A-Za-z0-9_$]+)\s*\)\s*")


def _memory_operand(text: str) -> tuple[str, int] | None:
    """``imm(reg)`` or ``(reg)`` -> (imm text, register), else None."""
    m = _MEMORY_OPERAND.fullmatch(text.strip())
    if m is None or m[2] not in REG_NUMBERS:
        return None
    return m[1].strip(), REG_NUMBERS[m[2]]


def parse_reg(text: str) -> int:
    text = text.strip()
    if text not in REG_NUMBERS:
        raise _Error(f"expected a register, not {text!r}")
    return REG_NUMBERS[text]


class _Operands:
    """The operands of an instruction statement, evaluated on demand at address ``pc``."""

    def __init__(self, asm: Assembler, stmt: _Stmt, pc: int) -> None:
        self.asm = asm
        self.stmt = stmt
        self.texts = stmt.operands
        self.pc = pc

    def count(self, *allowed: int) -> int:
        n = len(self.texts)
        if n not in allowed:
            want = " or ".join(str(a) for a in allowed)
            raise _Error(f"{self.stmt.name} takes {want} operands, got {n}")
        return n

    def reg(self, i: int) -> int:
        return parse_reg(self.texts[i])

    def is_reg(self, i: int) -> bool:
        return self.texts[i].strip() in REG_NUMBERS

    def is_mem(self, i: int) -> bool:
        return _memory_operand(self.texts[i]) is not None

    def value(self, i: int | str) -> int:
        text = self.texts[i] if isinstance(i, int) else i
        expr = self.asm.parse_expr(text, self.stmt)
        return self.asm.evaluate(expr, self.pc, self.stmt.equs_before)

    def imm12(self, i: int | str) -> int:
        """A 12-bit immediate; like GNU as, a 32-bit value 0x80000000..0xffffffff is taken as
        the negative number it is on RV32."""
        value = self.value(i)
        return sext(value, 32) if 0 <= value <= MASK32 else value

    def target(self, i: int) -> int:
        """A branch or jump target, as an offset from the pc."""
        return self.value(i) - self.pc

    def mem(self, i: int) -> tuple[int, int]:
        """``imm(reg)`` or ``(reg)`` -> (imm, reg)."""
        operand = _memory_operand(self.texts[i])
        if operand is None:
            raise _Error(f"expected a memory operand offset(register), not {self.texts[i]!r}")
        offset, reg = operand
        return (self.imm12(offset) if offset else 0), reg

    def reg_or_mem(self, i: int) -> tuple[int, int]:
        """``reg`` (offset 0) or ``imm(reg)`` -> (imm, reg)."""
        return (0, self.reg(i)) if self.is_reg(i) else self.mem(i)

    def csr(self, i: int) -> int:
        text = self.texts[i].strip()
        return CSR_NAMES[text] if text in CSR_NAMES else self.value(i)


def _fence_set(text: str) -> int:
    """A fence predecessor or successor set: letters of ``iorw``, or ``0`` (empty; GNU as has
    no spelling for it)."""
    text = text.strip().lower()
    if text == "0":
        return 0
    if not text or any(c not in "iorw" for c in text) or len(set(text)) != len(text):
        raise _Error(f"fence operand must be a combination of i, o, r, w, not {text!r}")
    return sum(bit for c, bit in (("i", 8), ("o", 4), ("r", 2), ("w", 1)) if c in text)


def _ins(name: str, **fields: int) -> Instr:
    return Instr(SPEC_BY_NAME[name], **fields)


def _base(spec: Spec, a: _Operands) -> list[Instr]:
    """A base instruction, its operands parsed by the syntax the encoding table records."""
    syn = spec.syntax
    if syn is Syntax.RD_RS1_RS2:
        a.count(3)
        return [Instr(spec, rd=a.reg(0), rs1=a.reg(1), rs2=a.reg(2))]
    if syn is Syntax.RD_RS1_IMM:
        a.count(3)
        imm = a.value(2) if spec.fmt is Fmt.SHIFT else a.imm12(2)
        return [Instr(spec, rd=a.reg(0), rs1=a.reg(1), imm=imm)]
    if syn is Syntax.RD_IMM_RS1:
        if spec.name == "jalr":
            return _jalr(a, REG_RA)
        a.count(2)
        imm, rs1 = a.mem(1)
        return [Instr(spec, rd=a.reg(0), rs1=rs1, imm=imm)]
    if syn is Syntax.RS2_IMM_RS1:
        a.count(2)
        imm, rs1 = a.mem(1)
        return [Instr(spec, rs2=a.reg(0), rs1=rs1, imm=imm)]
    if syn is Syntax.RS1_RS2_TARGET:
        a.count(3)
        return [Instr(spec, rs1=a.reg(0), rs2=a.reg(1), imm=a.target(2))]
    if syn is Syntax.RD_IMM:
        a.count(2)
        return [Instr(spec, rd=a.reg(0), imm=a.value(1))]
    if syn is Syntax.RD_TARGET:
        rd = REG_RA if a.count(1, 2) == 1 else a.reg(0)
        return [Instr(spec, rd=rd, imm=a.target(-1))]
    if syn in (Syntax.AMO, Syntax.LR):
        n = a.count(3 if syn is Syntax.AMO else 2)
        offset, rs1 = a.mem(n - 1)
        if offset:
            raise _Error(f"{spec.name} takes no address offset: write (rs1)")
        rs2 = a.reg(1) if syn is Syntax.AMO else 0
        return [Instr(spec, rd=a.reg(0), rs2=rs2, rs1=rs1)]
    if syn in (Syntax.CSR, Syntax.CSRI):
        a.count(3)
        return _csr_op(spec.name, a.reg(0), a, 1, 2)
    if syn is Syntax.FENCE:
        if a.count(0, 2) == 0:
            return [Instr(spec)]
        return [Instr(spec, pred=_fence_set(a.texts[0]), succ=_fence_set(a.texts[1]))]
    if syn is Syntax.TARGET:
        a.count(1)
        return [Instr(spec, imm=a.target(0))]
    a.count(0)
    return [Instr(spec)]


def _csr_op(name: str, rd: int, a: _Operands, csr: int, source: int) -> list[Instr]:
    """A Zicsr instruction; as GNU as allows, ``csrrw``/``csrrs``/``csrrc`` with an immediate
    source are their ``...i`` forms."""
    if name.endswith("i") or not a.is_reg(source):
        return [_ins(name.removesuffix("i") + "i", rd=rd, csr=a.csr(csr), imm=a.value(source))]
    return [_ins(name, rd=rd, csr=a.csr(csr), rs1=a.reg(source))]


def _jalr(a: _Operands, link: int) -> list[Instr]:
    """The forms GNU as accepts for ``jalr`` (link ra) and ``jr`` (link x0): ``rs``,
    ``imm(rs)``, ``rs, imm``, and for ``jalr`` also ``rd, rs``, ``rd, imm(rs)``,
    ``rd, rs, imm``."""
    n = a.count(1, 2, 3) if link else a.count(1, 2)
    if n == 1:
        imm, rs1 = a.reg_or_mem(0)
        return [_ins("jalr", rd=link, rs1=rs1, imm=imm)]
    if n == 3:
        return [_ins("jalr", rd=a.reg(0), rs1=a.reg(1), imm=a.imm12(2))]
    if link and (a.is_reg(1) or a.is_mem(1)):
        imm, rs1 = a.reg_or_mem(1)
        return [_ins("jalr", rd=a.reg(0), rs1=rs1, imm=imm)]
    return [_ins("jalr", rd=link, rs1=a.reg(0), imm=a.imm12(1))]


# ----------------------------------------------------------------------------------------------
# Pseudo-instructions, expanded as GNU as does with relaxation off.


def li_sequence(rd: int, value: int) -> list[Instr]:
    """``li`` of a constant: ``addi`` when it fits 12 bits, else ``lui`` (+ ``addi`` when the low
    part is non-zero). Values are taken modulo 2**32, as on RV32."""
    value = sext(value, 32)
    if -2048 <= value < 2048:
        return [_ins("addi", rd=rd, imm=value)]
    seq = [_ins("lui", rd=rd, imm=hi20(value))]
    if lo12(value):
        seq.append(_ins("addi", rd=rd, rs1=rd, imm=lo12(value)))
    return seq


def _pcrel(base: int, second: str, delta: int, **fields: int) -> list[Instr]:
    """``auipc base, %pcrel_hi`` then ``second`` with the matching ``%pcrel_lo``."""
    return [_ins("auipc", rd=base, imm=hi20(delta)), _ins(second, imm=lo12(delta), **fields)]


def _li(a: _Operands) -> list[Instr]:
    a.count(2)
    rd, value = a.reg(0), a.value(1)
    if not a.asm.is_constant(a.texts[1], a.stmt):  # a label: its absolute address
        return [_ins("lui", rd=rd, imm=hi20(value)), _ins("addi", rd=rd, rs1=rd, imm=lo12(value))]
    if not -(1 << 31) <= value <= MASK32:
        raise _Error(f"li: value {value:#x} does not fit in 32 bits")
    return li_sequence(rd, value)


def _la(a: _Operands) -> list[Instr]:
    a.count(2)
    rd = a.reg(0)
    return _pcrel(rd, "addi", a.target(1), rd=rd, rs1=rd)


def _call(a: _Operands) -> list[Instr]:
    """``call sym`` (link and temporary ra) or ``call rd, sym`` (link rd, temporary t1)."""
    rd, tmp = (REG_RA, REG_RA) if a.count(1, 2) == 1 else (a.reg(0), REG_T1)
    return _pcrel(tmp, "jalr", a.target(-1), rd=rd, rs1=tmp)


def _tail(a: _Operands) -> list[Instr]:
    a.count(1)
    return _pcrel(REG_T1, "jalr", a.target(0), rs1=REG_T1)


def _jump(a: _Operands) -> list[Instr]:
    """``jump sym, rt``: auipc rt + jalr x0 through rt."""
    a.count(2)
    rt = a.reg(1)
    return _pcrel(rt, "jalr", a.target(0), rs1=rt)


def _load_symbol(name: str) -> Callable[[_Operands], list[Instr]]:
    """``lw rd, sym``: auipc rd + load through rd (only when the operand is not ``imm(rs)``)."""

    def expand(a: _Operands) -> list[Instr]:
        rd = a.reg(0)
        return _pcrel(rd, name, a.target(1), rd=rd, rs1=rd)

    return expand


def _store_symbol(name: str) -> Callable[[_Operands], list[Instr]]:
    """``sw rs, sym, rt``: auipc rt + store through rt."""

    def expand(a: _Operands) -> list[Instr]:
        a.count(3)
        rt = a.reg(2)
        return _pcrel(rt, name, a.target(1), rs2=a.reg(0), rs1=rt)

    return expand


def _alias(
    name: str, build: Callable[[_Operands], dict[str, int]], n: int
) -> Callable[[_Operands], list[Instr]]:
    def expand(a: _Operands) -> list[Instr]:
        a.count(n)
        return [_ins(name, **build(a))]

    return expand


def _shift_pair(bits: int, right: str) -> Callable[[_Operands], list[Instr]]:
    """``sext.b``/``sext.h``/``zext.h`` without Zbb: ``slli`` then ``srai``/``srli``."""

    def expand(a: _Operands) -> list[Instr]:
        a.count(2)
        rd = a.reg(0)
        return [_ins("slli", rd=rd, rs1=a.reg(1), imm=bits), _ins(right, rd=rd, rs1=rd, imm=bits)]

    return expand


def _branch_zero(name: str, zero_first: bool) -> Callable[[_Operands], list[Instr]]:
    """``beqz rs, t`` = ``beq rs, x0, t``; ``bgtz rs, t`` = ``blt x0, rs, t`` (zero first)."""

    def fields(a: _Operands) -> dict[str, int]:
        rs = a.reg(0)
        return {"rs1": 0 if zero_first else rs, "rs2": rs if zero_first else 0,
                "imm": a.target(1)}  # fmt: skip

    return _alias(name, fields, 2)


def _branch_swapped(name: str) -> Callable[[_Operands], list[Instr]]:
    """``bgt a, b, t`` = ``blt b, a, t`` (and ble, bgtu, bleu alike)."""
    return _alias(name, lambda a: {"rs1": a.reg(1), "rs2": a.reg(0), "imm": a.target(2)}, 3)


def _csr_alias(name: str) -> Callable[[_Operands], list[Instr]]:
    """``csrw csr, src`` = ``csrrw x0, csr, src`` (and csrs, csrc, the ``...i`` forms)."""

    def expand(a: _Operands) -> list[Instr]:
        a.count(2)
        return _csr_op(name, 0, a, 0, 1)

    return expand


_PSEUDOS: dict[str, Callable[[_Operands], list[Instr]]] = {
    "nop": _alias("addi", lambda a: {}, 0),
    "li": _li,
    "la": _la,
    "lla": _la,
    "mv": _alias("addi", lambda a: {"rd": a.reg(0), "rs1": a.reg(1)}, 2),
    "not": _alias("xori", lambda a: {"rd": a.reg(0), "rs1": a.reg(1), "imm": -1}, 2),
    "neg": _alias("sub", lambda a: {"rd": a.reg(0), "rs2": a.reg(1)}, 2),
    "seqz": _alias("sltiu", lambda a: {"rd": a.reg(0), "rs1": a.reg(1), "imm": 1}, 2),
    "snez": _alias("sltu", lambda a: {"rd": a.reg(0), "rs2": a.reg(1)}, 2),
    "sltz": _alias("slt", lambda a: {"rd": a.reg(0), "rs1": a.reg(1)}, 2),
    "sgtz": _alias("slt", lambda a: {"rd": a.reg(0), "rs2": a.reg(1)}, 2),
    "sgt": _alias("slt", lambda a: {"rd": a.reg(0), "rs1": a.reg(2), "rs2": a.reg(1)}, 3),
    "sgtu": _alias("sltu", lambda a: {"rd": a.reg(0), "rs1": a.reg(2), "rs2": a.reg(1)}, 3),
    "zext.b": _alias("andi", lambda a: {"rd": a.reg(0), "rs1": a.reg(1), "imm": 255}, 2),
    "sext.b": _shift_pair(24, "srai"),
    "sext.h": _shift_pair(16, "srai"),
    "zext.h": _shift_pair(16, "srli"),
    "j": _alias("jal", lambda a: {"imm": a.target(0)}, 1),
    "jr": lambda a: _jalr(a, 0),
    "ret": _alias("jalr", lambda a: {"rs1": REG_RA}, 0),
    "call": _call,
    "tail": _tail,
    "jump": _jump,
    "beqz": _branch_zero("beq", False),
    "bnez": _branch_zero("bne", False),
    "bltz": _branch_zero("blt", False),
    "bgez": _branch_zero("bge", False),
    "blez": _branch_zero("bge", True),
    "bgtz": _branch_zero("blt", True),
    "bgt": _branch_swapped("blt"),
    "ble": _branch_swapped("bge"),
    "bgtu": _branch_swapped("bltu"),
    "bleu": _branch_swapped("bgeu"),
    "csrr": _alias("csrrs", lambda a: {"rd": a.reg(0), "csr": a.csr(1)}, 2),
    "csrw": _csr_alias("csrrw"),
    "csrs": _csr_alias("csrrs"),
    "csrc": _csr_alias("csrrc"),
    "csrwi": _csr_alias("csrrwi"),
    "csrsi": _csr_alias("csrrsi"),
    "csrci": _csr_alias("csrrci"),
}

#: Pseudo-instructions of two instructions whatever their operands.
_TWO_WORDS = frozenset({"la", "lla", "call", "tail", "jump", "sext.b", "sext.h", "zext.h"})
_LOADS = ("lb", "lh", "lw", "lbu", "lhu")
_STORES = ("sb", "sh", "sw")


def _symbolic_access(stmt: _Stmt) -> bool:
    """``lw rd, sym`` / ``sw rs, sym, rt``: a load or store addressed by a symbol."""
    if stmt.name in _LOADS:  # a memory operand ends in (register), or (q5) if mistyped
        m = _MEMORY_OPERAND.fullmatch(stmt.operands[1]) if len(stmt.operands) == 2 else None
        return len(stmt.operands) == 2 and (m is None or m[2].isdigit())
    if stmt.name in _STORES:
        return len(stmt.operands) == 3
    return False


def _amo_spec(name: str) -> tuple[Spec, int, int] | None:
    """``amoadd.w``, ``lr.w``, ``sc.w`` with an optional ordering suffix (``.aq``, ``.rl``,
    ``.aqrl``) -> (spec, aq, rl)."""
    m = re.fullmatch(r"((?:amo[a-z]+|lr|sc)\.w)(\.aq|\.rl|\.aqrl)?", name)
    if m is None or m[1] not in SPEC_BY_NAME:
        return None
    order = m[2] or ""
    return SPEC_BY_NAME[m[1]], int("aq" in order), int("rl" in order)


#: Conditional branches, base and pseudo: the ones GNU as relaxes.
_CONDITIONAL = frozenset(
    {s.name for s in SPECS if s.fmt is Fmt.B}
    | {"beqz", "bnez", "bltz", "bgez", "blez", "bgtz", "bgt", "ble", "bgtu", "bleu"}
)
#: Each branch with its inverse condition (funct3 differs in bit 0).
_INVERSE = {
    s.name: t for s in SPECS if s.fmt is Fmt.B for t in SPECS
    if t.fmt is Fmt.B and t.funct3 == s.funct3 ^ 1
}  # fmt: skip


def _long_branch(ins: Instr) -> list[Instr]:
    """``b<cond> rs1, rs2, target`` as GNU as relaxes it: the inverted branch to ``. + 8``, then
    ``jal x0, target``."""
    return [replace(ins, spec=_INVERSE[ins.name], imm=8), _ins("jal", imm=ins.imm - 4)]


def _check_target(name: str, ins: Instr) -> None:
    """Say how far the target of a branch or jump (of statement ``name``) is when it is out of
    reach or misaligned."""
    fmt = ins.spec.fmt
    if fmt in (Fmt.B, Fmt.J, Fmt.HINT):
        lo, hi, align = imm_range(fmt)
        if not lo <= ins.imm <= hi:
            reach = "±4 KiB" if fmt is Fmt.B else "±1 MiB"
            raise _Error(f"{name}: target is {ins.imm:+d} bytes away, beyond its reach ({reach})")
        if ins.imm % align:
            raise _Error(f"{name}: target is {ins.imm:+d} bytes away, not a multiple of {align}")


# ----------------------------------------------------------------------------------------------
# The assembler


class Assembler:
    """Pass 1 parses the statements into their sections; placement then sizes alignment padding
    and conditional branches (as GNU as relaxes them) and lays the sections out; pass 2
    evaluates the operands and encodes."""

    def __init__(self, text: str, source: str) -> None:
        self.text = text
        self.source = source
        self.sections: dict[str, _Section] = {}
        self.stmts: list[_Stmt] = []  # every statement, in source order
        self.labels: dict[str, _Place] = {}
        self.label_lines: dict[str, int] = {}
        self.equs: dict[str, list[_Equ]] = {}  # name -> its definitions in order
        self.equ_count = 0
        self.local_count: dict[str, int] = {}
        self.pcrel_hi: dict[int, int] = {}  # address of an auipc -> its %pcrel_hi offset
        self._evaluating: set[int] = set()  # definitions being evaluated (cycle check)
        self.section = self._enter(".text")

    def error(self, line: int, message: str) -> AsmError:
        return AsmError(f"{self.source}:{line}: {message}")

    # -- pass 1 -------------------------------------------------------------------------------

    def pass1(self) -> None:
        text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m[0].count("\n"), self.text, flags=re.S)
        for number, raw in enumerate(text.splitlines(), start=1):
            for piece in _statements(raw):
                try:
                    self._statement(piece, number)
                except _Error as exc:
                    raise self.error(number, str(exc)) from None
        for sec in self.sections.values():  # GNU as pads code sections to their alignment
            if sec.executable:
                self.section = sec
                self._emit(self._stmt(0, "align", ".align", [], align=sec.align))

    def _enter(self, name: str, flags: str | None = None, nobits: bool = False) -> _Section:
        if name not in self.sections:
            self.sections[name] = _new_section(name, flags, nobits)
        self.section = self.sections[name]
        return self.section

    def _here(self) -> _Place:
        return _Place(self.section.name, len(self.section.stmts))

    def _local_ref(self, token: str) -> str:
        digits, direction = token[:-1], token[-1]
        seen = self.local_count.get(digits, 0)
        if direction == "b":
            if seen == 0:
                raise _Error(f"local label {token}: no label {digits}: before this line")
            return f".L{digits}\x02{seen - 1}"
        return f".L{digits}\x02{seen}"

    def parse_expr(self, text: str, stmt: _Stmt | None = None) -> Expr:
        """``text`` parsed; ``1b``/``1f`` as bound at ``stmt``, else at the current line."""
        return _Parser(text, stmt.locals_.__getitem__ if stmt else self._local_ref).parse()

    def _resolve_locals(self, operands: list[str]) -> dict[str, str]:
        """Bind every ``1b``/``1f`` in the operands now, while the label counts are current."""
        refs: dict[str, str] = {}
        for text in operands:
            for m in re.finditer(r"(?<![0-9A-Za-z_$.])([0-9]+[bf])(?![0-9A-Za-z_$.])", text):
                refs[m[1]] = self._local_ref(m[1])
        return refs

    def _define_label(self, name: str, line: int) -> None:
        if name.isdigit():
            index = self.local_count.get(name, 0)
            self.local_count[name] = index + 1
            name = f".L{name}\x02{index}"
        elif name in self.labels or name in self.equs:
            where = self.label_lines.get(name)
            raise _Error(f"symbol {name!r} already defined" + (f" (line {where})" if where else ""))
        self.labels[name] = self._here()
        self.label_lines[name] = line

    def _statement(self, text: str, line: int) -> None:
        while m := re.match(r"([A-Za-z_.$][A-Za-z0-9_.$]*|[0-9]+)\s*:(?!:)", text):
            self._define_label(m[1], line)
            text = text[m.end() :].strip()
        if not text:
            return
        if m := re.fullmatch(r"([A-Za-z_.$][A-Za-z0-9_.$]*)\s*=\s*(.+)", text):
            self._equ(m[1], m[2])
            return
        head, rest = re.match(r"(\S+)\s*(.*)", text).groups()  # type: ignore[union-attr]
        operands = _split_operands(rest)
        if head.startswith("."):
            self._directive(head, operands, line)
            return
        name = head.lower()
        stmt = self._stmt(line, "insn", name, operands, relax=name in _CONDITIONAL)
        stmt.size = self._insn_size(stmt)
        self._emit(stmt)

    def _stmt(self, line: int, kind: str, name: str, operands: list[str], **kw: Any) -> _Stmt:
        return _Stmt(line, self.section.name, kind, name, operands,
                     self._resolve_locals(operands), self.equ_count, **kw)  # fmt: skip

    def _emit(self, stmt: _Stmt) -> None:
        sec = self.section
        if sec.nobits and (stmt.kind in ("insn", "data") or any(stmt.data) or stmt.fill):
            padding = stmt.kind in ("bytes", "align")
            holds = "only zeros" if padding else "no data (only .space / .zero)"
            raise _Error(f"{stmt.name}: {sec.name} holds {holds}")
        self.stmts.append(stmt)
        sec.stmts.append(stmt)

    def _insn_size(self, stmt: _Stmt) -> int:
        name = stmt.name
        if name == "li":
            return self._li_size(stmt)
        if name in _TWO_WORDS or _symbolic_access(stmt):
            return 8
        if name in _PSEUDOS or _amo_spec(name) is not None or name in SPEC_BY_NAME:
            return 4
        raise _Error(f"unknown instruction {name!r}")

    def _li_size(self, stmt: _Stmt) -> int:
        if len(stmt.operands) != 2 or not self.is_constant(stmt.operands[1], stmt):
            return 8
        value = self.evaluate(self.parse_expr(stmt.operands[1], stmt), 0, stmt.equs_before)
        return 4 * len(li_sequence(0, value))

    def _equ(self, name: str, text: str) -> None:
        if not _SYMBOL.fullmatch(name) or name == ".":
            raise _Error(f"{name!r} is not a symbol name")
        if name in self.labels:
            raise _Error(
                f"symbol {name!r} already defined as a label (line {self.label_lines[name]})"
            )
        definition = _Equ(self.parse_expr(text), self.equ_count, self._here())
        self.equs.setdefault(name, []).append(definition)
        self.equ_count += 1

    def _constant(self, text: str, what: str) -> int:
        expr = self.parse_expr(text)
        if not self._is_constant_expr(expr, self.equ_count):
            raise _Error(f"{what} must be a constant known here, not {text!r}")
        return self.evaluate(expr, 0, self.equ_count)

    def _align(self, name: str, boundary: int, fill: int | None, line: int) -> None:
        """Pad to ``boundary``: with ``fill`` bytes, else zeros in data and GNU's code padding
        in code. Like GNU as, an alignment of at most 4 without fill is taken to hold already
        in code (only recorded: GNU as assumes instructions are aligned)."""
        if not 1 <= boundary <= MAX_ALIGN or boundary & (boundary - 1):
            raise _Error(f"{name}: alignment {boundary} is not a power of two up to {MAX_ALIGN}")
        sec = self.section
        sec.align = max(sec.align, boundary)
        if not (sec.executable and fill is None and boundary <= 4):
            self._emit(self._stmt(line, "align", name, [], align=boundary, fill=fill))

    def _directive(self, name: str, ops: list[str], line: int) -> None:
        if name in (".text", ".data", ".rodata", ".bss"):
            self._enter(name)
        elif name == ".section":
            if not ops:
                raise _Error(".section needs a section name")
            flags = ops[1].strip().strip('"') if len(ops) > 1 else None
            nobits = len(ops) > 2 and "nobits" in ops[2]
            self._enter(ops[0].strip(), flags, nobits)
        elif name in (".globl", ".global"):
            for sym in ops:
                if not _SYMBOL.fullmatch(sym):
                    raise _Error(f"{name}: {sym!r} is not a symbol name")
        elif name in (".equ", ".set"):
            if len(ops) != 2:
                raise _Error(f"{name} takes a name and a value")
            self._equ(ops[0].strip(), ops[1])
        elif name in _DATA_SIZES:
            if not ops:
                raise _Error(f"{name} needs at least one value")
            self._emit(self._stmt(line, "data", name, ops, size=_DATA_SIZES[name] * len(ops)))
        elif name in (".space", ".zero", ".skip"):
            if not 1 <= len(ops) <= 2:
                raise _Error(f"{name} takes a size and an optional fill byte")
            size = self._constant(ops[0], f"{name} size")
            if size < 0:
                raise _Error(f"{name} size {size} is negative")
            fill = self._constant(ops[1], f"{name} fill") & 0xFF if len(ops) > 1 else 0
            self._emit_bytes(line, name, bytes([fill]) * size)
        elif name in (".align", ".p2align", ".balign"):
            if not 1 <= len(ops) <= 2:
                raise _Error(f"{name} takes an alignment and an optional fill byte")
            value = self._constant(ops[0], f"{name} alignment")
            fill = self._constant(ops[1], f"{name} fill") & 0xFF if len(ops) > 1 else None
            if name != ".balign":  # .align is .p2align on RISC-V
                if not 0 <= value < MAX_ALIGN.bit_length():
                    raise _Error(f"{name} {value}: alignment too large")
                value = 1 << value
            self._align(name, value, fill, line)
        elif name in (".ascii", ".asciz", ".string"):
            end = b"" if name == ".ascii" else b"\0"
            self._emit_bytes(line, name, b"".join(_string_literal(s) + end for s in ops))
        elif name not in _IGNORED:
            raise _Error(f"unknown directive {name}")

    def _emit_bytes(self, line: int, name: str, data: bytes) -> None:
        self._emit(self._stmt(line, "bytes", name, [], data=data, size=len(data)))

    # -- placement and layout -----------------------------------------------------------------

    def place(self) -> None:
        """Size the conditional branches as GNU as does: the inverted branch over a ``jal x0``
        (8 bytes) when the target is a label in another section, or beyond ±4 KiB in the same
        one, else 4 bytes. Branches only grow, so this ends (at the smallest consistent sizes;
        at exactly the edge of reach GNU as may keep the long form). Then lay out."""
        grown = True
        while grown:
            for sec in self.sections.values():
                sec.place()
            self.layout()
            grown = False
            for stmt in self.stmts:
                if stmt.relax and stmt.size == 4 and self._needs_long_branch(stmt):
                    stmt.size = 8
                    grown = True

    def _needs_long_branch(self, stmt: _Stmt) -> bool:
        """Whether the conditional branch ``stmt`` (at its current place) takes the long form;
        operand errors are left for pass 2 to report."""
        try:
            expr = self.parse_expr(stmt.operands[-1], stmt)
            section = self._target_section(expr, stmt.equs_before, stmt.section)
            if section is None:  # a number: encoded directly (see _check_target)
                return False
            if section != stmt.section:
                return True
            pc = self.sections[stmt.section].base + stmt.offset
            return not -4096 <= self.evaluate(expr, pc, stmt.equs_before) - pc < 4096
        except (_Error, IndexError):
            return False

    def _target_section(self, expr: Expr, before: int, here: str) -> str | None:
        """The section of the label a branch target is relative to (``label``, ``.``,
        ``label ± constant``), as GNU as's relaxation sees it; None for anything else."""
        if expr.op == "sym":
            name = str(expr.args[0])
            if name == ".":
                return here
            if name in self.labels:
                return self.labels[name].section
            if name in self.equs:
                definition = self._definition(name, before)
                place = definition.place.section  # where "." in the definition is
                return self._target_section(definition.expr, definition.index, place)
            return None
        if expr.op in ("+", "-"):
            left, right = expr.args
            assert isinstance(left, Expr) and isinstance(right, Expr)
            if self._is_constant_expr(right, before):
                return self._target_section(left, before, here)
            if expr.op == "+" and self._is_constant_expr(left, before):
                return self._target_section(right, before, here)
        return None

    def layout(self) -> None:
        """Place the sections in the order of GNU ld's default linker script."""
        address, in_rw = GLOBAL_BASE, False
        for sec in sorted(self.sections.values(), key=_rank):
            if _rank(sec) >= _RW_RANK and not in_rw:
                address += -address % DATA_ALIGN
                in_rw = True
            address += -address % sec.align
            sec.base = address
            address += sec.size

    def address_of(self, place: _Place) -> int:
        sec = self.sections[place.section]
        return sec.base + sec.offset(place.index)

    # -- expressions ----------------------------------------------------------------------------

    def _definition(self, name: str, before: int) -> _Equ:
        """The definition of ``name`` a use after ``before`` definitions sees: the latest one
        before it, else (a forward reference) the first."""
        defs = self.equs[name]
        earlier = [d for d in defs if d.index < before]
        return earlier[-1] if earlier else defs[0]

    def is_constant(self, text: str, stmt: _Stmt) -> bool:
        return self._is_constant_expr(self.parse_expr(text, stmt), stmt.equs_before)

    def _is_constant_expr(self, expr: Expr, before: int) -> bool:
        """True when ``expr`` uses only numbers and symbols defined as such before it: its
        value is known in pass 1, whatever the layout."""
        for name in expr.symbols():
            if not any(d.index < before for d in self.equs.get(name, ())):
                return False  # a label, ".", or a symbol defined later
            definition = self._definition(name, before)
            if not self._is_constant_expr(definition.expr, definition.index):
                return False
        return True

    def symbol_value(self, name: str, before: int) -> int:
        if name in self.labels:
            return self.address_of(self.labels[name])
        if name in self.equs:
            definition = self._definition(name, before)
            if definition.index in self._evaluating:
                raise _Error(f"symbol {name!r} is defined in terms of itself")
            self._evaluating.add(definition.index)
            try:
                here = self.address_of(definition.place)
                return self.evaluate(definition.expr, here, definition.index)
            finally:
                self._evaluating.discard(definition.index)
        if name.startswith(".L") and "\x02" in name:
            digits = name[2:].split("\x02")[0]
            raise _Error(f"local label {digits}f: no label {digits}: after this line")
        raise _Error(f"undefined symbol {name!r}")

    def evaluate(self, expr: Expr, pc: int, before: int) -> int:
        """The value of ``expr`` at address ``pc`` (the value of ``.``) for a statement after
        ``before`` symbol definitions; 64-bit two's complement, as GNU as computes."""
        op, args = expr.op, expr.args
        if op == "num":
            return sext(int(args[0]), 64)  # type: ignore[arg-type]
        if op == "sym":
            return pc if args[0] == "." else self.symbol_value(str(args[0]), before)
        values = [self.evaluate(a, pc, before) for a in args if isinstance(a, Expr)]
        if op == "%hi":
            return hi20(values[0])
        if op == "%lo":
            return lo12(values[0])
        if op == "%pcrel_hi":
            self.pcrel_hi[pc] = values[0] - pc
            return hi20(values[0] - pc)
        if op == "%pcrel_lo":
            auipc = values[0]
            if auipc not in self.pcrel_hi:
                raise _Error(
                    f"%pcrel_lo: no auipc with %pcrel_hi at {auipc:#010x} before this line"
                )
            return lo12(self.pcrel_hi[auipc])
        if op.startswith("u"):
            return sext(_UNARY[op[1:]](values[0]), 64)
        return sext(_BINARY[op][1](values[0], values[1]), 64)

    # -- pass 2 ---------------------------------------------------------------------------------

    def pass2(self) -> dict[str, bytearray]:
        """The bytes of every section."""
        contents = {name: bytearray(sec.size) for name, sec in self.sections.items()}
        for stmt in self.stmts:
            pc = self.sections[stmt.section].base + stmt.offset
            try:
                data = self._encode(stmt, pc)
            except _Error as exc:
                raise self.error(stmt.line, str(exc)) from None
            if len(data) != stmt.size:
                raise self.error(stmt.line, f"{stmt.name}: size changed between passes")
            contents[stmt.section][stmt.offset : stmt.offset + stmt.size] = data
        return contents

    def _encode(self, stmt: _Stmt, pc: int) -> bytes:
        if stmt.kind == "bytes":
            return stmt.data
        if stmt.kind == "align":
            code = self.sections[stmt.section].executable and stmt.fill is None
            return _code_padding(stmt.size) if code else bytes([stmt.fill or 0]) * stmt.size
        if stmt.kind == "data":
            return self._data(stmt, pc)
        instrs = self._expand(stmt, pc)
        if stmt.relax and stmt.size == 8:
            instrs = _long_branch(instrs[0])
        out = bytearray()
        for ins in instrs:
            _check_target(stmt.name, ins)
            try:
                out += encode(ins).to_bytes(4, "little")
            except EncodingError as exc:
                message = str(exc)
                if not message.startswith(f"{stmt.name}:"):
                    message = f"{stmt.name}: {message}"
                raise _Error(message) from None
        return bytes(out)

    def _expand(self, stmt: _Stmt, pc: int) -> list[Instr]:
        ops = _Operands(self, stmt, pc)
        name = stmt.name
        if _symbolic_access(stmt):
            return (_load_symbol(name) if name in _LOADS else _store_symbol(name))(ops)
        if name in _PSEUDOS:
            return _PSEUDOS[name](ops)
        amo = _amo_spec(name)
        if amo is not None:
            spec, aq, rl = amo
            return [replace(ins, aq=aq, rl=rl) for ins in _base(spec, ops)]
        return _base(SPEC_BY_NAME[name], ops)

    def _data(self, stmt: _Stmt, pc: int) -> bytes:
        size = _DATA_SIZES[stmt.name]
        out = bytearray()
        for i, text in enumerate(stmt.operands):
            value = self.evaluate(self.parse_expr(text, stmt), pc + i * size, stmt.equs_before)
            if not -(1 << (8 * size - 1)) <= value < 1 << (8 * size):
                room = "a byte" if size == 1 else f"{size} bytes"
                raise _Error(f"{stmt.name}: value {value} does not fit in {room}")
            out += (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
        return bytes(out)

    # -- result ---------------------------------------------------------------------------------

    def image(self, contents: dict[str, bytearray]) -> Image:
        """The rx segment (code and read-only data) and the rw segment, whose tail from the
        first zero-filled section on is not in the file."""
        segments = []
        for writable in (False, True):
            secs = [s for s in self.sections.values() if (_rank(s) >= _RW_RANK) == writable]
            secs = [s for s in secs if s.size]
            if not secs:
                continue
            start = min(s.base for s in secs)
            end = max(s.base + s.size for s in secs)
            file_end = max((s.base + s.size for s in secs if not s.nobits), default=start)
            data = bytearray(file_end - start)
            for s in secs:
                if not s.nobits:
                    data[s.base - start : s.base - start + s.size] = contents[s.name]
            flags = "rw" if writable else ("rx" if any(s.executable for s in secs) else "r")
            segments.append(Segment(start, bytes(data), end - start, flags))
        if not segments:
            raise AsmError(f"{self.source}: no instructions or data")
        symbols = {name: self.address_of(place) for name, place in self.labels.items()
                   if not name.startswith(".L")}  # fmt: skip
        entry = symbols.get("_start", self.sections[".text"].base)
        return Image(entry, tuple(segments), symbols, self.source)


def assemble(text: str, source: str = "<asm>") -> Image:
    """Assemble ``text`` (named ``source`` in error messages) into a loadable image."""
    asm = Assembler(text, source)
    asm.pass1()
    asm.place()
    return asm.image(asm.pass2())
