"""Generated Verilog: lint-clean under Verilator (waivers in reconverge.hdl.tools.lint), ports
matching the golden twin, processes lowered to continuous assignments; the ``verilog`` and
``synth`` commands; a real Yosys + nextpnr run."""

from __future__ import annotations

import json
import re

import pytest

from reconverge.golden.cli import main
from reconverge.hdl.registry import lookup
from reconverge.hdl.tools.lint import verilator_lint
from reconverge.hdl.tools.verilog import to_verilog
from reconverge.testbench.scenarios import (
    arbiter,
    dual_path_stack,
    scoreboard,
    split_tables,
    sps_stack,
    squeezer,
    stackless,
)

SETS = arbiter.PARAM_SETS + arbiter.EXTRA_PARAM_SETS[:3]
SETS += squeezer.PARAM_SETS + squeezer.EXTRA_PARAM_SETS[1:]
SETS += split_tables.PARAM_SETS[:2] + split_tables.EXTRA_PARAM_SETS
SETS += sps_stack.PARAM_SETS + sps_stack.EXTRA_PARAM_SETS[:2]
SETS += dual_path_stack.PARAM_SETS + dual_path_stack.EXTRA_PARAM_SETS[3:]
SETS += [
    p for masked in (False, True) for p in scoreboard.param_sets(masked, scoreboard.PARAM_SETS[:2])
]
SETS += stackless.PARAM_SETS[:2]
IDS = [f"{p.name}-{p.label()}" for p in SETS]


@pytest.mark.rtl
@pytest.mark.parametrize("params", SETS, ids=IDS)
def test_verilog_ports_and_lint(params) -> None:
    block = params.name
    component = lookup(block).build(params)
    text = to_verilog(component, block)
    assert "always @*" not in text  # see reconverge.hdl.tools.verilog
    for port in params.flat_ports:
        width = "" if port.bits == 1 else rf"\[{port.bits - 1}:0\] "
        assert re.search(rf"\b{port.direction}put {width}{port.name};", text), port
    assert verilator_lint(text, block) == []


@pytest.mark.rtl
def test_lint_reports_real_problems() -> None:
    latch = "module top(input a, input e, output reg q);\nalways @* if (e) q = a;\nendmodule\n"
    assert any("LATCH" in line for line in verilator_lint(latch, "top"))


def test_verilog_command(tmp_path, capsys) -> None:
    out = tmp_path / "a.v"
    assert (
        main(
            [
                "verilog",
                "arbiter",
                "--param",
                "n=4",
                "--param",
                "key-width=8",
                "-o",
                str(out),
                "--json",
            ]
        )
        == 0
    )
    info = json.loads(capsys.readouterr().out)
    assert info["module"] == "arbiter" and info["latency"] == 0
    assert {p["name"]: p["bits"] for p in info["ports"]} == {
        "valid": 4,
        "key": 32,
        "out_valid": 1,
        "min_key": 8,
        "mask": 4,
    }
    assert "module arbiter(" in out.read_text()
    assert main(["verilog", "squeezer", "--param", "warp_size=8", "--param", "simd_width=8"]) == 0
    assert "module squeezer(" in capsys.readouterr().out


TABLES = ["--param", "warp_size=4", "--param", "split_table=4", "--param", "reconv_table=4",
          "--param", "pc_width=12", "--param", "orec=1"]  # fmt: skip


def test_verilog_command_split_tables(capsys) -> None:
    """The tables' ports: array ports per ST / RT entry, two target groups per update."""
    assert main(["verilog", "split_tables", *TABLES, "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["module"] == "split_tables" and info["latency"] == 1
    bits = {p["name"]: p["bits"] for p in info["ports"]}
    assert bits["outcome__target_pc"] == 2 * 12 and bits["outcome__target_mask"] == 2 * 4
    assert bits["splits__pc"] == bits["tables__st_block"] == bits["tables__st_rpc"] == 4 * 12
    assert bits["tables__rt_pending"] == 4 * 4 and bits["splits__valid"] == 4
    assert bits["tables__st_valid"] == bits["tables__rt_valid"] == 4 and bits["splits__sid"] == 8


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["verilog", "nope"], "unknown block 'nope'; blocks: arbiter, squeezer"),
        (["verilog", "arbiter", "--param", "n"], "bad parameter 'n'"),
        (["verilog", "arbiter", "--param", "n=two"], "n='two' is not an integer"),
        (["verilog", "arbiter", "--param", "n=0"], "1..1024 inputs"),
        (["synth", "squeezer", "--param", "simd_width=64"], "no larger than W=32"),
        (["verilog", "split_tables", "--param", "orec=2"], "orec='2' is not 0 or 1"),
        (["verilog", "split_tables", "--param", "pc_width=40"], "pc_width must be in 6..32"),
        (["verilog", "split_tables", "--param", "st_size=4"], "bad parameter 'st_size=4'"),
        (["verilog", "arbiter", "-o", "/nonexistent/dir/a.v"], "no folder /nonexistent/dir"),
    ],
)
def test_bad_input_is_one_line_user_error(argv, message: str, capsys) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


