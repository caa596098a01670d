"""Instruction semantics, lane-vectorised, against an independent plain-Python per-lane
reference (edge values and Hypothesis over random operands), plus control flow, memory, CSR,
system instructions and the faults they raise."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from reconverge.golden import isa
from reconverge.golden.faults import (
    IllegalInstructionFault,
    MemoryFault,
    SyscallFault,
    instruction_text,
)
from reconverge.golden.memmap import GLOBAL_BASE, SHARED_BASE, MemoryMap
from reconverge.golden.memory import GlobalMemory, LocalMemory, SharedMemory, WarpMemory
from reconverge.golden.semantics import Outcome, WarpContext, execute

W = 8
PC = GLOBAL_BASE + 0x100
M32 = 0xFFFF_FFFF
MAP = MemoryMap(global_size=4096, shared_size=256, local_size=64)
EDGES = [0, 1, 2, 3, 31, 32, 0x7FFF_FFFF, 0x8000_0000, 0x8000_0001, M32, M32 - 1, 0x1234_5678]
u32s = st.integers(0, M32)


# ----------------------------------------------------------------------------------------------
# Independent per-lane reference (plain Python integers)


def s32(x: int) -> int:
    return x - (1 << 32) if x >> 31 else x


def trunc_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


REFERENCE = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "sll": lambda a, b: a << (b % 32),
    "srl": lambda a, b: a >> (b % 32),
    "sra": lambda a, b: s32(a) >> (b % 32),
    "slt": lambda a, b: int(s32(a) < s32(b)),
    "sltu": lambda a, b: int(a < b),
    "xor": lambda a, b: a ^ b,
    "or": lambda a, b: a | b,
    "and": lambda a, b: a & b,
    "mul": lambda a, b: a * b,
    "mulh": lambda a, b: (s32(a) * s32(b)) >> 32,
    "mulhsu": lambda a, b: (s32(a) * b) >> 32,
    "mulhu": lambda a, b: (a * b) >> 32,
    "div": lambda a, b: -1 if b == 0 else trunc_div(s32(a), s32(b)),
    "divu": lambda a, b: M32 if b == 0 else a // b,
    "rem": lambda a, b: a if b == 0 else s32(a) - trunc_div(s32(a), s32(b)) * s32(b),
    "remu": lambda a, b: a if b == 0 else a % b,
}
IMMEDIATE_FORMS = {
    "addi": "add",
    "slti": "slt",
    "sltiu": "sltu",
    "xori": "xor",
    "ori": "or",
    "andi": "and",
    "slli": "sll",
    "srli": "srl",
    "srai": "sra",
}
BRANCHES = {
    "beq": lambda a, b: a == b,
    "bne": lambda a, b: a != b,
    "blt": lambda a, b: s32(a) < s32(b),
    "bge": lambda a, b: s32(a) >= s32(b),
    "bltu": lambda a, b: a < b,
    "bgeu": lambda a, b: a >= b,
}


# ----------------------------------------------------------------------------------------------
# Harness


class Warp:
    """Registers, memory and identity of warp 1 of block 2 (so lane i is thread W + i)."""

    def __init__(self) -> None:
        self.regs = np.zeros((W, isa.NUM_REGS), np.uint32)
        self.glob = GlobalMemory(MAP)
        self.mem = WarpMemory(
            self.glob, SharedMemory(MAP), LocalMemory(W, MAP), block=2, first_thread=W
        )
        self.ctx = WarpContext.of_warp(grid=3, block=2, block_size=2 * W, warp=1, warp_size=W)

    def set(self, reg: int, values: list[int] | int) -> None:
        self.regs[:, reg] = np.array(values, np.int64) & M32

    def run(self, name: str, lanes: np.ndarray | None = None, **fields: int) -> Outcome:
        ins = isa.Instr(isa.SPEC_BY_NAME[name], **fields)
        lanes = np.ones(W, bool) if lanes is None else lanes
        return execute(ins, PC, self.regs, lanes, self.mem, self.ctx)


def ins_text(name: str, **fields: int) -> str:
    return instruction_text(isa.Instr(isa.SPEC_BY_NAME[name], **fields).encode(), PC)


def check_binary(name: str, a: list[int], b: list[int]) -> None:
    warp = Warp()
    warp.set(5, a)
    warp.set(6, b)
    out = warp.run(name, rd=7, rs1=5, rs2=6)
    expected = [REFERENCE[name](x, y) & M32 for x, y in zip(a, b, strict=True)]
    assert warp.regs[:, 7].tolist() == expected
    assert out.next_pc.tolist() == [PC + 4] * W


# ----------------------------------------------------------------------------------------------
# Arithmetic


def test_reference_matches_spec_corner_cases() -> None:
    """The reference itself, against the RISC-V M spec table of division corner cases."""
    assert REFERENCE["div"](5, 0) == -1
    assert REFERENCE["divu"](5, 0) == M32
    assert REFERENCE["rem"](5, 0) == 5
    assert REFERENCE["remu"](5, 0) == 5
    assert REFERENCE["div"](0x8000_0000, M32) & M32 == 0x8000_0000
    assert REFERENCE["rem"](0x8000_0000, M32) == 0
    assert REFERENCE["div"](s32(-7) & M32, 2) == -3
    assert REFERENCE["rem"](s32(-7) & M32, 2) == -1


@pytest.mark.parametrize("name", sorted(REFERENCE))
def test_register_ops_on_edge_values(name: str) -> None:
    pairs = [(a, b) for a in EDGES for b in EDGES]
    for i in range(0, len(pairs), W):
        chunk = (pairs[i : i + W] + pairs[:W])[:W]
        check_binary(name, [a for a, _ in chunk], [b for _, b in chunk])


@given(
    st.sampled_from(sorted(REFERENCE)),
    st.lists(u32s, min_size=W, max_size=W),
    st.lists(u32s, min_size=W, max_size=W),
)
def test_register_ops_on_random_operands(name: str, a: list[int], b: list[int]) -> None:
    check_binary(name, a, b)


@given(
    st.sampled_from(sorted(IMMEDIATE_FORMS)),
    st.lists(st.sampled_from(EDGES) | u32s, min_size=W, max_size=W),
    st.integers(-2048, 2047),
)
def test_immediate_ops(name: str, a: list[int], imm: int) -> None:
    if isa.SPEC_BY_NAME[name].fmt is isa.Fmt.SHIFT:
        imm %= 32
    warp = Warp()
    warp.set(5, a)
    warp.run(name, rd=7, rs1=5, imm=imm)
    expected = [REFERENCE[IMMEDIATE_FORMS[name]](x, imm & M32) & M32 for x in a]
    assert warp.regs[:, 7].tolist() == expected


def test_register_shift_uses_low_five_bits() -> None:
    warp = Warp()
    warp.set(5, 0x8000_0000)
    warp.set(6, [33, 63, 32, 0xFFFF_FFE1, 1, 0, 31, 64])
    warp.run("sra", rd=7, rs1=5, rs2=6)
    high2, low = 0xC000_0000, 0x8000_0000
    assert warp.regs[:, 7].tolist() == [high2, M32, low, high2, high2, low, M32, low]


def test_x0_reads_zero_and_ignores_writes() -> None:
    warp = Warp()
    warp.set(5, 7)
    warp.run("addi", rd=0, rs1=5, imm=1)
    warp.run("add", rd=6, rs1=0, rs2=5)
    assert warp.regs[:, 0].tolist() == [0] * W
    assert warp.regs[:, 6].tolist() == [7] * W


def test_lui_and_auipc() -> None:
    warp = Warp()
    warp.run("lui", rd=5, imm=0xFFFFF)
    warp.run("auipc", rd=6, imm=0x80000)
    assert warp.regs[0, 5] == 0xFFFF_F000
    assert warp.regs[0, 6] == (PC + 0x8000_0000) & M32


def test_only_executing_lanes_change() -> None:
    warp = Warp()
    lanes = np.array([1, 4, 6])
    out = warp.run("addi", lanes=lanes, rd=5, rs1=0, imm=9)
    assert warp.regs[:, 5].tolist() == [0, 9, 0, 0, 9, 0, 9, 0]
    assert out.lanes.tolist() == [1, 4, 6]
    assert out.next_pc.tolist() == [PC + 4] * 3


# ----------------------------------------------------------------------------------------------
# Control flow


@given(
    st.sampled_from(sorted(BRANCHES)),
    st.lists(st.sampled_from(EDGES), min_size=W, max_size=W),
    st.lists(st.sampled_from(EDGES), min_size=W, max_size=W),
)
def test_branches_diverge_per_lane(name: str, a: list[int], b: list[int]) -> None:
    warp = Warp()
    warp.set(5, a)
    warp.set(6, b)
    out = warp.run(name, rs1=5, rs2=6, imm=-64)
    expected = [PC - 64 if BRANCHES[name](x, y) else PC + 4 for x, y in zip(a, b, strict=True)]
    assert out.next_pc.tolist() == expected


def test_jal_links_and_jumps() -> None:
    warp = Warp()
    out = warp.run("jal", rd=1, imm=-256)
    assert out.next_pc.tolist() == [PC - 256] * W
    assert warp.regs[:, 1].tolist() == [PC + 4] * W


def test_jalr_clears_bit_zero_and_reads_rs1_before_linking() -> None:
    warp = Warp()
    warp.set(1, [GLOBAL_BASE + 4 * i for i in range(W)])
    out = warp.run("jalr", rd=1, rs1=1, imm=9)
    assert out.next_pc.tolist() == [GLOBAL_BASE + 4 * i + 8 for i in range(W)]
    assert warp.regs[:, 1].tolist() == [PC + 4] * W


def test_misaligned_jump_target_faults_at_the_jump_without_linking() -> None:
    warp = Warp()
    warp.set(5, [GLOBAL_BASE] * 3 + [GLOBAL_BASE + 2] * 5)
    with pytest.raises(MemoryFault) as info:
        warp.run("jalr", rd=1, rs1=5, imm=0)
    assert str(info.value) == (
        f"misaligned instruction address at pc {PC:#010x} (block 2, thread 11): "
        f"{ins_text('jalr', rd=1, rs1=5)} — jump target 0x80000002 is not a multiple of 4"
    )
    assert warp.regs[:, 1].tolist() == [0] * W


def test_misaligned_branch_target_faults_only_when_taken() -> None:
    warp = Warp()
    warp.set(5, [1, 1, 0, 1, 1, 1, 1, 1])
    out = warp.run("beq", lanes=np.array([0, 1]), rs1=5, rs2=0, imm=6)
    assert out.next_pc.tolist() == [PC + 4] * 2
    with pytest.raises(MemoryFault, match=r"\(block 2, thread 10\).*0x80000106 is not a multiple"):
        warp.run("beq", rs1=5, rs2=0, imm=6)


# ----------------------------------------------------------------------------------------------
# Memory


def test_loads_sign_and_zero_extend() -> None:
    warp = Warp()
    warp.glob.write_bytes(GLOBAL_BASE + 0x200, bytes([0x81, 0x92, 0xA3, 0xB4]))
    warp.set(5, GLOBAL_BASE + 0x200)
    expected = {"lb": 0xFFFF_FF81, "lbu": 0x81, "lh": 0xFFFF_9281, "lhu": 0x9281}
    for name, value in {**expected, "lw": 0xB4A3_9281}.items():
        out = warp.run(name, rd=6, rs1=5, imm=0)
        assert warp.regs[:, 6].tolist() == [value] * W, name
        assert out.access is not None and out.access.kind == "load"


def test_stores_and_their_access_record() -> None:
    warp = Warp()
    warp.set(5, [SHARED_BASE + 4 * i for i in range(W)])
    warp.set(6, [0x0102_0300 + i for i in range(W)])
    out = warp.run("sh", rs1=5, rs2=6, imm=2)
    assert out.access is not None
    assert (out.access.kind, out.access.size) == ("store", 2)
    assert out.access.addrs.tolist() == [SHARED_BASE + 4 * i + 2 for i in range(W)]
    warp.run("lw", rd=7, rs1=5, imm=0)
    assert warp.regs[:, 7].tolist() == [(0x0300 + i) << 16 for i in range(W)]


@pytest.mark.parametrize(("name", "size"), [("sb", 1), ("sh", 2), ("sw", 4)])
def test_store_sizes(name: str, size: int) -> None:
    warp = Warp()
    warp.set(5, GLOBAL_BASE + 0x80)
    warp.set(6, 0x8899_AABB)
    warp.run(name, lanes=np.array([3]), rs1=5, rs2=6, imm=4)
    stored = (0x8899_AABB).to_bytes(4, "little")[:size]
    assert warp.glob.read_bytes(GLOBAL_BASE + 0x84, 4) == stored + bytes(4 - size)


AMO_REFERENCE = {
    "amoadd.w": lambda old, v: old + v,
    "amoswap.w": lambda old, v: v,
    "amoxor.w": lambda old, v: old ^ v,
    "amoand.w": lambda old, v: old & v,
    "amoor.w": lambda old, v: old | v,
    "amomin.w": lambda old, v: min(s32(old), s32(v)),
    "amomax.w": lambda old, v: max(s32(old), s32(v)),
    "amominu.w": min,
    "amomaxu.w": max,
}


def test_every_amo_has_a_reference() -> None:
    assert set(AMO_REFERENCE) == {s.name for s in isa.SPECS if s.amo_op is not None}


@given(st.sampled_from(sorted(AMO_REFERENCE)), st.lists(u32s, min_size=W, max_size=W), u32s)
def test_amos_on_one_address_serialise_in_lane_order(
    name: str, values: list[int], init: int
) -> None:
    warp = Warp()
    warp.glob.write_bytes(GLOBAL_BASE + 0x40, init.to_bytes(4, "little"))
    warp.set(5, GLOBAL_BASE + 0x40)
    warp.set(6, values)
    out = warp.run(name, rd=7, rs1=5, rs2=6)
    memory, olds = init, []
    for v in values:
        olds.append(memory)
        memory = AMO_REFERENCE[name](memory, v) & M32
    assert warp.regs[:, 7].tolist() == olds
    assert warp.glob.read_words(GLOBAL_BASE + 0x40, 1).tolist() == [memory]
    assert out.access is not None and out.access.kind == "amo"


@pytest.mark.parametrize("name", ["amoadd.w", "lr.w", "sc.w", "lw"])
@pytest.mark.parametrize("full", [True, False])
def test_an_access_records_its_addresses_when_rd_is_rs1(name: str, full: bool) -> None:
    """``amoadd.w a0, a1, (a0)``: the access's addresses are a0's before the instruction
    wrote it (a full warp's registers are read as a view of the register file: the record
    must not be that view)."""
    warp = Warp()
    addrs = [GLOBAL_BASE + 0x100 + 4 * i for i in range(W)]
    warp.set(10, addrs)
    warp.set(11, 5)
    lanes = None if full else np.arange(W - 1)
    out = warp.run(name, lanes=lanes, rd=10, rs1=10, rs2=0 if name == "lr.w" else 11)
    assert out.access is not None
    assert out.access.addrs.tolist() == addrs[: W if full else W - 1]
    assert warp.regs[0, 10] != addrs[0]  # rd was written (an old value, or sc.w's status)


# LR/SC (docs/isa.md, "LR/SC"): lane i is thread W + i of block 2.
WORD = GLOBAL_BASE + 0x40


def test_lr_reserves_and_sc_succeeds_only_for_the_first_lane_of_a_word() -> None:
    """Every lane reserves one word; their sc.w run in lane order: the first lane stores and
    gets 0, its store breaks the others' reservations, so they get 1 and store nothing."""
    warp = Warp()
    warp.glob.write_bytes(WORD, (7).to_bytes(4, "little"))
    warp.set(5, WORD)
    out = warp.run("lr.w", rd=6, rs1=5)
    assert out.access is not None and out.access.kind == "lr"
    assert warp.regs[:, 6].tolist() == [7] * W
    assert len(warp.glob.reservations) == W
    warp.set(8, list(range(100, 100 + W)))
    lanes = np.array([2, 3, 5])
    out = warp.run("sc.w", lanes=lanes, rd=9, rs1=5, rs2=8)
    assert out.access is not None and out.access.kind == "sc"
    assert warp.regs[lanes, 9].tolist() == [0, 1, 1]
    assert warp.glob.read_words(WORD, 1).tolist() == [102]
    assert len(warp.glob.reservations) == 0  # three ended by sc.w, the rest broken by lane 2


