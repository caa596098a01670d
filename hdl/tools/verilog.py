"""Verilog of an Amaranth block, for simulation, lint and synthesis.

Like ``amaranth.back.verilog.convert`` (Amaranth's RTLIL through Yosys ``write_verilog``,
with the same Yosys: the built-in one, or ``$YOSYS`` unless ``AMARANTH_USE_YOSYS=builtin``)
but with ``proc`` lowering every combinational process to multiplexers: the result has only
continuous ``assign``s and clocked ``always`` blocks. Amaranth's own output keeps ``always @*``
blocks, which Icarus Verilog does not evaluate at time 0 when they read only registers (their
outputs stay X until an input changes); continuous assignments have no such problem.
"""

from __future__ import annotations

from amaranth.back import rtlil
from amaranth.hdl import Elaboratable

YOSYS_SCRIPT = """read_rtlil <<rtlil
{rtlil}
rtlil
proc -norom
memory_collect
write_verilog -noattr
"""


def rtlil_text(component: Elaboratable, name: str) -> str:
    return rtlil.convert(component, name=name, emit_src=False)


def to_verilog(component: Elaboratable, name: str) -> str:
    """Verilog text with top module ``name``; depends only on the block and its parameters."""
    from amaranth._toolchain.yosys import find_yosys

    yosys = find_yosys(lambda version: version >= (0, 40))
    script = YOSYS_SCRIPT.format(rtlil=rtlil_text(component, name))
    return yosys.run(["-q", "-"], script, ignore_warnings=True)
