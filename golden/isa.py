"""The instruction set: RV32IMA (all of A: the nine AMOs, ``lr.w`` and ``sc.w``), Zicsr reads
of the SIMT identity CSRs, and the SIMT custom-0 instructions (``bar`` and the reconvergence
hint ``rhint``).

This module is the single table of encodings. The assembler, the disassembler, the golden
decoder and (later) the HDL decoder all derive from :data:`SPECS`; nothing else lists opcodes.
See ``docs/isa.md`` for the prose description of every encoding.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from functools import lru_cache

XLEN = 32
NUM_REGS = 32
ILEN_BYTES = 4
MASK32 = 0xFFFF_FFFF

#: ABI register names, index = register number.
ABI_NAMES = (
    "zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2",
    "s0", "s1", "a0", "a1", "a2", "a3", "a4", "a5",
    "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7",
    "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6",
)  # fmt: skip

REG_SP = 2
REG_A0 = 10
REG_A7 = 17

#: Accepted register spellings -> number (``x0``..``x31``, ABI names, ``fp`` for s0).
REG_NUMBERS: dict[str, int] = {
    **{f"x{i}": i for i in range(NUM_REGS)},
    **{name: i for i, name in enumerate(ABI_NAMES)},
    "fp": 8,
}

#: ``ecall`` with a7 equal to this ends the calling thread with exit code a0 (Linux ``exit``).
SYSCALL_EXIT = 93


class Csr(enum.IntEnum):
    """Read-only SIMT identity CSRs in the custom user read-only range (DESIGN.md)."""

    TID = 0xCC0  # thread index in block
    NTID = 0xCC1  # block size in threads
    CTAID = 0xCC2  # block index
    NCTAID = 0xCC3  # grid size in blocks
    LANEID = 0xCC4  # lane id within the warp
    WARPID = 0xCC5  # warp id within the block
    WARPSIZE = 0xCC6  # warp size W


#: Assembler spellings of the SIMT CSRs.
CSR_NAMES: dict[str, int] = {
    "tid": Csr.TID,
    "ntid": Csr.NTID,
    "ctaid": Csr.CTAID,
    "nctaid": Csr.NCTAID,
    "laneid": Csr.LANEID,
    "warpid": Csr.WARPID,
    "warpsize": Csr.WARPSIZE,
}


class Opcode(enum.IntEnum):
    """Major opcodes (bits 6:0)."""

    LOAD = 0b0000011
    CUSTOM0 = 0b0001011
    MISC_MEM = 0b0001111
    OP_IMM = 0b0010011
    AUIPC = 0b0010111
    STORE = 0b0100011
    AMO = 0b0101111
    OP = 0b0110011
    LUI = 0b0110111
    BRANCH = 0b1100011
    JALR = 0b1100111
    JAL = 0b1101111
    SYSTEM = 0b1110011


class Fmt(enum.Enum):
    """Encoding formats. Each names the operand fields it carries."""

    R = "R"  # rd, rs1, rs2
    I = "I"  # rd, rs1, imm[11:0]
    SHIFT = "SHIFT"  # rd, rs1, shamt[4:0] (I-type with funct7 in imm[11:5])
    S = "S"  # rs1, rs2, imm[11:0]
    B = "B"  # rs1, rs2, imm[12:1]
    U = "U"  # rd, imm[31:12]
    J = "J"  # rd, imm[20:1]
    AMO = "AMO"  # rd, rs1, rs2, aq, rl
    LR = "LR"  # rd, rs1, aq, rl (the rs2 field is zero)
    CSR = "CSR"  # rd, rs1, csr
    CSRI = "CSRI"  # rd, uimm[4:0] (in the rs1 field), csr
    FENCE = "FENCE"  # pred, succ
    NONE = "NONE"  # no operands (ecall, ebreak, fence.i, bar)
    HINT = "HINT"  # J-type immediate: reconvergence PC relative to the hint's own PC


class Syntax(enum.Enum):
    """Assembly operand syntax, shared by the assembler and the disassembler."""

    RD_RS1_RS2 = "rd, rs1, rs2"
    RD_RS1_IMM = "rd, rs1, imm"
    RD_IMM_RS1 = "rd, imm(rs1)"  # loads and jalr
    RS2_IMM_RS1 = "rs2, imm(rs1)"  # stores
    RS1_RS2_TARGET = "rs1, rs2, target"  # branches
    RD_IMM = "rd, imm"  # lui, auipc (imm is the 20-bit upper value)
    RD_TARGET = "rd, target"  # jal
    AMO = "rd, rs2, (rs1)"
    LR = "rd, (rs1)"
    CSR = "rd, csr, rs1"
    CSRI = "rd, csr, uimm"
    FENCE = "pred, succ"
    NONE = ""
    TARGET = "target"  # rhint


@dataclass(frozen=True)
class Spec:
    """One instruction: its mnemonic, format, the fixed bits that identify it, and its syntax."""

    name: str
    fmt: Fmt
    syntax: Syntax
    opcode: Opcode
    ext: str
    funct3: int | None = None
    funct7: int | None = None  # bits 31:25 (R-type funct7, SHIFT upper immediate)
    funct5: int | None = None  # bits 31:27 (AMO)
    fixed_word: int = 0  # further fixed bits, e.g. the whole word of ecall
    fixed_mask: int = 0

    @property
    def mask(self) -> int:
        m = 0x7F | self.fixed_mask
        if self.funct3 is not None:
            m |= 0x7 << 12
        if self.funct7 is not None:
            m |= 0x7F << 25
        if self.funct5 is not None:
            m |= 0x1F << 27
        return m

    @property
    def match(self) -> int:
        v = int(self.opcode) | self.fixed_word
        if self.funct3 is not None:
            v |= self.funct3 << 12
        if self.funct7 is not None:
            v |= self.funct7 << 25
        if self.funct5 is not None:
            v |= self.funct5 << 27
        return v

    @property
    def is_load(self) -> bool:
        return self.opcode is Opcode.LOAD

    @property
    def is_store(self) -> bool:
        return self.opcode is Opcode.STORE

    @property
    def is_amo(self) -> bool:
        """Every instruction of A (the AMO major opcode): the AMOs, ``lr.w`` and ``sc.w``."""
        return self.opcode is Opcode.AMO

    @property
    def amo_op(self) -> str | None:
        """The read-modify-write of an AMO (``amoadd.w`` -> ``"add"``, a key of
        ``golden.memory.AMO_OPS``); None for every other instruction, ``lr.w`` and ``sc.w``."""
        return self.name[3:-2] if self.name.startswith("amo") else None

    @property
    def is_lr(self) -> bool:
        """``lr.w``: a word load that reserves the word (docs/isa.md, "LR/SC")."""
        return self.name == "lr.w"

    @property
    def is_sc(self) -> bool:
        """``sc.w``: a word store on condition that the thread's reservation holds."""
        return self.name == "sc.w"

    @property
    def is_branch(self) -> bool:
        return self.opcode is Opcode.BRANCH

    @property
    def is_jump(self) -> bool:
        return self.opcode in (Opcode.JAL, Opcode.JALR)

    @property
    def is_control(self) -> bool:
        """Instructions after which a stack-less SM must re-arbitrate the common PC (seed 000
        Sec 4.1): branches, jumps, ``ecall`` (thread exit) and ``bar``."""
        return self.is_branch or self.is_jump or self.name in ("ecall", "ebreak", "bar")

    @property
    def writes_rd(self) -> bool:
        return self.fmt in _RD_FORMATS

    @property
    def reads_rs1(self) -> bool:
        return self.fmt in _RS1_FORMATS

    @property
    def reads_rs2(self) -> bool:
        return self.fmt in _RS2_FORMATS