def test_sc_without_reservation_or_to_another_word_fails() -> None:
    warp = Warp()
    warp.set(5, [WORD + 4 * (i % 2) for i in range(W)])
    warp.run("lr.w", rd=6, rs1=5)
    warp.set(5, WORD)  # odd lanes reserved WORD + 4, not WORD
    warp.set(8, 55)
    warp.run("sc.w", lanes=np.array([1, 3]), rd=9, rs1=5, rs2=8)
    assert warp.regs[[1, 3], 9].tolist() == [1, 1]
    assert warp.glob.read_words(WORD, 1).tolist() == [0]
    warp.run("sc.w", lanes=np.array([1]), rd=9, rs1=5, rs2=8)  # its reservation has ended
    assert warp.regs[1, 9] == 1
    warp.run("sc.w", lanes=np.array([0]), rd=9, rs1=5, rs2=8)
    assert warp.regs[0, 9] == 0 and warp.glob.read_words(WORD, 1).tolist() == [55]


@pytest.mark.parametrize(
    ("name", "fields"),
    [
        ("sb", {"rs1": 5, "rs2": 8, "imm": 3}),
        ("sw", {"rs1": 5, "rs2": 8, "imm": 0}),
        ("amoor.w", {"rd": 0, "rs1": 5, "rs2": 8}),
    ],
)
def test_a_write_to_the_word_by_another_thread_breaks_the_reservation(
    name: str, fields: dict[str, int]
) -> None:
    """Lane 0 reserves; lane 4 writes a byte, the word or an AMO to it: lane 0's sc.w fails.
    A write to the next word leaves the reservation alone."""
    warp = Warp()
    warp.set(5, WORD)
    warp.run("lr.w", lanes=np.array([0]), rd=6, rs1=5)
    warp.set(5, WORD + 4)
    warp.run(name, lanes=np.array([4]), **fields)
    warp.set(5, WORD)
    warp.run("sc.w", lanes=np.array([0]), rd=9, rs1=5, rs2=8)
    assert warp.regs[0, 9] == 0
    warp.run("lr.w", lanes=np.array([0]), rd=6, rs1=5)
    warp.run(name, lanes=np.array([4]), **fields)
    warp.run("sc.w", lanes=np.array([0]), rd=9, rs1=5, rs2=8)
    assert warp.regs[0, 9] == 1


