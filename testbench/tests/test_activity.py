"""The RTL's switching activity (``golden/cost/activity.py``): Verilator's coverage file and the
rule that counts each net once on small inputs; then two runs of a loop on the SM of the
synthesis configuration (the smallest; its toggle-coverage build and Yosys cell counts are made
once, about two minutes, and kept in ``build/``): the cycle counter's toggles are a binary
counter's, the stages add up to the total, ten times the iterations toggle the lanes more, and
the counter's net is counted once of the names it has.
"""

from __future__ import annotations

import functools
import os
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from reconverge.golden.asm import assemble
from reconverge.golden.cost.activity import (
    Activity,
    Netlist,
    module_cells,
    read_coverage,
    rtl_activity,
    stage_of,
)
from reconverge.golden.cost.sm import sm as sm_inventory
from reconverge.golden.functional import LaunchConfig
from reconverge.golden.params import COUNTER, SYNTH
from reconverge.testbench.build import params_digest, sm_design
from reconverge.testbench.verilator import usable

#: Yosys-style Verilog: a register in a submodule, logic, copies, a constant, a memory, a
#: function, escaped names.
NETLIST = textwrap.dedent(
    r"""
    module top(clk, a, y);
      input clk;
      input [3:0] a;
      output [3:0] y;
      wire [3:0] \a.copy ;
      wire [3:0] q;
      wire [1:0] tie;
      wire [3:0] sum;
      wire \spare$1 ;
      reg [7:0] mem [3:0];
      function [3:0] _f_;
        input [3:0] a;
        input [7:0] b;
        _f_ = b[3:0];
      endfunction
      assign \a.copy  = a;
      assign tie = 2'h1;
      assign sum = q + \a.copy ;
      assign y = { sum[1:0], q[3:2] };
      assign \spare$1  = mem[sum[1:0]][0];
      \top.child  child (
        .clk(clk),
        .d(sum),
        .q(q),
        .unused()
      );
    endmodule
    module \top.child (clk, d, q, unused);
      input clk;
      input [3:0] d;
      output [3:0] q;
      reg [3:0] q;
      output unused;
      wire unused;
      always @(posedge clk)
        q <= d;
      assign unused = 1'h0;
    endmodule
    """
)


def test_each_net_is_counted_once_at_its_driver() -> None:
    netlist = Netlist.parse(NETLIST, top="top")
    counted = {
        (path, name, bit)
        for path, module in netlist.paths()
        for name, bits in netlist.counted(module).items()
        for bit in bits
    }
    # a: the testbench's; a.copy, y: copies; tie, child.unused: constants; q: the child's
    # output; d: the child's input; mem: a memory; the function's inputs: no nets
    expected = {("", "sum", b) for b in range(4)} | {("child", "q", b) for b in range(4)}
    assert counted == expected | {("", "spare$1", 0)}


def test_coverage_file_points(tmp_path: Path) -> None:
    def line(name: str, hier: str, count: int) -> str:
        keys = {"f": "sm.v", "l": "1", "n": "2", "t": "toggle", "page": "v_toggle/x", "o": name}
        text = "".join(f"\x01{k}\x02{v}" for k, v in {**keys, "h": hier}.items())
        return f"C '{text}' {count}\n"

    dat = tmp_path / "coverage.dat"
    dat.write_text(
        "# SystemC::Coverage-3\n"
        + line("capture___05Faddr__05b0__05d[3]:0->1", "sm.core", 5)
        + line("capture___05Faddr__05b0__05d[3]:1->0", "sm.core", 4)
        + line("running:0->1", "sm", 1)
        + line("running:1->0", "sm", 0)
    )
    assert read_coverage(dat) == {("core", "capture__addr[0]", 3): 9, ("", "running", 0): 1}


def test_stages_are_the_area_models() -> None:
    assert stage_of("") == "core"
    assert stage_of("core") == "core"
    assert stage_of("core.unit0.block") == "unit"
    assert stage_of("core.decode") == "decode"
    assert stage_of("lsu") == "lsu"


#: The SM of the tests and its build's xdist group (one worker builds it). The toggle-coverage
#: build and its Yosys cell counts take two minutes and more: the tests on it are in make
#: test-slow, which CI runs for this file in its bounded slow step (.ci/run).
PARAMS = SYNTH
GROUP = pytest.mark.xdist_group(f"sm-{params_digest(PARAMS)}-toggles")


