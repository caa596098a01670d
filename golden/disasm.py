"""The disassembler: 32-bit words -> assembly text that :mod:`reconverge.golden.asm` assembles
back to the same words. Operands are printed by the syntax recorded in
:data:`reconverge.golden.isa.SPECS`; the common aliases (``li``, ``mv``, ``j``, ``ret``,
``beqz``, ``csrr``, ...) are shown as GNU ``objdump`` shows them. Branch and jump targets are
absolute addresses (the assembler takes an address and subtracts the pc)."""

from __future__ import annotations

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
)

_CSR_BY_NUMBER = {number: name for name, number in CSR_NAMES.items()}
REG_RA = 1


def _reg(n: int) -> str:
    return ABI_NAMES[n]


def _csr(n: int) -> str:
    return _CSR_BY_NUMBER.get(n, f"{n:#x}")


def _fence_set(bits: int) -> str:
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
        Syntax.CSR: lambda: f"{r(ins.rd)}, {_csr(ins.csr)}, {r(ins.rs1)}",
        Syntax.CSRI: lambda: f"{r(ins.rd)}, {_csr(ins.csr)}, {ins.imm}",
        Syntax.FENCE: lambda: f"{_fence_set(ins.pred)}, {_fence_set(ins.succ)}",
        Syntax.NONE: lambda: "",
        Syntax.TARGET: lambda: target,
    }[ins.spec.syntax]()


#: Aliases: (base mnemonic, condition on the fields, alias mnemonic, operands).
_Alias = tuple[str, Callable[[Instr], bool], str, Callable[[Instr, str], str]]
_ALIASES: tuple[_Alias, ...] = (
    ("addi", lambda i: i.rd == 0 and i.rs1 == 0 and i.imm == 0, "nop", lambda i, t: ""),
    ("addi", lambda i: i.rs1 == 0, "li", lambda i, t: f"{_reg(i.rd)}, {i.imm}"),
    ("addi", lambda i: i.imm == 0, "mv", lambda i, t: f"{_reg(i.rd)}, {_reg(i.rs1)}"),
    ("xori", lambda i: i.imm == -1, "not", lambda i, t: f"{_reg(i.rd)}, {_reg(i.rs1)}"),
    ("sub", lambda i: i.rs1 == 0, "neg", lambda i, t: f"{_reg(i.rd)}, {_reg(i.rs2)}"),
    ("sltiu", lambda i: i.imm == 1, "seqz", lambda i, t: f"{_reg(i.rd)}, {_reg(i.rs1)}"),
    ("sltu", lambda i: i.rs1 == 0, "snez", lambda i, t: f"{_reg(i.rd)}, {_reg(i.rs2)}"),
    ("jal", lambda i: i.rd == 0, "j", lambda i, t: t),
    ("jal", lambda i: i.rd == REG_RA, "jal", lambda i, t: t),
    ("jalr", lambda i: i.rd == 0 and i.rs1 == REG_RA and i.imm == 0, "ret", lambda i, t: ""),
    ("jalr", lambda i: i.rd == 0 and i.imm == 0, "jr", lambda i, t: _reg(i.rs1)),
    ("jalr", lambda i: i.rd == REG_RA and i.imm == 0, "jalr", lambda i, t: _reg(i.rs1)),
    ("beq", lambda i: i.rs2 == 0, "beqz", lambda i, t: f"{_reg(i.rs1)}, {t}"),
    ("bne", lambda i: i.rs2 == 0, "bnez", lambda i, t: f"{_reg(i.rs1)}, {t}"),
    ("blt", lambda i: i.rs2 == 0, "bltz", lambda i, t: f"{_reg(i.rs1)}, {t}"),
    ("bge", lambda i: i.rs2 == 0, "bgez", lambda i, t: f"{_reg(i.rs1)}, {t}"),
    ("blt", lambda i: i.rs1 == 0, "bgtz", lambda i, t: f"{_reg(i.rs2)}, {t}"),
    ("bge", lambda i: i.rs1 == 0, "blez", lambda i, t: f"{_reg(i.rs2)}, {t}"),
    ("csrrs", lambda i: i.rs1 == 0, "csrr", lambda i, t: f"{_reg(i.rd)}, {_csr(i.csr)}"),
    ("csrrw", lambda i: i.rd == 0, "csrw", lambda i, t: f"{_csr(i.csr)}, {_reg(i.rs1)}"),
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
    text = None
    for base, cond, alias, ops in _ALIASES:
        if base == ins.name and cond(ins):
            text = f"{alias:<8}{ops(ins, target)}".rstrip()
            break
    if text is None:
        suffix = ".aq" * ins.aq + ".rl" * ins.rl
        text = f"{ins.name + suffix:<8}{_operands(ins, target)}".rstrip()
    if target_addr is not None and label is not None:
        name = label(target_addr)
        if name:
            text += f"  # <{name}>"
    return text


def disassemble(word: int, pc: int = 0) -> str:
    """One word at ``pc`` as text; an undecodable word becomes ``.word 0x...``."""
    try:
        return format_instr(decode(word), pc)
    except IllegalInstruction:
        return f".word   {word & MASK32:#010x}"


def _labeller(symbols: Mapping[str, int]) -> Callable[[int], str]:
    """Name of an address: the symbol at it, else ``nearest+offset``."""
    by_addr = sorted((value, name) for name, value in symbols.items())

    def label(addr: int) -> str:
        best = None
        for value, name in by_addr:
            if value > addr:
                break
            if best is None or value > best[0]:
                best = (value, name)
        if best is None:
            return ""
        return best[1] if best[0] == addr else f"{best[1]}+{addr - best[0]:#x}"

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
            try:
                text = format_instr(decode(word), pc, label)
            except IllegalInstruction:
                text = f".word   {word:#010x}"
            lines.append(f"  {pc:08x}:  {word:08x}  {text}")
    return lines
