"""The assembler: RISC-V assembly text (GNU ``as`` syntax) -> a loadable
:class:`~reconverge.golden.image.Image`.

Base instructions are parsed from the operand syntax recorded in
:data:`reconverge.golden.isa.SPECS` (no second opcode table). On top of them: the usual
pseudo-instructions, each expanded exactly as GNU ``as`` expands it without relaxation (so the
bytes equal those of GNU ``as`` + ``ld``, which a test checks), labels (numeric local labels
``1:`` / ``1b`` / ``1f`` included), expressions with ``%hi``, ``%lo``, ``%pcrel_hi`` and
``%pcrel_lo``, and the directives programs need.

Layout: executable sections from :data:`~reconverge.golden.memmap.GLOBAL_BASE` (read-only data
after them) form the ``rx`` segment; writable data and ``.bss`` follow, 16-byte aligned, as the
``rw`` segment whose zero-filled tail is ``.bss``. The entry point is ``_start``, else the start
of the text. Every error is an :class:`AsmError` reading ``file:line: message``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from reconverge.golden.errors import UserError
from reconverge.golden.image import Image, Segment
from reconverge.golden.isa import (
    CSR_NAMES,
    MASK32,
    REG_NUMBERS,
    SPEC_BY_NAME,
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
REG_RA, REG_T1 = 1, 6


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
    | (?P<char>'(?:\\.|[^\\'])')
    | (?P<reloc>%[a-z_]+)
    | (?P<name>[A-Za-z_.$][A-Za-z0-9_.$]*)
    | (?P<op><<|>>|[-+*/%&|^~()!])
    )""",
    re.VERBOSE,
)

_RELOCS = ("%hi", "%lo", "%pcrel_hi", "%pcrel_lo")
_BINARY: dict[str, tuple[int, Callable[[int, int], int]]] = {
    "|": (1, lambda a, b: a | b),
    "^": (2, lambda a, b: a ^ b),
    "&": (3, lambda a, b: a & b),
    "<<": (4, lambda a, b: a << (b & 63)),
    ">>": (4, lambda a, b: a >> (b & 63)),
    "+": (5, lambda a, b: a + b),
    "-": (5, lambda a, b: a - b),
    "*": (6, lambda a, b: a * b),
    "/": (6, lambda a, b: int(a / b) if b else _div_zero()),
    "%": (6, lambda a, b: a - b * int(a / b) if b else _div_zero()),
}


def _div_zero() -> int:
    raise _Error("division by zero in expression")


_ESCAPES = {"n": 10, "t": 9, "r": 13, "0": 0, "\\": 92, "'": 39, '"': 34, "b": 8, "f": 12}


@dataclass(frozen=True)
class Expr:
    """A parsed expression: ``op`` is "num", "sym", "neg", "not", "lnot", a binary operator or a
    relocation function; ``args`` its operands (an int or str for leaves)."""

    op: str
    args: tuple[Expr | int | str, ...]

    def symbols(self) -> set[str]:
        if self.op == "sym":
            return {str(self.args[0])}
        return set().union(*(a.symbols() for a in self.args if isinstance(a, Expr)))


class _Parser:
    def __init__(self, text: str, local_ref: Callable[[str], str]) -> None:
        self.tokens: list[tuple[str, str]] = []
        pos, text = 0, text.strip()
        while pos < len(text):
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                raise _Error(f"cannot parse expression {text!r} at {text[pos:]!r}")
            kind = m.lastgroup or ""
            self.tokens.append((kind, m.group(kind)))
            pos = m.end()
            while pos < len(text) and text[pos].isspace():
                pos += 1
        self.text = text
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
        if kind == "op" and value in "-~!+":
            operand = self.unary()
            if value == "+":
                return operand
            return Expr({"-": "neg", "~": "not", "!": "lnot"}[value], (operand,))
        if kind == "op" and value == "(":
            inner = self.binary(1)
            self.expect(")")
            return inner
        if kind == "num":
            octal = len(value) > 1 and value[0] == "0" and value.isdigit()  # GNU: 017 is octal
            return Expr("num", (int(value, 8) if octal else int(value, 0),))
        if kind == "char":
            body = value[1:-1]
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
    line: int
    section: str
    offset: int  # within the section
    kind: str  # "insn" or "data"
    name: str  # mnemonic, or data directive
    operands: list[str]
    locals_: dict[str, str]  # numeric local label references resolved at this statement
    size: int = 0


