"""Two runners with one interface for the SM stage tests: a component in Amaranth's simulator
(:func:`simulate_amaranth`) and its generated Verilog (``reconverge.hdl.tools.verilog.to_verilog``)
under Icarus Verilog (:func:`simulate_icarus`). Both take a list of per-cycle inputs and
return the outputs of every cycle, so a test holds both to the same oracle.

Each cycle sets the inputs (and ``rst``), lets the combinational logic settle, samples every
output, then gives one rising clock edge: an Amaranth testbench's ``set``, ``get``, ``tick``.
Ports go by their Verilog names (a member ``read.warp`` is ``read__warp``); values are the raw
bits of the port (:func:`pack`, :func:`unpack` convert a ``data.Layout``'s fields).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from amaranth.hdl import ClockDomain, Module, Value
from amaranth.lib import data, wiring

from reconverge.hdl.tools.lint import verilator_lint
from reconverge.hdl.tools.verilog import to_verilog
from reconverge.testbench.amaranth_sim import Compiled

Ports = dict[str, int]


def pack(layout: data.Layout, fields: dict[str, int]) -> int:
    """The raw bits of a value of ``layout`` with these fields (missing fields 0)."""
    raw = 0
    for name, field in layout:
        raw |= (int(fields.get(name, 0)) & ((1 << field.width) - 1)) << field.offset
    return raw


def unpack(layout: data.Layout, raw: int) -> dict[str, int]:
    """The fields of the raw bits of a value of ``layout``."""
    return {name: raw >> f.offset & ((1 << f.width) - 1) for name, f in layout}


def _members(component: wiring.Component) -> dict[str, tuple[bool, Value]]:
    """Verilog port name -> (is an input, the Amaranth value)."""
    return {
        "__".join(str(p) for p in path): (member.flow is wiring.In, Value.cast(value))
        for path, member, value in component.signature.flatten(component)
    }


def ports(component: wiring.Component) -> tuple[dict[str, int], dict[str, int]]:
    """(inputs, outputs): Verilog port name -> width."""
    members = _members(component)
    inputs = {n: len(v) for n, (is_in, v) in members.items() if is_in}
    outputs = {n: len(v) for n, (is_in, v) in members.items() if not is_in}
    return inputs, outputs


def amaranth_runner(component: wiring.Component) -> Callable[[list[Ports]], list[Ports]]:
    """A function giving the outputs of every cycle of a stream of inputs in Amaranth's
    simulator, each stream from the initial state; the design is compiled once for all
    (:class:`reconverge.testbench.amaranth_sim.Compiled`)."""
    members = _members(component)
    top = Module()
    top.domains.sync = domain = ClockDomain("sync")
    top.submodules.dut = component
    compiled = Compiled(top)

    def run(cycles: list[Ports]) -> list[Ports]:
        results: list[Ports] = []

        async def bench(ctx) -> None:  # type: ignore[no-untyped-def]
            for cycle in cycles:
                _check(members, cycle)
                for name, (is_in, value) in members.items():
                    if is_in:
                        ctx.set(value, cycle.get(name, 0))
                ctx.set(domain.rst, cycle.get("rst", 0))
                results.append({n: ctx.get(v) for n, (is_in, v) in members.items() if not is_in})
                await ctx.tick()

        compiled.run(bench)
        return results

    return run


def simulate_amaranth(component: wiring.Component, cycles: list[Ports]) -> list[Ports]:
    """Outputs of every cycle of ``cycles`` in Amaranth's simulator."""
    return amaranth_runner(component)(cycles)


def _check(members: dict[str, tuple[bool, Value]], cycle: Ports) -> None:
    unknown = {n for n in cycle if n != "rst" and not members.get(n, (False,))[0]}
    if unknown:
        raise ValueError(f"not input ports: {sorted(unknown)}")


