"""``reconverge cosim``: options default to the named configuration and override one field each;
bad options, combinations and files are one line with exit status 2; with the SM, the JSON keys
of README.md and the exit status of the requested level."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from reconverge.golden import cli
from reconverge.golden.cli.options import params_of
from reconverge.golden.config import PIPELINE_RESOLVE, Scheduler, ScoreboardKind
from reconverge.golden.geometry import Geometry
from reconverge.golden.params import COSIM
from reconverge.golden.policies import Policy, variant
from reconverge.testbench.cosim import METRICS
from reconverge.testbench.cosim_plan import COSIM_GEOMETRY, build_group


def parse(*options: str) -> object:
    return cli.build_parser().parse_args(["cosim", "nested", *options])


def test_options_default_to_the_cosim_configuration() -> None:
    assert params_of(parse()) == COSIM


@pytest.mark.parametrize(
    ("options", "changed"),
    [
        (["--warps", "2"], {"geometry": replace(COSIM.geometry, warps=2)}),
        (["--warp-size", "4"], {"geometry": replace(COSIM.geometry, warp_size=4)}),
        (["--warp-size", "2"], {"geometry": replace(COSIM.geometry, warp_size=2, simd_width=2)}),
        (["--simd-width", "8"], {"geometry": replace(COSIM.geometry, simd_width=8)}),
        (["--split-table", "4", "--reconv-table", "5", "--stack-depth", "6"],
         {"geometry": replace(COSIM.geometry, split_table=4, reconv_table=5, stack_depth=6)}),
        (["--scoreboard-entries", "3"],
         {"geometry": replace(COSIM.geometry, scoreboard_entries=3)}),
        (["--policy", "mp-orec", "--hws"],
         {"config": replace(COSIM.config, policy=Policy.MP_OREC, hws=True)}),
        (["--policy", "ppc", "--no-hints"],
         {"config": replace(COSIM.config, policy=Policy.PPC, hints=False)}),
        (["--scheduler", "lrr", "--scoreboard", "masked"],
         {"config": replace(COSIM.config, scheduler=Scheduler.LRR,
                            scoreboard=ScoreboardKind.MASKED)}),
        (["--latency", "global=7", "--latency", "div=9"],
         {"config": replace(COSIM.config, latencies=replace(COSIM.config.latencies, global_=7,
                                                            div=9))}),
        (["--line-bytes", "64", "--shared-banks", "4", "--max-cycles", "99"],
         {"config": replace(COSIM.config, line_bytes=64, shared_banks=4, max_cycles=99)}),
        (["--imem-words", "2048"], {"imem_words": 2048}),
    ],
)  # fmt: skip
def test_an_option_overrides_its_field(options: list[str], changed: dict[str, object]) -> None:
    """Only the field an option names changes; the latencies keep the configuration's short
    ones (alu 2, global 3 in cosim), not the golden defaults."""
    assert params_of(parse(*options)) == replace(COSIM, **changed)
    assert Geometry().warps != COSIM.geometry.warps  # the base is the named one, not defaults


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--warps", "0"], "warps per SM must be at least 1"),
        (["--line-bytes", "256"], "line size 256 above 128 bytes"),
        (["--imem-words", "1000"], "imem_words=1000 must be a power of two"),
        (["--latency", "branch=2"], "branch latency >= 3"),
        (["--latency", "alu=1"], "alu latency >= 2"),
        (["--latency", "resolve=0"], f"pipeline has resolve {PIPELINE_RESOLVE}, not 0"),
        (["--latency", "nope=3"], "--latency takes NAME=CYCLES"),
        (["--warp-size", "4", "--simd-width", "8"], "SIMD width L=8"),
        (["--sim", "icarus", "--grid", "2"], "a kernel runs with its suite case's grid"),
    ],
)
def test_invalid_options_are_one_line_exit_2(
    options: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["cosim", "nested", *options]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert err.startswith("reconverge cosim: ") and message in err
    assert err.count("\n") == 1


@pytest.mark.parametrize(
    ("file", "message"),
    [("missing.elf", "missing.elf: No such file"), ("noSuchKernel", "nor a suite kernel")],
)
def test_bad_file_is_one_line_exit_2(
    file: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["cosim", file]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_bad_assembly_is_one_line_exit_2(
    tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:

    bad = Path(str(tmp_path)) / "bad.S"
    bad.write_text("    .text\n_start:\n    frobnicate a0\n")
    assert cli.main(["cosim", str(bad)]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert "bad.S" in err and err.count("\n") == 1


def test_level_outside_1_to_4_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["cosim", "nested", "--level", "5"]) == cli.EXIT_USAGE
    err = capsys.readouterr().err
    assert "invalid choice: 5" in err and len(err.strip().splitlines()) == 1


@pytest.mark.rtl
@pytest.mark.xdist_group(build_group(COSIM_GEOMETRY, variant("sps"), False))
def test_cosim_json_on_the_sm(capsys: pytest.CaptureFixture[str]) -> None:
    """`reconverge cosim KERNEL --json` on the SM: level 3 or better (exit 0), the RTL's
    outputs match the oracle, the metrics of both sides under the documented keys."""
    status = cli.main(["cosim", "ifElse", "--policy", "sps", "--level", "3", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert status == cli.EXIT_OK, out["difference"]
    assert out["level"] >= 3 and out["ok"] and out["oracle_mismatches"] == []
    assert set(METRICS) <= set(out["golden"]) and set(METRICS) <= set(out["rtl"])
    assert out["params"]["policy"] == "sps" and out["sim"] == "icarus"
