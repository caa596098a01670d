"""The disassembler: every instruction round-trips through the assembler, program listings name
their labels, and the text agrees with GNU objdump (its base forms with ``-M no-aliases``, its
alias choices by default)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconverge.golden.asm import assemble
from reconverge.golden.disasm import disassemble, disassemble_image
from reconverge.golden.elf import write_elf
from reconverge.golden.isa import (
    ABI_NAMES,
    CSR_NAMES,
    IMM_FORMATS,
    ORDERED_FORMATS,
    REG_NUMBERS,
    SPECS,
    Fmt,
    Instr,
    Spec,
    Syntax,
    decode,
    encode,
    imm_range,
)
from reconverge.golden.memmap import GLOBAL_BASE
from reconverge.golden.testing import gnu

#: Instructions GNU binutils does not know (the SIMT custom-0 ones).
GNU_UNKNOWN = frozenset({"bar", "rhint"})


def instr_strategy(spec: Spec) -> st.SearchStrategy[Instr]:
    """Instructions of ``spec`` with every field it encodes drawn from its legal range."""
    reg = st.integers(0, 31)
    fields: dict[str, st.SearchStrategy[int]] = {}
    if spec.writes_rd:
        fields["rd"] = reg
    if spec.reads_rs1:
        fields["rs1"] = reg
    if spec.reads_rs2:
        fields["rs2"] = reg
    if spec.fmt in IMM_FORMATS:
        lo, hi, align = imm_range(spec.fmt)
        fields["imm"] = st.integers(lo // align, hi // align).map(lambda k: k * align)
    if spec.fmt in (Fmt.CSR, Fmt.CSRI):
        fields["csr"] = st.integers(0, 0xFFF)
    if spec.fmt in ORDERED_FORMATS:
        fields["aq"] = fields["rl"] = st.integers(0, 1)
    if spec.fmt is Fmt.FENCE:
        fields["pred"] = fields["succ"] = st.integers(0, 15)
    return st.builds(Instr, st.just(spec), **fields)


def assemble_at(text: str, pc: int) -> int:
    """The word ``text`` assembles to at address ``pc`` (text placed at 0x80000000 + k*4)."""
    image = assemble(f"  .space {pc - GLOBAL_BASE}\n  {text}\n", "roundtrip.S")
    word = image.read_word(pc)
    assert word is not None
    return word


@pytest.mark.parametrize("spec", SPECS, ids=[s.name for s in SPECS])
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_every_instruction_round_trips(spec: Spec, data: st.DataObject) -> None:
    ins = data.draw(instr_strategy(spec))
    pc = GLOBAL_BASE + 4 * data.draw(st.integers(0, 1023))
    word = encode(ins)
    text = disassemble(word, pc)
    assert not text.startswith(".word"), text
    assert assemble_at(text, pc) == word, f"{word:#010x} -> {text!r}"
    assert decode(word) == ins


def test_word_with_ignored_bits_is_shown_as_word() -> None:
    """fence.tso (fm = 1000) decodes as a plain fence but is listed as the word it is."""
    text = disassemble(0x8330000F)
    assert text.startswith(".word   0x8330000f") and "fence   rw, rw" in text
    assert assemble_at(text, GLOBAL_BASE) == 0x8330000F
    assert disassemble(0x0000_0000) == ".word   0x00000000"


LISTED = """\
  .globl _start
_start:
  li   a0, 10
loop:
  addi a0, a0, -1
  bnez a0, loop
  call done
  .word 0xffffffff
done:
  ret
  .data
