"""The SM's decoder (hdl/sm/decode.py) against its golden counterpart
(``golden.sm.decode.decode_fields``, through ``golden.isa.decode``): every spec with random
operand bits, random words (mostly illegal), words with a legal opcode and random other bits;
in Amaranth's simulator and, for a fixed sample, the generated Verilog under Icarus."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconverge.golden import isa
from reconverge.golden.sm import decode as golden
from reconverge.hdl.sm.decode import (
    DECODED,
    PREDECODED,
    Decoder,
    Op,
    Predecoder,
    Unit,
    imm_sources,
)
from reconverge.hdl.sm.tests.harness import simulate_amaranth, simulate_icarus, unpack

M32 = isa.MASK32
OPCODES = sorted({int(s.opcode) for s in isa.SPECS})


def spec_words(spec: isa.Spec, rng: random.Random, n: int) -> list[int]:
    """Words of ``spec``: its fixed bits, the other bits all 0, all 1, and random."""
    free = M32 & ~spec.mask
    return [spec.match, spec.match | free] + [
        spec.match | rng.getrandbits(32) & free for _ in range(n)
    ]


words_of_specs = st.builds(
    lambda spec, bits: spec.match | bits & ~spec.mask & M32,
    st.sampled_from(isa.SPECS),
    st.integers(0, M32),
)
random_words = st.integers(0, M32)
opcode_words = st.builds(lambda op, bits: bits & ~0x7F | op, st.sampled_from(OPCODES), random_words)
any_words = st.one_of(words_of_specs, random_words, opcode_words)


def decoded(outputs: list[dict[str, int]]) -> list[dict[str, int]]:
    return [unpack(DECODED, out["instr"]) for out in outputs]


def check(words: list[int], got: list[dict[str, int]]) -> None:
    for word, fields in zip(words, got, strict=True):
        expected = golden.decode_fields(word)
        assert fields == expected, f"{word:#010x}: " + ", ".join(
            f"{k} {fields[k]:#x} != {v:#x}" for k, v in expected.items() if fields[k] != v
        )


def test_layout_has_exactly_the_golden_fields() -> None:
    assert [name for name, _ in DECODED] == list(golden.FIELDS)
    assert [m.name for m in Op] == [golden.op_member(s.name) for s in isa.SPECS]
    assert {m.name: m.value for m in Unit} == {m.name: m.value for m in golden.Unit}


def test_immediate_wiring_reproduces_unpack_imm() -> None:
    """The probed wiring of every format, on random words, against golden's unpacking."""
    rng = random.Random(1)
    for fmt in isa.IMM_FORMATS:
        sources = imm_sources(fmt)
        for word in [0, M32, *(rng.getrandbits(32) for _ in range(200))]:
            wired = sum((word >> k & 1) << j for j, k in enumerate(sources) if k is not None)
            assert wired == golden.datapath_imm(fmt, isa.unpack_imm(fmt, word)), fmt


def test_every_spec_decodes_in_amaranth_sim() -> None:
    rng = random.Random(12)
    words = [w for spec in isa.SPECS for w in spec_words(spec, rng, 24)]
    check(words, decoded(simulate_amaranth(Decoder(), [{"word": w} for w in words])))


@settings(max_examples=15, deadline=None)
@given(st.lists(any_words, min_size=1, max_size=200))
def test_random_words_decode_in_amaranth_sim(words: list[int]) -> None:
    check(words, decoded(simulate_amaranth(Decoder(), [{"word": w} for w in words])))


def icarus_words(seed: int, per_spec: int, randoms: int) -> list[int]:
    """Words of every spec (:func:`spec_words`) and random words, for an Icarus run."""
    rng = random.Random(seed)
    words = [w for spec in isa.SPECS for w in spec_words(spec, rng, per_spec)]
    return words + [rng.getrandbits(32) for _ in range(randoms)]


@pytest.mark.rtl
def test_every_spec_decodes_in_icarus(tmp_path) -> None:
    words = icarus_words(13, 6, 200)
    outputs = simulate_icarus(Decoder(), "decoder", [{"word": w} for w in words], tmp_path)
    check(words, decoded(outputs))


def check_predecoded(words: list[int], outputs: list[dict[str, int]]) -> None:
    got = [unpack(PREDECODED, out["fields"]) for out in outputs]
    assert got == [golden.predecode(w) for w in words]


