"""The disassembler: 32-bit words -> assembly text that :mod:`reconverge.golden.asm` assembles
back to the same words. Operands are printed by the syntax recorded in
:data:`reconverge.golden.isa.SPECS`; aliases (``li``, ``mv``, ``j``, ``ret``, ``beqz``,
``csrr``, ...) are chosen as GNU ``objdump`` chooses them. Branch and jump targets are absolute
addresses (the assembler takes an address and subtracts the pc). A word that does not decode,
or that decodes but has bits its instruction ignores set (e.g. ``fence.tso``, read as a plain
``fence``), is shown as ``.word``."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping

from reconverge.golden.image import Image
from reconverge.golden.isa import (
    ABI_NAMES,
    CSR_NAMES,
    ILEN_BYTES,
    MASK32,
    IllegalInstruction,
    Instr,
    Syntax,
    decode,
    encode,
)

_CSR_BY_NUMBER = {number: name for name, number in CSR_NAMES.items()}
REG_RA = 1


def _reg(n: int) -> str:
    return ABI_NAMES[n]


def _csr(n: int) -> str:
    return _CSR_BY_NUMBER.get(n, f"{n:#x}")


def _fence_set(bits: int) -> str:
    """A fence predecessor or successor set; ``0`` for the empty set."""
    return "".join(c for c, bit in (("i", 8), ("o", 4), ("r", 2), ("w", 1)) if bits & bit) or "0"


def _operands(ins: Instr, target: str) -> str:
    """The operands of a base instruction, in the order its syntax gives."""
    r = _reg
    return {
        Syntax.RD_RS1_RS2: lambda: f"{r(ins.rd)}, {r(ins.rs1)}, {r(ins.rs2)}",
        Syntax.RD_RS1_IMM: lambda: f"{r(ins.rd)}, {r(ins.rs1)}, {ins.imm}",
        Syntax.RD_IMM_RS1: lambda: f"{r(ins.rd)}, {ins.imm}({r(ins.rs1)})",
        Syntax.RS2_IMM_RS1: lambda: f"{r(ins.rs2)}, {ins.imm}({r(ins.rs1)})",
        Syntax.RS1_RS2_TARGET: lambda: f"{r(ins.rs1)}, {r(ins.rs2)}, {target}",
        Syntax.RD_IMM: lambda: f"{r(ins.rd)}, {ins.imm:#x}",
        Syntax.RD_TARGET: lambda: f"{r(ins.rd)}, {target}",
        Syntax.AMO: lambda: f"{r(ins.rd)}, {r(ins.rs2)}, ({r(ins.rs1)})",
        Syntax.LR: lambda: f"{r(ins.rd)}, ({r(ins.rs1)})",
        Syntax.CSR: lambda: f"{r(ins.rd)}, {_csr(ins.csr)}, {r(ins.rs1)}",
        Syntax.CSRI: lambda: f"{r(ins.rd)}, {_csr(ins.csr)}, {ins.imm}",
        Syntax.FENCE: lambda: f"{_fence_set(ins.pred)}, {_fence_set(ins.succ)}",
        Syntax.NONE: lambda: "",
        Syntax.TARGET: lambda: target,
    }[ins.spec.syntax]()


_Alias = tuple[str, Callable[[Instr], bool], str, Callable[[Instr, str], str]]


def _rd_rs1(i: Instr, t: str) -> str:
    return f"{_reg(i.rd)}, {_reg(i.rs1)}"


def _rd_rs2(i: Instr, t: str) -> str:
    return f"{_reg(i.rd)}, {_reg(i.rs2)}"


def _rs1_target(i: Instr, t: str) -> str:
    return f"{_reg(i.rs1)}, {t}"


def _rs2_target(i: Instr, t: str) -> str:
    return f"{_reg(i.rs2)}, {t}"


def _csr_source(i: Instr, t: str) -> str:
    source = _reg(i.rs1) if i.spec.syntax is Syntax.CSR else str(i.imm)
    return f"{_csr(i.csr)}, {source}"


#: Aliases, in GNU objdump's order of preference: (base mnemonic, condition on the fields,
#: alias mnemonic, operands).
_ALIASES: tuple[_Alias, ...] = (
    ("addi", lambda i: i.rd == 0 and i.rs1 == 0 and i.imm == 0, "nop", lambda i, t: ""),
    ("addi", lambda i: i.rs1 == 0, "li", lambda i, t: f"{_reg(i.rd)}, {i.imm}"),
    ("addi", lambda i: i.imm == 0, "mv", _rd_rs1),
    ("xori", lambda i: i.imm == -1, "not", _rd_rs1),
    ("andi", lambda i: i.imm == 255, "zext.b", _rd_rs1),
    ("sub", lambda i: i.rs1 == 0, "neg", _rd_rs2),
    ("sltiu", lambda i: i.imm == 1, "seqz", _rd_rs1),
    ("sltu", lambda i: i.rs1 == 0, "snez", _rd_rs2),
    ("slt", lambda i: i.rs2 == 0, "sltz", _rd_rs1),
    ("slt", lambda i: i.rs1 == 0, "sgtz", _rd_rs2),
    ("jal", lambda i: i.rd == 0, "j", lambda i, t: t),
    ("jal", lambda i: i.rd == REG_RA, "jal", lambda i, t: t),
    ("jalr", lambda i: i.rd == 0 and i.rs1 == REG_RA and i.imm == 0, "ret", lambda i, t: ""),
    ("jalr", lambda i: i.rd == 0 and i.imm == 0, "jr", lambda i, t: _reg(i.rs1)),
    ("jalr", lambda i: i.rd == 0, "jr", lambda i, t: f"{i.imm}({_reg(i.rs1)})"),
    ("jalr", lambda i: i.rd == REG_RA and i.imm == 0, "jalr", lambda i, t: _reg(i.rs1)),
    ("jalr", lambda i: i.rd == REG_RA, "jalr", lambda i, t: f"{i.imm}({_reg(i.rs1)})"),
    ("jalr", lambda i: i.imm == 0, "jalr", _rd_rs1),
    ("beq", lambda i: i.rs2 == 0, "beqz", _rs1_target),
    ("bne", lambda i: i.rs2 == 0, "bnez", _rs1_target),
    ("blt", lambda i: i.rs2 == 0, "bltz", _rs1_target),
    ("blt", lambda i: i.rs1 == 0, "bgtz", _rs2_target),
    ("bge", lambda i: i.rs1 == 0, "blez", _rs2_target),
    ("bge", lambda i: i.rs2 == 0, "bgez", _rs1_target),
    ("csrrs", lambda i: i.rs1 == 0, "csrr", lambda i, t: f"{_reg(i.rd)}, {_csr(i.csr)}"),
    ("csrrs", lambda i: i.rd == 0, "csrs", _csr_source),
    ("csrrw", lambda i: i.rd == 0, "csrw", _csr_source),
    ("csrrc", lambda i: i.rd == 0, "csrc", _csr_source),
    ("csrrsi", lambda i: i.rd == 0, "csrsi", _csr_source),
    ("csrrwi", lambda i: i.rd == 0, "csrwi", _csr_source),
    ("csrrci", lambda i: i.rd == 0, "csrci", _csr_source),
    ("fence", lambda i: i.pred == i.succ == 0b1111, "fence", lambda i, t: ""),
)


def target_of(ins: Instr, pc: int) -> int | None:
    """The absolute address a branch, ``jal`` or ``rhint`` refers to, else None."""
    if ins.spec.syntax in (Syntax.RS1_RS2_TARGET, Syntax.RD_TARGET, Syntax.TARGET):
        return (pc + ins.imm) & MASK32
    return None


def format_instr(ins: Instr, pc: int, label: Callable[[int], str] | None = None) -> str:
    """``ins`` at ``pc`` as text; ``label`` may name a target address (as ``<name>`` comment)."""
    target_addr = target_of(ins, pc)
    target = f"{target_addr:#x}" if target_addr is not None else ""
    alias = next((a for a in _ALIASES if a[0] == ins.name and a[1](ins)), None)
    if alias is not None:
        mnemonic, operands = alias[2], alias[3](ins, target)
    else:
        order = {(0, 0): "", (1, 0): ".aq", (0, 1): ".rl", (1, 1): ".aqrl"}[ins.aq, ins.rl]
        mnemonic, operands = ins.name + order, _operands(ins, target)
    text = f"{mnemonic:<7} {operands}".rstrip()
    if target_addr is not None and label is not None:
        name = label(target_addr)
        if name:
            text += f"  # <{name}>"
    return text


def _word(word: int) -> str:
    return f".word   {word & MASK32:#010x}"


def disassemble(word: int, pc: int = 0, label: Callable[[int], str] | None = None) -> str:
    """One word at ``pc`` as text: an instruction, or ``.word`` (with the instruction it
    resembles as a comment when only ignored bits keep it from being one)."""
    try:
        ins = decode(word)
    except IllegalInstruction:
        return _word(word)
    text = format_instr(ins, pc, label)
    return text if encode(ins) == word & MASK32 else f"{_word(word)}  # {text}"


def _labeller(symbols: Mapping[str, int]) -> Callable[[int], str]:
    """Name of an address: the (alphabetically first) symbol at it, else ``nearest+offset``."""
    by_addr = sorted((value, name) for name, value in symbols.items())
    values = [value for value, _ in by_addr]

    def label(addr: int) -> str:
        below = bisect.bisect_right(values, addr)
        if below == 0:
            return ""
        value, name = by_addr[bisect.bisect_left(values, values[below - 1])]
        return name if value == addr else f"{name}+{addr - value:#x}"

    return label


def disassemble_image(image: Image) -> list[str]:
    """The executable segments of ``image``: a ``name:`` line before each address a symbol
    names, then ``address:  word  instruction`` per word."""
    label = _labeller(image.symbols)
    lines: list[str] = []
    for seg in sorted(image.segments, key=lambda s: s.vaddr):
        if "x" not in seg.flags:
            continue
        for offset in range(0, len(seg.data) - ILEN_BYTES + 1, ILEN_BYTES):
            pc = seg.vaddr + offset
            name = image.symbol_at(pc)
            if name is not None:
                lines.append(f"{name}:")
            word = int.from_bytes(seg.data[offset : offset + ILEN_BYTES], "little")
            lines.append(f"  {pc:08x}:  {word:08x}  {disassemble(word, pc, label)}")
    return lines