@pytest.mark.synth
def test_synth_small_arbiter_end_to_end(capsys) -> None:
    """A real Yosys (generic + ECP5) and nextpnr run on a small block (seconds)."""
    assert main(["synth", "arbiter", "--param", "n=4", "--param", "key_width=8", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["generic"]["cells"] > 50 and r["generic"]["transistors"] > 200
    assert r["generic"]["flip_flops"] == 0  # combinational tree
    assert r["ecp5"]["luts"] > 20 and r["ecp5"]["flip_flops"] == 0
    assert r["ecp5"]["harness_flip_flops"] == 4 + 32 + 1 + 8 + 4
    assert r["ecp5"]["fmax_mhz"] > 10
    assert r["ecp5"]["utilization"]["TRELLIS_IO"] == 5


@pytest.mark.synth
def test_synth_counts_pipeline_registers(capsys) -> None:
    assert (
        main(
            [
                "synth",
                "squeezer",
                "--param",
                "warp_size=8",
                "--param",
                "simd_width=4",
                "--param",
                "latency=2",
                "--no-pnr",
                "--json",
            ]
        )
        == 0
    )
    r = json.loads(capsys.readouterr().out)
    # after the sort: valid, mask (8), order (2 x 1); at the output: every output bit
    outputs = 1 + 8 + 8 + 2 + 2 + 2
    assert r["generic"]["flip_flops"] == 1 + 8 + 2 + outputs
    assert "fmax_mhz" not in r["ecp5"]


@pytest.mark.synth
def test_synth_split_tables_registers(capsys) -> None:
    """The tables' flip-flops are exactly the state of Fig 7 and its control: per ST entry
    valid, block PC, next PC, mask, R-index, call context, RPC; per RT entry valid, PC, two
    masks, R-index, call context, call flag; live and waiting masks, overflow, the MORE
    continuation (no queue when ST >= W); the two held splits of the pipelined cycle (valid,
    PC, mask; the first also R-index, call context, RPC and, with OREC, its preferred ST
    entry; the second's are the continuation's registers)."""
    assert main(["synth", "split_tables", *TABLES, "--no-pnr", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    w, p, rb = 4, 12, 3
    st = 1 + p + p + w + rb + rb + p
    rt = 1 + p + w + w + rb + rb + 1
    misc = w + w + 1 + (1 + p + rb + rb + p)
    held = (1 + p + w + rb + rb + p + 4) + (1 + p + w)
    assert r["generic"]["flip_flops"] == 4 * st + 4 * rt + misc + held


@pytest.mark.synth
def test_synth_scoreboard_storage_and_submodules(capsys) -> None:
    """The scoreboards' flip-flops are their tables (plain: valid + register id per entry,
    masked: R-mask + register id) and the incoming reservation (valid, warp, register id;
    masked: its mask); the stack-less control's cells include its arbiter tree (a submodule:
    counted in, flattened for the generic flow)."""

    def synth(block: str, **params: int) -> dict:
        argv = ["synth", block, "--no-pnr", "--json"]
        argv += [a for k, v in params.items() for a in ("--param", f"{k}={v}")]
        assert main(argv) == 0
        return json.loads(capsys.readouterr().out)

    shape = {"warp_size": 4, "regs": 8, "warps": 2, "entries": 2, "lookups": 1}
    plain, masked = synth("scoreboard", **shape), synth("masked_scoreboard", **shape)
    incoming = 1 + 1 + 3  # valid, one warp bit, register id
    assert (
        plain["generic"]["flip_flops"] == plain["ecp5"]["flip_flops"] == 2 * 2 * (1 + 3) + incoming
    )
    assert (
        masked["generic"]["flip_flops"]
        == masked["ecp5"]["flip_flops"]
        == 2 * 2 * (4 + 3) + incoming + 4
    )
    assert masked["generic"]["cells"] > plain["generic"]["cells"]
    tree = synth("arbiter", n=4, key_width=8)
    control = synth("stackless", warp_size=4, pc_width=5, sp_width=3)
    # per thread PC and SP; live, waiting, active; the common SP:PC; the update's clocks (the
    # tree's, its mode, the comparison's)
    assert control["generic"]["flip_flops"] == 4 * (5 + 3) + 3 * 4 + 5 + 3 + 3
    assert control["generic"]["cells"] > tree["generic"]["cells"]
    # flattening leaves no scope-info cell behind: every cell has a transistor count
    assert "$scopeinfo" not in control["generic"]["cells_by_type"]
    assert not control["generic"]["transistors_lower_bound"]
    assert control["ecp5"]["luts"] > tree["ecp5"]["luts"]