def test_reservations_on_local_memory_are_per_thread() -> None:
    """Local memory is private: lane 1's store to the same local address is another word."""
    warp = Warp()
    local = MAP.local_base + 16
    warp.set(5, local)
    warp.set(8, [10 + i for i in range(W)])
    warp.run("lr.w", rd=6, rs1=5)
    warp.run("sw", lanes=np.array([1]), rs1=5, rs2=8, imm=0)
    warp.run("sc.w", lanes=np.array([0, 1, 2]), rd=9, rs1=5, rs2=8)
    assert warp.regs[[0, 1, 2], 9].tolist() == [0, 1, 0]


def test_misaligned_lr_is_an_amo_fault() -> None:
    warp = Warp()
    warp.set(5, WORD + 2)
    with pytest.raises(MemoryFault, match="misaligned amo"):
        warp.run("lr.w", rd=6, rs1=5)


def test_misaligned_load_is_located() -> None:
    warp = Warp()
    warp.set(5, GLOBAL_BASE + 1)
    with pytest.raises(MemoryFault) as info:
        warp.run("lh", lanes=np.array([3, 5]), rd=6, rs1=5, imm=0)
    assert str(info.value) == (
        f"misaligned load at pc {PC:#010x} (block 2, thread 11): "
        f"{ins_text('lh', rd=6, rs1=5)} — address 0x80000001 is not a multiple of 2"
    )


