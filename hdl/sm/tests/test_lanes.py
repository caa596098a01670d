"""The SM's lane and divider (hdl/sm/lanes.py) against ``golden.semantics.execute``: every
instruction the lane executes, through the decoder, with edge operands (0, -1, INT_MIN, shift
amounts of 32 and more in the register...) and Hypothesis-drawn ones; the iterative divider at
1 to 32 steps per cycle on streams of divisions, each result checked exactly ``cycles`` after
its request and ``busy`` in between. Amaranth's simulator, and the Verilog of both under Icarus."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from amaranth.hdl import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from hypothesis import given, settings
from hypothesis import strategies as st

from reconverge.golden import isa
from reconverge.golden.config import division_cycles
from reconverge.golden.faults import MemoryFault
from reconverge.golden.memmap import GLOBAL_BASE, MemoryMap
from reconverge.golden.memory import GlobalMemory, LocalMemory, SharedMemory, WarpMemory
from reconverge.golden.semantics import ALU_OPS, WarpContext, execute
from reconverge.golden.sm import decode as golden
from reconverge.hdl.sm.decode import Decoder
from reconverge.hdl.sm.lanes import (
    DIV_KINDS,
    WORD,
    Divider,
    Lane,
    Multiplier,
    address,
    alu_controls,
    op,
)
from reconverge.hdl.sm.tests.harness import simulate_amaranth, simulate_icarus

M32 = isa.MASK32
INT_MIN = 0x8000_0000
EDGES = [0, 1, 2, 31, 32, 33, 63, 0x7FFF_FFFF, INT_MIN, INT_MIN + 1, M32, M32 - 1, 0x1234_5678]
MAP = MemoryMap(global_size=4096, shared_size=256, local_size=64)
PC = GLOBAL_BASE + 0x100
#: What the lane executes: everything but ``ebreak`` (always a fault) and the CSR writes
#: ``csrrw``/``csrrwi`` (always illegal: the SIMT CSRs are read-only).
ALWAYS_FAULTS = {"ebreak", "csrrw", "csrrwi"}
LANE_SPECS = [s for s in isa.SPECS if s.name not in ALWAYS_FAULTS]
LANE_OUTPUTS = ("result", "next_pc", "bad_target", "addr", "store_data")


class DecodedLane(wiring.Component):
    """A :class:`Decoder` feeding a :class:`Lane` and its :class:`Multiplier`: the lane
    driven by an instruction word (the partial products, the address and the ALU's controls,
    registered in the SM, here combinational; ``addr`` is that address)."""

    def __init__(self) -> None:
        members = {"word": In(WORD), "pc": In(WORD), "a": In(WORD), "b": In(WORD)}
        members["csr_value"] = In(WORD)
        members.update({name: Out(WORD) for name in LANE_OUTPUTS})
        members["bad_target"] = Out(1)
        super().__init__(wiring.Signature(members))

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.decoder = decoder = Decoder()
        m.submodules.lane = lane = Lane()
        m.submodules.multiplier = multiplier = Multiplier()
        m.d.comb += [decoder.word.eq(self.word), lane.instr.eq(decoder.instr)]
        m.d.comb += [
            multiplier.instr.eq(decoder.instr),
            multiplier.a.eq(self.a),
            multiplier.b.eq(self.b),
            lane.partials.eq(multiplier.partials),
            lane.addr.eq(address(self.a, decoder.instr.imm)),
            lane.alu.eq(alu_controls(decoder.instr)),
            self.addr.eq(lane.addr),
        ]
        m.d.comb += [getattr(lane, n).eq(getattr(self, n)) for n in ("pc", "a", "b", "csr_value")]
        m.d.comb += [getattr(self, n).eq(getattr(lane, n)) for n in LANE_OUTPUTS if n != "addr"]
        return m


# ----------------------------------------------------------------------------------------------
# Cases and the golden oracle


def case(
    spec: isa.Spec, a: int, b: int, *, imm: int = 0, pc: int = PC, csr: int = isa.Csr.TID
) -> dict:
    """Inputs of one lane cycle: ``spec`` with rs1 = x5 holding ``a``, rs2 = x6 holding ``b``,
    rd = x7 (CSR instructions read CSR ``csr`` with a zero source, so they are reads)."""
    fields = {"rd": 7, "rs1": 5, "rs2": 6, "imm": imm}
    if spec.fmt in (isa.Fmt.CSR, isa.Fmt.CSRI):
        fields.update(rs1=0, imm=0, csr=csr)
    if spec.is_load or spec.is_store or spec.is_amo:
        size = 1 << golden.spec_fields(spec)["mem_size"]
        a = (GLOBAL_BASE + a % (MAP.global_size // size) * size - imm) & M32
    word = isa.Instr(spec, **fields).encode()
    return {"word": word, "pc": pc, "a": a, "b": b, "csr_value": (a * 7 + 3) & M32}


def expected(inputs: dict) -> dict[str, int]:
    """What golden's ``execute`` says of one lane cycle: the outputs it defines."""
    ins = isa.decode(inputs["word"])
    spec = ins.spec
    regs = np.zeros((1, isa.NUM_REGS), np.uint32)
    regs[0, isa.REG_A7] = isa.SYSCALL_EXIT
    regs[0, ins.rs1] = inputs["a"] if ins.rs1 else 0
    regs[0, ins.rs2] = inputs["b"] if ins.rs2 else 0
    glob = GlobalMemory(MAP)
    mem = WarpMemory(glob, SharedMemory(MAP), LocalMemory(1, MAP), block=0, first_thread=0)
    ctx = WarpContext(0, {c: np.array([inputs["csr_value"]], np.uint32) for c in isa.Csr})
    try:
        out = execute(ins, inputs["pc"], regs, np.array([0]), mem, ctx)
    except MemoryFault as fault:
        assert fault.kind == "misaligned instruction address", fault
        return {"bad_target": 1}
    want = {"bad_target": 0, "next_pc": int(out.next_pc[0])}
    unit = golden.spec_unit(spec)
    if ins.rd and unit in (golden.Unit.ALU, golden.Unit.MUL):
        want["result"] = int(regs[0, ins.rd])
    if out.access is not None:
        want["addr"] = int(out.access.addrs[0])
    if spec.is_store:
        offset = want["addr"] - GLOBAL_BASE
        stored = glob.data[0, offset : offset + out.access.size].tobytes()
        want["store_data"] = int.from_bytes(stored, "little")
    return want