@dataclass
class _Section:
    name: str
    executable: bool
    writable: bool
    nobits: bool
    size: int = 0
    align: int = 4
    base: int = 0
    data: bytearray = field(default_factory=bytearray)


_DATA_SIZES = {
    ".word": 4, ".long": 4, ".4byte": 4, ".int": 4,
    ".half": 2, ".short": 2, ".2byte": 2,
    ".byte": 1, ".1byte": 1,
}  # fmt: skip
_IGNORED = frozenset(
    {".type", ".size", ".file", ".ident", ".attribute", ".option", ".local", ".weak", ".hidden",
     ".cfi_startproc", ".cfi_endproc", ".cfi_def_cfa_offset", ".cfi_offset", ".cfi_restore",
     ".cfi_def_cfa", ".cfi_sections", ".addrsig", ".addrsig_sym", ".p2alignl"}
)  # fmt: skip


def _section_kind(name: str, flags: str | None, nobits: bool) -> _Section:
    if flags is not None:
        return _Section(name, "x" in flags, "w" in flags, nobits)
    if name.startswith(".text") or name == ".init":
        return _Section(name, True, False, False)
    if name.startswith((".rodata", ".srodata")):
        return _Section(name, False, False, False)
    if name.startswith((".bss", ".sbss", ".tbss")):
        return _Section(name, False, True, True)
    return _Section(name, False, True, nobits)


def _split_operands(text: str) -> list[str]:
    """Split at top-level commas (not inside parentheses or quotes)."""
    parts, depth, current, quote = [], 0, [], ""
    for ch in text:
        if quote:
            current.append(ch)
            if ch == quote and (len(current) < 2 or current[-2] != "\\"):
                quote = ""
            continue
        if ch in "\"'":
            quote = ch
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append("".join(current).strip())
            current = []
            continue
        current.append(ch)
    tail = "".join(current).strip()
    if tail or parts:
        parts.append(tail)
    return parts


_LITERAL = re.compile(r"\"(?:\\.|[^\\\"])*\"|'(?:\\.|[^\\'])'")


def _strip_comment(line: str) -> str:
    """Remove a ``#`` comment that is not inside a string or character literal."""
    i = 0
    while i < len(line):
        literal = _LITERAL.match(line, i)
        if literal:
            i = literal.end()
        elif line[i] == "#":
            return line[:i]
        else:
            i += 1
    return line


def _string_literal(text: str) -> bytes:
    text = text.strip()
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        raise _Error(f"expected a string in double quotes, not {text!r}")
    out, i, body = bytearray(), 0, text[1:-1]
    while i < len(body):
        ch = body[i]
        if ch == "\\" and i + 1 < len(body):
            nxt = body[i + 1]
            if nxt in "01234567":
                digits = re.match(r"[0-7]{1,3}", body[i + 1 :])[0]  # type: ignore[index]
                out.append(int(digits, 8) & 0xFF)
                i += 1 + len(digits)
                continue
            if nxt == "x":
                digits = re.match(r"[0-9a-fA-F]+", body[i + 2 :])
                if digits is None:
                    raise _Error(f"bad \\x escape in {text}")
                out.append(int(digits[0], 16) & 0xFF)
                i += 2 + len(digits[0])
                continue
            if nxt not in _ESCAPES:
                raise _Error(f"unknown escape \\{nxt} in {text}")
            out.append(_ESCAPES[nxt])
            i += 2
            continue
        out += ch.encode()
        i += 1
    return bytes(out)


