"""The assembler against GNU as -mno-relax + ld: every instruction form, pseudo-instruction,
directive and expression form assembles to the same bytes at the same addresses.

One generated source holds every case, each behind its own label ``case_N``; both assemblers
build it once and every case is compared by its label's address and its bytes, so a mismatch
names the source text of the case that differs.
"""

from __future__ import annotations

import contextlib
import itertools
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from reconverge.golden import asm
from reconverge.golden.asm import assemble
from reconverge.golden.image import Image
from reconverge.golden.isa import CSR_NAMES, SPECS, Fmt, IllegalInstruction, Spec, Syntax, decode
from reconverge.golden.memmap import GLOBAL_BASE
from reconverge.golden.testing import gnu


@dataclass(frozen=True)
class Case:
    """Source lines assembled at a label of their own in ``section`` (the directive)."""

    source: str
    section: str = ".text"


# ----------------------------------------------------------------------------------------------
# Every instruction of the encoding table, with several operand choices per syntax.

REGS3 = ("a0, a1, a2", "zero, ra, t6", "x31, x15, x16", "s11, fp, sp")
I_IMMS = ("0", "1", "-1", "2047", "-2048", "0x7ff", "-0x800", "0xfffff800", "%lo(data_sym)")
SHAMTS = ("0", "1", "31", "0x1f")
OFFSETS = ("0(a1)", "(a1)", "-2048(sp)", "2047(t6)", "-4(x31)", "0xffffffff(s0)",
           "%lo(data_sym)(a0)", "%lo(data_sym+4)(x5)")  # fmt: skip
U_IMMS = ("0", "1", "0xfffff", "0x80000", "%hi(data_sym)", "%hi(0x12345800)")
AMO_OPERANDS = ("a0, a1, (a2)", "zero, t6, 0(sp)", "x31, x0, (x1)")
LR_OPERANDS = ("a0, (a2)", "zero, 0(sp)", "x31, (x1)")
AMO_ORDERINGS = ("", ".aq", ".rl", ".aqrl")
CSR_OPERANDS = ("a0, 0xcc0, a1", "zero, 0xfff, t6", "x31, 0, x0", "s1, tid, a5")
CSRI_OPERANDS = ("a0, 0xcc6, 0", "zero, warpsize, 31", "t6, 0x123, 17")
FENCE_OPERANDS = ("", "iorw, iorw", "rw, rw", "r, w", "i, o", "w, iorw", "io, ir")


def branch_cases(name: str) -> list[str]:
    """Backward and forward targets by local label, the branch itself, the extreme offsets."""
    return [
        f"1: nop\n  {name} a0, a1, 1b",
        f"  {name} zero, t6, 1f\n  nop\n1:",
        f"  {name} x31, x1, .",
        f"  {name} s0, a5, . - 4096",
        f"  {name} a2, a3, . + 4094",
        f"  {name} t0, t1, 2f + 8\n2: nop\n  nop\n  nop",
    ]


def instruction_cases(spec: Spec) -> list[str]:
    """Sources of ``spec`` with its operand choices."""
    n, syn = spec.name, spec.syntax
    if syn is Syntax.RD_RS1_RS2:
        return [f"  {n} {regs}" for regs in REGS3]
    if syn is Syntax.RD_RS1_IMM:
        imms = SHAMTS if spec.fmt is Fmt.SHIFT else I_IMMS
        pairs = zip(itertools.cycle(REGS3), imms, strict=False)
        return [f"  {n} {regs.rsplit(',', 1)[0]}, {imm}" for regs, imm in pairs]
    if syn is Syntax.RD_IMM_RS1 and n == "jalr":
        return ["  jalr ra, 0(a1)", "  jalr a0, -2048(a1)", "  jalr zero, 2047(t0)",
                "  jalr x31, -1(x31)"]  # fmt: skip
    if syn in (Syntax.RD_IMM_RS1, Syntax.RS2_IMM_RS1):
        regs = itertools.cycle(("a0", "zero", "t6", "x17"))
        return [f"  {n} {reg}, {off}" for reg, off in zip(regs, OFFSETS, strict=False)]
    if syn is Syntax.RS1_RS2_TARGET:
        return branch_cases(n)
    if syn is Syntax.RD_IMM:
        imms = (*U_IMMS, "%pcrel_hi(data_sym)") if n == "auipc" else U_IMMS
        pairs = zip(itertools.cycle(("a0", "zero", "t6", "x17")), imms, strict=False)
        return [f"  {n} {reg}, {imm}" for reg, imm in pairs]
    if syn is Syntax.RD_TARGET:
        return ["1: nop\n  jal 1b", "  jal a0, 1f\n1:", "  jal zero, . + 0xffffe",
                "  jal ra, . - 0x100000", "  jal x31, text_sym", "  jal fwd_sym"]  # fmt: skip
    if syn is Syntax.AMO:
        return [f"  {n}{order} {ops}" for order in AMO_ORDERINGS for ops in AMO_OPERANDS]
    if syn is Syntax.LR:
        return [f"  {n}{order} {ops}" for order in AMO_ORDERINGS for ops in LR_OPERANDS]
    if syn is Syntax.CSR:
        return [f"  {n} {ops}" for ops in CSR_OPERANDS]
    if syn is Syntax.CSRI:
        return [f"  {n} {ops}" for ops in CSRI_OPERANDS]
    if syn is Syntax.FENCE:
        return [f"  {n} {ops}".rstrip() for ops in FENCE_OPERANDS]
    if syn is Syntax.TARGET:
        return ["1: nop\n  rhint 1b", "  rhint 1f\n  nop\n1:", "  rhint . + 0xffffc",
                "  rhint . - 0x100000"]  # fmt: skip
    assert syn is Syntax.NONE, syn
    return [f"  {n}"]


