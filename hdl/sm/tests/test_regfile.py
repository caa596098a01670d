"""The SM's register file (hdl/sm/regfile.py) against a Python dict model on random streams of
reads, writes on the three ports (often to the same register, to exercise their priority),
launches and changes of the launch values, at W=8/L=4/warps=4, W=8/L=8 (8 warps) and
W=16/L=4/warps=2. Unwritten registers read ``golden.functional.initial_registers``. Amaranth's
simulator, and the generated Verilog under Icarus for one geometry. The read port is
synchronous: a cycle's words are those of the previous cycle's address, with the writes of
that cycle in them."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconverge.golden.functional import GLOBAL_POINTER_SYMBOL, LaunchConfig, initial_registers
from reconverge.golden.geometry import Geometry
from reconverge.golden.image import Image
from reconverge.golden.isa import MASK32, NUM_REGS
from reconverge.golden.params import ARG_REGS, SMParams
from reconverge.hdl.sm.regfile import WRITE_PORTS, RegisterFile
from reconverge.hdl.sm.tests.harness import amaranth_runner, simulate_amaranth, simulate_icarus

GEOMETRIES = {
    "W8-L4-warps4": Geometry(warp_size=8, simd_width=4, warps=4),
    "W8-L8": Geometry(warp_size=8, simd_width=8),
    "W16-L4-warps2": Geometry(warp_size=16, simd_width=4, warps=2),
}
Cycle = dict[str, int]


def words(values: list[int]) -> int:
    """An array port's raw bits, element 0 in the low bits."""
    return sum((v & MASK32) << 32 * i for i, v in enumerate(values))


def elements(raw: int, n: int) -> list[int]:
    return [raw >> 32 * i & MASK32 for i in range(n)]


class Model:
    """What the register file holds: written (slot, position, register) values; the rest
    reads its initial value for the current launch values (golden.functional)."""

    def __init__(self, params: SMParams) -> None:
        self.params = params
        self.values: dict[tuple[int, int, int], int] = {}

    def initial(self, gp: int, args: list[int]) -> list[int]:
        image = Image(entry=0, segments=(), symbols={GLOBAL_POINTER_SYMBOL: gp})
        config = LaunchConfig(grid=1, block=1, memmap=self.params.memmap, args=tuple(args))
        return [int(v) for v in initial_registers(1, image, config)[0]]

    def read(self, address: Cycle, field: str) -> int:
        """The words a read gives the cycle after ``address`` (the port is synchronous) for its
        slot and register; an unwritten register reads its initial value for the launch values
        of the address cycle."""
        initial = self.initial(address["init__gp"], elements(address["init__args"], ARG_REGS))
        warp, reg = address["read__warp"], address[f"read__{field}"]
        width = self.params.geometry.warp_size
        return words([self.values.get((warp, j, reg), initial[reg]) for j in range(width)])

    def clock(self, cycle: Cycle) -> None:
        if cycle.get("rst"):
            self.values.clear()
            return
        width = self.params.geometry.warp_size
        for port in WRITE_PORTS:  # lowest priority first: a later port overwrites
            rd, warp = cycle[f"{port}__rd"], cycle[f"{port}__warp"]
            data = elements(cycle[f"{port}__data"], width)
            for j in range(width):
                if rd and cycle[f"{port}__en"] >> j & 1:
                    self.values[(warp, j, rd)] = data[j]
        slots = cycle.get("launch__slots", 0)
        self.values = {k: v for k, v in self.values.items() if not slots >> k[0] & 1}


def check(params: SMParams, cycles: list[Cycle], outputs: list[dict[str, int]]) -> None:
    model = Model(params)
    address: Cycle | None = None  # the previous cycle, unless a reset
    for t, (cycle, got) in enumerate(zip(cycles, outputs, strict=True)):
        if address is not None and not cycle.get("rst"):
            for field in ("rs1", "rs2"):
                want = model.read(address, field)
                assert got[f"read__{field}_data"] == want, (
                    f"cycle {t} {field}: hdl {elements(got[f'read__{field}_data'], 64)} "
                    f"model {elements(want, 64)}"
                )
        model.clock(cycle)
        address = None if cycle.get("rst") else cycle


def cycle_strategy(params: SMParams) -> st.SearchStrategy[Cycle]:
    """One cycle: a read, the three writes (registers from a small set, so ports often meet
    at one register), now and then a launch or new launch values."""
    geometry = params.geometry
    # mostly a few slots and registers, so reads meet the writes of their address cycle
    slot = st.sampled_from([0, geometry.warps - 1]) | st.integers(0, geometry.warps - 1)
    reg = st.sampled_from([0, 2, 3]) | st.integers(0, NUM_REGS - 1)
    data = st.lists(
        st.integers(0, MASK32), min_size=geometry.warp_size, max_size=geometry.warp_size
    )
    fields: dict[str, st.SearchStrategy[int]] = {
        "read__warp": slot,
        "read__rs1": reg,
        "read__rs2": reg,
        "launch__slots": st.integers(0, 9).flatmap(
            lambda x: st.integers(0, (1 << geometry.warps) - 1) if x == 0 else st.just(0)
        ),
    }
    for port in WRITE_PORTS:
        fields[f"{port}__en"] = st.integers(0, (1 << geometry.warp_size) - 1) | st.just(0)
        fields[f"{port}__warp"] = slot
        fields[f"{port}__rd"] = reg
        fields[f"{port}__data"] = data.map(words)
    return st.fixed_dictionaries(fields)