#: The formats that carry each register field.
_RD_FORMATS = frozenset({Fmt.R, Fmt.I, Fmt.SHIFT, Fmt.U, Fmt.J, Fmt.AMO, Fmt.LR, Fmt.CSR, Fmt.CSRI})
_RS1_FORMATS = frozenset({Fmt.R, Fmt.I, Fmt.SHIFT, Fmt.S, Fmt.B, Fmt.AMO, Fmt.LR, Fmt.CSR})
_RS2_FORMATS = frozenset({Fmt.R, Fmt.S, Fmt.B, Fmt.AMO})
#: The formats with ``aq``/``rl`` ordering bits.
ORDERED_FORMATS = frozenset({Fmt.AMO, Fmt.LR})


def _r(name: str, f3: int, f7: int, ext: str = "I") -> Spec:
    return Spec(name, Fmt.R, Syntax.RD_RS1_RS2, Opcode.OP, ext, funct3=f3, funct7=f7)


def _i(name: str, op: Opcode, f3: int, syntax: Syntax = Syntax.RD_RS1_IMM) -> Spec:
    return Spec(name, Fmt.I, syntax, op, "I", funct3=f3)


def _branch(name: str, f3: int) -> Spec:
    return Spec(name, Fmt.B, Syntax.RS1_RS2_TARGET, Opcode.BRANCH, "I", funct3=f3)