CSR_NAME_CASES = [f"  csrrs t0, {name}, zero" for name in CSR_NAMES]

#: Branch reach with real labels: -4096 bytes back, +4088 forward. Beyond reach, GNU as turns
#: a conditional branch into the inverted branch over a jal, as it does for a branch to another
#: section. (A forward branch at +4092 or +4094 bytes is left out: both forms fit there, and
#: which one GNU as picks depends on its internal size estimates.)
BRANCH_REACH = """\
3: .space 4096
  bgeu a0, a1, 3b
  blt a0, a1, 3f
  .space 4084
3: nop
4: .space 5000
  bne t0, t1, 4b
  beqz a0, 4f
  bgtu a1, a2, 4f
  .space 5000
4: nop
  beq a0, a1, more_sym
  bnez a0, more_sym
  .equ near, 5f + 4
  .equ far, 4b - 4
  bltu a0, a1, near
  bgeu a0, a1, far
5: nop
  nop
"""

# ----------------------------------------------------------------------------------------------
# Pseudo-instructions.

LI_VALUES = ("0", "1", "-1", "2047", "-2047", "-2048", "2048", "-2049", "4096", "0x7fffffff",
             "0x80000000", "-0x80000000", "0xffffffff", "0x12345000", "0x12345fff", "0x12345800",
             "0x7ffff800", "0xfffff800", "0xfffff7ff", "0x800", "CONST", "SMALL", "BIG",
             "CONST + 1", "'a'")  # fmt: skip

PSEUDO_CASES = [
    *(f"  li a0, {value}" for value in LI_VALUES),
    "  li x31, -5",
    "  li zero, 0x12345678",
    "  la a0, data_sym",
    "  la t6, text_sym",
    "  la x1, fwd_sym",
    "  la a1, data_sym + 8",
    "  lla a2, data_sym",
    "  lla a3, fwd_sym - 4",
    "  mv a0, a1",
    "  mv zero, x31",
    "  not a0, a1",
    "  neg a0, t6",
    "  seqz a0, a1",
    "  snez a0, a1",
    "  sltz a0, a1",
    "  sgtz a0, a1",
    "  zext.b a0, a1",
    "  sext.b a0, a1",
    "  sext.h t6, x31",
    "  zext.h a0, zero",
    "  sgt a0, a1, a2",
    "  sgtu t6, zero, x31",
    "1: nop\n  j 1b",
    "  j 1f\n1:",
    "  j . + 0xffffe",
    "  j text_sym",
    "  jr a0",
    "  jr ra",
    "  ret",
    "  jalr a1",
    "  jalr a2, a3",
    "  jalr a2, 4(a3)",
    "  jalr a2, a3, -4",
    "  jalr a2, (a3)",
    "  jalr 8(a3)",
    "  jalr a3, 8",
    "  jr 4(a0)",
    "  jr a0, -4",
    "  jump text_sym, t0",
    "  jump fwd_sym, x31",
    "  call text_sym",
    "  call fwd_sym",
    "  call a1, text_sym",
    "  call t0, fwd_sym",
    "  tail text_sym",
    "  tail fwd_sym",
    "  nop",
    *(
        f"1: nop\n  {b} a0, 1b\n  {b} t6, 1f\n  {b} zero, .\n1:"
        for b in ("beqz", "bnez", "bltz", "bgez", "blez", "bgtz")
    ),
    *(f"1: nop\n  {b} a0, a1, 1b\n  {b} t6, zero, 1f\n1:" for b in ("bgt", "ble", "bgtu", "bleu")),
    "  csrr a0, tid",
    "  csrr t6, 0xcc5",
    "  csrw 0xcc0, a1",
    "  csrs laneid, a2",
    "  csrc 0x7ff, t6",
    "  csrwi 0xcc0, 31",
    "  csrsi warpid, 0",
    "  csrci 0xcc6, 17",
    "  csrw tid, 5",
    "  csrs 0xcc0, 31",
    "  csrc ntid, 0",
    "  csrrw a0, 0xcc0, 5",
    "  csrrs a0, tid, 1",
    "  csrrc zero, 0xcc1, 2",
    *(f"  {load} a0, data_sym" for load in ("lb", "lh", "lw", "lbu", "lhu")),
    "  lw t6, data_sym + 4",
    "  lw x1, fwd_sym",
    *(f"  {store} a0, data_sym, t0" for store in ("sb", "sh", "sw")),
    "  sw t6, data_sym + 8, x31",
    "  sw zero, fwd_sym, a5",
]