# ----------------------------------------------------------------------------------------------
# CSRs and system instructions


@pytest.mark.parametrize(
    ("csr", "values"),
    [
        (isa.Csr.TID, list(range(W, 2 * W))),
        (isa.Csr.NTID, [2 * W] * W),
        (isa.Csr.CTAID, [2] * W),
        (isa.Csr.NCTAID, [3] * W),
        (isa.Csr.LANEID, list(range(W))),
        (isa.Csr.WARPID, [1] * W),
        (isa.Csr.WARPSIZE, [W] * W),
    ],
)
@pytest.mark.parametrize("name", ["csrrs", "csrrc", "csrrsi", "csrrci"])
def test_csr_reads(csr: int, values: list[int], name: str) -> None:
    warp = Warp()
    warp.run(name, rd=5, rs1=0, imm=0, csr=csr)
    assert warp.regs[:, 5].tolist() == values


@pytest.mark.parametrize(
    ("name", "fields"),
    [
        ("csrrw", {"rd": 10, "rs1": 11}),
        ("csrrw", {"rd": 0, "rs1": 0}),
        ("csrrs", {"rd": 10, "rs1": 11}),
        ("csrrci", {"rd": 10, "imm": 1}),
        ("csrrwi", {"rd": 10, "imm": 0}),
    ],
)
def test_csr_writes_are_illegal(name: str, fields: dict[str, int]) -> None:
    warp = Warp()
    with pytest.raises(IllegalInstructionFault) as info:
        warp.run(name, lanes=np.array([5, 6]), csr=0xCC0, **fields)
    assert str(info.value) == (
        f"illegal instruction at pc {PC:#010x} (block 2, thread 13): "
        f"{ins_text(name, csr=0xCC0, **fields)} — writes read-only CSR 0xcc0 (thread index)"
    )