#: A kernel whose work is its argument: each thread runs ``a0`` iterations of an add and an
#: xor on values of its own.
LOOP = """
    .text
    .globl _start
_start:
    csrr    t0, 0xcc0
    li      t1, 0x9e3779b9
    mul     t2, t0, t1
1:  add     t2, t2, t1
    xor     t1, t1, t2
    addi    a0, a0, -1
    bnez    a0, 1b
    li      a7, 93
    ecall
"""


def _activity(iterations: int) -> Activity:
    """:data:`LOOP` on one warp of the SM (its exit codes are 0)."""
    g = PARAMS.geometry
    launch = LaunchConfig(1, g.warp_size, g, PARAMS.memmap, args=(iterations,))
    activity = rtl_activity(assemble(LOOP, "loop.S"), launch, PARAMS, level=4)
    assert activity.report.ok, activity.report.format()
    return activity


@pytest.fixture(scope="module")
def activity() -> Iterator[Callable[[int], Activity]]:
    """The activity of :data:`LOOP` by iterations, each run once (Verilator's environment set-up
    undone afterwards, as the ``verilator`` fixture does)."""
    if not usable():
        pytest.fail("no Verilator >= 5.036: `make setup` installs it (the [verilator] extra)")
    saved = dict(os.environ)
    yield functools.cache(_activity)
    os.environ.clear()
    os.environ.update(saved)


@pytest.mark.rtl
@pytest.mark.synth
@pytest.mark.slow
@GROUP
def test_cycle_counter_toggles_as_a_binary_counter(activity: Callable[[int], Activity]) -> None:
    small = activity(4)
    cycles = small.cycles
    assert small.report.rtl.metrics is not None
    assert cycles == small.report.rtl.metrics.cycles > 0
    # from 0 to C, bit i changes floor(C / 2^i) times: 2C - popcount(C) changes in all
    bits = [small.toggles["core", "cycle", i] for i in range(COUNTER)]
    assert bits == [cycles >> i for i in range(COUNTER)]
    assert sum(bits) == 2 * cycles - cycles.bit_count()


@pytest.mark.rtl
@pytest.mark.synth
@pytest.mark.slow
@GROUP
def test_stages_sum_to_the_total(activity: Callable[[int], Activity]) -> None:
    small = activity(4)
    total, rows = small.total, small.stages
    assert total.bits == sum(r.bits for r in rows) == len(small.counted)
    assert total.toggles == sum(r.toggles for r in rows)
    assert total.toggles == sum(small.toggles[p] for p in small.counted)
    assert total.cells == sum(module_cells(sm_design(PARAMS)).values())
    assert total.weighted == pytest.approx(sum(r.toggles * r.cells / r.bits for r in rows))
    # the area model's stages (one warp slot's scheduler has no cells in either)
    assert {r.stage for r in rows if r.cells} <= {n for n, _ in sm_inventory(PARAMS).groups()}
    assert small.json()["total"]["toggles"] == total.toggles


@pytest.mark.rtl
@pytest.mark.synth
@pytest.mark.slow
@GROUP
def test_more_work_toggles_the_lanes_more(activity: Callable[[int], Activity]) -> None:
    small, large = activity(4), activity(40)

    def lanes(run: Activity) -> int:
        return next(r.toggles for r in run.stages if r.stage == "lane")

    def threads(run: Activity) -> int:
        assert run.report.golden.metrics is not None
        return run.report.golden.metrics.counters.thread_instructions

    assert threads(large) > threads(small)
    assert lanes(large) > lanes(small)


@pytest.mark.rtl
@pytest.mark.synth
@pytest.mark.slow
@GROUP
def test_the_counters_net_is_counted_once(activity: Callable[[int], Activity]) -> None:
    """The cycle counter is a register of ``core``, an output port of ``core`` and of the SM
    (``status__cycles``): the same toggles under three names, counted at the register."""
    small = activity(4)
    names = [("core", "cycle"), ("core", "status__cycles"), ("", "status__cycles")]
    for bit in range(COUNTER):
        points = [(path, name, bit) for path, name in names]
        assert len({small.toggles[p] for p in points}) == 1
        assert [p for p in points if p in small.counted] == [points[0]]