value: .word 5
"""


def test_disassemble_image_names_labels_and_targets() -> None:
    lines = disassemble_image(assemble(LISTED, "listed.S"))
    assert lines == [
        "_start:",
        "  80000000:  00a00513  li      a0, 10",
        "loop:",
        "  80000004:  fff50513  addi    a0, a0, -1",
        "  80000008:  fe051ee3  bnez    a0, 0x80000004  # <loop>",
        "  8000000c:  00000097  auipc   ra, 0x0",
        "  80000010:  00c080e7  jalr    12(ra)",
        "  80000014:  ffffffff  .word   0xffffffff",
        "done:",
        "  80000018:  00008067  ret",
    ]


# ----------------------------------------------------------------------------------------------
# Against GNU objdump.


def sample_words() -> list[int]:
    """Every instruction GNU knows with register and immediate edge values and random fields."""
    rng = random.Random(2)
    words = []
    for spec in SPECS:
        if spec.name in GNU_UNKNOWN:
            continue
        lo, hi, align = imm_range(spec.fmt) if spec.fmt in IMM_FORMATS else (0, 0, 1)
        imms = {lo, hi, 0, align, -align if lo < 0 else hi}
        for rd, rs1, rs2 in ((0, 0, 0), (1, 1, 1), (10, 0, 11), (0, 5, 0), (31, 30, 29)):
            for imm in imms:
                words.append(
                    encode(Instr(spec, rd=rd, rs1=rs1, rs2=rs2, imm=imm, csr=0xCC0 + rd % 7))
                )
        for _ in range(20):  # CSRs from the custom range, which objdump has no names for
            fields = {k: rng.randrange(32) for k in ("rd", "rs1", "rs2")}
            imm = rng.randrange(lo // align, hi // align + 1) * align
            csr, aq, rl = rng.randrange(0xCC0, 0xD00), rng.randrange(2), rng.randrange(2)
            pred, succ = rng.randrange(16), rng.randrange(16)
            ins = Instr(spec, **fields, imm=imm, csr=csr, aq=aq, rl=rl, pred=pred, succ=succ)
            words.append(encode(ins))
    return list(dict.fromkeys(words))


@pytest.fixture(scope="module")
def sample_elf(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[int], Path]:
    """The sample words as the text of an ELF we write (objdump sees no mapping symbols in it,
    so it disassembles every word)."""
    words = sample_words()
    source = "_start:\n" + "".join(f"  .word {w:#010x}\n" for w in words)
    path = tmp_path_factory.mktemp("disasm") / "sample.elf"
    path.write_bytes(write_elf(assemble(source, "sample.S")))
    return words, path


Operand = str | int | tuple[int, str]


def gnu_operands(text: str, has_target: bool) -> list[Operand]:
    """objdump operands: registers as names, numbers as ints (a target: hex without 0x),
    ``imm(reg)`` as a pair, fence sets as text (``unknown``, the empty set, as 0)."""
    ops: list[Operand] = []
    parts = [p.strip() for p in re.sub(r"<[^>]*>", "", text).split(",") if p.strip()]
    for i, part in enumerate(parts):
        mem = re.fullmatch(r"(-?\w*)\((\w+)\)", part)
        if mem:
            ops.append((int(mem[1] or "0", 0), mem[2]))
        elif part in REG_NUMBERS or re.fullmatch(r"[iorw]+", part):
            ops.append(part)
        elif part == "unknown":
            ops.append(0)
        else:
            ops.append(int(part, 16) if has_target and i == len(parts) - 1 else int(part, 0))
    return ops


def base_form(ins: Instr, pc: int) -> tuple[str, list[Operand]]:
    """Mnemonic and operands of the base instruction, in objdump -M no-aliases terms, from our
    decoder's fields."""
    r = ABI_NAMES
    sets: list[Operand] = [
        "".join(c for c, b in zip("iorw", (8, 4, 2, 1), strict=True) if s & b) or 0
        for s in (ins.pred, ins.succ)
    ]
    operands: list[Operand] = {
        Syntax.RD_RS1_RS2: [r[ins.rd], r[ins.rs1], r[ins.rs2]],
        Syntax.RD_RS1_IMM: [r[ins.rd], r[ins.rs1], ins.imm],
        Syntax.RD_IMM_RS1: [r[ins.rd], (ins.imm, r[ins.rs1])],
        Syntax.RS2_IMM_RS1: [r[ins.rs2], (ins.imm, r[ins.rs1])],
        Syntax.RS1_RS2_TARGET: [r[ins.rs1], r[ins.rs2], (pc + ins.imm) & 0xFFFFFFFF],
        Syntax.RD_IMM: [r[ins.rd], ins.imm],
        Syntax.RD_TARGET: [r[ins.rd], (pc + ins.imm) & 0xFFFFFFFF],
        Syntax.AMO: [r[ins.rd], r[ins.rs2], (0, r[ins.rs1])],
        Syntax.LR: [r[ins.rd], (0, r[ins.rs1])],
        Syntax.CSR: [r[ins.rd], ins.csr, r[ins.rs1]],
        Syntax.CSRI: [r[ins.rd], ins.csr, ins.imm],
        Syntax.FENCE: sets,
        Syntax.NONE: [],
    }[ins.spec.syntax]
    order = {(0, 0): "", (1, 0): ".aq", (0, 1): ".rl", (1, 1): ".aqrl"}[ins.aq, ins.rl]
    return ins.name + order, operands


