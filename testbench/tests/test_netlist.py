"""The ECP5 netlist under simulation (``hdl/tools/netlist.py``, ``reconverge cosim --netlist``):
the primitives' models against a plain Python model of what the RTL means, and the SM's
netlist held to golden at level 4.

``make test``: the models, and one small policy variant's netlist on one kernel (Icarus).
``make test-slow``: every policy variant's netlist."""

from __future__ import annotations

import subprocess
from dataclasses import replace
from pathlib import Path

import pytest
from amaranth.hdl import Module, signed, unsigned
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from reconverge.golden.functional import DEFAULT_STEP_LIMIT
from reconverge.golden.params import CONFIGS
from reconverge.golden.policies import HARDWARE, Variant, variant
from reconverge.hdl.tools.netlist import modules, netlist, used_models
from reconverge.kernels.workload import load_workload
from reconverge.testbench.build import netlist_design
from reconverge.testbench.cosim import cosim

SYNTH = CONFIGS["synth"]
#: Small memories' address range in the stimulus, so that reads find the words written.
SPAN = 16
CYCLES = 300


def test_models_are_split_and_chosen_by_use() -> None:
    """Each model runs from ``module`` to ``endmodule`` (one-line modules too); the netlist
    takes the ones it instantiates and those they instantiate, nothing else."""
    text = (
        "(* attr *)\nmodule LUT4(input A, output Z); assign Z = A; endmodule\n"
        "module FD(input D, output Q); TRELLIS_FF #(.X(1)) ff (.DI(D), .Q(Q)); endmodule\n"
        "module TRELLIS_FF(input DI, output Q); assign Q = DI; endmodule\n"
        'module UNUSED(input A); $error("not for every simulator"); endmodule\n'
    )
    found = modules(text)
    assert list(found) == ["LUT4", "FD", "TRELLIS_FF", "UNUSED"]
    assert found["LUT4"].startswith("module LUT4") and found["LUT4"].endswith("endmodule")
    top = "module top(input a, output z);\n  FD \\f (.D(a), .Q(z));\nendmodule\n"
    assert [m.split("(")[0] for m in used_models(top, found)] == ["module FD", "module TRELLIS_FF"]


class Probe(wiring.Component):
    """What the SM asks of the fabric's memories and multipliers: a 512 x 32 and a
    1024 x 16 memory (a write port and a synchronous, non-transparent read port each) and a
    signed x unsigned 32-bit product."""

    def __init__(self) -> None:
        super().__init__({
            "w_en": In(1), "w_addr": In(9), "w_data": In(32), "r_addr": In(9), "r_data": Out(32),
            "n_en": In(1), "n_addr": In(10), "n_data": In(16), "nr_addr": In(10),
            "nr_data": Out(16), "a": In(signed(32)), "b": In(unsigned(32)), "p": Out(64),
        })  # fmt: skip

    def elaborate(self, platform: object) -> Module:
        m = Module()
        for name, (shape, depth), (en, addr, data, raddr, out) in (
            ("wide", (32, 512), ("w_en", "w_addr", "w_data", "r_addr", "r_data")),
            ("narrow", (16, 1024), ("n_en", "n_addr", "n_data", "nr_addr", "nr_data")),
        ):
            m.submodules[name] = mem = Memory(shape=shape, depth=depth, init=[])
            write, read = mem.write_port(), mem.read_port()
            m.d.comb += [
                write.en.eq(getattr(self, en)),
                write.addr.eq(getattr(self, addr)),
                write.data.eq(getattr(self, data)),
                read.addr.eq(getattr(self, raddr)),
                getattr(self, out).eq(read.data),
            ]
        m.d.comb += self.p.eq(self.a * self.b)
        return m


#: Input port: bits. The testbench draws them at random each cycle and prints them with the
#: outputs, which the Python model then checks.
INPUTS = {"w_en": 1, "w_addr": 9, "w_data": 32, "r_addr": 9, "n_en": 1, "n_addr": 10,
          "n_data": 16, "nr_addr": 10, "a": 32, "b": 32}  # fmt: skip


