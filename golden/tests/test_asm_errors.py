"""Assembler errors: every class of mistake is an AsmError reading ``file:line: <what>``, and
``reconverge asm`` writes no output file when there is one."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconverge.golden import cli
from reconverge.golden.asm import AsmError, assemble

#: (case id, the offending line, its message). Each line is assembled as line 3 of a program.
ERRORS = [
    ("unknown instruction", "  frob a0, a1", "unknown instruction 'frob'"),
    ("unknown directive", "  .frob 1", "unknown directive .frob"),
    ("bad register", "  addi q5, a0, 1", "expected a register, not 'q5'"),
    (
        "bad memory operand",
        "  lw a0, 4(q5)",
        "expected a memory operand offset(register), not '4(q5)'",
    ),
    ("too few operands", "  addi a0, a1", "addi takes 3 operands, got 2"),
    ("too many operands", "  ret a0", "ret takes 0 operands, got 1"),
    ("pseudo operand count", "  call a0, a1, f", "call takes 1 or 2 operands, got 3"),
    ("I immediate", "  addi a0, a0, 2048", "addi: immediate 2048 out of range -2048..2047"),
    ("S offset", "  sw a0, -2049(sp)", "sw: immediate -2049 out of range -2048..2047"),
    ("shift amount", "  slli a0, a0, 32", "slli: immediate 32 out of range 0..31"),
    ("U immediate", "  lui a0, 0x100000", "lui: immediate 1048576 out of range 0..1048575"),
    ("CSR immediate", "  csrwi tid, 32", "csrwi: csrrwi: immediate 32 out of range 0..31"),
    ("CSR number", "  csrr a0, 0x1000", "csrr: csrrs: CSR number 0x1000 out of range"),
    ("li beyond 32 bits", "  li a0, 0x100000000", "li: value 0x100000000 does not fit in 32 bits"),
    ("word too wide", "  .word 0x100000000", ".word: value 4294967296 does not fit in 4 bytes"),
    ("byte too wide", "  .byte -129", ".byte: value -129 does not fit in a byte"),
    (
        "branch to an address out of reach",
        "  beq a0, a1, 0x80010000",
        "beq: target is +65532 bytes away, beyond its reach (±4 KiB)",
    ),
    (
        "jump out of reach",
        "  j . + 0x100000",
        "j: target is +1048576 bytes away, beyond its reach (±1 MiB)",
    ),
    (
        "jal out of reach back",
        "  jal . - 0x100002",
        "jal: target is -1048578 bytes away, beyond its reach (±1 MiB)",
    ),
    (
        "hint out of reach",
        "  rhint . + 0x100000",
        "rhint: target is +1048576 bytes away, beyond its reach (±1 MiB)",
    ),
    (
        "misaligned branch",
        "  bne a0, a1, . + 6 + 1",
        "bne: target is +7 bytes away, not a multiple of 2",
    ),
    ("misaligned hint", "  rhint . + 2", "rhint: target is +2 bytes away, not a multiple of 4"),
    ("undefined symbol", "  j nowhere", "undefined symbol 'nowhere'"),
    ("undefined branch target", "  beqz a0, nowhere", "undefined symbol 'nowhere'"),
    ("undefined in data", "  .word nowhere + 4", "undefined symbol 'nowhere'"),
    ("duplicate label", "_start: nop", "symbol '_start' already defined (line 2)"),
    (
        "label named like a symbol",
        "  .equ _start, 4",
        "symbol '_start' already defined as a label (line 2)",
    ),
    ("undefined 1f", "  j 1f", "local label 1f: no label 1: after this line"),
    ("undefined 1b", "  j 7b", "local label 7b: no label 7: before this line"),
    ("expression ends early", "  li a0, 1 +", "expression '1 +' ends too early"),
    ("unbalanced parenthesis", "  li a0, (1 + 2", "expression '(1 + 2' ends too early"),
    ("stray character", "  li a0, 1 @ 2", "cannot parse expression '1 @ 2' at '@ 2'"),
    ("extra token", "  li a0, 1 2", "unexpected '2' in expression '1 2'"),
    ("division by zero", "  li a0, 1 / (2 - 2)", "division by zero in expression"),
    (
        "unknown relocation",
        "  lui a0, %high(x)",
        "unknown relocation %high (known: %hi, %lo, %pcrel_hi, %pcrel_lo)",
    ),
    (
        "pcrel_lo without auipc",
        "  addi a0, a0, %pcrel_lo(_start)",
        "%pcrel_lo: no auipc with %pcrel_hi at 0x80000000 before this line",
    ),
    (
        "self-defined symbol",
        "  .equ A, A + 1 ; .word A",
        "symbol 'A' is defined in terms of itself",
    ),
    ("AMO offset", "  amoadd.w a0, a1, 4(a2)", "amoadd.w takes no address offset: write (rs1)"),
    ("AMO ordering", "  amoadd.w.aq.rl a0, a1, (a2)", "unknown instruction 'amoadd.w.aq.rl'"),
    ("fence set", "  fence rx, w", "fence operand must be a combination of i, o, r, w, not 'rx'"),
    ("alignment", "  .balign 3", ".balign: alignment 3 is not a power of two up to 65536"),
    ("alignment power", "  .p2align 17", ".p2align 17: alignment too large"),
    ("negative space", "  .space -1", ".space size -1 is negative"),
    (
        "space size not constant",
        "  .space _start",
        ".space size must be a constant known here, not '_start'",
    ),
    ("bad string", "  .ascii abc", "expected a string in double quotes, not 'abc'"),
    ("bad escape", '  .ascii "a\\qb"', 'unknown escape \\q in "a\\qb"'),
    ("section name", "  .section", ".section needs a section name"),
    ("equ operands", "  .equ X", ".equ takes a name and a value"),
    ("globl name", "  .globl 1x", ".globl: '1x' is not a symbol name"),
    ("word into .bss", "  .bss ; .word 1", ".word: .bss holds no data (only .space / .zero)"),
    ("instruction into .bss", "  .bss ; nop", "nop: .bss holds no data (only .space / .zero)"),
    ("string into .bss", '  .bss ; .ascii "x"', ".ascii: .bss holds only zeros"),
    ("fill into .bss", "  .bss ; .space 4, 1", ".space: .bss holds only zeros"),
    ("fill into nobits", '  .section .b, "aw", @nobits ; .zero 2, 9', ".zero: .b holds only zeros"),
]


@pytest.mark.parametrize(("line", "message"), [e[1:] for e in ERRORS], ids=[e[0] for e in ERRORS])
def test_error_names_file_line_and_cause(line: str, message: str) -> None:
    source = f"  .text\n_start: nop\n{line}\n  nop\n"
    with pytest.raises(AsmError) as info:
        assemble(source, "prog.S")
    assert str(info.value) == f"prog.S:3: {message}"


def test_far_branch_in_its_own_section_is_no_error() -> None:
    """Beyond ±4 KiB in the same section GNU as (and so this assembler) relaxes a conditional
    branch into the inverted branch over a jal: no error, 8 bytes."""
    image = assemble("_start: beq a0, a1, far\n  .space 8192\nfar: nop\n")
    assert image.read_word(0x8000_0000) == 0x00B5_1463  # bne a0, a1, . + 8
    assert image.read_word(0x8000_0004) == 0x0040_206F  # jal x0, far (+0x2004)


def test_error_in_a_later_line_counts_lines_of_block_comments() -> None:
    with pytest.raises(AsmError, match=r"^c\.S:4: unknown instruction 'oops'$"):
        assemble("/* one\n two\n three */ nop\noops\n", "c.S")


def test_empty_program() -> None:
    with pytest.raises(AsmError) as info:
        assemble("# nothing\n", "empty.S")
    assert str(info.value) == "empty.S: no instructions or data"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ("_start:\n  frobnicate a0\n", "bad.S:2: unknown instruction 'frobnicate'"),
        ("_start:\n  nop\n  j nowhere\n", "bad.S:3: undefined symbol 'nowhere'"),  # pass 2
    ],
)
def test_cli_asm_writes_nothing_on_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str, message: str
) -> None:
    src, out, kept = tmp_path / "bad.S", tmp_path / "out.elf", tmp_path / "kept.elf"
    src.write_text(source)
    kept.write_bytes(b"previous build")
    assert cli.main(["asm", str(src), "-o", str(out)]) == 2
    assert cli.main(["asm", str(src), "-o", str(kept)]) == 2
    assert not out.exists()
    assert kept.read_bytes() == b"previous build"
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