def _store(name: str, f3: int) -> Spec:
    return Spec(name, Fmt.S, Syntax.RS2_IMM_RS1, Opcode.STORE, "I", funct3=f3)


def _shift(name: str, f3: int, f7: int) -> Spec:
    return Spec(name, Fmt.SHIFT, Syntax.RD_RS1_IMM, Opcode.OP_IMM, "I", funct3=f3, funct7=f7)


def _amo(name: str, f5: int) -> Spec:
    return Spec(name, Fmt.AMO, Syntax.AMO, Opcode.AMO, "A", funct3=0b010, funct5=f5)


def _lr(name: str, f5: int) -> Spec:
    """``lr.w``: the AMO layout with the rs2 field fixed at zero."""
    rs2_field = 0x1F << 20
    return Spec(
        name, Fmt.LR, Syntax.LR, Opcode.AMO, "A", funct3=0b010, funct5=f5, fixed_mask=rs2_field
    )


def _csr(name: str, f3: int) -> Spec:
    fmt, syntax = (Fmt.CSRI, Syntax.CSRI) if f3 & 0b100 else (Fmt.CSR, Syntax.CSR)
    return Spec(name, fmt, syntax, Opcode.SYSTEM, "Zicsr", funct3=f3)


def _whole(name: str, op: Opcode, word: int, ext: str, fmt: Fmt = Fmt.NONE) -> Spec:
    """An instruction identified by every bit outside its operand fields."""
    operand_mask = {Fmt.NONE: 0, Fmt.HINT: 0xFFFFF000}[fmt]
    syntax = Syntax.NONE if fmt is Fmt.NONE else Syntax.TARGET
    return Spec(
        name,
        fmt,
        syntax,
        op,
        ext,
        fixed_word=word & ~0x7F,
        fixed_mask=MASK32 & ~0x7F & ~operand_mask,
    )


#: SIMT custom-0 sub-operations, selected by the rd field (bits 11:7).
CUSTOM0_BAR = 0
CUSTOM0_RHINT = 1