def probe_bench(seed: int) -> str:
    """A Verilog testbench of :class:`Probe`: random inputs each cycle, printed with the
    product, then the read ports after the clock edge."""
    draws = "\n".join(
        f"      {name} = $random(seed){' % ' + str(SPAN) if 'addr' in name else ''};"
        for name in INPUTS
    )
    ports = ", ".join(f".{n}({n})" for n in [*INPUTS, "r_data", "nr_data", "p"])
    shown = ", ".join(INPUTS)
    return f"""
module tb;
  reg clk = 0, rst = 0;
  {"; ".join(f"reg [{w - 1}:0] {n}" for n, w in INPUTS.items())};
  wire [31:0] r_data; wire [15:0] nr_data; wire [63:0] p;
  probe dut(.clk(clk), .rst(rst), {ports});
  integer i, seed = {seed};
  initial begin
    for (i = 0; i < {CYCLES}; i = i + 1) begin
{draws}
      #1 $display("in %h %h %h %h %h %h %h %h %h %h p %h", {shown}, p);
      clk = 1; #1 $display("out %h %h", r_data, nr_data);
      clk = 0; #1;
    end
    $finish;
  end
endmodule
"""


@pytest.mark.rtl
@pytest.mark.synth
def test_primitive_models_agree_with_the_rtls_meaning(tmp_path: Path) -> None:
    """Block RAM (both the 36-bit pseudo-dual-port mode and a narrower one) and the DSP
    multiplier, through Yosys's mapping and the models, under random stimulus on a few
    addresses (reads of words written, writes and reads of one word in one clock): every read
    returns the word before that clock's write, every product is signed(a) x b mod 2^64."""
    source = tmp_path / "probe.v"
    source.write_text(netlist(Probe(), "probe") + probe_bench(seed=7))
    assert "DP16KD" in source.read_text() and "MULT18X18D" in source.read_text()
    binary = tmp_path / "probe.vvp"
    subprocess.run(["iverilog", "-g2012", "-s", "tb", "-o", str(binary), str(source)],
                   check=True, capture_output=True)  # fmt: skip
    lines = subprocess.run(["vvp", "-n", str(binary)], check=True, capture_output=True,
                           text=True).stdout.splitlines()  # fmt: skip
    wide, narrow = [0] * 512, [0] * 1024
    checked = 0
    for inputs, outputs in zip(lines[0::2], lines[1::2], strict=False):
        if not inputs.startswith("in "):
            continue
        fields = inputs.split()
        v = dict(zip(INPUTS, (int(x, 16) for x in fields[1:11]), strict=True))
        product = int(fields[12], 16)
        a = v["a"] - (1 << 32) if v["a"] >> 31 else v["a"]
        assert product == (a * v["b"]) % (1 << 64), inputs
        r_data, nr_data = (int(x, 16) for x in outputs.split()[1:])
        assert (r_data, nr_data) == (wide[v["r_addr"]], narrow[v["nr_addr"]]), inputs
        if v["w_en"]:
            wide[v["w_addr"]] = v["w_data"]
        if v["n_en"]:
            narrow[v["n_addr"]] = v["n_data"]
        checked += 1
    assert checked == CYCLES
    assert any(wide) and any(narrow)


def _netlist_cell(v: Variant, hws: bool, kernel: str = "ifElse", size: int = 4) -> None:
    """``kernel`` at ``size`` on the ``--config synth`` SM's netlist under a policy variant,
    on Icarus: level 4 against golden, and its outputs against the kernel's oracle."""
    params = replace(SYNTH, config=replace(SYNTH.config, policy=v.policy, hints=v.hints,
                                           hws=hws))  # fmt: skip
    work = load_workload(kernel, grid=None, block=None, args=(), allocator="linear", regs=16,
                         size=size, seed=0)  # fmt: skip
    hints = params.config.explicit
    launch = work.sm_launch(params, DEFAULT_STEP_LIMIT)
    report = cosim(work.image_for(hints), launch, params, level=4, source=kernel,
                   design=netlist_design(params), max_seconds=1200)  # fmt: skip
    assert report.ok, report.format()
    assert report.design == "ECP5 netlist"
    assert not work.mismatches(report.rtl, hints)


@pytest.mark.rtl
@pytest.mark.synth
def test_netlist_of_one_variant_runs_a_kernel() -> None:
    """Issue 30: ``reconverge cosim ifElse --policy mp-orec --netlist`` at level 4."""
    _netlist_cell(variant("mp-orec"), hws=False)


@pytest.mark.slow
@pytest.mark.rtl
@pytest.mark.synth
@pytest.mark.parametrize(
    ("v", "hws"),
    [*((v, False) for v in HARDWARE if v.name != "mp-orec"), (variant("sps"), True)],
    ids=lambda x: x.name if isinstance(x, Variant) else ("hws" if x else "-"),
)
def test_netlist_of_every_variant_runs_a_kernel(v: Variant, hws: bool) -> None:
    _netlist_cell(v, hws)