def check_lane(cases: list[dict], outputs: list[dict[str, int]]) -> None:
    for inputs, got in zip(cases, outputs, strict=True):
        want = expected(inputs)
        if "store_data" in want:  # the lane gives rs2 whole; the store keeps its low bytes
            got = {**got, "store_data": got["store_data"] & (1 << 8 * len_bytes(inputs)) - 1}
        diff = {k: (got[k], v) for k, v in want.items() if got[k] != v}
        assert not diff, f"{isa.decode(inputs['word'])} {inputs}: (hdl, golden) {diff}"


def len_bytes(inputs: dict) -> int:
    return 1 << golden.decode_fields(inputs["word"])["mem_size"]


def edge_cases() -> list[dict]:
    """Every lane instruction on edge operands: all pairs for the register-register ones,
    edge immediates for the others, odd PCs' worth of targets for the jumps."""
    cases = []
    for spec in LANE_SPECS:
        imms = [0]
        if spec.fmt in isa.IMM_FORMATS:
            lo, hi, align = isa.imm_range(spec.fmt)
            imms = sorted(
                {lo, hi, 0, align, -align if lo < 0 else hi // 2, lo // 2 // align * align}
            )
        if spec.fmt in (isa.Fmt.R, isa.Fmt.B):
            pairs = itertools.product(EDGES, EDGES)
            cases += [case(spec, a, b, imm=imms[-1]) for a, b in pairs]
        else:
            cases += [case(spec, a, a ^ 0x5555, imm=i) for a in EDGES for i in imms]
    cases += [case(isa.SPEC_BY_NAME["csrrs"], 9, 0, csr=c) for c in isa.Csr]
    return cases


words32 = st.one_of(st.sampled_from(EDGES), st.integers(0, M32))


@st.composite
def random_cases(draw: st.DrawFn) -> dict:
    spec = draw(st.sampled_from(LANE_SPECS))
    imm = 0
    if spec.fmt in isa.IMM_FORMATS:
        lo, hi, align = isa.imm_range(spec.fmt)
        imm = draw(st.integers(lo // align, hi // align)) * align
    pc = draw(words32) & ~(isa.ILEN_BYTES - 1)
    csr = draw(st.sampled_from(list(isa.Csr)))
    return case(spec, draw(words32), draw(words32), imm=imm, pc=pc, csr=csr)


# ----------------------------------------------------------------------------------------------
# Lane tests


def test_lane_on_edge_operands() -> None:
    cases = edge_cases()
    check_lane(cases, simulate_amaranth(DecodedLane(), cases))


@settings(max_examples=20, deadline=None)
@given(st.lists(random_cases(), min_size=1, max_size=150))
def test_lane_on_random_operands(cases: list[dict]) -> None:
    check_lane(cases, simulate_amaranth(DecodedLane(), cases))


@pytest.mark.rtl
def test_lane_in_icarus(tmp_path) -> None:
    cases = edge_cases()[::7]
    check_lane(cases, simulate_icarus(DecodedLane(), "decoded_lane", cases, tmp_path))


def test_misaligned_targets_are_reported() -> None:
    """A jalr to an address with bit 1 set, a taken branch by 2: both golden faults."""
    jalr = case(isa.SPEC_BY_NAME["jalr"], 0x8000_0002, 0)
    beq = case(isa.SPEC_BY_NAME["beq"], 3, 3, imm=6)
    bne = case(isa.SPEC_BY_NAME["bne"], 3, 3, imm=6)  # not taken: no fault
    outputs = simulate_amaranth(DecodedLane(), [jalr, beq, bne])
    assert [o["bad_target"] for o in outputs] == [1, 1, 0]
    check_lane([jalr, beq, bne], outputs)


# ----------------------------------------------------------------------------------------------
# Divider


DIV_EDGES = [0, 1, 2, 3, 7, 0x7FFF_FFFF, INT_MIN, INT_MIN + 1, M32, M32 - 1, M32 - 6, 0x1234_5678]
Request = tuple[int, str, int, int]  # (idle cycles before it, division, a, b)


def golden_division(name: str, a: int, b: int) -> int:
    return int(ALU_OPS[name](np.array([a], np.uint32), np.array([b], np.uint32))[0])


def division_stream(requests: list[Request], steps: int) -> tuple[list[dict[str, int]], list[int]]:
    """A reset cycle, then each request after its idle cycles, the next one no earlier than
    the cycle its predecessor's result comes out (the divider takes one per ``cycles``); the
    cycles to drive and the cycle of each request."""
    span = division_cycles(steps)
    cycles: list[dict[str, int]] = [{"rst": 1}]
    starts = []
    for i, (idle, name, a, b) in enumerate(requests):
        cycles += [{}] * idle
        starts.append(len(cycles))
        request = {"req__valid": 1, "req__op": op(name).value, "req__a": a, "req__b": b}
        cycles.append(request | {"req__tag": i % 256})
        cycles += [{}] * (span - 1)
    return cycles + [{}] * 2, starts


def check_divider(
    requests: list[Request], steps: int, starts: list[int], outputs: list[dict[str, int]]
) -> None:
    """The response of the request of cycle c in cycle c + cycles, busy from c + 1 until then;
    nothing valid and not busy in the other cycles."""
    span = division_cycles(steps)
    done = {c + span: i for i, c in enumerate(starts)}
    busy = {c + k for c in starts for k in range(1, span + 1)}
    for t, got in enumerate(outputs):
        assert got["busy"] == (t in busy), f"cycle {t}: busy {got['busy']}"
        if t not in done:
            assert got["resp__valid"] == 0, f"cycle {t}: spurious response"
            continue
        i = done[t]
        _, name, a, b = requests[i]
        want = {"resp__valid": 1, "resp__result": golden_division(name, a, b), "resp__tag": i % 256}
        assert {k: got[k] for k in want} == want, f"{name} {a:#x}, {b:#x} ({steps} steps)"


def edge_requests(every: int = 1) -> list[Request]:
    pairs = list(itertools.product(DIV_KINDS, DIV_EDGES, DIV_EDGES))[::every]
    return [(k % 3, name, a, b) for k, (name, a, b) in enumerate(pairs)]


@pytest.mark.filterwarnings("ignore::amaranth.hdl.UnusedElaboratable")
def test_divider_steps_must_fit_a_word() -> None:
    for steps in (0, 33):
        with pytest.raises(ValueError, match=r"steps per cycle must be in 1\.\.32"):
            Divider(steps)


@pytest.mark.parametrize(("steps", "every"), [(1, 7), (2, 3), (3, 3), (11, 1), (32, 1)])
def test_divider_edge_stream(steps: int, every: int) -> None:
    """Every division of the edge operands (a sample at the slow rates), back to back or with
    idle cycles between: 1 step (32 cycles), 2 (radix 4), 3 (11 cycles, 33 steps: a leading
    zero step), 11 (3 cycles), 32 (one cycle)."""
    requests = edge_requests(every)
    cycles, starts = division_stream(requests, steps)
    check_divider(requests, steps, starts, simulate_amaranth(Divider(steps, 8), cycles))


requests = st.tuples(
    st.integers(0, 3),
    st.sampled_from(sorted(DIV_KINDS)),
    st.sampled_from(DIV_EDGES) | st.integers(0, M32),
    st.sampled_from(DIV_EDGES) | st.integers(0, M32),
)


@pytest.mark.parametrize("steps", [2, 5])
@settings(max_examples=10, deadline=None)
@given(st.lists(requests, min_size=1, max_size=30))
def test_divider_random_stream(steps: int, reqs: list[Request]) -> None:
    cycles, starts = division_stream(reqs, steps)
    check_divider(reqs, steps, starts, simulate_amaranth(Divider(steps, 8), cycles))


@pytest.mark.rtl
@pytest.mark.parametrize("steps", [2, 11])
def test_divider_in_icarus(steps: int, tmp_path) -> None:
    requests = edge_requests(9)
    cycles, starts = division_stream(requests, steps)
    outputs = simulate_icarus(Divider(steps, 8), "divider", cycles, tmp_path)
    check_divider(requests, steps, starts, outputs)