SPECS: tuple[Spec, ...] = (
    # RV32I
    Spec("lui", Fmt.U, Syntax.RD_IMM, Opcode.LUI, "I"),
    Spec("auipc", Fmt.U, Syntax.RD_IMM, Opcode.AUIPC, "I"),
    Spec("jal", Fmt.J, Syntax.RD_TARGET, Opcode.JAL, "I"),
    _i("jalr", Opcode.JALR, 0b000, Syntax.RD_IMM_RS1),
    _branch("beq", 0b000),
    _branch("bne", 0b001),
    _branch("blt", 0b100),
    _branch("bge", 0b101),
    _branch("bltu", 0b110),
    _branch("bgeu", 0b111),
    _i("lb", Opcode.LOAD, 0b000, Syntax.RD_IMM_RS1),
    _i("lh", Opcode.LOAD, 0b001, Syntax.RD_IMM_RS1),
    _i("lw", Opcode.LOAD, 0b010, Syntax.RD_IMM_RS1),
    _i("lbu", Opcode.LOAD, 0b100, Syntax.RD_IMM_RS1),
    _i("lhu", Opcode.LOAD, 0b101, Syntax.RD_IMM_RS1),
    _store("sb", 0b000),
    _store("sh", 0b001),
    _store("sw", 0b010),
    _i("addi", Opcode.OP_IMM, 0b000),
    _i("slti", Opcode.OP_IMM, 0b010),
    _i("sltiu", Opcode.OP_IMM, 0b011),
    _i("xori", Opcode.OP_IMM, 0b100),
    _i("ori", Opcode.OP_IMM, 0b110),
    _i("andi", Opcode.OP_IMM, 0b111),
    _shift("slli", 0b001, 0b0000000),
    _shift("srli", 0b101, 0b0000000),
    _shift("srai", 0b101, 0b0100000),
    _r("add", 0b000, 0b0000000),
    _r("sub", 0b000, 0b0100000),
    _r("sll", 0b001, 0b0000000),
    _r("slt", 0b010, 0b0000000),
    _r("sltu", 0b011, 0b0000000),
    _r("xor", 0b100, 0b0000000),
    _r("srl", 0b101, 0b0000000),
    _r("sra", 0b101, 0b0100000),
    _r("or", 0b110, 0b0000000),
    _r("and", 0b111, 0b0000000),
    Spec("fence", Fmt.FENCE, Syntax.FENCE, Opcode.MISC_MEM, "I", funct3=0b000),
    _whole("ecall", Opcode.SYSTEM, 0x0000_0073, "I"),
    _whole("ebreak", Opcode.SYSTEM, 0x0010_0073, "I"),
    # Zifencei (accepted as a no-op: the SM has no instruction cache to flush)
    _whole("fence.i", Opcode.MISC_MEM, 0x0000_100F, "Zifencei"),
    # RV32M
    _r("mul", 0b000, 0b0000001, "M"),
    _r("mulh", 0b001, 0b0000001, "M"),
    _r("mulhsu", 0b010, 0b0000001, "M"),
    _r("mulhu", 0b011, 0b0000001, "M"),
    _r("div", 0b100, 0b0000001, "M"),
    _r("divu", 0b101, 0b0000001, "M"),
    _r("rem", 0b110, 0b0000001, "M"),
    _r("remu", 0b111, 0b0000001, "M"),
    # RV32A: load-reserved / store-conditional and the nine word AMOs
    _lr("lr.w", 0b00010),
    _amo("sc.w", 0b00011),
    _amo("amoswap.w", 0b00001),
    _amo("amoadd.w", 0b00000),
    _amo("amoxor.w", 0b00100),
    _amo("amoand.w", 0b01100),
    _amo("amoor.w", 0b01000),
    _amo("amomin.w", 0b10000),
    _amo("amomax.w", 0b10100),
    _amo("amominu.w", 0b11000),
    _amo("amomaxu.w", 0b11100),
    # Zicsr (only reads of the SIMT CSRs are legal; see docs/isa.md)
    _csr("csrrw", 0b001),
    _csr("csrrs", 0b010),
    _csr("csrrc", 0b011),
    _csr("csrrwi", 0b101),
    _csr("csrrsi", 0b110),
    _csr("csrrci", 0b111),
    # SIMT custom-0: J-type layout, rd field selects the operation.
    _whole("bar", Opcode.CUSTOM0, CUSTOM0_BAR << 7 | Opcode.CUSTOM0, "SIMT"),
    _whole("rhint", Opcode.CUSTOM0, CUSTOM0_RHINT << 7 | Opcode.CUSTOM0, "SIMT", Fmt.HINT),
)

SPEC_BY_NAME: dict[str, Spec] = {s.name: s for s in SPECS}


def _check_table() -> None:
    """No two specs may match the same word: each fixed pattern must differ where both care."""
    for i, a in enumerate(SPECS):
        for b in SPECS[i + 1 :]:
            common = a.mask & b.mask
            if (a.match & common) == (b.match & common):
                raise AssertionError(f"encodings of {a.name} and {b.name} overlap")


_check_table()


# ----------------------------------------------------------------------------------------------
# Immediate packing, one pair of functions per format.


