"""Synthesis harness: a bare component has no register-to-register path (nextpnr would report
no clock frequency) and far more I/O than an FPGA package has pins. The harness registers every
input and output and serialises them:

- ``sin`` shifts into an input shift register whose bits drive every input port of the block;
- when ``capture`` is high the output shift register loads every output port, otherwise it
  shifts towards ``sout``.

So every path through the block runs from a flip-flop to a flip-flop, no bit of the block is
unobservable (synthesis cannot prune it), and the top level has five pins (``clk``, ``rst``,
``sin``, ``capture``, ``sout``). The harness itself costs one flip-flop per I/O bit and a
2:1 multiplexer per output bit; the block is kept as its own module so its cells are counted
separately. Any ``wiring.Component`` fits: an HDL block or the whole SM (its ports in signature
order, nested groups flattened).
"""

from __future__ import annotations

from amaranth.hdl import Cat, Module, Signal, Value
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out


def component_ports(block: wiring.Component) -> tuple[list[Value], list[Value]]:
    """(inputs, outputs) of ``block`` as values, in signature order."""
    inputs, outputs = [], []
    for _, member, value in block.signature.flatten(block):
        (inputs if member.flow is In else outputs).append(Value.cast(value))
    return inputs, outputs


class SynthHarness(wiring.Component):
    def __init__(self, block: wiring.Component) -> None:
        self.block = block
        super().__init__({"sin": In(1), "capture": In(1), "sout": Out(1)})

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.block = block = self.block
        inputs, outputs = component_ports(block)
        shift_in = Signal(sum(len(v) for v in inputs), name="shift_in")
        shift_out = Signal(sum(len(v) for v in outputs), name="shift_out")
        m.d.sync += shift_in.eq(Cat(self.sin, shift_in[:-1]))
        offset = 0
        for port in inputs:
            m.d.comb += port.eq(shift_in[offset : offset + len(port)])
            offset += len(port)
        with m.If(self.capture):
            m.d.sync += shift_out.eq(Cat(*outputs))
        with m.Else():
            m.d.sync += shift_out.eq(shift_out << 1)
        m.d.comb += self.sout.eq(shift_out[-1])
        return m