# ----------------------------------------------------------------------------------------------
# Relocation functions, local labels, expressions.

RELOCATION_CASES = [
    "  lui a0, %hi(data_sym)\n  addi a0, a0, %lo(data_sym)",
    "  lui a0, %hi(data_sym + 0x7ff)\n  lw a1, %lo(data_sym + 0x7ff)(a0)",
    "  lui t0, %hi(fwd_sym)\n  sw a1, %lo(fwd_sym)(t0)\n  jalr ra, %lo(fwd_sym)(t0)",
    "1: auipc a0, %pcrel_hi(data_sym)\n  addi a0, a0, %pcrel_lo(1b)",
    "1: auipc a0, %pcrel_hi(data_sym + 12)\n  lw a1, %pcrel_lo(1b)(a0)\n  sw a1, %pcrel_lo(1b)(a0)",
    "2: auipc t1, %pcrel_hi(fwd_sym)\n  jalr ra, %pcrel_lo(2b)(t1)",
    "here: auipc a0, %pcrel_hi(text_sym)\n  addi a0, a0, %pcrel_lo(here)",
]

LOCAL_LABEL_CASES = [
    "1: nop\n1: nop\n  j 1b\n  j 1f\n1: nop\n  j 1b",
    "7: 8: nop\n  beq a0, a1, 7b\n  bne a0, a1, 8b\n  beq a0, a1, 9f\n9:",
    "10: nop ; 11: nop ; j 10b ; j 11b",
]

EXPRESSION_CASES = [
    "  addi a0, a0, (1 << 4) | 3",
    "  addi a0, a0, -(2 + 3) * 4",
    "  addi a0, a0, 2 + 3 & 1",
    "  addi a0, a0, 1 << 2 + 1",
    "  addi a0, a0, 6 / 4 * 2",
    "  addi a0, a0, -7 / 2",
    "  addi a0, a0, -7 % 2",
    "  addi a0, a0, 1 | 2 + 4",
    "  addi a0, a0, 8 - 2 - 1",
    "  addi a0, a0, 5 ^ 3 | 8",
    "  addi a0, a0, ~0",
    "  addi a0, a0, ~5 + 1",
    "  addi a0, a0, !0 + !5",
    "  addi a0, a0, 3 == 3",
    "  addi a0, a0, 2 < 3",
    "  addi a0, a0, 2 >= 3",
    "  addi a0, a0, 1 <> 2",
    "  addi a0, a0, 3 && 4",
    "  addi a0, a0, 0 || 5",
    "  addi a0, a0, 5 ! 1",
    "  addi a0, a0, 'a'",
    "  addi a0, a0, 'a + 1",
    "  addi a0, a0, '\\n'",
    "  addi a0, a0, 017",
    "  addi a0, a0, 0b101",
    "  addi a0, a0, 0X1F",
    "  addi a0, a0, CONST & 0x7ff",
    "  addi a0, a0, SMALL * 2",
    "  addi a0, a0, +5",
    "  addi a0, a0, - - 5",
    "  andi a0, a0, 0xffffffff",
]

# ----------------------------------------------------------------------------------------------
# Directives and sections.