def sext(value: int, bits: int) -> int:
    """Sign-extend the low ``bits`` of ``value`` to a Python int."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _bits(word: int, hi: int, lo: int) -> int:
    return (word >> lo) & ((1 << (hi - lo + 1)) - 1)


#: Formats that carry an immediate operand.
IMM_FORMATS = frozenset({Fmt.I, Fmt.S, Fmt.SHIFT, Fmt.B, Fmt.U, Fmt.J, Fmt.HINT, Fmt.CSRI})


def imm_range(fmt: Fmt) -> tuple[int, int, int]:
    """(minimum, maximum, required alignment) of the immediate operand of ``fmt``."""
    return {
        Fmt.I: (-2048, 2047, 1),
        Fmt.S: (-2048, 2047, 1),
        Fmt.SHIFT: (0, 31, 1),
        Fmt.B: (-4096, 4094, 2),
        Fmt.U: (0, 0xFFFFF, 1),
        Fmt.J: (-(1 << 20), (1 << 20) - 2, 2),
        Fmt.HINT: (-(1 << 20), (1 << 20) - 4, 4),
        Fmt.CSRI: (0, 31, 1),
    }[fmt]


def pack_imm(fmt: Fmt, imm: int) -> int:
    """Place an (already range-checked) immediate into its instruction bits."""
    if fmt in (Fmt.I, Fmt.SHIFT):
        return (imm & 0xFFF) << 20
    if fmt is Fmt.S:
        return ((imm >> 5) & 0x7F) << 25 | (imm & 0x1F) << 7
    if fmt is Fmt.B:
        return (
            ((imm >> 12) & 1) << 31
            | ((imm >> 5) & 0x3F) << 25
            | ((imm >> 1) & 0xF) << 8
            | ((imm >> 11) & 1) << 7
        )
    if fmt is Fmt.U:
        return (imm & 0xFFFFF) << 12
    if fmt in (Fmt.J, Fmt.HINT):
        return (
            ((imm >> 20) & 1) << 31
            | ((imm >> 1) & 0x3FF) << 21
            | ((imm >> 11) & 1) << 20
            | ((imm >> 12) & 0xFF) << 12
        )
    if fmt is Fmt.CSRI:
        return (imm & 0x1F) << 15
    return 0


def unpack_imm(fmt: Fmt, word: int) -> int:
    """The immediate operand of ``word`` in format ``fmt`` (signed where the format is)."""
    if fmt is Fmt.I:
        return sext(word >> 20, 12)
    if fmt is Fmt.SHIFT:
        return _bits(word, 24, 20)
    if fmt is Fmt.S:
        return sext(_bits(word, 31, 25) << 5 | _bits(word, 11, 7), 12)
    if fmt is Fmt.B:
        return sext(
            _bits(word, 31, 31) << 12
            | _bits(word, 7, 7) << 11
            | _bits(word, 30, 25) << 5
            | _bits(word, 11, 8) << 1,
            13,
        )
    if fmt is Fmt.U:
        return _bits(word, 31, 12)
    if fmt in (Fmt.J, Fmt.HINT):
        return sext(
            _bits(word, 31, 31) << 20
            | _bits(word, 19, 12) << 12
            | _bits(word, 20, 20) << 11
            | _bits(word, 30, 21) << 1,
            21,
        )
    if fmt is Fmt.CSRI:
        return _bits(word, 19, 15)
    return 0


# ----------------------------------------------------------------------------------------------
# Encoding and decoding.


@dataclass(frozen=True)
class Instr:
    """A decoded instruction. Fields a format does not carry are 0."""

    spec: Spec
    rd: int = 0
    rs1: int = 0
    rs2: int = 0
    imm: int = 0
    csr: int = 0
    aq: int = 0
    rl: int = 0
    pred: int = 0b1111
    succ: int = 0b1111

    @property
    def name(self) -> str:
        return self.spec.name

    def encode(self) -> int:
        """The 32-bit word of this instruction; raises ``ValueError`` on out-of-range fields."""
        return encode(self)


class EncodingError(ValueError):
    """A field does not fit its instruction's encoding."""