def test_unknown_csr_is_illegal() -> None:
    with pytest.raises(IllegalInstructionFault) as info:
        Warp().run("csrrs", rd=5, rs1=0, csr=0x300)
    assert str(info.value) == (
        f"illegal instruction at pc {PC:#010x} (block 2, thread 8): "
        f"{ins_text('csrrs', rd=5, csr=0x300)} — unknown CSR 0x300 (the SIMT CSRs are "
        "0xcc0-0xcc6)"
    )


@pytest.mark.parametrize("name", ["fence", "fence.i", "rhint"])
def test_no_ops(name: str) -> None:
    warp = Warp()
    warp.set(5, 1)
    before = warp.regs.copy()
    out = warp.run(name, imm=64 if name == "rhint" else 0)
    assert (warp.regs == before).all()
    assert out.next_pc.tolist() == [PC + 4] * W
    assert not out.barrier and out.exit_codes is None and out.access is None


def test_bar_waits_at_its_own_pc() -> None:
    out = Warp().run("bar", lanes=np.array([0, 2]))
    assert out.barrier
    assert out.next_pc.tolist() == [PC, PC]


def test_ecall_exit_returns_signed_exit_codes() -> None:
    warp = Warp()
    warp.set(isa.REG_A7, isa.SYSCALL_EXIT)
    warp.set(isa.REG_A0, [0, 1, -1, 0x7FFF_FFFF, 0x8000_0000, 5, 6, 7])
    out = warp.run("ecall")
    assert out.exit_codes is not None
    assert out.exit_codes.tolist() == [0, 1, -1, 2**31 - 1, -(2**31), 5, 6, 7]


def test_ecall_other_than_exit_is_a_syscall_fault() -> None:
    warp = Warp()
    warp.set(isa.REG_A7, [93, 93, 64, 93, 93, 93, 93, 93])
    with pytest.raises(SyscallFault) as info:
        warp.run("ecall")
    assert str(info.value) == (
        f"unsupported syscall at pc {PC:#010x} (block 2, thread 10): {ins_text('ecall')} — "
        "ecall with a7 = 64 (only a7 = 93, exit, exists)"
    )


def test_ebreak_is_a_breakpoint_fault() -> None:
    with pytest.raises(SyscallFault) as info:
        Warp().run("ebreak", lanes=np.array([7]))
    assert info.value.kind == "breakpoint"
    assert str(info.value) == (
        f"breakpoint at pc {PC:#010x} (block 2, thread 15): {ins_text('ebreak')} — "
        "ebreak with no debugger attached"
    )