def with_launch_values(cycles: list[Cycle], values: list[list[int]]) -> list[Cycle]:
    """A reset cycle first; the launch values (gp, a0..a7) change every 16 cycles."""
    out: list[Cycle] = []
    for t, cycle in enumerate([{"rst": 1}, *cycles]):
        gp, *args = values[t // 16 % len(values)]
        out.append({**cycle, "init__gp": gp, "init__args": words(args)})
    return out


launch_values = st.lists(
    st.lists(st.integers(0, MASK32), min_size=1 + ARG_REGS, max_size=1 + ARG_REGS),
    min_size=1,
    max_size=3,
)


@pytest.mark.parametrize("name", GEOMETRIES)
def test_register_file_random_stream(name: str) -> None:
    params = SMParams(geometry=GEOMETRIES[name])
    simulate = amaranth_runner(RegisterFile(params))  # compiled once for every example

    @settings(max_examples=5, deadline=None)
    @given(st.lists(cycle_strategy(params), min_size=1, max_size=120), launch_values)
    def run(cycles: list[Cycle], values: list[list[int]]) -> None:
        cycles = with_launch_values(cycles, values)
        check(params, cycles, simulate(cycles))

    run()


def seeded_stream(params: SMParams, n: int, seed: int) -> list[Cycle]:
    """A reproducible random stream, for the Icarus run."""
    rng = random.Random(seed)
    geometry = params.geometry
    cycles = []
    for _ in range(n):
        cycle = {
            "read__warp": rng.randrange(geometry.warps),
            "read__rs1": rng.choice([0, 2, 3, 10, 17, rng.randrange(NUM_REGS)]),
            "read__rs2": rng.choice([1, 2, 11, rng.randrange(NUM_REGS)]),
            "launch__slots": rng.getrandbits(geometry.warps) if rng.random() < 0.08 else 0,
        }
        for port in WRITE_PORTS:
            cycle[f"{port}__en"] = rng.getrandbits(geometry.warp_size)
            cycle[f"{port}__warp"] = rng.randrange(geometry.warps)
            cycle[f"{port}__rd"] = rng.choice([0, 2, 3, 10, rng.randrange(NUM_REGS)])
            cycle[f"{port}__data"] = words([rng.getrandbits(32) for _ in range(geometry.warp_size)])
        cycles.append(cycle)
    values = [[rng.getrandbits(32) for _ in range(1 + ARG_REGS)] for _ in range(3)]
    return with_launch_values(cycles, values)


@pytest.mark.rtl
def test_register_file_in_icarus(tmp_path) -> None:
    params = SMParams(geometry=GEOMETRIES["W8-L4-warps4"])
    cycles = seeded_stream(params, 400, seed=5)
    check(params, cycles, simulate_icarus(RegisterFile(params), "regfile", cycles, tmp_path))


def test_unwritten_registers_read_their_initial_values() -> None:
    """Directed: after reset, sp is the top of local memory, gp and a0..a7 the launch values;
    a read gives its words a cycle after its address; a write in the address cycle is seen
    (the bypass), a launch of its slot hides it again, other slots keep it."""
    params = SMParams(geometry=GEOMETRIES["W8-L4-warps4"])
    args = [100 + i for i in range(ARG_REGS)]
    base = {"init__gp": 0x1234, "init__args": words(args)}
    write = {"write_div__en": 0xFF, "write_div__warp": 1, "write_div__rd": 2}
    write["write_div__data"] = words(list(range(8)))
    cycles = [
        {**base, "rst": 1},
        {**base, "read__warp": 1, "read__rs1": 2, "read__rs2": 3},
        {**base, "read__warp": 1, "read__rs1": 2, "read__rs2": 10, **write},
        {**base, "read__warp": 1, "read__rs1": 2, "launch__slots": 0b10},
        {**base, "read__warp": 1, "read__rs1": 2, "read__rs2": 17},
        {**base},
    ]
    out = simulate_amaranth(RegisterFile(params), cycles)
    sp = params.memmap.initial_sp
    assert elements(out[2]["read__rs1_data"], 8) == [sp] * 8  # before the write
    assert elements(out[2]["read__rs2_data"], 8) == [0x1234] * 8
    assert elements(out[3]["read__rs1_data"], 8) == list(range(8))  # written in its address cycle
    assert elements(out[3]["read__rs2_data"], 8) == [100] * 8
    assert elements(out[4]["read__rs1_data"], 8) == [sp] * 8  # launched in its address cycle
    assert elements(out[5]["read__rs1_data"], 8) == [sp] * 8
    assert elements(out[5]["read__rs2_data"], 8) == [107] * 8