def _testbench(name: str, inputs: dict[str, int], outputs: dict[str, int], clocked: bool) -> str:
    in_bits = sum(inputs.values()) + clocked
    decls = [f"  reg [{w - 1}:0] {n};" for n, w in inputs.items()]
    decls += [f"  wire [{w - 1}:0] {n};" for n, w in outputs.items()]
    conns = [f".{n}({n})" for n in (*inputs, *outputs)]
    if clocked:
        decls += ["  reg clk = 0;", "  reg rst = 0;"]
        conns += [".clk(clk)", ".rst(rst)"]
    # first input in the most significant bits of a vector line, rst last
    in_cat = ", ".join([*inputs, *(["rst"] if clocked else [])])
    out_cat = ", ".join(outputs)
    edge = "    #4 clk = 1; #5 clk = 0;" if clocked else "    #9;"
    return f"""`timescale 1ns/1ps
module tb;
{chr(10).join(decls)}
  reg [{in_bits - 1}:0] stimulus [0:`CYCLES-1];
  integer i, f;
  {name} dut({", ".join(conns)});
  initial begin
    $readmemh("stimulus.hex", stimulus);
    f = $fopen("outputs.txt", "w");
    for (i = 0; i < `CYCLES; i = i + 1) begin
      {{{in_cat}}} = stimulus[i];
      #1 $fdisplay(f, "%b", {{{out_cat}}});
{edge}
    end
    $fclose(f);
    $finish;
  end
endmodule
"""


def _defined(row: str, outputs: dict[str, int], ports: tuple[str, ...]) -> str:
    """``row`` (the outputs' bits, the first output's most significant first) with the
    undefined bits of ``ports`` read as 0."""
    bits, at = list(row), 0
    for port, width in outputs.items():
        if port in ports:
            bits[at : at + width] = ["0" if b in "xXzZ" else b for b in bits[at : at + width]]
        at += width
    return "".join(bits)


def simulate_icarus(
    component: wiring.Component,
    name: str,
    cycles: list[Ports],
    directory: Path,
    unread: tuple[str, ...] = (),
) -> list[Ports]:
    """Outputs of every cycle of ``cycles`` under Icarus (inputs missing from a cycle are 0);
    the Verilog's top module is ``name``, the files go to ``directory``. The ``unread``
    outputs show a block RAM's read port, undefined before the first clock edge: in the first
    row their x bits read 0, as Amaranth's simulator gives them."""
    verilog = to_verilog(component, name)
    if shutil.which("verilator"):
        # VARHIDDEN: the functions Yosys writes for a $pmux take arguments a, b, s, which
        # shadow ports of those names (the lane's a and b)
        waived = ("%Warning-VARHIDDEN", "%Error: Exiting due to")
        problems = [p for p in verilator_lint(verilog, name) if not p.startswith(waived)]
        assert problems == [], problems
    clocked = re.search(r"\binput clk;", verilog) is not None
    inputs, outputs = ports(component)
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{name}.v").write_text(verilog)
    (directory / "tb.v").write_text(_testbench(name, inputs, outputs, clocked))
    widths = [*inputs.values(), *([1] if clocked else [])]
    lines = []
    members = _members(component)
    for cycle in cycles:
        _check(members, cycle)
        word = 0
        for port, width in zip([*inputs, *(["rst"] if clocked else [])], widths, strict=True):
            value = cycle.get(port, 0)
            if not 0 <= value < 1 << width:
                raise ValueError(f"{port}={value:#x} does not fit {width} bits")
            word = word << width | value
        lines.append(f"{word:x}")
    (directory / "stimulus.hex").write_text("\n".join(lines) + "\n")
    subprocess.run(
        ["iverilog", "-g2012", f"-DCYCLES={len(cycles)}", "-o", "sim", "tb.v", f"{name}.v"],
        cwd=directory,
        check=True,
        capture_output=True,
    )
    subprocess.run(["vvp", "-n", "sim"], cwd=directory, check=True, capture_output=True)
    rows = (directory / "outputs.txt").read_text().split()
    if len(rows) != len(cycles):
        raise AssertionError(f"Icarus printed {len(rows)} rows for {len(cycles)} cycles")
    results = []
    if unread:
        rows[0] = _defined(rows[0], outputs, unread)
    for row in rows:
        if not re.fullmatch(r"[01]+", row):
            raise AssertionError(f"undefined output bits (x/z) in {row}")
        value = int(row, 2)
        sample: Ports = {}
        for port, width in reversed(outputs.items()):
            sample[port] = value & ((1 << width) - 1)
            value >>= width
        results.append(sample)
    return results
