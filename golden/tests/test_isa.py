"""The encoding table itself: consistency, documentation freshness, CSR write rules."""

from pathlib import Path

import pytest

from reconverge.golden import isa
from reconverge.golden.isadoc import BEGIN, END, render_table

DOC = Path(__file__).resolve().parents[2] / "docs" / "isa.md"


def test_docs_table_is_generated_from_specs() -> None:
    text = DOC.read_text()
    section = text[text.index(BEGIN) + len(BEGIN) : text.index(END)].strip()
    assert section == render_table(), "docs/isa.md is stale: run `make docs`"


@pytest.mark.parametrize("spec", isa.SPECS, ids=lambda s: s.name)
def test_match_word_decodes_to_its_spec(spec: isa.Spec) -> None:
    assert isa.decode(spec.match).spec is spec


def test_known_gnu_words() -> None:
    # Words from riscv64-unknown-elf-objdump of GNU as output.
    cases = {
        0x02A5C533: ("div", 10, 11, 10),  # div a0, a1, a0
        0x00A5A02F: ("amoadd.w", 0, 11, 10),  # amoadd.w zero, a0, (a1)
        0xCC002573: ("csrrs", 10, 0, 0),  # csrr a0, 0xcc0
        0xFFF00513: ("addi", 10, 0, 0),  # li a0, -1
    }
    for word, (name, rd, rs1, rs2) in cases.items():
        ins = isa.decode(word)
        assert (ins.name, ins.rd, ins.rs1, ins.rs2) == (name, rd, rs1, rs2)
        assert ins.encode() == word


def test_simt_custom0_words() -> None:
    assert isa.decode(0x0000000B).name == "bar"
    hint = isa.decode(0x0100008B)  # .insn j 0x0b, x1, +16
    assert (hint.name, hint.imm) == ("rhint", 16)
    with pytest.raises(isa.IllegalInstruction):
        isa.decode(0x0000010B)  # custom-0 sub-operation 2 does not exist
    with pytest.raises(isa.IllegalInstruction):
        isa.decode(0x0010000B)  # bar with a non-zero immediate


@pytest.mark.parametrize(
    ("text", "writes"),
    [
        ("csrrs a0, x0", False),
        ("csrrs a0, a1", True),
        ("csrrc a0, x0", False),
        ("csrrw a0, x0", True),
        ("csrrsi 0", False),
        ("csrrci 3", True),
        ("csrrwi 0", True),
    ],
)
def test_csr_write_rule(text: str, writes: bool) -> None:
    name, *rest = text.replace(",", " ").split()
    spec = isa.SPEC_BY_NAME[name]
    if spec.fmt is isa.Fmt.CSRI:
        ins = isa.Instr(spec, rd=0, imm=int(rest[0]), csr=isa.Csr.TID)
    else:
        ins = isa.Instr(spec, rd=10, rs1=isa.REG_NUMBERS[rest[1]], csr=isa.Csr.TID)
    assert isa.csr_is_write(ins) is writes


def test_compressed_and_unknown_words_are_illegal() -> None:
    with pytest.raises(isa.IllegalInstruction, match="compressed"):
        isa.decode(0x4501)  # c.li a0, 0
    with pytest.raises(isa.IllegalInstruction, match="no instruction"):
        isa.decode(0x0000007F)


def test_encode_rejects_out_of_range_fields() -> None:
    with pytest.raises(isa.EncodingError, match=r"out of range -2048\.\.2047"):
        isa.Instr(isa.SPEC_BY_NAME["addi"], rd=1, rs1=1, imm=2048).encode()
    with pytest.raises(isa.EncodingError, match="not a multiple of 2"):
        isa.Instr(isa.SPEC_BY_NAME["beq"], imm=3).encode()
    with pytest.raises(isa.EncodingError, match="register rd=32"):
        isa.Instr(isa.SPEC_BY_NAME["add"], rd=32).encode()
