"""The decoded fields of an instruction word as the hardware SM uses them: the golden
counterpart of ``hdl/sm/decode.py`` (docs/sm-hardware.md, "Stages": decode).

Everything is computed from :func:`reconverge.golden.isa.decode` and the predicates the golden
SM uses (``golden.sm.program.is_control``, ``golden.sm.core.operands``, ``is_call`` and
``is_return``, the latency classes of ``SM._complete``), so the HDL decoder, which is
generated from :data:`reconverge.golden.isa.SPECS`, is held to the same definitions. An
illegal word decodes to every field 0 (``legal`` = 0).
"""

from __future__ import annotations

import enum

from reconverge.golden.isa import (
    MASK32,
    SPECS,
    Csr,
    Fmt,
    IllegalInstruction,
    Instr,
    Spec,
    csr_is_write,
    decode,
)
from reconverge.golden.semantics import LOADS, STORES
from reconverge.golden.sm.core import is_call, is_return, operands
from reconverge.golden.sm.events import DIV_OPS, MUL_OPS
from reconverge.golden.sm.program import is_control


def op_member(name: str) -> str:
    """The enum member name of a mnemonic: ``amoadd.w`` -> ``AMOADD_W``."""
    return name.upper().replace(".", "_")


#: One value per instruction of :data:`SPECS`, in table order (a new spec is a new value).
Op = enum.IntEnum("Op", [(op_member(s.name), i) for i, s in enumerate(SPECS)])


class Unit(enum.IntEnum):
    """The latency class of an instruction (``golden.config.Latencies``): ``MEM`` goes to
    the load/store unit (its latency is ``shared`` or ``global_``), ``NONE`` writes no
    register and uses no unit (branches, ``ecall``, ``bar``, fences, hints)."""

    NONE = 0
    ALU = 1
    MUL = 2
    DIV = 3
    MEM = 4


#: Bytes of the memory access of a word AMO (``golden.semantics``: ``MemAccess(.., 4)``).
AMO_BYTES = 4


def spec_unit(spec: Spec) -> Unit:
    """The latency class of ``spec`` (``SM._complete``: memory, ``mul``, ``div``, ``alu``)."""
    if spec.is_load or spec.is_store or spec.is_amo:
        return Unit.MEM
    if spec.name in MUL_OPS:
        return Unit.MUL
    if spec.name in DIV_OPS:
        return Unit.DIV
    return Unit.ALU if spec.writes_rd else Unit.NONE


def _mem_size(spec: Spec) -> tuple[int, bool]:
    """(log2 bytes, sign-extending) of a memory instruction, (0, False) otherwise."""
    if spec.name in LOADS:
        size, signed = LOADS[spec.name]
    elif spec.name in STORES:
        size, signed = STORES[spec.name], False
    elif spec.is_amo:
        size, signed = AMO_BYTES, False
    else:
        return 0, False
    return size.bit_length() - 1, signed


def spec_fields(spec: Spec) -> dict[str, int]:
    """The fields that depend only on which instruction a word is (not on its operands)."""
    mem_size, mem_signed = _mem_size(spec)
    return {
        "op": Op[op_member(spec.name)],
        "reads_rs1": spec.reads_rs1,
        "reads_rs2": spec.reads_rs2,
        "is_load": spec.is_load,
        "is_store": spec.is_store,
        "is_amo": spec.is_amo,
        "is_branch": spec.is_branch,
        "is_jal": spec.name == "jal",
        "is_jalr": spec.name == "jalr",
        "is_control": is_control(Instr(spec)),
        "is_bar": spec.name == "bar",
        "is_rhint": spec.name == "rhint",
        "is_ecall": spec.name == "ecall",
        "is_ebreak": spec.name == "ebreak",
        "is_csr": spec.fmt in (Fmt.CSR, Fmt.CSRI),
        "mem_size": mem_size,
        "mem_signed": mem_signed,
        "amo": spec.funct5 if spec.is_amo else 0,
        "unit": spec_unit(spec),
    }