DATA_CASES = [
    Case("  .word 1, -1, 0xffffffff, -2147483648, 0x12345678", ".data"),
    Case("  .word data_sym, text_sym + 4, fwd_sym, 1f - 2f\n2: .word .\n1:", ".data"),
    Case("  .word 'a', CONST, BIG, SMALL, 3 * (4 + 5)", ".data"),
    Case("  .half 0xffff, -32768, 1, 0x1234\n  .short 7\n  .2byte -1", ".data"),
    Case("  .byte 255, -128, 'x', 0", ".data"),
    Case("  .long 5\n  .int -5\n  .4byte 0xabcdef01", ".data"),
    Case("  .byte 1\n  .word 0x11223344\n  .half 0x5566", ".data"),
    Case("  .space 3\n  .byte 1", ".data"),
    Case("  .space 5, 0xab\n  .byte 1", ".data"),
    Case("  .zero 4\n  .byte 1", ".data"),
    Case("  .zero 3, 7\n  .byte 1", ".data"),
    Case("  .skip 2, 0x5a", ".data"),
    Case("  .byte 1\n  .align 2\n  .byte 2", ".data"),
    Case("  .byte 1\n  .align 3, 0xee\n  .byte 2", ".data"),
    Case("  .byte 1\n  .p2align 2\n  .byte 2\n  .p2align 4, 0x11", ".data"),
    Case("  .byte 1\n  .balign 8\n  .byte 2\n  .balign 4, 0x22\n  .balign 1", ".data"),
    Case('  .ascii "abc"\n  .ascii "d\\te\\n\\"\\\\\\101\\x41#;"', ".data"),
    Case('  .asciz "xy", ""\n  .string "s"\n  .ascii "p", "q"', ".data"),
    Case(
        'msg: .ascii "hello"\n  len = . - msg\n  .word len\n  .equ here_data, .\n  .word here_data',
        ".data",
    ),
    Case(
        "  .set V, 1\n  .word V\n  .set V, V + 1\n  .word V\n  .word LATER\n  .set LATER, 5\n"
        "  .set LATER, 6\n  .equ E, 4\n  .equ E, 5\n  .word E",
        ".data",
    ),
    Case("  .word 1b\n  .word 1f\n1:  .word 1b", ".data"),
    Case("  .globl data_glob\ndata_glob: .word data_glob", ".data"),
    Case("  .byte 0x44", ".rodata"),
    Case("  .word 0x55667788, data_sym\n  .align 3\n  .byte 1", ".rodata"),
    Case('  .asciz "read-only"', ".section .rodata"),
    Case("  .byte 0x66\n  .align 2\n  .word 0x77", '.section .mydata, "aw"'),
    Case("  .word 0x88", '.section .mydata, "aw", @progbits'),
    Case("  .space 6", ".bss"),
    Case("bss_word: .zero 4\n  .align 3\nbss_end: .space 1", ".bss"),
    Case("  .space 2", '.section .sbss, "aw", @nobits'),
]

TEXT_DIRECTIVE_CASES = [
    "  nop\n  .byte 1\n  .align 2\n  nop",
    "  nop\n  .byte 1, 2\n  .align 2\n  nop",
    "  nop\n  .byte 1, 2, 3\n  .align 3\n  nop",
    "  nop\n  .p2align 4\n  nop",
    "  nop\n  .p2align 4, 0x11\n  nop",
    "  .byte 2\n  .balign 8, 0x22\n  nop",
    "  .balign 16\n  .word 0x12345678, text_sym\n  .half 1, 2",
    "  .space 8\n  .zero 4, 0x13",
    "  .globl text_glob\ntext_glob: nop",
    "  nop # a comment\n  /* a block\n  comment */ nop",
    "a_label: b_label: nop ; nop",
    "  NOP\n  ADDI a0, a1, 1",
]

#: Cases in a second executable section.
MORE_TEXT_CASES = [
    Case("  nop\nmore_sym: j text_sym", '.section .text.more, "ax"'),
    Case("  .byte 1\n  .balign 4\n  call fwd_sym", '.section .text.more, "ax", @progbits'),
]

PRELUDE = """\
  .equ CONST, 0x12345678
  .set SMALL, -5
  BIG = 0xfffff000
  .globl _start
  .text
_start:
text_sym:
  nop
  .data
data_sym:
  .word 0x11223344, 0x55667788, 0x99aabbcc, 0xddeeff00
"""

EPILOGUE = """\
  .text
fwd_sym:
  ecall
"""


def all_cases() -> list[Case]:
    text = [
        *(src for spec in SPECS for src in instruction_cases(spec)),
        *CSR_NAME_CASES,
        BRANCH_REACH,
        *PSEUDO_CASES,
        *RELOCATION_CASES,
        *LOCAL_LABEL_CASES,
        *EXPRESSION_CASES,
        *TEXT_DIRECTIVE_CASES,
    ]
    return [*(Case(src) for src in text), *DATA_CASES, *MORE_TEXT_CASES]


