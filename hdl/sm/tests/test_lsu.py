"""The SM's load/store unit (``hdl/sm/lsu.py``) against golden: random streams of memory
instructions (sizes, signedness, the AMOs of ``golden.isa``, global/shared/local windows,
same-word collisions, misaligned and unmapped addresses, random masks, plain and squeezed
passes) run on the LSU behind a Python line memory, with a plain ``Arbiter`` as its tree.
Every instruction's LSU cycles and line transactions must equal ``golden.sm.lsu.lsu_cycles``
(whose length is ``access_cost``), every loaded and old value and every fault must equal
``golden.memory.WarpMemory`` run on the same access, and so must the final memory. Back-pressure
(``req_ready`` low, late responses, tree grants denied) may change only the stall count.

The same driver runs in Amaranth's simulator and, on the generated Verilog, under Icarus
Verilog through cocotb (this module is also the cocotb test module: ``lsu_stream``).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import cocotb
import numpy as np
import pytest
from amaranth.hdl import ClockDomain, Module, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In
from amaranth.sim import Simulator
from cocotb.clock import Clock
from cocotb.triggers import FallingEdge, ReadOnly, RisingEdge
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconverge.golden.blocks.arbiter import ArbiterParams
from reconverge.golden.blocks.squeezer import squeeze
from reconverge.golden.faults import FaultCode, MemoryFault
from reconverge.golden.memmap import GLOBAL_BASE, SHARED_BASE, Region
from reconverge.golden.memory import AMO_OPS, GlobalMemory, LocalMemory, SharedMemory, WarpMemory
from reconverge.golden.params import COSIM, SMParams
from reconverge.golden.policies import Policy
from reconverge.golden.semantics import MemAccess
from reconverge.golden.sm.lsu import (
    AMO_BY_FUNCT5,
    LR_FUNCT5,
    SC_FUNCT5,
    AccessCost,
    MemOp,
    access_cost,
    local_physical,
    lsu_cycles,
    shares_tree,
)
from reconverge.hdl.blocks.arbiter import Arbiter
from reconverge.hdl.sm.lsu import LSU, amo_word
from reconverge.hdl.tools.lint import verilator_lint
from reconverge.hdl.tools.verilog import to_verilog
from reconverge.testbench.amaranth_sim import Compiled, run_simulator

KINDS = {MemOp.LOAD: "load", MemOp.STORE: "store", MemOp.AMO: "amo"}
#: The funct5 values of an AMO-opcode instruction: the AMOs, and lr.w / sc.w more often (an
#: sc.w succeeds only after an lr.w of its thread on its word).
A_FUNCT5 = sorted(AMO_BY_FUNCT5) + [LR_FUNCT5, SC_FUNCT5] * 4


def kind_of(op: MemOp, funct5: int) -> str:
    """``MemAccess.kind`` of a memory instruction."""
    if op is MemOp.AMO and funct5 in (LR_FUNCT5, SC_FUNCT5):
        return "lr" if funct5 == LR_FUNCT5 else "sc"
    return KINDS[op]


FAULT_BY_KIND = {code.kind: code for code in FaultCode}


def sm_params(
    warp_size: int, simd_width: int, line_bytes: int, banks: int, policy: Policy = Policy.SPS
) -> SMParams:
    """The co-simulation SM with another geometry, line size, bank count and policy (under
    stack-less the LSU coalesces on a tree it shares, else it orders the lines itself)."""
    return dataclasses.replace(
        COSIM,
        geometry=dataclasses.replace(COSIM.geometry, warp_size=warp_size, simd_width=simd_width),
        config=dataclasses.replace(
            COSIM.config, line_bytes=line_bytes, shared_banks=banks, policy=policy
        ),
    )


GEOMETRIES = {
    "W8-L4-line32-banks8": sm_params(8, 4, 32, 8),
    "W8-L8-line16-banks4": sm_params(8, 8, 16, 4),
    "W16-L4-line64-banks8": sm_params(16, 4, 64, 8),
    "W8-L4-line32-banks8-stackless": sm_params(8, 4, 32, 8, Policy.STACKLESS),
}


# ----------------------------------------------------------------------------------------------
# The unit under test: the LSU with a plain arbiter tree whose grant a test may deny


class LsuWithTree(wiring.Component):
    """The LSU; under stack-less with a combinational ``Arbiter`` on its ``tree`` port and
    ``granted`` an input (the stack-less control lowers it in the cycles where it arbitrates
    its PC; the LSU then has no LSU cycle in the next cycle)."""

    def __init__(self, params: SMParams) -> None:
        self.lsu = LSU(params)
        members = {k: v for k, v in self.lsu.signature.members.items() if k != "tree"}
        grant = {"granted": In(1)} if shares_tree(params.policy) else {}
        super().__init__({**members, **grant})

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.lsu = lsu = self.lsu
        for name, member in self.signature.members.items():
            if name == "granted":
                continue
            if member.is_signature:
                wiring.connect(m, wiring.flipped(getattr(self, name)), getattr(lsu, name))
            elif member.flow is wiring.In:
                m.d.comb += getattr(lsu, name).eq(getattr(self, name))
            else:
                m.d.comb += getattr(self, name).eq(getattr(lsu, name))
        if not shares_tree(lsu.params.policy):
            return m
        m.submodules.tree = tree = Arbiter(ArbiterParams(lsu.warp_size, lsu.key_width))
        m.d.comb += [
            tree.valid.eq(lsu.tree.valid),
            tree.key.eq(lsu.tree.key),
            lsu.tree.granted.eq(self.granted),
            lsu.tree.min_key.eq(tree.min_key),
            lsu.tree.mask.eq(tree.mask),
        ]
        return m


# ----------------------------------------------------------------------------------------------
# Stimulus


@dataclass(frozen=True)
class MemInstr:
    """One warp memory instruction as the top presents it (addresses and data by position)."""

    op: MemOp
    size: int  # log2 bytes
    signed: bool
    amo: int  # funct5
    warp: int
    block: int
    rd: int
    mask: int
    addrs: tuple[int, ...]
    data: tuple[int, ...]
    hws: bool  # squeezed passes (seed 001) instead of W / L quarters
    clears: int = 0  # warp slots whose new warp is dispatched as this instruction starts

    @property
    def positions(self) -> list[int]:
        return [p for p in range(len(self.addrs)) if self.mask >> p & 1]

    def passes(self, simd_width: int) -> list[int]:
        """The thread positions of each issue pass."""
        w = len(self.addrs)
        if not self.hws:
            return [
                (self.mask >> q & ((1 << simd_width) - 1)) << q for q in range(0, w, simd_width)
            ]
        s = squeeze(self.mask, w, simd_width)
        out = []
        for q, lanes in s.issue():
            threads = (s.thread(q * simd_width + j) for j in range(simd_width) if lanes >> j & 1)
            out.append(sum(1 << t for t in threads if t is not None))
        return out or [0]


def _address(draw: st.DrawFn, params: SMParams, size: int) -> int:
    memmap, line, banks = params.memmap, params.config.line_bytes, params.config.shared_banks
    kind = draw(st.sampled_from(["global"] * 6 + ["shared"] * 5 + ["local"] * 4 + ["bad"]))
    if kind == "bad":
        bad = [
            GLOBAL_BASE + memmap.global_size,
            SHARED_BASE + memmap.shared_size,
            memmap.local_base - 4,
            0,
            0xFFFF_FFFC,
            GLOBAL_BASE + 0x40 + draw(st.sampled_from([1, 2, 3])),  # misaligned (unless bytes)
        ]
        return draw(st.sampled_from(bad))
    base, span = {
        "global": (GLOBAL_BASE + 0x100, 3 * line),
        "shared": (SHARED_BASE, 4 * banks * 4),
        "local": (memmap.local_base, 16),
    }[kind]
    if kind == "shared" and draw(st.booleans()):
        return SHARED_BASE + memmap.shared_size - 4  # the window's last word
    return base + draw(st.integers(0, span // (1 << size) - 1)) * (1 << size)


@st.composite
def instructions(draw: st.DrawFn, params: SMParams) -> MemInstr:
    w, slots = params.geometry.warp_size, params.geometry.warps
    op = draw(st.sampled_from(list(MemOp)))
    size = 2 if op is MemOp.AMO else draw(st.integers(0, 2))
    # a few shared addresses per instruction make same-word collisions likely
    pool = [_address(draw, params, size) for _ in range(draw(st.integers(1, 4)))]
    addrs = tuple(draw(st.sampled_from(pool)) for _ in range(w))
    word = st.one_of(
        st.integers(0, 0xFFFF_FFFF), st.sampled_from([0, 1, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF])
    )
    return MemInstr(
        op=op,
        size=size,
        signed=draw(st.booleans()),
        amo=draw(st.sampled_from(A_FUNCT5)),
        warp=draw(st.integers(0, slots - 1)),
        block=draw(st.integers(0, slots - 1)),
        rd=draw(st.integers(0, 31)),
        mask=draw(st.sampled_from([(1 << w) - 1]) | st.integers(0, (1 << w) - 1)),
        addrs=addrs,
        data=tuple(draw(word) for _ in range(w)),
        hws=draw(st.booleans()),
        clears=draw(st.sampled_from([0] * 7) | st.integers(0, (1 << slots) - 1)),
    )


def shared_sweep(params: SMParams, stream: list[MemInstr]) -> list[MemInstr]:
    """Word loads of every shared word the stream may have written, slot by slot."""
    w, memmap = params.geometry.warp_size, params.memmap
    touched: dict[int, set[int]] = {}
    for ins in stream:
        if ins.op is not MemOp.LOAD:
            for p in ins.positions:
                a = ins.addrs[p]
                if memmap.region_of(a, 1 << ins.size) is Region.SHARED:
                    touched.setdefault(ins.block, set()).add(a & ~3)
    sweep = []
    for block, addrs in sorted(touched.items()):
        ordered = sorted(addrs)
        for i in range(0, len(ordered), w):
            chunk = ordered[i : i + w]
            chunk += [chunk[0]] * (w - len(chunk))
            load = MemInstr(
                op=MemOp.LOAD, size=2, signed=False, amo=0, warp=0, block=block, rd=1,
                mask=(1 << w) - 1, addrs=tuple(chunk), data=(0,) * w, hws=False,
            )  # fmt: skip
            sweep.append(load)
    return sweep


# ----------------------------------------------------------------------------------------------
# What the hardware did


@dataclass
class Observed:
    """One instruction's effects at the LSU's ports."""

    cycles: int = 0  # LSU cycles: from start to release, neither stalled nor denied
    lines: list[int] = field(default_factory=list)  # accepted requests, as line keys
    results: dict[int, int] = field(default_factory=dict)  # wb: position -> value
    late: int = 0  # the most advancing cycles a result came after release (must be <= 1)
    release: tuple[int, int, int, int] | None = None  # warp, rd, mask, global_
    fault: tuple[int, int, int] | None = None  # code, position, address


@dataclass
class Run:
    """A stream's run: every instruction's effects and the state at the end."""

    observed: list[Observed]
    lines: dict[int, bytes]  # the line memory after the stream (line address -> bytes)
    counters: dict[str, int]
    stall_cycles: int
    cycles: int

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), default=list)

    @classmethod
    def from_json(cls, text: str) -> Run:
        raw = json.loads(text)

        def entry(o: dict[str, Any]) -> Observed:
            return Observed(
                cycles=o["cycles"],
                lines=o["lines"],
                results={int(k): v for k, v in o["results"].items()},
                late=o["late"],
                release=tuple(o["release"]) if o["release"] else None,  # type: ignore[arg-type]
                fault=tuple(o["fault"]) if o["fault"] else None,  # type: ignore[arg-type]
            )

        return cls(
            observed=[entry(o) for o in raw["observed"]],
            lines={int(k): bytes(v) for k, v in raw["lines"].items()},
            counters=raw["counters"],
            stall_cycles=raw["stall_cycles"],
            cycles=raw["cycles"],
        )


class LineMemory:
    """The data port's memory (docs/sm-hardware.md, memory contract): applies a request when
    it is accepted and answers with the line before it, in order, one cycle later or more."""

    def __init__(self, line_bytes: int) -> None:
        self.line_bytes = line_bytes
        self.lines: dict[int, bytearray] = {}
        self.responses: list[tuple[int, int]] = []  # (cycle it may be delivered, old line)

    def apply(self, addr: int, op: int, amo: int, be: int, wdata: int) -> int:
        assert addr % self.line_bytes == 0, f"request address {addr:#x} is not line-aligned"
        line = self.lines.setdefault(addr, bytearray(self.line_bytes))
        old = int.from_bytes(line, "little")
        if op == MemOp.STORE:
            for b in range(self.line_bytes):
                if be >> b & 1:
                    line[b] = wdata >> (8 * b) & 0xFF
        elif op == MemOp.AMO:
            fn = AMO_OPS[AMO_BY_FUNCT5[amo]]
            for k in range(self.line_bytes // 4):
                if be >> (4 * k) & 0xF == 0xF:
                    word = int.from_bytes(line[4 * k : 4 * k + 4], "little")
                    new = fn(word, wdata >> (32 * k) & 0xFFFF_FFFF)
                    line[4 * k : 4 * k + 4] = new.to_bytes(4, "little")
        return old


class PortIO(Protocol):
    """A simulator's view of the unit's ports by Verilog name."""

    def get(self, name: str) -> int: ...

    def set(self, name: str, value: int) -> None: ...

    async def settle(self) -> None: ...

    async def tick(self) -> None: ...


def _pack(values: list[int] | tuple[int, ...], width: int) -> int:
    return sum(v << (width * i) for i, v in enumerate(values))


START_FIELDS = ("op", "size", "signed", "amo", "warp", "block", "rd", "mask")


def top_inputs(ins: MemInstr | None, positions: int, last: bool) -> dict[str, int]:
    """``capture``, ``start`` and ``clear`` as the top drives them in one pass (all zero when
    idle; the instruction's ``clears`` with ``start``)."""
    inputs = {
        "capture__valid": int(ins is not None),
        "capture__mask": positions,
        "capture__addr": _pack(ins.addrs, 32) if ins else 0,
        "capture__data": _pack(ins.data, 32) if ins else 0,
        "start__valid": int(last),
        "clear": ins.clears if ins and last else 0,
    }
    for name in START_FIELDS:
        inputs[f"start__{name}"] = int(getattr(ins, name)) if ins and last else 0
    return inputs


def outputs(io: PortIO, prefix: str, names: tuple[str, ...]) -> tuple[int, ...] | None:
    """The fields of an output group whose valid bit is set (they are don't-care, maybe
    undefined in Verilog, otherwise)."""
    if not io.get(f"{prefix}valid"):
        return None
    return tuple(io.get(f"{prefix}{name}") for name in names)


async def drive(io: PortIO, params: SMParams, stream: list[MemInstr], seed: int | None) -> Run:
    """Run ``stream`` through the LSU as the SM's top would (one pass per cycle, the next
    memory instruction once ``busy`` is low, everything frozen while ``stall``); ``seed``
    turns on back-pressure and (stack-less: the shared tree) denied grants."""
    w, simd = params.geometry.warp_size, params.geometry.simd_width
    lb = params.config.line_bytes
    rng = random.Random(seed) if seed is not None else None
    tree = shares_tree(params.policy)
    mem = LineMemory(lb)
    observed = [Observed() for _ in stream]
    queue = list(range(len(stream)))
    passes: list[int] = []
    current = 0  # the instruction in its passes
    owner: int | None = None  # the instruction the LSU's results belong to
    running = False
    ready_line = False  # stack-less: the tree was granted in the last cycle without stall
    stalls = cycle = 0
    drain = 2  # cycles after the last release: its results and AMO writes land by L + 1
    while drain:
        drain = drain - 1 if not (queue or passes or running or mem.responses) else 2
        assert cycle < 200 * (len(stream) + 1), "the LSU does not finish"
        if not passes and queue and not io.get("busy") and not (rng and rng.random() < 0.2):
            current = queue.pop(0)
            passes = stream[current].passes(simd)
        ins = stream[current] if passes else None
        inputs = top_inputs(ins, passes[0] if passes else 0, len(passes) == 1)
        granted = int(not (rng and tree) or rng.random() < 0.8)
        ready = int(not rng or rng.random() < 0.7)
        deliver = bool(mem.responses) and mem.responses[0][0] <= cycle
        if tree:
            inputs["granted"] = granted
        inputs.update(
            {
                "mem__req_ready": ready,
                "mem__resp_valid": int(deliver),
                "mem__resp_rdata": mem.responses.pop(0)[1] if deliver else 0,
            }
        )
        for name, value in inputs.items():
            io.set(name, value)
        await io.settle()
        stall = io.get("stall")
        request = outputs(io, "mem__req_", ("addr", "op", "amo", "be", "wdata"))
        if request and ready:
            delay = rng.choice([0, 0, 0, 1, 3]) if rng else 0
            mem.responses.append((cycle + 1 + delay, mem.apply(*request)))
            assert running and owner is not None
            observed[owner].lines.append(request[0] // lb)
        stalls += stall
        if not stall:
            results = io.get("wb__en")
            if results:
                assert owner is not None
                record = observed[owner]
                warp, rd, data = (io.get(f"wb__{name}") for name in ("warp", "rd", "data"))
                assert (warp, rd) == (stream[owner].warp, stream[owner].rd)
                for p in range(w):
                    if results >> p & 1:
                        assert p not in record.results, f"position {p} written twice"
                        record.results[p] = data >> (32 * p) & 0xFFFF_FFFF
                record.late = max(record.late, 0 if running else 1)
            if running and (ready_line or not tree):
                observed[owner].cycles += 1  # type: ignore[index]
            # the tree is not the LSU's in the start cycle (the last pass's)
            ready_line = bool(granted) and len(passes) != 1
            release = outputs(io, "release__", ("warp", "rd", "mask", "global_"))
            if release:
                assert running and owner is not None
                observed[owner].release = release  # type: ignore[assignment]
                running = False
            fault = outputs(io, "fault__", ("code", "position", "addr"))
            assert fault is None or len(passes) == 1
            if passes:
                passes.pop(0)
                if not passes:
                    observed[current].fault = fault  # type: ignore[assignment]
                    running, owner = fault is None, current if fault is None else owner
        await io.tick()
        cycle += 1
    counters = {
        name: io.get(f"counters__{name}")
        for name in ("transactions", "shared_cycles", "bank_conflicts", "stalls")
    }
    return Run(observed, {a: bytes(v) for a, v in mem.lines.items()}, counters, stalls, cycle)


# ----------------------------------------------------------------------------------------------
# The oracle: golden's memories and LSU schedule


@dataclass
class Golden:
    params: SMParams
    glob: GlobalMemory = field(init=False)
    shared: list[SharedMemory] = field(init=False)
    local: list[LocalMemory] = field(init=False)
    costs: list[AccessCost] = field(init=False, default_factory=list)  # of fault-free accesses

    def __post_init__(self) -> None:
        memmap, slots = self.params.memmap, self.params.geometry.warps
        self.glob = GlobalMemory(memmap)
        self.shared = [SharedMemory(memmap) for _ in range(slots)]
        self.local = [LocalMemory(self.params.geometry.warp_size, memmap) for _ in range(slots)]
        self.generation = [0] * slots  # a slot's threads are new after each clear

    def expect(self, ins: MemInstr) -> Observed:
        """What the LSU must do for ``ins`` (and golden's memories do it). The threads of
        slot v are golden's threads v * W + position of "block" = the slot's generation."""
        params, memmap = self.params, self.params.memmap
        w = params.geometry.warp_size
        for v in range(len(self.generation)):
            self.generation[v] += ins.clears >> v & 1
        lanes = np.array(ins.positions, np.int64)
        addrs = np.array([ins.addrs[p] for p in lanes], np.uint32)
        values = np.array([ins.data[p] for p in lanes], np.uint32)
        mem = WarpMemory(
            self.glob, self.shared[ins.block], self.local[ins.warp],
            block=self.generation[ins.warp], first_thread=ins.warp * w,
        )  # fmt: skip
        size = 1 << ins.size
        kind = kind_of(ins.op, ins.amo)
        old = None
        try:
            if ins.op is MemOp.LOAD:
                old = mem.load(addrs, size, ins.signed, lanes)
            elif ins.op is MemOp.STORE:
                mem.store(addrs, values, size, lanes)
            elif kind == "lr":
                old = mem.load_reserved(addrs, lanes)
            elif kind == "sc":
                old = mem.store_conditional(addrs, values, lanes)
            else:
                old = mem.amo(AMO_BY_FUNCT5[ins.amo], addrs, values, lanes)
        except MemoryFault as fault:
            assert fault.thread is not None
            position = fault.thread - ins.warp * w
            return Observed(fault=(FAULT_BY_KIND[fault.kind], position, ins.addrs[position]))
        access = MemAccess(kind, addrs, size)
        kw = {
            "warp_size": params.geometry.warp_size,
            "line_bytes": params.config.line_bytes,
            "banks": params.config.shared_banks,
        }
        schedule = lsu_cycles(access, lanes, memmap, slot=ins.warp, **kw)
        cost = access_cost(access, lanes, memmap, **kw)
        assert len(schedule) == cost.cycles
        self.costs.append(cost)
        results = {}
        if old is not None and ins.rd:
            results = dict(zip(lanes.tolist(), old.tolist(), strict=True))
        return Observed(
            cycles=max(cost.cycles, 1),
            lines=[c.line for c in schedule if c.kind == "line"],  # type: ignore[misc]
            results=results,
            release=(ins.warp, ins.rd, ins.mask, int(cost.transactions > 0)),
        )

    def lines(self) -> dict[int, bytes]:
        """Golden's global and local memory as the data port's lines (non-zero ones)."""
        params, memmap = self.params, self.params.memmap
        lb = params.config.line_bytes
        out = {}
        glob = self.glob.data[0].reshape(-1, lb)
        for i in np.flatnonzero(glob.any(axis=1)):
            out[GLOBAL_BASE + int(i) * lb] = glob[i].tobytes()
        image: dict[int, bytearray] = {}
        for slot, local in enumerate(self.local):
            for position, offset in zip(*np.nonzero(local.data), strict=True):
                phys = local_physical(
                    memmap.local_base + int(offset), int(position), slot, memmap,
                    params.geometry.warp_size,
                )  # fmt: skip
                line = image.setdefault(phys - phys % lb, bytearray(lb))
                line[phys % lb] = local.data[position, offset]
        out.update({a: bytes(v) for a, v in image.items()})
        return out


def check(params: SMParams, stream: list[MemInstr], run: Run) -> None:
    golden = Golden(params)
    expected = [golden.expect(ins) for ins in stream]
    for i, (ins, want, got) in enumerate(zip(stream, expected, run.observed, strict=True)):
        label = f"instruction {i}: {ins}"
        assert got.fault == want.fault, label
        assert got.lines == want.lines, label
        assert got.cycles == want.cycles, label
        assert got.results == want.results, label
        assert got.release == want.release, label
        assert got.late <= 1, label  # every result lands by L + 1
    assert {a: v for a, v in run.lines.items() if any(v)} == golden.lines()
    assert run.counters["transactions"] == sum(c.transactions for c in golden.costs)
    assert run.counters["shared_cycles"] == sum(c.shared_cycles for c in golden.costs)
    assert run.counters["bank_conflicts"] == sum(c.bank_conflicts for c in golden.costs)
    assert run.counters["stalls"] == run.stall_cycles


def shared_contents(
    params: SMParams, golden_shared: list[SharedMemory]
) -> list[tuple[int, int, int]]:
    """(bank, row, word) of every word of golden's shared windows."""
    memmap = params.memmap
    words = memmap.shared_size // 4
    banks = min(params.config.shared_banks, words)
    rows = words // banks
    out = []
    for slot, shared in enumerate(golden_shared):
        values = shared.data[0].view("<u4")
        for word in range(words):
            out.append((word % banks, slot * rows + word // banks, int(values[word])))
    return out


# ----------------------------------------------------------------------------------------------
# Amaranth's simulator


class AmaranthPorts:
    """:class:`PortIO` over an Amaranth testbench context."""

    def __init__(self, ctx: Any, dut: wiring.Component) -> None:
        self.ctx = ctx
        self.ports = {
            "__".join(str(s) for s in path): Value.cast(value)
            for path, _, value in dut.signature.flatten(dut)
        }

    def get(self, name: str) -> int:
        return int(self.ctx.get(self.ports[name]))

    def set(self, name: str, value: int) -> None:
        self.ctx.set(self.ports[name], value)

    async def settle(self) -> None:
        return None

    async def tick(self) -> None:
        await self.ctx.tick()


@functools.cache
def compiled(params: SMParams) -> tuple[LsuWithTree, Compiled]:
    """The LSU of ``params`` with its tree, compiled once for every stream (Hypothesis runs a
    test's body once per example)."""
    dut = LsuWithTree(params)
    top = Module()
    top.domains.sync = ClockDomain("sync")
    top.submodules.dut = dut
    return dut, Compiled(top)


def simulate(params: SMParams, stream: list[MemInstr], seed: int | None) -> Run:
    """Drive the stream in Amaranth's simulator; also hold the shared banks to golden."""
    dut, sim = compiled(params)
    result: list[Run] = []

    async def bench(ctx: Any) -> None:
        run = await drive(AmaranthPorts(ctx, dut), params, stream, seed)
        golden = Golden(params)
        for ins in stream:
            golden.expect(ins)
        for bank, row, word in shared_contents(params, golden.shared):
            assert ctx.get(dut.lsu.bank_memories[bank].data[row]) == word, (bank, row)
        result.append(run)

    sim.run(bench)
    return result[0]


@pytest.mark.parametrize("name", list(GEOMETRIES))
@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_lsu_matches_golden(name: str, data: st.DataObject) -> None:
    params = GEOMETRIES[name]
    stream = data.draw(st.lists(instructions(params), min_size=6, max_size=30))
    stream += shared_sweep(params, stream)
    seed = data.draw(st.none() | st.integers(0, 2**32 - 1))
    check(params, stream, simulate(params, stream, seed))


@pytest.mark.parametrize("name", ["W8-L4-line32-banks8", "W8-L4-line32-banks8-stackless"])
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_back_pressure_changes_only_the_stall_count(name: str, data: st.DataObject) -> None:
    params = GEOMETRIES[name]
    stream = data.draw(st.lists(instructions(params), min_size=4, max_size=16))
    ideal = simulate(params, stream, None)
    pressed = simulate(params, stream, data.draw(st.integers(0, 2**32 - 1)))
    assert ideal.stall_cycles == ideal.counters["stalls"] == 0
    assert pressed.observed == ideal.observed
    assert pressed.lines == ideal.lines
    assert {k: v for k, v in pressed.counters.items() if k != "stalls"} == {
        k: v for k, v in ideal.counters.items() if k != "stalls"
    }
    assert pressed.counters["stalls"] == pressed.stall_cycles
    check(params, stream, pressed)


_WORDS = st.sampled_from([0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF]) | st.integers(0, 2**32 - 1)


@settings(max_examples=20, deadline=None)
@given(cases=st.lists(st.tuples(st.sampled_from(A_FUNCT5), _WORDS, _WORDS), min_size=20))
def test_amo_word_is_golden_amo(cases: list[tuple[int, int, int]]) -> None:
    """``amo_word`` (the shared banks' read-modify-write) writes what ``AMO_OPS`` computes for
    every AMO, and the old word for ``lr.w`` / ``sc.w``; the signed and unsigned extremes
    around the sign bit are drawn often."""
    m = Module()
    funct5, old, operand = Signal(5), Signal(32), Signal(32)
    new = Signal(32)
    m.d.comb += new.eq(amo_word(funct5, old, operand))
    sim = Simulator(m)

    async def bench(ctx: Any) -> None:
        for f5, a, b in cases:
            ctx.set(funct5, f5)
            ctx.set(old, a)
            ctx.set(operand, b)
            want = AMO_OPS[AMO_BY_FUNCT5[f5]](a, b) if f5 in AMO_BY_FUNCT5 else a
            assert ctx.get(new) == want, (f5, hex(a), hex(b))

    sim.add_testbench(bench)
    run_simulator(sim)


def test_lsu_cycles_of_a_worked_access() -> None:
    """Four threads, two on one global word (AMO: two transactions), two in shared bank 0 on
    different words (two bank cycles, one conflict)."""
    params = GEOMETRIES["W8-L4-line32-banks8"]
    a = GLOBAL_BASE + 0x100
    s0, s8 = SHARED_BASE, SHARED_BASE + 8 * 4
    addrs = (a, a, s0, s8, a + 4, a, a, a)
    ins = MemInstr(MemOp.AMO, 2, False, 0, 1, 2, 5, 0b111111, addrs, tuple(range(1, 9)), False)
    run = simulate(params, [ins], None)
    check(params, [ins], run)
    assert run.observed[0].cycles == 3 + 2  # a: threads 0, 1, 5 in turn; then banks
    assert run.counters == {"transactions": 3, "shared_cycles": 2, "bank_conflicts": 1, "stalls": 0}
    assert run.observed[0].results[5] == 1 + 2  # amoadd: old = the sum of threads 0 and 1


def test_lr_sc_worked_example() -> None:
    """lr.w / sc.w (docs/isa.md, "LR/SC") on the three windows: per word the lowest thread's
    sc.w succeeds and breaks the others' reservations (local words are private, so both
    succeed); a byte store by another warp breaks a reservation; a new warp in a slot starts
    without reservations."""
    params = GEOMETRIES["W8-L4-line32-banks8"]
    g, sh, loc = GLOBAL_BASE + 0x104, SHARED_BASE + 8, params.memmap.local_base + 4
    lr, sc, full = MemOp.AMO, MemOp.AMO, 0xFF

    def ins(op: MemOp, funct5: int, warp: int, mask: int, addrs: tuple[int, ...],
            size: int = 2, clears: int = 0) -> MemInstr:  # fmt: skip
        data = tuple(100 + p for p in range(8))
        return MemInstr(op, size, False, funct5, warp, 0, 5, mask, addrs, data, False, clears)

    spread = (g, g, g, g, sh, sh, loc, loc)
    stream = [
        ins(lr, LR_FUNCT5, 0, full, spread),
        ins(sc, SC_FUNCT5, 0, full, spread),
        ins(lr, LR_FUNCT5, 1, 0b11, (g,) * 8),
        ins(MemOp.STORE, 0, 2, 0b1, (g + 3,) * 8, size=0),
        ins(sc, SC_FUNCT5, 1, 0b11, (g,) * 8),
        ins(lr, LR_FUNCT5, 3, 0b1, (sh,) * 8),
        ins(sc, SC_FUNCT5, 3, 0b1, (sh,) * 8, clears=0b1000),
        ins(lr, LR_FUNCT5, 3, 0b1, (sh,) * 8),
        ins(sc, SC_FUNCT5, 3, 0b1, (sh,) * 8),
    ]
    run = simulate(params, stream, None)
    check(params, stream, run)
    results = [run.observed[i].results for i in (1, 4, 6, 8)]
    assert results[0] == {0: 0, 1: 1, 2: 1, 3: 1, 4: 0, 5: 1, 6: 0, 7: 0}
    assert results[1] == {0: 1, 1: 1}  # the sb broke both reservations
    assert results[2] == {0: 1}  # the new warp in slot 3 holds no reservation
    assert results[3] == {0: 0}
    # one line for the two local words, g for threads 0-3 in turn, then shared: 2 bank cycles
    assert run.observed[1].cycles == 1 + 4 + 2


def test_fault_precedence() -> None:
    """Misaligned before unmapped, the lowest offending position (``WarpMemory._route``)."""
    params = GEOMETRIES["W8-L8-line16-banks4"]
    good = GLOBAL_BASE + 0x100
    addrs = (good, 0, good, good + 2, good, good + 1, good, good)
    stream = [
        MemInstr(MemOp.LOAD, 2, False, 0, 0, 0, 3, 0xFF, addrs, (0,) * 8, False),
        MemInstr(MemOp.STORE, 1, False, 0, 0, 0, 3, 0xFF, addrs, (0,) * 8, False),
        MemInstr(MemOp.STORE, 0, False, 0, 0, 0, 3, 0xFF, addrs, (0,) * 8, False),
        MemInstr(MemOp.AMO, 2, False, 0, 0, 0, 3, 0b11110101, addrs, (0,) * 8, False),
    ]
    run = simulate(params, stream, None)
    check(params, stream, run)
    assert [o.fault for o in run.observed] == [
        (FaultCode.MISALIGNED_LOAD, 3, good + 2),
        (FaultCode.MISALIGNED_STORE, 5, good + 1),
        (FaultCode.UNMAPPED_STORE, 1, 0),
        (FaultCode.MISALIGNED_AMO, 5, good + 1),
    ]


# ----------------------------------------------------------------------------------------------
# Icarus Verilog through cocotb

RECORD = "RECONVERGE_LSU_RECORD"


class CocotbPorts:
    """:class:`PortIO` over a cocotb handle: inputs after the falling edge, outputs in the
    read-only phase."""

    def __init__(self, dut: Any) -> None:
        self.dut = dut

    def get(self, name: str) -> int:
        value = getattr(self.dut, name).value
        assert value.is_resolvable, f"{name} = {value}"
        return int(value)

    def set(self, name: str, value: int) -> None:
        getattr(self.dut, name).value = value

    async def settle(self) -> None:
        await ReadOnly()

    async def tick(self) -> None:
        await RisingEdge(self.dut.clk)
        await FallingEdge(self.dut.clk)


def _encode(stream: list[MemInstr]) -> str:
    return json.dumps([dataclasses.asdict(ins) for ins in stream])


def _decode(text: str) -> list[MemInstr]:
    return [
        MemInstr(
            **{**d, "op": MemOp(d["op"]), "addrs": tuple(d["addrs"]), "data": tuple(d["data"])}
        )
        for d in json.loads(text)
    ]


@cocotb.test()
async def lsu_stream(dut: Any) -> None:
    """The stream of ``$RECONVERGE_LSU_STREAM`` on the Verilog; the run goes to a JSON file."""
    params = GEOMETRIES[os.environ["RECONVERGE_LSU_GEOMETRY"]]
    stream = _decode(os.environ["RECONVERGE_LSU_STREAM"])
    dut.rst.value = 0
    cocotb.start_soon(Clock(dut.clk, 10, unit="ns").start(start_high=False))
    await FallingEdge(dut.clk)
    run = await drive(CocotbPorts(dut), params, stream, int(os.environ["RECONVERGE_LSU_SEED"]))
    Path(os.environ[RECORD]).write_text(run.to_json())


@pytest.mark.rtl
def test_lsu_verilog_under_icarus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Generate the Verilog once and run a short random stream with back-pressure under Icarus
    (cocotb): it must agree with golden, and cycle for cycle with Amaranth's simulator."""
    from reconverge.testbench.cocotb_run import build
    from reconverge.testbench.runner import check_results, run_test

    name, seed = "W8-L4-line32-banks8", 7
    params = GEOMETRIES[name]
    stream = icarus_stream(params, random.Random(12))
    runner, build_dir = build(
        "lsu", {"W": 8, "L": 4, "line": 32, "banks": 8}, LsuWithTree(params), variant="-stream"
    )
    record = tmp_path / "run.json"
    monkeypatch.syspath_prepend(str(Path(__file__).parent))  # cocotb imports this module
    env = {
        "RECONVERGE_LSU_GEOMETRY": name,
        "RECONVERGE_LSU_STREAM": _encode(stream),
        "RECONVERGE_LSU_SEED": str(seed),
        RECORD: str(record),
    }
    results, log = run_test(runner, test_module=Path(__file__).stem, top="lsu",
                            build_dir=build_dir, test_dir=tmp_path, env=env)  # fmt: skip
    check_results(results, log)
    run = Run.from_json(record.read_text())
    check(params, stream, run)
    assert run.counters["transactions"] and run.counters["shared_cycles"] and run.stall_cycles
    assert run == simulate(params, stream, seed)


def icarus_stream(params: SMParams, rng: random.Random) -> list[MemInstr]:
    """A short stream for the Verilog run (one simulator start, so plain ``random``): loads,
    stores and AMO-opcode instructions (AMOs, lr.w, sc.w) in turn on three addresses of the
    three windows, every ninth with a misaligned address, then the shared sweep."""
    w, slots = params.geometry.warp_size, params.geometry.warps
    stream = []
    for i in range(36):
        op = MemOp(i % 3)
        size = 2 if op is MemOp.AMO else rng.randrange(3)
        bases = [GLOBAL_BASE + 0x100, SHARED_BASE, params.memmap.local_base]
        pool = [rng.choice(bases) + rng.randrange(0, 64, 1 << size) for _ in range(3)]
        addrs = [rng.choice(pool) for _ in range(w)]
        if i % 9 == 8:
            addrs[rng.randrange(w)] = GLOBAL_BASE + 0x101 + (size == 2)
        stream.append(
            MemInstr(
                op=op,
                size=size,
                signed=rng.random() < 0.5,
                amo=rng.choice(A_FUNCT5),
                warp=rng.randrange(slots),
                block=rng.randrange(slots),
                rd=rng.randrange(1, 32),
                mask=rng.randrange(1 << w),
                addrs=tuple(addrs),
                data=tuple(rng.randrange(1 << 32) for _ in range(w)),
                hws=rng.random() < 0.5,
            )
        )
    return stream + shared_sweep(params, stream)


@pytest.mark.rtl
def test_lsu_verilog_lints_clean() -> None:
    assert verilator_lint(to_verilog(LSU(COSIM), "lsu"), "lsu") == []