def datapath_imm(fmt: Fmt, imm: int) -> int:
    """The immediate the datapath uses, as 32 bits, of ``imm`` (``golden.isa.unpack_imm``) in
    format ``fmt``: sign-extended per format, a U-type's 20-bit value shifted into the upper
    bits, the hint's target offset."""
    return (imm << 12 if fmt is Fmt.U else imm) & MASK32


def instr_fields(ins: Instr) -> dict[str, int]:
    """Every decoded field of a legal instruction."""
    spec = ins.spec
    sb_rs1, sb_rs2, *rest = operands(ins)
    sb_rd = rest[0] if rest else 0
    return {
        "legal": 1,
        **{name: int(value) for name, value in spec_fields(spec).items()},
        "rd": ins.rd,
        "rs1": ins.rs1,
        "rs2": ins.rs2,
        "imm": datapath_imm(spec.fmt, ins.imm),
        "csr": ins.csr,
        "writes_rd": int(spec.writes_rd and ins.rd != 0),
        "is_call": int(is_call(ins)),
        "is_ret": int(is_return(ins)),
        "csr_write": int(spec.fmt in (Fmt.CSR, Fmt.CSRI) and csr_is_write(ins)),
        "sb_rs1": sb_rs1,
        "sb_rs2": sb_rs2,
        "sb_rd": sb_rd,
    }


#: The names of the decoded fields.
FIELDS: tuple[str, ...] = tuple(instr_fields(Instr(SPECS[0])))


def decode_fields(word: int) -> dict[str, int]:
    """The decoded fields of a 32-bit word (all 0 when it is not an instruction)."""
    try:
        ins = decode(word & MASK32)
    except IllegalInstruction:
        return dict.fromkeys(FIELDS, 0)
    return instr_fields(ins)


def issue_fields(fields: dict[str, int]) -> dict[str, int]:
    """What the issue logic checks of every candidate's instruction, from its decoded
    ``fields``: the registers the scoreboard looks up (``sb_rd``, the destination, 0 for
    none), whether it needs the LSU or the divider (rules 3 and 6 of docs/architecture.md) and
    which write-back line it enters (``multiply``), whether issuing it faults (an illegal word,
    a CSR write or an unknown CSR, ``ebreak``), whether it is a control instruction, whether
    the lanes resolve its outcome (a control instruction or ``ecall``: rule 1) and whether it
    is a ``bar``. The hardware keeps these bits beside each word of its instruction store
    (*predecode*, docs/sm-hardware.md, "Instruction store and buffers"), so its issue stage
    needs no decoder."""
    csr_bad = fields["is_csr"] and (fields["csr_write"] or fields["csr"] not in CSRS)
    return {
        "sb_rs1": fields["sb_rs1"],
        "sb_rs2": fields["sb_rs2"],
        "sb_rd": fields["sb_rd"],
        "memory": int(fields["unit"] == Unit.MEM),
        "division": int(fields["unit"] == Unit.DIV),
        "multiply": int(fields["unit"] == Unit.MUL),
        "faulty": int(not fields["legal"] or bool(csr_bad) or bool(fields["is_ebreak"])),
        "control": fields["is_control"],
        "resolved": int(bool(fields["is_control"] or fields["is_ecall"])),
        "bar": fields["is_bar"],
    }


#: The CSR numbers the SM knows (reading any other one faults).
CSRS = frozenset(int(c) for c in Csr)
#: The names of the predecoded fields (:func:`issue_fields`).
ISSUE_FIELDS: tuple[str, ...] = tuple(issue_fields(dict.fromkeys(FIELDS, 0)))


def predecode(word: int) -> dict[str, int]:
    """The predecoded fields of a 32-bit word (:func:`issue_fields` of its decode)."""
    return issue_fields(decode_fields(word))