# ----------------------------------------------------------------------------------------------
# Operands of one instruction


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

    def value(self, i: int | str) -> int:
        text = self.texts[i] if isinstance(i, int) else i
        return self.asm.evaluate(self.asm.parse_expr(text, self.stmt), self.pc)

    def mem(self, i: int) -> tuple[int, int]:
        """``imm(reg)`` or ``(reg)`` -> (imm, reg)."""
        text = self.texts[i].strip()
        m = _MEMORY_OPERAND.fullmatch(text)
        if not m or m[2] not in REG_NUMBERS:
            raise _Error(f"expected a memory operand offset(register), not {text!r}")
        return (self.value(m[1]) if m[1].strip() else 0), REG_NUMBERS[m[2]]

    def csr(self, i: int) -> int:
        text = self.texts[i].strip()
        return CSR_NAMES[text] if text in CSR_NAMES else self.value(i)


def parse_reg(text: str) -> int:
    text = text.strip()
    if text not in REG_NUMBERS:
        raise _Error(f"expected a register, not {text!r}")
    return REG_NUMBERS[text]


def _fence_set(text: str) -> int:
    text = text.strip().lower()
    if not text or any(c not in "iorw" for c in text) or len(set(text)) != len(text):
        raise _Error(f"fence operand must be a combination of i, o, r, w, not {text!r}")
    return sum(bit for c, bit in (("i", 8), ("o", 4), ("r", 2), ("w", 1)) if c in text)


def _base(spec: Spec, a: _Operands) -> list[Instr]:
    """A base instruction, its operands parsed by the syntax the encoding table records."""
    syn = spec.syntax
    if syn is Syntax.RD_RS1_RS2:
        a.count(3)
        return [Instr(spec, rd=a.reg(0), rs1=a.reg(1), rs2=a.reg(2))]
    if syn is Syntax.RD_RS1_IMM:
        a.count(3)
        return [Instr(spec, rd=a.reg(0), rs1=a.reg(1), imm=a.value(2))]
    if syn is Syntax.RD_IMM_RS1:
        if spec.name == "jalr":
            return _jalr(spec, a)
        a.count(2)
        imm, rs1 = a.mem(1)
        return [Instr(spec, rd=a.reg(0), rs1=rs1, imm=imm)]
    if syn is Syntax.RS2_IMM_RS1:
        a.count(2)
        imm, rs1 = a.mem(1)
        return [Instr(spec, rs2=a.reg(0), rs1=rs1, imm=imm)]
    if syn is Syntax.RS1_RS2_TARGET:
        a.count(3)
        return [Instr(spec, rs1=a.reg(0), rs2=a.reg(1), imm=a.value(2) - a.pc)]
    if syn is Syntax.RD_IMM:
        a.count(2)
        return [Instr(spec, rd=a.reg(0), imm=a.value(1))]
    if syn is Syntax.RD_TARGET:
        rd = REG_RA if a.count(1, 2) == 1 else a.reg(0)
        return [Instr(spec, rd=rd, imm=a.value(-1) - a.pc)]
    if syn is Syntax.AMO:
        a.count(3)
        offset, rs1 = a.mem(2)
        if offset:
            raise _Error(f"{spec.name} takes no address offset: write (rs1)")
        return [Instr(spec, rd=a.reg(0), rs2=a.reg(1), rs1=rs1)]
    if syn is Syntax.CSR:
        a.count(3)
        return [Instr(spec, rd=a.reg(0), csr=a.csr(1), rs1=a.reg(2))]
    if syn is Syntax.CSRI:
        a.count(3)
        return [Instr(spec, rd=a.reg(0), csr=a.csr(1), imm=a.value(2))]
    if syn is Syntax.FENCE:
        if a.count(0, 2) == 0:
            return [Instr(spec)]
        return [Instr(spec, pred=_fence_set(a.texts[0]), succ=_fence_set(a.texts[1]))]
    if syn is Syntax.TARGET:
        a.count(1)
        return [Instr(spec, imm=a.value(0) - a.pc)]
    a.count(0)
    return [Instr(spec)]


