"""The SM system on a board (docs/sm-hardware.md, "On a board"): :class:`BoardTop` runs the
system (``hdl.sm.system.SMSystem``, or anything with its ``done``, ``fault``, ``code`` and
``passed`` outputs) on the board's oscillator through a clock enable, drives the status LEDs
and a heartbeat, and reports the outcome as a line of text on a serial port; :class:`OnBoard`
connects it to the pins of a board's platform.
"""

from __future__ import annotations

from amaranth.build import Platform
from amaranth.hdl import Cat, Elaboratable, EnableInserter, Module, Mux, Signal
from amaranth.lib import io, memory, wiring
from amaranth.lib.wiring import In, Out

from reconverge.golden.faults import FaultCode
from reconverge.hdl.tools.boards import Board
from reconverge.hdl.tools.uart import UARTTransmitter, divisor

BAUD = 115200
#: The lines the serial port repeats once a second after the run (without their CR LF): the
#: index of a line is 0 for a pass, 1 for a run that ended with some exit code other than 0,
#: ``2 + code`` for a fault (its ``golden.faults.FaultCode`` and kind).
LINES = ("PASS", "FAIL", *(f"FAULT {c.value} {c.kind}" for c in FaultCode))
ROW_BYTES = 64  # each line padded with zero bytes to a row of this many


def _rows() -> list[int]:
    rows = []
    for line in LINES:
        text = (line + "\r\n").encode()
        if len(text) >= ROW_BYTES:
            raise ValueError(f"line {line!r} longer than a row of {ROW_BYTES} bytes")
        rows += list(text) + [0] * (ROW_BYTES - len(text))
    return rows


class BoardTop(wiring.Component):
    """``system`` on a ``clock_hz`` oscillator: it advances in one cycle of ``divider``
    (a clock enable), so its logic has ``divider`` oscillator periods per step. Outputs, each
    a register: ``done``, ``passed``, ``fault`` and ``code`` of the system, a ``heartbeat``
    that blinks at 1 Hz, and ``tx``, which repeats :data:`LINES`' line for the outcome once a
    second after the run has ended (so a terminal opened later still sees it)."""

    def __init__(
        self, system: wiring.Component, *, clock_hz: int, divider: int, baud: int = BAUD
    ) -> None:
        if divider < 1:
            raise ValueError(f"the clock divider must be at least 1, not {divider}")
        self.system = system
        self.clock_hz, self.divider, self.baud = clock_hz, divider, baud
        super().__init__(
            {
                "done": Out(1),
                "passed": Out(1),
                "fault": Out(1),
                "code": Out(range(len(FaultCode))),
                "heartbeat": Out(1),
                "tx": Out(1, init=1),
            }
        )

    def elaborate(self, platform: object) -> Module:
        m = Module()
        # the system's clock enable: one oscillator cycle in `divider`, from a register
        phase = Signal(range(self.divider))
        tick = Signal()
        last = phase == self.divider - 1
        m.d.sync += [phase.eq(Mux(last, 0, phase + 1)), tick.eq(last)]
        m.submodules.system = EnableInserter(tick)(self.system)
        s = self.system
        m.d.sync += [
            self.done.eq(s.done),
            self.passed.eq(s.passed),
            self.fault.eq(s.fault),
            self.code.eq(s.code),
        ]
        # one second: the heartbeat and the report's repetition
        count = Signal(range(self.clock_hz))
        second = count == self.clock_hz - 1
        m.d.sync += count.eq(Mux(second, 0, count + 1))
        m.d.sync += self.heartbeat.eq(count < self.clock_hz // 2)
        line = Mux(self.fault, 2 + self.code, Mux(self.passed, 0, 1))
        m.submodules.report = report = _LineSender(divisor(self.clock_hz, self.baud))
        m.d.comb += [
            report.send.eq(second & (self.done | self.fault)),
            report.line.eq(line),
            self.tx.eq(report.tx),
        ]
        return m


class _LineSender(wiring.Component):
    """Sends line ``line`` of :data:`LINES` (a ROM of zero-padded rows) when ``send`` is high
    and no line is being sent."""

    def __init__(self, bit_cycles: int) -> None:
        self.bit_cycles = bit_cycles
        super().__init__({"send": In(1), "line": In(range(len(LINES))), "tx": Out(1, init=1)})

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.uart = uart = UARTTransmitter(self.bit_cycles)
        rows = _rows()
        m.submodules.rom = rom = memory.Memory(shape=8, depth=len(rows), init=rows)
        read = rom.read_port()
        row = Signal.like(self.line)
        index = Signal(range(ROW_BYTES))
        m.d.comb += [read.addr.eq(Cat(index, row)), self.tx.eq(uart.tx)]
        with m.FSM():
            with m.State("idle"), m.If(self.send):
                m.d.sync += [row.eq(self.line), index.eq(0)]
                m.next = "read"
            with m.State("read"):  # the byte at (row, index) is on read.data in the next cycle
                m.next = "send"
            with m.State("send"):
                m.d.comb += [uart.data.payload.eq(read.data), uart.data.valid.eq(read.data != 0)]
                with m.If(read.data == 0):
                    m.next = "idle"
                with m.Elif(uart.data.ready):
                    m.d.sync += index.eq(index + 1)
                    m.next = "read"
        return m


class OnBoard(Elaboratable):
    """``top`` on ``board``'s pins: its LEDs (amaranth-boards' ``led`` resources) and the
    serial port's ``tx``; the platform's ``sync`` domain is the oscillator, reset by the
    reset button and at power-on."""

    def __init__(self, top: BoardTop, board: Board) -> None:
        self.top, self.board = top, board

    def elaborate(self, platform: Platform) -> Module:
        m = Module()
        m.submodules.top = top = self.top
        done, passed, fault, heartbeat = self.board.leds
        outputs = [(done, top.done), (passed, top.passed), (fault, top.fault)]
        outputs += [(heartbeat, top.heartbeat)]
        outputs += [(led, top.code[bit]) for bit, led in enumerate(self.board.code_leds)]
        pins = [(platform.request("led", number, dir="-"), value) for number, value in outputs]
        pins.append((platform.request("uart", 0, dir="-").tx, top.tx))
        for i, (port, value) in enumerate(pins):
            m.submodules[f"pin{i}"] = buffer = io.Buffer("o", port)
            m.d.comb += buffer.o.eq(value)
        return m