@pytest.mark.gnu
def test_decoder_agrees_with_objdump_no_aliases(sample_elf: tuple[list[int], Path]) -> None:
    words, elf = sample_elf
    listing = gnu.objdump(elf, "-M", "no-aliases")
    assert [line.word for line in listing] == words
    problems = []
    for line in listing:
        ins = decode(line.word)
        has_target = ins.spec.syntax in (Syntax.RS1_RS2_TARGET, Syntax.RD_TARGET)
        theirs = (line.mnemonic, gnu_operands(line.operands, has_target))
        ours = base_form(ins, line.address)
        if ours != theirs:
            problems.append(f"{line.word:08x}: objdump {theirs}, ours {ours}")
    assert not problems, "\n".join(problems[:20])


#: Where binutils 2.40 objdump spells an instruction differently from us: it prints OP-IMM
#: instructions under the register mnemonic (``add a0,a1,-1``) and the immediate CSR forms
#: under the register ones (``csrw 0xcc0,5``); we print ``addi`` and ``csrwi``, which GNU as
#: also accepts.
IMMEDIATE_FORMS = {"add", "and", "or", "xor", "sll", "srl", "sra", "slt", "sltu",
                   "csrrw", "csrrs", "csrrc", "csrw", "csrs", "csrc"}  # fmt: skip


def canonical(mnemonic: str, operands: list[Operand]) -> tuple[str, list[Operand]]:
    if mnemonic in IMMEDIATE_FORMS and operands and isinstance(operands[-1], int):
        mnemonic += "i"
    return mnemonic, operands


def our_operands(text: str) -> list[Operand]:
    """Our operands in the same terms (CSR names as numbers, targets as ints)."""
    ops: list[Operand] = []
    for part in (p.strip() for p in text.split("#")[0].split(",") if p.strip()):
        mem = re.fullmatch(r"(-?\w*)\((\w+)\)", part)
        if mem:
            ops.append((int(mem[1] or "0", 0), mem[2]))
        elif part in CSR_NAMES:
            ops.append(int(CSR_NAMES[part]))
        elif part in REG_NUMBERS or re.fullmatch(r"[iorw]+", part):
            ops.append(part)
        else:
            ops.append(int(part, 0))
    return ops


@pytest.mark.gnu
def test_aliases_agree_with_objdump(sample_elf: tuple[list[int], Path]) -> None:
    words, elf = sample_elf
    problems = []
    listing = gnu.objdump(elf)
    assert [line.word for line in listing] == words
    for line in listing:
        has_target = decode(line.word).spec.syntax in (Syntax.RS1_RS2_TARGET, Syntax.RD_TARGET)
        theirs = canonical(line.mnemonic, gnu_operands(line.operands, has_target))
        mnemonic, _, operands = disassemble(line.word, line.address).partition(" ")
        ours = (mnemonic, our_operands(operands))
        if ours != theirs:
            problems.append(f"{line.word:08x}: objdump {theirs}, ours {ours}")
    assert not problems, "\n".join(problems[:20])
