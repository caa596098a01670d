"""The SM options of ``run``, ``compare`` and ``demo`` (golden/cli/options.py): without
``--config`` the command's own W and L and the dataclasses' defaults, as before the option
existed; with it, the named configuration of golden.params, each option given replacing one
field; ``run --config cosim`` is the SM that ``cosim`` holds the RTL to."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace

import pytest

from reconverge.golden import cli
from reconverge.golden.cli.options import geometry_of, memmap_of
from reconverge.golden.cli.sm import launch_of, sm_config, workload_of
from reconverge.golden.config import Latencies, SMConfig
from reconverge.golden.geometry import Geometry
from reconverge.golden.params import COSIM, EVAL
from reconverge.golden.policies import Mechanism, Policy, variant
from reconverge.golden.sm.run import run_sm


def parse(command: str, *options: str) -> object:
    return cli.build_parser().parse_args([command, "nested", *options])


@pytest.mark.parametrize(
    ("command", "geometry"),
    [
        ("run", Geometry()),
        ("compare", Geometry()),
        ("demo", Geometry(warp_size=8, simd_width=4)),
    ],
)
def test_without_config_the_commands_own_sm(command: str, geometry: Geometry) -> None:
    ns = parse(command)
    assert geometry_of(ns) == geometry
    assert memmap_of(ns) is None
    assert replace(sm_config(ns, Mechanism(variant("sps"))), policy=Policy.SPS) == SMConfig()


@pytest.mark.parametrize(
    ("options", "geometry"),
    [
        (["--warp-size", "16"], Geometry(warp_size=16, simd_width=8)),
        (["--warp-size", "4"], Geometry(warp_size=4, simd_width=4)),
        (["--warp-size", "16", "--simd-width", "16"], Geometry(warp_size=16, simd_width=16)),
        (["--warps", "2", "--stack-depth", "5"], Geometry(warps=2, stack_depth=5)),
    ],
)
def test_options_replace_fields_of_the_default(options: list[str], geometry: Geometry) -> None:
    assert geometry_of(parse("run", *options)) == geometry


def test_config_is_the_named_sm_with_the_options_given() -> None:
    ns = parse("compare", "--config", "eval", "--warp-size", "16", "--latency", "global=10")
    assert geometry_of(ns) == replace(EVAL.geometry, warp_size=16, simd_width=16)
    config = sm_config(ns, Mechanism(variant("sps")))
    assert config.latencies == replace(EVAL.config.latencies, global_=10)
    assert config.latencies != replace(Latencies(), global_=10)
    assert (config.line_bytes, config.shared_banks) == (128, 32)
    assert memmap_of(ns) == EVAL.memmap


def test_run_config_cosim_is_the_sm_cosim_checks() -> None:
    """The CLI's run is the golden run that cosim compares with the RTL (its launch and
    configuration built from golden.params.COSIM directly)."""
    ns = parse("run", "--config", "cosim", "--policy", "mp-orec", "--hws")
    work = workload_of(ns, "nested")
    config = sm_config(ns, Mechanism(variant("mp-orec"), hws=True))
    launch = launch_of(ns, work, config)
    params = replace(COSIM, config=replace(COSIM.config, policy=Policy.MP_OREC, hws=True))
    assert config == params.config
    assert launch == work.sm_launch(params, ns.step_limit)
    out = subprocess.run(
        [sys.executable, "-m", "reconverge.golden.cli", "run", "nested", "--config", "cosim",
         "--policy", "mp-orec", "--hws", "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    reference = run_sm(work.image_for(True), launch, params.config)
    assert reference.metrics is not None
    assert json.loads(out.stdout)["metrics"]["cycles"] == reference.metrics.cycles


def test_a_bad_override_is_a_usage_error() -> None:
    with pytest.raises(cli.UsageError, match="L=16 must be a power of two no larger than W=8"):
        geometry_of(parse("run", "--config", "cosim", "--simd-width", "16"))