CASES = all_cases()
SOURCE = (
    PRELUDE
    + "".join(f"  {case.section}\ncase_{i}:\n{case.source}\n" for i, case in enumerate(CASES))
    + EPILOGUE
)

# ----------------------------------------------------------------------------------------------


def memory_of(image: Image) -> bytes:
    """The image's memory from 0x80000000 to its highest address (gaps and tails as zeros)."""
    buf = bytearray(max(seg.end for seg in image.segments) - GLOBAL_BASE)
    for seg in image.segments:
        buf[seg.vaddr - GLOBAL_BASE : seg.vaddr - GLOBAL_BASE + len(seg.data)] = seg.data
    return bytes(buf)


def words(data: bytes, start: int = 0, count: int = 6) -> str:
    """Up to ``count`` little-endian words of ``data`` from byte ``start``."""
    shown = data[start : start + 4 * count]
    text = " ".join(shown[i : i + 4][::-1].hex() for i in range(0, len(shown), 4)) or "(none)"
    return text + (" ..." if len(data) > start + 4 * count else "")


def differences(ours: Image, gnu_build: gnu.Build) -> list[str]:
    """Every case whose address or bytes differ, named by its source (one address difference
    per section, since the cases after it are shifted too)."""
    mine, theirs = memory_of(ours), gnu_build.memory
    theirs += bytes(max(0, len(mine) - len(theirs)))  # .bss: zeros in both
    starts = sorted(
        {ours.symbols[f"case_{i}"] for i in range(len(CASES))} | {len(mine) + GLOBAL_BASE}
    )
    problems, shifted = [], set()
    for i, case in enumerate(CASES):
        if case.section in shifted:
            continue
        label = f"case_{i}"
        address, gnu_address = ours.symbols[label], gnu_build.symbols[label]
        where = f"{case.section} case {i}:\n{case.source}\n"
        if address != gnu_address:
            problems.append(f"{where}  at {address:#x}, GNU at {gnu_address:#x}")
            shifted.add(case.section)
            continue
        end = next(a for a in starts if a > address) - GLOBAL_BASE
        a, b = mine[address - GLOBAL_BASE : end], theirs[address - GLOBAL_BASE : end]
        if a != b:
            first = next(j for j, (x, y) in enumerate(zip(a, b, strict=True)) if x != y) & ~3
            at = f"  from {address + first:#x}:"
            problems.append(f"{where}{at} ours {words(a, first)}\n{at} GNU  {words(b, first)}")
    return problems


def mnemonics(source: str) -> set[str]:
    """The first word of every statement of ``source`` after its labels."""
    found = set()
    for statement in re.split(r"[;\n]", source):
        statement = re.sub(r"^\s*(?:[\w.$]+:\s*)*", "", statement)
        if statement:
            found.add(statement.split()[0])
    return found


def test_cases_cover_every_instruction() -> None:
    """Every instruction of the encoding table (AMOs with every ordering) and every
    pseudo-instruction the assembler knows occurs in the cases."""
    code = next(seg for seg in assemble(SOURCE).segments if "x" in seg.flags).data
    decoded = set()
    for offset in range(0, len(code) - 3, 4):
        with contextlib.suppress(IllegalInstruction):  # data, or misaligned by a .byte case
            decoded.add(decode(int.from_bytes(code[offset : offset + 4], "little")))
    assert {ins.name for ins in decoded} >= {spec.name for spec in SPECS}
    assert {(ins.aq, ins.rl) for ins in decoded if ins.spec.is_amo} == {
        (0, 0),
        (0, 1),
        (1, 0),
        (1, 1),
    }
    used = mnemonics("\n".join(case.source for case in CASES))
    assert set(asm._PSEUDOS) - used == set()


@pytest.mark.gnu
def test_every_form_assembles_as_gnu_does(tmp_path: Path) -> None:
    image = assemble(SOURCE, "forms.S")
    data_address = image.symbols["data_sym"]
    reference = gnu.build(gnu.gnu_spelling(SOURCE), data_address, tmp_path, "forms")
    problems = differences(image, reference)
    shown = "\n".join(problems[:12])
    assert not problems, f"{len(problems)} of {len(CASES)} cases differ from GNU:\n{shown}"
    memory = memory_of(image)  # and nothing differs outside the cases either
    assert memory[: len(reference.memory)] == reference.memory
    assert not any(memory[len(reference.memory) :])  # the .bss tail
    assert image.entry == reference.symbols["_start"] == GLOBAL_BASE
    for name in ("fwd_sym", "data_glob", "text_glob", "bss_end"):
        assert image.symbols[name] == reference.symbols[name], name