def _jalr(spec: Spec, a: _Operands) -> list[Instr]:
    """``jalr rs``, ``jalr rd, rs``, ``jalr rd, imm(rs)`` and ``jalr rd, rs, imm``."""
    n = a.count(1, 2, 3)
    if n == 1:
        return [Instr(spec, rd=REG_RA, rs1=a.reg(0))]
    if n == 3:
        return [Instr(spec, rd=a.reg(0), rs1=a.reg(1), imm=a.value(2))]
    if a.is_reg(1):
        return [Instr(spec, rd=a.reg(0), rs1=a.reg(1))]
    imm, rs1 = a.mem(1)
    return [Instr(spec, rd=a.reg(0), rs1=rs1, imm=imm)]


# ----------------------------------------------------------------------------------------------
# Pseudo-instructions, expanded as GNU as does with relaxation off.


def _ins(name: str, **fields: int) -> Instr:
    return Instr(SPEC_BY_NAME[name], **fields)


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
    rd = a.reg(0)
    if a.asm.is_constant(a.texts[1], a.stmt):
        return li_sequence(rd, a.value(1))
    value = a.value(1)  # a symbolic value: absolute %hi / %lo, as GNU as does
    return [_ins("lui", rd=rd, imm=hi20(value)), _ins("addi", rd=rd, rs1=rd, imm=lo12(value))]


def _la(a: _Operands) -> list[Instr]:
    a.count(2)
    rd = a.reg(0)
    return _pcrel(rd, "addi", a.value(1) - a.pc, rd=rd, rs1=rd)


def _call(link: int | None) -> Callable[[_Operands], list[Instr]]:
    """``call [rd,] sym`` (link in rd, default ra) or ``tail sym`` (through t1, no link)."""

    def expand(a: _Operands) -> list[Instr]:
        if link is None:
            a.count(1)
            tmp, rd = REG_T1, 0
        else:
            tmp = rd = REG_RA if a.count(1, 2) == 1 else a.reg(0)
        return _pcrel(tmp, "jalr", a.value(-1) - a.pc, rd=rd, rs1=tmp)

    return expand


def _load_symbol(name: str) -> Callable[[_Operands], list[Instr]]:
    """``lw rd, sym``: auipc rd + load through rd (only when the operand is not ``imm(rs)``)."""

    def expand(a: _Operands) -> list[Instr]:
        rd = a.reg(0)
        return _pcrel(rd, name, a.value(1) - a.pc, rd=rd, rs1=rd)

    return expand


def _store_symbol(name: str) -> Callable[[_Operands], list[Instr]]:
    """``sw rs, sym, rt``: auipc rt + store through rt."""

    def expand(a: _Operands) -> list[Instr]:
        a.count(3)
        rt = a.reg(2)
        return _pcrel(rt, name, a.value(1) - a.pc, rs2=a.reg(0), rs1=rt)

    return expand


def _alias(
    name: str, build: Callable[[_Operands], dict[str, int]], n: int
) -> Callable[[_Operands], list[Instr]]:
    def expand(a: _Operands) -> list[Instr]:
        a.count(n)
        return [_ins(name, **build(a))]

    return expand


def _branch_zero(name: str, zero_first: bool) -> Callable[[_Operands], list[Instr]]:
    """``beqz rs, t`` = ``beq rs, x0, t``; ``bgtz rs, t`` = ``blt x0, rs, t`` (zero first)."""

    def fields(a: _Operands) -> dict[str, int]:
        rs = a.reg(0)
        return {"rs1": 0 if zero_first else rs, "rs2": rs if zero_first else 0,
                "imm": a.value(1) - a.pc}  # fmt: skip

    return _alias(name, fields, 2)


