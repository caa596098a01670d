"""Instruction decode of the hardware SM (docs/sm-hardware.md, "Stages": decode).

The :class:`Decoder` is generated from :data:`reconverge.golden.isa.SPECS`: one match/mask
comparator per spec, and every field an OR of the matching spec's constants
(:func:`reconverge.golden.sm.decode.spec_fields`) or a slice of the word whose position is
found by encoding into the field with ``golden.isa.encode``. The immediate wiring of each
format comes from probing ``golden.isa.unpack_imm`` one word bit at a time. So this file lists
no opcode, no field position and no immediate layout; a new instruction in ``SPECS`` is a new
:data:`Op` value and a new comparator. Its golden counterpart is
:func:`reconverge.golden.sm.decode.decode_fields`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import reduce
from operator import or_

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value, unsigned
from amaranth.lib import data, enum, wiring
from amaranth.lib.wiring import In, Out

from reconverge.golden.isa import (
    IMM_FORMATS,
    NUM_REGS,
    SPEC_BY_NAME,
    SPECS,
    XLEN,
    Fmt,
    Instr,
    Spec,
    csr_is_write,
    encode,
    unpack_imm,
)
from reconverge.golden.sm import decode as golden
from reconverge.golden.sm.core import RETURN_REGS, operands

#: One value per spec of ``golden.isa.SPECS`` (``golden.sm.decode.Op`` as an Amaranth shape).
Op = enum.Enum("Op", [(m.name, m.value) for m in golden.Op])
#: Latency class (``golden.sm.decode.Unit``).
Unit = enum.Enum("Unit", [(m.name, m.value) for m in golden.Unit])


def field_slice(field: str, spec_name: str) -> tuple[int, int]:
    """(lowest bit, width) of the operand ``field`` of ``spec_name``: the bits that change when
    the field is all ones (``golden.isa.encode``)."""
    spec = SPEC_BY_NAME[spec_name]
    ones = {"csr": (1 << 12) - 1}.get(field, NUM_REGS - 1)
    bits = encode(Instr(spec, **{field: ones})) ^ encode(Instr(spec))
    return (bits & -bits).bit_length() - 1, bits.bit_count()


#: Word bits of the register fields (an R-type's) and of the CSR number.
RD, RS1, RS2 = (field_slice(f, "add") for f in ("rd", "rs1", "rs2"))
CSR = field_slice("csr", "csrrs")
REG = unsigned(RD[1])


def imm_sources(fmt: Fmt) -> list[int | None]:
    """For each bit of the datapath immediate of ``fmt`` (``golden.sm.decode.datapath_imm``),
    the word bit it copies, or None for a constant 0: unpacking each single word bit shows
    where it lands (sign extension copies the sign bit into every upper bit)."""
    sources: list[int | None] = [None] * XLEN
    for k in range(XLEN):
        value = golden.datapath_imm(fmt, unpack_imm(fmt, 1 << k))
        for j in range(XLEN):
            if value >> j & 1:
                if sources[j] is not None:
                    raise AssertionError(f"{fmt}: immediate bit {j} has two sources")
                sources[j] = k
    return sources


def _funct5_width() -> int:
    """Bits of an AMO's funct5 field: what its spec's mask covers beyond the other fields."""
    spec = next(s for s in SPECS if s.is_amo)
    return (spec.mask ^ replace(spec, funct5=None).mask).bit_count()


#: Fields wider than one bit, with their shapes.
_WIDE: dict[str, object] = {
    "op": Op,
    "unit": Unit,
    "rd": REG,
    "rs1": REG,
    "rs2": REG,
    "sb_rs1": REG,
    "sb_rs2": REG,
    "sb_rd": REG,
    "imm": unsigned(XLEN),
    "csr": unsigned(CSR[1]),
    "mem_size": unsigned(max(golden.spec_fields(s)["mem_size"] for s in SPECS).bit_length()),
    "amo": unsigned(_funct5_width()),
}


def _shapes() -> dict[str, object]:
    """The shape of every decoded field, in ``golden.sm.decode.FIELDS`` order."""
    return {name: _WIDE.get(name, unsigned(1)) for name in golden.FIELDS}


#: Everything the SM needs of an instruction (the fields of ``golden.sm.decode.FIELDS``).
DECODED = data.StructLayout(_shapes())


class Decoder(wiring.Component):
    """Combinational decoder: ``word`` -> ``instr`` (:data:`DECODED`); an illegal word gives
    every field 0."""

    def __init__(self) -> None:
        super().__init__(wiring.Signature({"word": In(XLEN), "instr": Out(DECODED)}))

    def elaborate(self, platform: object) -> Module:
        m = Module()
        word = self.word
        hits: dict[str, Signal] = {}
        for spec in SPECS:
            hit = Signal(name=f"hit_{golden.op_member(spec.name).lower()}")
            m.d.comb += hit.eq((word & spec.mask) == spec.match)
            hits[spec.name] = hit

        def any_of(name: str, pred: Callable[[Spec], bool]) -> Signal:
            flag = Signal(name=name)
            m.d.comb += flag.eq(reduce(or_, [hits[s.name] for s in SPECS if pred(s)], Const(0)))
            return flag

        def select(values: dict[str, int], width: int) -> Value:
            """The value of the matching spec (0 when none matches)."""
            terms = [Mux(hits[n], v, 0) for n, v in values.items() if v]
            return reduce(or_, terms, Const(0, width))

        # One named signal per field, driven here and copied to ``instr`` at the end (fields
        # that depend on other fields must not read them back from the one output vector:
        # Verilator would see a combinational loop through it).
        f = {name: Signal(shape, name=name) for name, shape in _shapes().items()}
        m.d.comb += f["legal"].eq(reduce(or_, hits.values()))
        constants = {s.name: golden.spec_fields(s) for s in SPECS}
        for name in constants[SPECS[0].name]:
            values = {n: int(c[name]) for n, c in constants.items()}
            m.d.comb += f[name].eq(select(values, len(Value.cast(f[name]))))

        def field(bits: tuple[int, int]) -> Value:
            return word[bits[0] : bits[0] + bits[1]]

        has_rd = any_of("has_rd", lambda s: s.writes_rd)
        m.d.comb += [
            f["rd"].eq(Mux(has_rd, field(RD), 0)),
            f["rs1"].eq(Mux(f["reads_rs1"], field(RS1), 0)),
            f["rs2"].eq(Mux(f["reads_rs2"], field(RS2), 0)),
            f["csr"].eq(Mux(f["is_csr"], field(CSR), 0)),
        ]

        imm_terms = []
        for fmt in sorted(IMM_FORMATS, key=lambda f: f.value):
            fmt_hit = any_of(f"fmt_{fmt.value.lower()}", lambda s, fmt=fmt: s.fmt is fmt)
            imm = Signal(XLEN, name=f"imm_{fmt.value.lower()}")
            bits = [Const(0, 1) if k is None else word[k] for k in imm_sources(fmt)]
            m.d.comb += imm.eq(Cat(*bits))
            imm_terms.append(Mux(fmt_hit, imm, 0))
        m.d.comb += f["imm"].eq(reduce(or_, imm_terms))

        rd_nonzero = Signal(name="rd_nonzero")
        source_nonzero = Signal(name="csr_source_nonzero")  # rs1, or a CSRI's uimm: same bits
        m.d.comb += [rd_nonzero.eq(f["rd"] != 0), source_nonzero.eq(field(RS1) != 0)]
        jump = any_of("jump", lambda s: s.is_jump)
        ret_source = reduce(or_, [f["rs1"] == r for r in RETURN_REGS])
        m.d.comb += [
            f["writes_rd"].eq(has_rd & rd_nonzero),
            f["is_call"].eq(jump & rd_nonzero),
            f["is_ret"].eq(f["is_jalr"] & ~rd_nonzero & ret_source),
        ]

        csr_always = any_of("csr_always_writes", lambda s: _csr_writes(s, 0))
        csr_if_source = any_of("csr_writes_if_source", lambda s: _csr_writes(s, 1))
        m.d.comb += f["csr_write"].eq(csr_always | (csr_if_source & source_nonzero))

        # Registers an instruction uses besides its fields (ecall: a0, a7), probed from
        # golden.sm.core.operands on the spec with all fields zero.
        fixed = {s.name: (*operands(Instr(s)), 0, 0)[:3] for s in SPECS}
        for i, name in enumerate(("rs1", "rs2", "rd")):
            extra = select({n: regs[i] for n, regs in fixed.items()}, REG.width)
            m.d.comb += f[f"sb_{name}"].eq(f[name] | extra)

        m.d.comb += [getattr(self.instr, name).eq(value) for name, value in f.items()]
        return m


#: The predecoded fields (``golden.sm.decode.ISSUE_FIELDS``): the three registers the
#: scoreboard looks up, and one bit each for the rest.
PREDECODED = data.StructLayout(
    {name: REG if name.startswith("sb_") else unsigned(1) for name in golden.ISSUE_FIELDS}
)


class Predecoder(wiring.Component):
    """``word`` -> ``fields`` (:data:`PREDECODED`): what the issue logic checks of every
    candidate (``golden.sm.decode.issue_fields``), computed once as a word enters the
    instruction store (hdl/sm/fetch.py) instead of by a decoder per candidate."""

    def __init__(self) -> None:
        super().__init__(wiring.Signature({"word": In(XLEN), "fields": Out(PREDECODED)}))

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.decoder = decoder = Decoder()
        d, f = decoder.instr, self.fields
        known = reduce(or_, [d.csr == c for c in sorted(golden.CSRS)])
        csr_bad = Signal(name="csr_bad")
        m.d.comb += [
            decoder.word.eq(self.word),
            csr_bad.eq(d.is_csr & (d.csr_write | ~known)),
            f.sb_rs1.eq(d.sb_rs1),
            f.sb_rs2.eq(d.sb_rs2),
            f.sb_rd.eq(d.sb_rd),
            f.memory.eq(d.unit == Unit.MEM),
            f.division.eq(d.unit == Unit.DIV),
            f.multiply.eq(d.unit == Unit.MUL),
            f.faulty.eq(~d.legal | csr_bad | d.is_ebreak),
            f.control.eq(d.is_control),
            f.resolved.eq(d.is_control | d.is_ecall),
            f.bar.eq(d.is_bar),
        ]
        return m


def _csr_writes(spec: Spec, source: int) -> bool:
    """Whether a Zicsr ``spec`` writes its CSR when its rs1/uimm field is ``source``."""
    if spec.fmt not in (Fmt.CSR, Fmt.CSRI):
        return False
    return csr_is_write(Instr(spec, rs1=source, imm=source))
