"""``reconverge verilog sm`` and ``synth sm``: the bare SM's Verilog has the ports of
docs/sm-hardware.md and compiles under Icarus; the board top holds its program and, simulated
by Icarus from reset, runs it to ``passed`` (or not, for a program that exits non-zero); the
synthesis flow on a small component with a memory and a submodule (memories listed apart,
per-submodule numbers, the ECP5 part chosen or refused); bad input is one line, exit 2.

A full ``synth sm --no-pnr`` takes minutes, so it runs only in ``make area`` (docs/area.md)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from amaranth.hdl import Module
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import In, Out

from reconverge.golden.blocks.divergence import NEVER
from reconverge.golden.blocks.units import sm_unit
from reconverge.golden.cli import main
from reconverge.golden.cost.area_report import submodule_groups
from reconverge.golden.errors import UserError
from reconverge.golden.memmap import GLOBAL_BASE
from reconverge.golden.params import SYNTH
from reconverge.golden.sm.decode import predecode
from reconverge.golden.sm.program import Program
from reconverge.hdl.sm.fetch import ENTRY
from reconverge.hdl.tools import synth
from reconverge.kernels.workload import load_workload


def _verilog(tmp_path: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[dict, str]:
    out = tmp_path / "sm.v"
    assert main(["verilog", "sm", *argv, "--config", "synth", "-o", str(out), "--json"]) == 0
    return json.loads(capsys.readouterr().out), out.read_text()


def _declared(text: str, direction: str, name: str) -> int | None:
    """The width of port ``name`` as the Verilog declares it (None: not declared)."""
    found = re.search(rf"\b{direction}put (?:\[(\d+):0\] )?{name};", text)
    return None if found is None else int(found.group(1) or 0) + 1


@pytest.mark.rtl
def test_bare_sm_verilog_has_the_documented_ports_and_compiles(tmp_path, capsys) -> None:
    info, text = _verilog(tmp_path, capsys, "--policy", "mp-orec", "--hws")
    assert info["module"] == "sm" and info["lines"] == text.count("\n")
    assert info["params"]["policy"] == "mp-orec" and info["params"]["hws"] is True
    ports = {p["name"]: (p["direction"], p["bits"]) for p in info["ports"]}
    g, lb = SYNTH.geometry, SYNTH.config.line_bytes
    # docs/sm-hardware.md, "Ports of SM"
    assert ports["load__addr"] == ("in", SYNTH.imem_bits)
    assert ports["launch__args"] == ("in", 8 * 32)
    assert ports["mem__req_be"] == ("out", lb)
    assert ports["mem__resp_rdata"] == ("in", 8 * lb)
    assert ports["trace__sid"] == ("out", sm_unit(SYNTH).sid_bits)
    assert ports["exit__codes"] == ("out", g.warp_size * 32)
    assert ports["status__fault_code"] == ("out", 4)
    for name, (direction, bits) in ports.items():
        assert _declared(text, direction, name) == bits, name
    for clock in ("clk", "rst"):
        assert _declared(text, "in", clock) == 1
    done = subprocess.run(
        ["iverilog", "-g2012", "-s", "sm", "-o", str(tmp_path / "sm.vvp"), str(tmp_path / "sm.v")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


TESTBENCH = """module tb;
  reg clk = 0, rst = 1;
  wire done, fault, passed;
  wire [3:0] code;
  sm_system dut(.clk(clk), .rst(rst), .done(done), .fault(fault), .code(code), .passed(passed));
  always #1 clk = ~clk;
  integer i;
  initial begin
    #4 rst = 0;
    for (i = 0; i < 20000 && !done && !fault; i = i + 1) @(posedge clk);
    $display("done=%0d fault=%0d passed=%0d code=%0d", done, fault, passed, code);
    $finish;
  end