def _branch_swapped(name: str) -> Callable[[_Operands], list[Instr]]:
    """``bgt a, b, t`` = ``blt b, a, t`` (and ble, bgtu, bleu alike)."""
    return _alias(name, lambda a: {"rs1": a.reg(1), "rs2": a.reg(0), "imm": a.value(2) - a.pc}, 3)


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
    "zext.b": _alias("andi", lambda a: {"rd": a.reg(0), "rs1": a.reg(1), "imm": 255}, 2),
    "j": _alias("jal", lambda a: {"imm": a.value(0) - a.pc}, 1),
    "jr": _alias("jalr", lambda a: {"rs1": a.reg(0)}, 1),
    "ret": _alias("jalr", lambda a: {"rs1": REG_RA}, 0),
    "call": _call(REG_RA),
    "tail": _call(None),
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
    "csrw": _alias("csrrw", lambda a: {"csr": a.csr(0), "rs1": a.reg(1)}, 2),
    "csrs": _alias("csrrs", lambda a: {"csr": a.csr(0), "rs1": a.reg(1)}, 2),
    "csrc": _alias("csrrc", lambda a: {"csr": a.csr(0), "rs1": a.reg(1)}, 2),
    "csrwi": _alias("csrrwi", lambda a: {"csr": a.csr(0), "imm": a.value(1)}, 2),
    "csrsi": _alias("csrrsi", lambda a: {"csr": a.csr(0), "imm": a.value(1)}, 2),
    "csrci": _alias("csrrci", lambda a: {"csr": a.csr(0), "imm": a.value(1)}, 2),
}

_LOADS = ("lb", "lh", "lw", "lbu", "lhu")
_STORES = ("sb", "sh", "sw")


_MEMORY_OPERAND = re.compile(r"(.*)\(\s*([A-Za-z0-9_$]+)\s*\)\s*")


def _is_memory_operand(text: str) -> bool:
    m = _MEMORY_OPERAND.fullmatch(text)
    return m is not None and m[2] in REG_NUMBERS


def _symbolic_access(stmt: _Stmt) -> bool:
    """``lw rd, sym`` / ``sw rs, sym, rt``: a load or store addressed by a symbol."""
    if stmt.name in _LOADS:
        return len(stmt.operands) == 2 and not _is_memory_operand(stmt.operands[1])
    if stmt.name in _STORES:
        return len(stmt.operands) == 3
    return False


# ----------------------------------------------------------------------------------------------
# The assembler


