"""A serial (UART) transmitter: 8 data bits, no parity, one stop bit (8N1), least significant
bit first, as the FTDI bridges of the ULX3S and the iCEBreaker expect."""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

#: Bit periods of one frame: start, 8 data, stop.
FRAME_BITS = 10


class UARTTransmitter(wiring.Component):
    """Sends each byte accepted from ``data`` (a stream: a transfer when ``valid`` and
    ``ready``) on ``tx``, each bit ``divisor`` clock cycles long; ``tx`` idles high and is a
    register (no glitches on the pin). ``ready`` is high while no frame is being sent."""

    def __init__(self, divisor: int) -> None:
        if divisor < 1:
            raise ValueError(f"the bit period must be at least one clock cycle, not {divisor}")
        self.divisor = divisor
        super().__init__({"data": In(stream.Signature(8)), "tx": Out(1, init=1)})

    def elaborate(self, platform: object) -> Module:
        m = Module()
        bits_left = Signal(range(FRAME_BITS + 1))  # bit periods of the frame still to end
        timer = Signal(range(self.divisor))  # cycles of the current bit period still to go
        rest = Signal(9)  # the bits after the one on tx: data, then stop
        m.d.comb += self.data.ready.eq(bits_left == 0)
        with m.If(self.data.valid & self.data.ready):
            m.d.sync += [
                self.tx.eq(0),  # start bit
                rest.eq(Cat(self.data.payload, 1)),
                bits_left.eq(FRAME_BITS),
                timer.eq(self.divisor - 1),
            ]
        with m.Elif((bits_left != 0) & (timer != 0)):
            m.d.sync += timer.eq(timer - 1)
        with m.Elif(bits_left != 0):
            m.d.sync += [
                self.tx.eq(rest[0]),  # ones shift in: high after the stop bit
                rest.eq(Cat(rest[1:], 1)),
                bits_left.eq(bits_left - 1),
                timer.eq(self.divisor - 1),
            ]
        return m


def divisor(clock_hz: float, baud: int) -> int:
    """Clock cycles per bit at ``baud`` (the nearest whole number; 217 for 115200 baud from
    25 MHz, 0.01 % fast; 104 from 12 MHz, 0.2 % fast)."""
    return max(round(clock_hz / baud), 1)
