"""The energy model held to the RTL (``golden/cost/power.py``): the shipped fit is what the measured
activity gives, the rankings' arithmetic, and ``reconverge power`` with and without ``--rtl``."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from reconverge.golden.cost.energy import ENERGY, model
from reconverge.golden.cost.power import ACTIVITY, _concordant, _order, calibrate, usable
from reconverge.golden.params import SYNTH
from reconverge.testbench.build import params_digest

CLI = [sys.executable, "-m", "reconverge.golden.cli"]


def test_shipped_fit_is_what_the_measured_activity_gives() -> None:
    """golden/cost/energy.json is the fit of golden/cost/activity.json (regenerated, never
    edited), and every measured run it uses agreed with golden cycle for cycle."""
    activity = json.loads(ACTIVITY.read_text())
    rows = usable(activity["rows"])
    assert len(rows) >= len(activity["rows"]) - 2  # a run that did not agree is the exception
    shipped = json.loads(ENERGY.read_text())
    fitted = calibrate(rows)
    assert fitted["toggles"] == shipped["toggles"]
    assert [r["held_out"] for r in fitted["rows"]] == [r["held_out"] for r in shipped["rows"]]
    assert model().technology.pj_per_cell_toggle == fitted["technology"]["pj_per_cell_toggle"]


def test_rankings_count_the_pairs_ordered_alike() -> None:
    assert _concordant([1, 2, 3], [10, 20, 30]) == (3, 3)
    assert _concordant([1, 2, 3], [30, 20, 10]) == (0, 3)
    assert _concordant([1, 3, 2], [1, 2, 3]) == (2, 3)
    assert _order([3.0, 1.0, 2.0], ["a", "b", "c"]) == ["b", "c", "a"]


def test_power_prints_the_models_energy_by_stage() -> None:
    out = subprocess.run([*CLI, "power", "nested", "--policy", "mp-orec", "--json"],
                         capture_output=True, text=True, check=True)  # fmt: skip
    r = json.loads(out.stdout)
    e = r["energy"]
    assert r["ok"] and r["params"]["policy"] == "mp-orec"
    assert sum(e["by_stage_pj"].values()) == pytest.approx(e["dynamic_pj"], rel=1e-3)
    assert sum(e["by_event_pj"].values()) == pytest.approx(e["dynamic_pj"], rel=1e-3)
    assert r["events"]["unit_updates"] > 0 and "rtl" not in r
    text = subprocess.run([*CLI, "power", "nested"], capture_output=True, text=True,
                          check=True).stdout  # fmt: skip
    assert "model pJ" in text and "energy:" in text


def test_power_of_an_sm_that_cannot_be_built_is_one_line() -> None:
    out = subprocess.run([*CLI, "power", "nested", "--config", "eval", "--policy", "mp"],
                         capture_output=True, text=True)  # fmt: skip
    assert out.returncode == 2 and "cannot be built" in out.stderr
    assert "Traceback" not in out.stderr


LOOP = textwrap.dedent(
    """
    _start:
        li   t0, 40
    loop:
        addi t0, t0, -1
        mul  t1, t0, t0
        bnez t0, loop
        li   a0, 0
        li   a7, 93
        ecall
    """
)


@pytest.mark.rtl
@pytest.mark.synth
@pytest.mark.slow  # the toggle build of testbench/tests/test_activity.py
@pytest.mark.xdist_group(f"sm-{params_digest(SYNTH)}-toggles")
@pytest.mark.xfail(
    strict=True,
    reason="golden/cost/activity.json was measured on the SM with the pipelined divider, which "
    "toggled every cycle; the iterative divider does not, and the model fitted to that activity "
    "estimates 1.5-1.9x the new RTL's energy. Re-measure (python -m "
    "reconverge.golden.cost.activity golden/cost/activity.json: about 2 hours) and refit "
    "(python -m reconverge.golden.cost.power); then this passes and the mark goes.",
)
def test_power_rtl_beside_the_model(tmp_path: Path) -> None:
    """On the synthesis SM, which the fit has not seen (it was fitted at the cosim
    configuration), the RTL's measured energy stands beside the model's, stage by stage."""
    program = tmp_path / "loop.S"
    program.write_text(LOOP)
    out = subprocess.run(
        [*CLI, "power", str(program), "--config", "synth", "--block", "4", "--rtl", "--json"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    r = json.loads(out.stdout)
    rtl, e = r["rtl"], r["energy"]
    assert rtl["level"] == 4 and rtl["cycles"] == r["events"]["cycles"]
    assert sum(rtl["by_stage_pj"].values()) == pytest.approx(rtl["dynamic_pj"], abs=1)
    assert set(e["by_stage_pj"]) <= set(rtl["by_stage_pj"])
    # the model on an SM it was not fitted to (W = 4, L = 2, one warp): 1.28 when this was
    # written (docs/energy.md); a fit that lost the lanes' scaling gave 1.99
    assert 0.67 < e["dynamic_pj"] / rtl["dynamic_pj"] < 1.5