endmodule
"""

#: Every thread exits with its thread index: passed only for a block of one thread.
EXIT_TID = "    .text\n    .globl _start\n_start:\n    csrr a0, 0xCC0\n    li a7, 93\n    ecall\n"


def _run_board(tmp_path: Path, text: str) -> str:
    (tmp_path / "tb.v").write_text(TESTBENCH)
    vvp = tmp_path / "board.vvp"
    sources = [str(tmp_path / "tb.v"), str(tmp_path / "sm.v")]
    subprocess.run(["iverilog", "-g2012", "-s", "tb", "-o", str(vvp), *sources], check=True)
    done = subprocess.run(["vvp", "-n", str(vvp)], capture_output=True, text=True, timeout=300)
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.rtl
def test_board_top_holds_a_kernel_and_runs_it_under_icarus(tmp_path, capsys) -> None:
    info, text = _verilog(tmp_path, capsys, "ifElse", "--size", "2", "--policy", "sps")
    assert info["module"] == "sm_system" and info["params"]["program"] == "ifElse (size 2, seed 0)"
    assert {p["name"]: p["bits"] for p in info["ports"]} == {
        "done": 1,
        "fault": 1,
        "code": 4,
        "passed": 1,
    }
    # the instruction store holds the hinted program, and its RPC memory the RPCs, from reset
    work = load_workload(
        "ifElse", grid=None, block=None, args=(), allocator="linear", regs=16, size=2, seed=0
    )
    image = work.image_for(True)
    store = Program(image).store(SYNTH.imem_words)
    word, _ = store[(image.entry - GLOBAL_BASE) // 4]
    entry = ENTRY.const({"word": word, "pre": predecode(word)}).as_bits()
    assert f"= {ENTRY.size}'h{entry:0{-(-ENTRY.size // 4)}x};" in text
    branch, rpc = next((k, rpc) for k, (_, rpc) in enumerate(store) if rpc != NEVER)
    assert f"rpcs[{branch}] = 32'd{rpc};" in text
    assert _run_board(tmp_path, text) == "done=1 fault=0 passed=1 code=0"


@pytest.mark.rtl
@pytest.mark.parametrize(("block", "passed"), [(1, 1), (4, 0)])
def test_board_top_passed_needs_every_exit_code_zero(tmp_path, capsys, block, passed) -> None:
    program = tmp_path / "exit_tid.S"
    program.write_text(EXIT_TID)
    _, text = _verilog(tmp_path, capsys, str(program), "--grid", "1", "--block", str(block))
    assert _run_board(tmp_path, text) == f"done=1 fault=0 passed={passed} code=0"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["verilog", "sm", "--param", "n=4"], "--param is for blocks"),
        (["verilog", "arbiter", "--policy", "sps"], "--policy: only for sm"),
        (["verilog", "arbiter", "nested"], "nested: only for sm"),
        (["verilog", "sm", "--grid", "2"], "--grid needs a program"),
        (["verilog", "sm", "--warp-size", "6"], "W=6 must be a power of two"),
        (["verilog", "sm", "--latency", "branch=2"], "branch latency >= 3"),
        (["verilog", "sm", "nested", "--config", "synth"], "more than the 1 warp slots"),
        (["verilog", "sm", "no_such_kernel"], "nor a suite kernel"),
        (
            ["verilog", "sm", "nqueens", "--config", "synth", "--imem-words", "64", "--size", "4"],
            "outside the instruction store",
        ),
        (["synth", "sm", "--config", "synth", "--shared-banks", "3"], "shared"),
    ],
)
def test_bad_sm_input_is_one_line_user_error(argv, message: str, capsys) -> None:
    assert main([*argv, "-o", "/dev/null"] if argv[0] == "verilog" else argv) == 2
    err = capsys.readouterr().err.strip()
    assert message in err and len(err.splitlines()) == 1, err


def test_image_outside_global_memory_is_one_line(tmp_path, capsys) -> None:
    program = tmp_path / "big.S"
    program.write_text(EXIT_TID + "    .data\n    .space 20000\n")  # global memory: 16 KiB
    argv = ["verilog", "sm", str(program), "--config", "synth", "--grid", "1", "--block", "1"]
    assert main([*argv, "-o", str(tmp_path / "x.v")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "lie outside global memory" in err[0]
    assert not (tmp_path / "x.v").exists()


def test_unknown_device_is_a_usage_error(capsys) -> None:
    assert main(["synth", "sm", "--device", "12k"]) == 2
    assert "invalid choice: '12k'" in capsys.readouterr().err


# -- the synthesis flow on a component that is not a registry block ----------------------------


class _Counter(wiring.Component):
    """A count held in a register, the submodule of :class:`_Design`."""

    def __init__(self) -> None:
        super().__init__({"step": In(8), "count": Out(8)})

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.d.sync += self.count.eq(self.count + self.step)
        return m


class _Design(wiring.Component):
    """A memory (32 x 16 bits, one synchronous read port) and a counter, in nested ports."""

    def __init__(self) -> None:
        port = wiring.Signature({"addr": Out(5), "data": Out(16), "we": Out(1)})
        super().__init__({"write": In(port), "read": Out(16), "count": Out(8)})

    def elaborate(self, platform: object) -> Module:
        m = Module()
        m.submodules.mem = mem = memory.Memory(shape=16, depth=32, init=[])
        m.submodules.counter = counter = _Counter()
        wr, rd = mem.write_port(), mem.read_port()
        m.d.comb += [wr.addr.eq(self.write.addr), wr.data.eq(self.write.data)]
        m.d.comb += [wr.en.eq(self.write.we), rd.addr.eq(~self.write.addr)]
        m.d.comb += [self.read.eq(rd.data), counter.step.eq(self.write.data[:8])]
        m.d.comb += self.count.eq(counter.count)
        return m


@pytest.mark.synth
def test_flow_lists_memories_and_submodules_and_picks_the_part(tmp_path) -> None:
    result = synth.synth_design(
        "design", _Design, {}, place_and_route=False, workdir=tmp_path, part="auto",
        breakdown=True,
    )  # fmt: skip
    g, e = result["generic"], result["ecp5"]
    assert g["memories"] == [
        {"name": "mem", "width": 16, "depth": 32, "read_ports": 1, "write_ports": 1}
    ]
    assert g["memory_bits"] == 512 and g["transistors_lower_bound"]
    assert g["flip_flops"] == 8  # the count (the read register belongs to the memory)
    assert e["device"] == synth.DEVICES["25k"].name and e["fits"]
    # the harness registers every I/O bit: 5 + 16 + 1 in, 16 + 8 out
    assert e["harness_flip_flops"] == 22 + 24
    assert e["submodules"]["counter"]["flip_flops"] == 8
    # ECP5: the memory in distributed RAM (2 x 4 DPR16X4 of 16 x 4 bits), its read register
    # in flip-flops beside the count
    assert (e["lutram"], e["ebr"], e["flip_flops"]) == (8, 0, 8 + 16)


@pytest.mark.synth
def test_design_larger_than_the_part_is_refused_before_place_and_route(tmp_path, monkeypatch):
    tiny = synth.Device("tiny", luts=4, ebr=0)
    monkeypatch.setitem(synth.DEVICES, "tiny", tiny)
    with pytest.raises(UserError, match=r"does not fit LFE5U-tinF .*of 4\).*--device"):
        synth.synth_design("design", _Design, {}, workdir=tmp_path, part="tiny")
    # make area records such a design without placing it
    result = synth.synth_design("design", _Design, {}, part="tiny", refuse_overflow=False)
    assert result["ecp5"]["fits"] is False and "fmax_mhz" not in result["ecp5"]


def test_submodule_groups_add_up_to_the_sm() -> None:
    def res(luts: int, ffs: int) -> dict[str, int]:
        return {"luts": luts, "flip_flops": ffs, "ebr": 0, "lutram": 0}

    subs = {
        "core": res(100, 40),
        "core.unit0": res(20, 5),
        "core.unit1": res(20, 5),
        "core.regfile": res(50, 25),
        "lsu": res(7, 3),
    }
    groups = submodule_groups({"ecp5": {"submodules": subs}})
    assert groups == {
        "unit": {"luts": 40, "flip_flops": 10, "count": 2},
        "regfile": {"luts": 50, "flip_flops": 25, "count": 1},
        "core (own logic)": {"luts": 10, "flip_flops": 5, "count": 1},
        "lsu": {"luts": 7, "flip_flops": 3, "count": 1},
    }
    assert sum(g["luts"] for g in groups.values()) == 107


def test_verilog_checks_its_output_before_generating(monkeypatch, tmp_path, capsys) -> None:
    """A folder that does not exist is refused at once, not after the SM's generation."""
    from reconverge.hdl.tools import verilog

    monkeypatch.setattr(verilog, "to_verilog", lambda *_: pytest.fail("the SM was generated"))
    assert main(["verilog", "sm", "-o", str(tmp_path / "no" / "sm.v")]) == 2
    assert "no folder" in capsys.readouterr().err