def test_predecoded_layout_has_exactly_the_golden_fields() -> None:
    assert [name for name, _ in PREDECODED] == list(golden.ISSUE_FIELDS)


@settings(max_examples=10, deadline=None)
@given(st.lists(any_words, min_size=1, max_size=200))
def test_random_words_predecode_in_amaranth_sim(words: list[int]) -> None:
    """The instruction store's predecode bits (hdl/sm/fetch.py) are golden's issue fields."""
    check_predecoded(words, simulate_amaranth(Predecoder(), [{"word": w} for w in words]))


@pytest.mark.rtl
def test_every_spec_predecodes_in_icarus(tmp_path) -> None:
    words = icarus_words(14, 4, 100)
    outputs = simulate_icarus(Predecoder(), "predecoder", [{"word": w} for w in words], tmp_path)
    check_predecoded(words, outputs)


def _word(name: str, **fields: int) -> int:
    return isa.Instr(isa.SPEC_BY_NAME[name], **fields).encode()


RA, T1, A0, A1, A2 = 1, 6, 10, 11, 12


@pytest.mark.parametrize(
    ("word", "fields"),
    [
        (_word("ecall"), {"is_ecall": 1, "sb_rs1": A0, "sb_rs2": isa.REG_A7, "sb_rd": 0}),
        (_word("jalr", rs1=RA), {"is_ret": 1, "is_call": 0, "writes_rd": 0, "is_control": 1}),
        (_word("jalr", rd=RA, rs1=T1), {"is_ret": 0, "is_call": 1, "unit": Unit.ALU.value}),
        (_word("lui", rd=A0, imm=0xFFFFF), {"imm": 0xFFFFF000, "writes_rd": 1}),
        (_word("csrrs", rd=A0, csr=0xCC0), {"is_csr": 1, "csr": 0xCC0, "csr_write": 0}),
        (_word("csrrsi", rd=A0, csr=0xCC0, imm=1), {"csr_write": 1, "imm": 1, "rs1": 0}),
        (_word("lbu", rd=A0, rs1=A1, imm=-1), {"mem_size": 0, "mem_signed": 0, "imm": M32}),
        (_word("lh", rd=A0, rs1=A1), {"mem_size": 1, "mem_signed": 1, "unit": Unit.MEM.value}),
        (_word("amomax.w", rd=A0, rs1=A2, rs2=A1), {"amo": 0b10100, "mem_size": 2, "rs1": A2}),
        (_word("div", rs1=A1, rs2=A2), {"unit": Unit.DIV.value, "writes_rd": 0, "sb_rd": 0}),
        (_word("beq", rs1=A1, rs2=A2, imm=-4096), {"imm": M32 - 4095, "is_control": 1}),
        (_word("rhint", imm=-8), {"is_rhint": 1, "imm": M32 - 7, "unit": Unit.NONE.value}),
    ],
)
def test_known_instructions(word: int, fields: dict[str, int]) -> None:
    """Hand-checked fields of a few instructions (values from the RISC-V spec), in golden."""
    got = golden.decode_fields(word)
    assert {k: got[k] for k in fields} == fields


@pytest.mark.parametrize(
    ("word", "fields"),
    [
        (_word("ecall"), {"sb_rs1": A0, "sb_rs2": isa.REG_A7, "faulty": 0, "memory": 0}),
        (_word("ebreak"), {"faulty": 1}),
        (0, {"faulty": 1, "sb_rs1": 0, "division": 0}),  # not an instruction
        (_word("csrrs", rd=A0, csr=0xCC0), {"faulty": 0, "sb_rd": A0}),
        (_word("csrrs", rd=A0, csr=0xC00), {"faulty": 1}),  # cycle: not a CSR of the SM
        (_word("csrrsi", rd=A0, csr=0xCC0, imm=1), {"faulty": 1}),  # writes a read-only CSR
        (_word("remu", rd=A0, rs1=A1, rs2=A2), {"division": 1, "sb_rs2": A2, "faulty": 0}),
        (_word("amoadd.w", rd=A0, rs1=A2, rs2=A1), {"memory": 1, "division": 0}),
    ],
)
def test_known_predecodes(word: int, fields: dict[str, int]) -> None:
    """Hand-checked issue fields (docs/architecture.md: faults at issue, rules 3 and 6)."""
    got = golden.predecode(word)
    assert {k: got[k] for k in fields} == fields
