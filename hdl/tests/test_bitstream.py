"""``reconverge bitstream``: the UART transmitter and the board top in Amaranth's simulator (the
serial waveform decoded back to bytes), the flow through the real YoWASP tools to a bitstream of
each board on a small stand-in system, the command's errors, and (``make test-slow``) the
smallest SM placed and routed on the ULX3S-85F."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from amaranth.hdl import Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import Out
from amaranth.sim import Simulator

from reconverge.golden.cli import main
from reconverge.golden.errors import UserError
from reconverge.golden.faults import FaultCode
from reconverge.hdl.tools import bitstream
from reconverge.hdl.tools.board_top import BoardTop
from reconverge.hdl.tools.boards import BOARDS
from reconverge.hdl.tools.uart import UARTTransmitter
from reconverge.testbench.amaranth_sim import run_simulator


def decode(levels: list[int], bit_cycles: int) -> bytes:
    """The 8N1 frames of a serial line sampled once a clock: each start bit's falling edge,
    then every bit sampled in its middle; a frame without its stop bit is an error."""
    out, i = bytearray(), 1
    while i < len(levels):
        if not (levels[i - 1] == 1 and levels[i] == 0):
            i += 1
            continue
        middles = [i + bit_cycles // 2 + k * bit_cycles for k in range(10)]
        if middles[-1] >= len(levels):
            raise AssertionError(f"a frame starting at cycle {i} is cut off")
        bits = [levels[t] for t in middles]
        assert bits[0] == 0 and bits[9] == 1, f"frame at cycle {i}: start/stop bits {bits}"
        out.append(sum(b << k for k, b in enumerate(bits[1:9])))
        i = middles[9]
    return bytes(out)


def _record(sim: Simulator, line: Signal, levels: list[int]) -> None:
    async def monitor(ctx) -> None:  # type: ignore[no-untyped-def]
        async for _clk, _rst, value in ctx.tick().sample(line):
            levels.append(value)

    sim.add_process(monitor)


@pytest.mark.parametrize("bit_cycles", [1, 5, 217])
def test_uart_sends_each_byte_as_an_8n1_frame(bit_cycles: int) -> None:
    dut = UARTTransmitter(bit_cycles)
    message = b"PASS\r\n\x00\xff\x55" if bit_cycles < 100 else b"\xa5"
    levels: list[int] = []
    sim = Simulator(dut)
    sim.add_clock(1e-6)
    _record(sim, dut.tx, levels)

    async def send(ctx) -> None:  # type: ignore[no-untyped-def]
        for byte in message:
            ctx.set(dut.data.payload, byte)
            ctx.set(dut.data.valid, 1)
            await ctx.tick().until(dut.data.ready)
        ctx.set(dut.data.valid, 0)
        await ctx.tick().repeat(12 * bit_cycles)

    sim.add_testbench(send)
    run_simulator(sim)
    assert levels[0] == 1  # idle high
    assert decode(levels, bit_cycles) == message
    # back to back: a frame of 10 bits each, nothing between them
    assert len(levels) - levels.index(0) >= 10 * bit_cycles * len(message)
    assert levels[-1] == 1


class _System(wiring.Component):
    """A stand-in for ``SMSystem``: counts its own cycles and ends after ``cycles`` of them,
    passed or with fault ``code``."""

    def __init__(self, cycles: int = 50, code: FaultCode = FaultCode.NONE) -> None:
        self.cycles, self.fault_code = cycles, code
        ports = {"done": Out(1), "fault": Out(1), "code": Out(4), "passed": Out(1)}
        super().__init__({**ports, "steps": Out(16)})

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.d.sync += self.steps.eq(self.steps + 1)
        with m.If(self.steps == self.cycles):
            if self.fault_code:
                m.d.sync += [self.fault.eq(1), self.code.eq(self.fault_code)]
            else:
                m.d.sync += [self.done.eq(1), self.passed.eq(1)]
        return m


@pytest.mark.parametrize(
    ("code", "line"),
    [(FaultCode.NONE, b"PASS\r\n"), (FaultCode.DEADLOCK, b"FAULT 14 deadlock\r\n")],
)
def test_board_top_runs_the_system_on_its_clock_enable_and_reports(code, line) -> None:
    system = _System(code=code)
    top = BoardTop(system, clock_hz=2000, divider=3, baud=500)  # 4 cycles a bit, 1 s = 2000
    levels: list[int] = []
    sim = Simulator(top)
    sim.add_clock(1 / 2000)
    _record(sim, top.tx, levels)
    seen: dict[str, int] = {}

    async def bench(ctx) -> None:  # type: ignore[no-untyped-def]
        await ctx.tick().repeat(300)
        seen["steps"] = ctx.get(system.steps)
        seen["leds"] = ctx.get(top.done) | ctx.get(top.passed) << 1 | ctx.get(top.fault) << 2
        seen["code"] = ctx.get(top.code)
        await ctx.tick().repeat(1000)
        seen["heartbeat"] = ctx.get(top.heartbeat)  # the second half of the first second
        await ctx.tick().repeat(3 * 2000 + 40 * len(line) + 50 - 1300)  # three lines

    sim.add_testbench(bench)
    run_simulator(sim)
    assert seen["steps"] in (99, 100)  # one step in three cycles
    assert seen["leds"] == (0b100 if code else 0b011) and seen["code"] == code
    assert seen["heartbeat"] == 0
    # nothing before the first second, then the line once a second
    assert 0 not in levels[:1990]
    assert decode(levels, 4) == line * 3


@pytest.mark.synth
@pytest.mark.parametrize("name", list(BOARDS))
def test_flow_builds_a_bitstream_of_each_board(tmp_path: Path, name: str) -> None:
    board = BOARDS[name]
    out = tmp_path / f"top.{board.family.bitstream}"
    r = bitstream.build(_System, board, output=out)
    assert r["used"]["luts"] > 0 and r["used"]["flip_flops"] > 0 and r["used"]["bram"] >= 1
    for key, placed in r["placed"].items():
        assert placed["available"] == board.capacity[key]
    assert r["fmax_mhz"] > r["sm_clock_mhz"] == r["clock_mhz"] / board.divider
    assert r["bitstream"] == str(out) and r["bytes"] == out.stat().st_size
    head = out.read_bytes()[:64]
    assert (
        (b"LFE5U-85F" in head and b"\xff\xff\xbd\xb3" in head)
        if name == "ulx3s-85f"
        else (b"\x7e\xaa\x99\x7e" in head)
    )
    text = bitstream.format_result(r, "stand-in")
    assert "LUT4" in text and "Fmax" in text and str(out) in text


@pytest.mark.synth
def test_a_design_larger_than_the_board_is_refused_after_synthesis(tmp_path: Path) -> None:
    tiny = replace(BOARDS["icebreaker"], capacity={**BOARDS["icebreaker"].capacity, "bram": 1})
    with pytest.raises(UserError, match=r"fit iCEBreaker .*block RAM \d+ needed .*1 avail"):
        bitstream.build(_System, tiny, output=tmp_path / "x.bin", stop_after="synth")


def test_timing_names_the_divider_that_meets_it() -> None:
    bitstream.check_timing(7.6, 25, 4)  # 6.25 MHz
    with pytest.raises(UserError, match=r"reaches 7.60 MHz .* 25 MHz / 3 = 8.33 MHz .*--divider 4"):
        bitstream.check_timing(7.6, 25, 3)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--board", "de0", "ifElse"], "invalid choice: 'de0'"),
        (
            ["--board", "icebreaker", "ifElse", "--size", "2", "--warp-size", "2",
             "--simd-width", "1"],
            r"does not fit iCEBreaker \(iCE40UP5K\): LUT4 [\d,]+ needed .*5,280 available",
        ),
        (["--board", "ulx3s-85f", "ifElse"], "more than the 1 warp slots"),
        (["--board", "ulx3s-85f", "ifElse", "-o", "no/x.bit"], "cannot write no/x.bit: no folder"),
    ],
)  # fmt: skip
def test_bitstream_errors_are_one_line(capsys, argv, message) -> None:
    assert main(["bitstream", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert re.search(message, err), err


#: The smallest SM (docs/sm-hardware.md, "On a board") with a kernel whose block fits it.
SMALLEST = ["ifElse", "--size", "2", "--warp-size", "2", "--simd-width", "1"]


@pytest.mark.synth
@pytest.mark.slow
def test_smallest_sm_is_synthesised_for_the_ulx3s(capsys) -> None:
    argv = ["bitstream", "--board", "ulx3s-85f", *SMALLEST, "--stop-after", "synth", "--json"]
    assert main(argv) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["params"]["geometry"]["warp_size"] == 2 and r["stopped_after"] == "synth"
    assert 5_000 < r["used"]["luts"] < r["capacity"]["luts"] == 83640
    assert r["used"]["dsp"] > 0 and r["used"]["bram"] > 0
    assert r["placed"] is None and r["fmax_mhz"] is None and r["bitstream"] is None


@pytest.mark.synth
@pytest.mark.slow
def test_smallest_sm_is_placed_and_routed_on_the_ulx3s(capsys) -> None:
    argv = ["bitstream", "--board", "ulx3s-85f", *SMALLEST, "--stop-after", "pnr", "--json"]
    assert main(argv) == 0
    r = json.loads(capsys.readouterr().out)
    placed = r["placed"]["luts"]
    assert r["used"]["luts"] <= placed["used"] <= placed["available"] == 83640
    assert r["fmax_mhz"] > r["sm_clock_mhz"] == 25 / 8 and r["bitstream"] is None