def _check_reg(name: str, value: int) -> None:
    if not 0 <= value < NUM_REGS:
        raise EncodingError(f"register {name}={value} out of range 0..31")


def encode(ins: Instr) -> int:
    spec, fmt = ins.spec, ins.spec.fmt
    word = spec.match
    for name in ("rd", "rs1", "rs2"):
        _check_reg(name, getattr(ins, name))
    if fmt in IMM_FORMATS:
        lo, hi, align = imm_range(fmt)
        if not lo <= ins.imm <= hi:
            raise EncodingError(f"{spec.name}: immediate {ins.imm} out of range {lo}..{hi}")
        if ins.imm % align:
            raise EncodingError(f"{spec.name}: immediate {ins.imm} not a multiple of {align}")
        word |= pack_imm(fmt, ins.imm)
    if fmt in _RD_FORMATS:
        word |= ins.rd << 7
    if fmt in _RS1_FORMATS:
        word |= ins.rs1 << 15
    if fmt in _RS2_FORMATS:
        word |= ins.rs2 << 20
    if fmt in ORDERED_FORMATS:
        word |= (ins.aq & 1) << 26 | (ins.rl & 1) << 25
    if fmt in (Fmt.CSR, Fmt.CSRI):
        if not 0 <= ins.csr < 4096:
            raise EncodingError(f"{spec.name}: CSR number {ins.csr:#x} out of range")
        word |= ins.csr << 20
    if fmt is Fmt.FENCE:
        word |= (ins.pred & 0xF) << 24 | (ins.succ & 0xF) << 20
    return word


_BY_OPCODE: dict[int, tuple[Spec, ...]] = {}
for _spec in SPECS:
    _BY_OPCODE.setdefault(int(_spec.opcode), ())
    _BY_OPCODE[int(_spec.opcode)] += (_spec,)


class IllegalInstruction(ValueError):
    """The word is not an instruction of this ISA."""

    def __init__(self, word: int, why: str = "no instruction has this encoding") -> None:
        super().__init__(f"illegal instruction {word:#010x}: {why}")
        self.word = word
        self.why = why


@lru_cache(maxsize=65536)
def decode(word: int) -> Instr:
    """Decode a 32-bit word, or raise :class:`IllegalInstruction`."""
    word &= MASK32
    if word == 0:  # RISC-V reserves the all-zero word as illegal: mostly memory never written
        raise IllegalInstruction(word, "all zeros, not code (did the program run past its end?)")
    if word & 0b11 != 0b11:
        raise IllegalInstruction(word, "compressed (16-bit) instructions are not supported")
    for spec in _BY_OPCODE.get(word & 0x7F, ()):
        if word & spec.mask == spec.match:
            return _fields(spec, word)
    raise IllegalInstruction(word)


def _fields(spec: Spec, word: int) -> Instr:
    fmt = spec.fmt
    kw: dict[str, int] = {}
    if fmt in _RD_FORMATS:
        kw["rd"] = _bits(word, 11, 7)
    if fmt in _RS1_FORMATS:
        kw["rs1"] = _bits(word, 19, 15)
    if fmt in _RS2_FORMATS:
        kw["rs2"] = _bits(word, 24, 20)
    if fmt in IMM_FORMATS:
        kw["imm"] = unpack_imm(fmt, word)
    if fmt in ORDERED_FORMATS:
        kw["aq"], kw["rl"] = _bits(word, 26, 26), _bits(word, 25, 25)
    if fmt in (Fmt.CSR, Fmt.CSRI):
        kw["csr"] = _bits(word, 31, 20)
    if fmt is Fmt.FENCE:
        kw["pred"], kw["succ"] = _bits(word, 27, 24), _bits(word, 23, 20)
    return Instr(spec, **kw)


def csr_is_write(ins: Instr) -> bool:
    """Whether a Zicsr instruction writes its CSR (csrrw* always; csrrs*/csrrc* unless the
    source register or immediate is zero, as the privileged spec defines)."""
    if ins.name in ("csrrw", "csrrwi"):
        return True
    if ins.spec.fmt is Fmt.CSRI:
        return ins.imm != 0
    return ins.rs1 != 0