class Assembler:
    """Two passes: the first parses statements, sizes them and places labels within their
    sections; the sections are then laid out; the second evaluates operands and encodes."""

    def __init__(self, text: str, source: str) -> None:
        self.source = source
        self.sections: dict[str, _Section] = {}
        self.labels: dict[str, tuple[str, int]] = {}  # name -> (section, offset)
        self.label_lines: dict[str, int] = {}
        self.equs: dict[str, tuple[Expr, int]] = {}  # name -> (expression, line)
        self.stmts: list[_Stmt] = []
        self.local_count: dict[str, int] = {}
        self.pcrel_hi: dict[int, int] = {}  # address of an auipc -> its %pcrel_hi offset
        self.section = self._enter(".text")
        self._evaluating: set[str] = set()
        self.text = text

    # -- pass 1 -------------------------------------------------------------------------------

    def _enter(self, name: str, flags: str | None = None, nobits: bool = False) -> _Section:
        if name not in self.sections:
            self.sections[name] = _section_kind(name, flags, nobits)
        self.section = self.sections[name]
        return self.section

    def error(self, line: int, message: str) -> AsmError:
        return AsmError(f"{self.source}:{line}: {message}")

    def pass1(self) -> None:
        text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m[0].count("\n"), self.text, flags=re.S)
        for number, raw in enumerate(text.splitlines(), start=1):
            for piece in _strip_comment(raw).split(";"):
                try:
                    self._statement(piece.strip(), number)
                except _Error as exc:
                    raise self.error(number, str(exc)) from None

    def _local_ref(self, token: str) -> str:
        digits, direction = token[:-1], token[-1]
        seen = self.local_count.get(digits, 0)
        if direction == "b":
            if seen == 0:
                raise _Error(f"local label {token}: no label {digits}: before this line")
            return f".L{digits}\x02{seen - 1}"
        return f".L{digits}\x02{seen}"

    def parse_expr(self, text: str, stmt: _Stmt | None = None) -> Expr:
        if stmt is None:
            return _Parser(text, self._local_ref).parse()
        return _Parser(text, stmt.locals_.__getitem__).parse()

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
            raise _Error(f"symbol {name!r} already defined (line {self.label_lines.get(name)})")
        self.labels[name] = (self.section.name, self.section.size)
        self.label_lines[name] = line

    def _statement(self, text: str, line: int) -> None:
        while True:
            m = re.match(r"([A-Za-z_.$][A-Za-z0-9_.$]*|[0-9]+)\s*:(?!:)", text)
            if not m:
                break
            self._define_label(m[1], line)
            text = text[m.end() :].strip()
        if not text:
            return
        m = re.fullmatch(r"([A-Za-z_.$][A-Za-z0-9_.$]*)\s*=\s*(.+)", text)
        if m:
            self._equ(m[1], m[2], line)
            return
        head, rest = re.match(r"(\S+)\s*(.*)", text).groups()  # type: ignore[union-attr]
        head = head if head.startswith(".") else head.lower()
        operands = _split_operands(rest)
        if head.startswith("."):
            self._directive(head, operands, rest.strip(), line)
            return
        stmt = _Stmt(line, self.section.name, self.section.size, "insn", head, operands,
                     self._resolve_locals(operands))  # fmt: skip
        stmt.size = self._insn_size(stmt)
        self._emit(stmt)

    def _emit(self, stmt: _Stmt) -> None:
        if self.section.nobits:
            raise _Error(f"{stmt.name}: {self.section.name} holds no data (only .space / .zero)")
        self.stmts.append(stmt)
        self.section.size += stmt.size

    def _insn_size(self, stmt: _Stmt) -> int:
        name = stmt.name
        if name == "li":
            return self._li_size(stmt)
        if name in ("la", "lla", "call", "tail"):
            return 8
        if _symbolic_access(stmt):
            return 8
        if name in _PSEUDOS or _amo_spec(name) is not None or name in SPEC_BY_NAME:
            return 4
        raise _Error(f"unknown instruction {name!r}")

    def _li_size(self, stmt: _Stmt) -> int:
        if len(stmt.operands) != 2 or not self.is_constant(stmt.operands[1], stmt):
            return 8
        return 4 * len(li_sequence(0, self.evaluate(self.parse_expr(stmt.operands[1], stmt), 0)))

    def _equ(self, name: str, text: str, line: int) -> None:
        if name in self.labels:
            raise _Error(
                f"symbol {name!r} already defined as a label (line {self.label_lines[name]})"
            )
        self.equs[name] = (self.parse_expr(text), line)

    def _constant(self, text: str, what: str) -> int:
        expr = self.parse_expr(text)
        if not self._is_constant_expr(expr):
            raise _Error(f"{what} must be a constant known here, not {text!r}")
        return self.evaluate(expr, 0)

    def _align(self, boundary: int, fill: int | None = None) -> None:
        if boundary < 1 or boundary & (boundary - 1):
            raise _Error(f"alignment {boundary} is not a power of two")
        self.section.align = max(self.section.align, boundary)
        pad = -self.section.size % boundary
        if pad:
            stmt = _Stmt(0, self.section.name, self.section.size, "data", "fill", [], {}, pad)
            stmt.operands = ["nop" if self.section.executable and fill is None else str(fill or 0)]
            self.stmts.append(stmt)
            self.section.size += pad

    def _directive(self, name: str, ops: list[str], rest: str, line: int) -> None:
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
                if not re.fullmatch(r"[A-Za-z_.$][A-Za-z0-9_.$]*", sym):
                    raise _Error(f"{name}: {sym!r} is not a symbol name")
        elif name in (".equ", ".set"):
            if len(ops) != 2:
                raise _Error(f"{name} takes a name and a value")
            self._equ(ops[0].strip(), ops[1], line)
        elif name in _DATA_SIZES:
            if not ops:
                raise _Error(f"{name} needs at least one value")
            size = _DATA_SIZES[name]
            stmt = _Stmt(line, self.section.name, self.section.size, "data", name, ops,
                         self._resolve_locals(ops), size * len(ops))  # fmt: skip
            self._emit(stmt)
        elif name in (".space", ".zero", ".skip"):
            if not 1 <= len(ops) <= 2:
                raise _Error(f"{name} takes a size and an optional fill byte")
            size = self._constant(ops[0], f"{name} size")
            if size < 0:
                raise _Error(f"{name} size {size} is negative")
            fill = self._constant(ops[1], f"{name} fill") & 0xFF if len(ops) > 1 else 0
            stmt = _Stmt(line, self.section.name, self.section.size, "data", "fill", [str(fill)],
                         {}, size)  # fmt: skip
            if fill and self.section.nobits:
                raise _Error(f"{name}: {self.section.name} can only hold zeros")
            self.stmts.append(stmt)
            self.section.size += size
        elif name in (".align", ".p2align", ".balign"):
            if not ops:
                raise _Error(f"{name} needs an alignment")
            value = self._constant(ops[0], f"{name} alignment")
            fill = self._constant(ops[1], f"{name} fill") if len(ops) > 1 and ops[1] else None
            self._align(value if name == ".balign" else 1 << value, fill)
        elif name in (".ascii", ".asciz", ".string"):
            data = b"".join(_string_literal(s) + (b"\0" if name != ".ascii" else b"") for s in ops)
            stmt = _Stmt(line, self.section.name, self.section.size, "data", "bytes", [],
                         {}, len(data))  # fmt: skip
            stmt.operands = [data.hex()]
            self._emit(stmt)
        elif name not in _IGNORED:
            raise _Error(f"unknown directive {name}")

    # -- layout -------------------------------------------------------------------------------

    def layout(self) -> None:
        order = sorted(
            self.sections.values(),
            key=lambda s: (not s.executable, s.writable, s.nobits),
        )
        address = GLOBAL_BASE
        started_rw = False
        for sec in order:
            if sec.writable and not started_rw:
                address += -address % DATA_ALIGN
                started_rw = True
            address += -address % sec.align
            sec.base = address
            address += sec.size

    def address_of(self, section: str, offset: int) -> int:
        return self.sections[section].base + offset

    # -- expressions ----------------------------------------------------------------------------

    def is_constant(self, text: str, stmt: _Stmt) -> bool:
        return self._is_constant_expr(self.parse_expr(text, stmt))

    def _is_constant_expr(self, expr: Expr) -> bool:
        """True when ``expr`` uses no label (directly or through .equ): its value is known before
        layout. Undefined symbols count as labels (defined later)."""
        for name in expr.symbols():
            if name in self.equs:
                if name in self._evaluating:
                    return False
                self._evaluating.add(name)
                try:
                    if not self._is_constant_expr(self.equs[name][0]):
                        return False
                finally:
                    self._evaluating.discard(name)
            else:
                return False
        return True

    def symbol_value(self, name: str) -> int:
        if name in self.labels:
            section, offset = self.labels[name]
            return self.address_of(section, offset)
        if name in self.equs:
            if name in self._evaluating:
                raise _Error(f"symbol {name!r} is defined in terms of itself")
            self._evaluating.add(name)
            try:
                return self.evaluate(self.equs[name][0], 0)
            finally:
                self._evaluating.discard(name)
        if name.startswith(".L") and "\x02" in name:
            digits = name[2:].split("\x02")[0]
            raise _Error(f"local label {digits}f: no label {digits}: after this line")
        raise _Error(f"undefined symbol {name!r}")

    def evaluate(self, expr: Expr, pc: int) -> int:
        op, args = expr.op, expr.args
        if op == "num":
            return int(args[0])  # type: ignore[arg-type]
        if op == "sym":
            return pc if args[0] == "." else self.symbol_value(str(args[0]))
        values = [self.evaluate(a, pc) for a in args if isinstance(a, Expr)]
        if op == "neg":
            return -values[0]
        if op == "not":
            return ~values[0]
        if op == "lnot":
            return int(not values[0])
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
        return _BINARY[op][1](values[0], values[1])

    # -- pass 2 ---------------------------------------------------------------------------------

    def pass2(self) -> None:
        for sec in self.sections.values():
            sec.data = bytearray(sec.size)
        for stmt in self.stmts:
            sec = self.sections[stmt.section]
            pc = sec.base + stmt.offset
            try:
                data = self._encode(stmt, pc)
            except _Error as exc:
                raise self.error(stmt.line, str(exc)) from None
            except EncodingError as exc:
                raise self.error(stmt.line, f"{stmt.name}: {exc}") from None
            if len(data) != stmt.size:
                raise self.error(stmt.line, f"{stmt.name}: size changed between passes")
            if not sec.nobits:
                sec.data[stmt.offset : stmt.offset + stmt.size] = data

    def _encode(self, stmt: _Stmt, pc: int) -> bytes:
        if stmt.kind == "data":
            return self._data(stmt, pc)
        instrs = self._expand(stmt, pc)
        for ins in instrs:
            _check_branch_range(ins)
        return b"".join(encode(ins).to_bytes(4, "little") for ins in instrs)

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
        if stmt.name == "fill":
            if stmt.operands == ["nop"]:  # code alignment: zeros up to a word, then nops
                nop = encode(_ins("addi")).to_bytes(4, "little")
                return bytes(stmt.size % 4) + nop * (stmt.size // 4)
            return bytes([int(stmt.operands[0])]) * stmt.size
        if stmt.name == "bytes":
            return bytes.fromhex(stmt.operands[0])
        size = _DATA_SIZES[stmt.name]
        out = bytearray()
        for i, text in enumerate(stmt.operands):
            value = self.evaluate(self.parse_expr(text, stmt), pc + i * size)
            if not -(1 << (8 * size - 1)) <= value < 1 << (8 * size):
                raise _Error(f"{stmt.name}: value {value} does not fit in {size} bytes")
            out += (value & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
        return bytes(out)

    # -- result ---------------------------------------------------------------------------------

    def image(self) -> Image:
        segments = []
        for writable in (False, True):
            secs = [s for s in self.sections.values() if s.writable == writable and s.size]
            if not secs:
                continue
            start = min(s.base for s in secs)
            end = max(s.base + s.size for s in secs)
            with_bytes = [s for s in secs if not s.nobits]
            file_end = max((s.base + s.size for s in with_bytes), default=start)
            data = bytearray(file_end - start)
            for s in with_bytes:
                data[s.base - start : s.base - start + s.size] = s.data
            flags = "rw" if writable else ("rx" if any(s.executable for s in secs) else "r")
            segments.append(Segment(start, bytes(data), end - start, flags))
        if not segments:
            raise AsmError(f"{self.source}: no instructions or data")
        symbols = {
            name: self.symbol_value(name) for name in self.labels if not name.startswith(".L")
        }
        entry = symbols.get("_start", self.sections[".text"].base)
        return Image(entry, tuple(segments), symbols, self.source)


def _amo_spec(name: str) -> tuple[Spec, int, int] | None:
    """``amoadd.w``, ``amoadd.w.aq``, ``.rl``, ``.aqrl`` -> (spec, aq, rl)."""
    m = re.fullmatch(r"(amo[a-z]+\.w)(\.aq)?(\.rl)?", name)
    if m is None or m[1] not in SPEC_BY_NAME:
        return None
    return SPEC_BY_NAME[m[1]], int(m[2] is not None), int(m[3] is not None)


def _check_branch_range(ins: Instr) -> None:
    """Turn the range errors of branches and jumps into messages about the distance."""
    fmt = ins.spec.fmt
    if fmt in (Fmt.B, Fmt.J, Fmt.HINT):
        lo, hi, _ = imm_range(fmt)
        if not lo <= ins.imm <= hi:
            reach = {Fmt.B: "±4 KiB", Fmt.J: "±1 MiB", Fmt.HINT: "±1 MiB"}[fmt]
            raise _Error(
                f"{ins.name}: target is {ins.imm:+d} bytes away, beyond its reach ({reach})"
            )


def assemble(text: str, source: str = "<asm>") -> Image:
    """Assemble ``text`` (named ``source`` in error messages) into a loadable image."""
    asm = Assembler(text, source)
    asm.pass1()
    asm.layout()
    asm.pass2()
    try:
        return asm.image()
    except _Error as exc:
        raise AsmError(f"{source}: {exc}") from None
