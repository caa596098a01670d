"""``make area`` (golden/cost/area_report.py) keeps its results between runs: a stored result is
reused only while the design digest it carries is what the design gives now, and a run with a budget
renders what it has and lists the rest. The synthesis itself is not run here (hdl/sm/tests/
test_sm_tools.py runs the flow); the stored results are written by the test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reconverge.golden.cost import area_report as area
from reconverge.hdl.tools.synth import design_digest
from reconverge.hdl.tools.verilog import rtlil_text


def stored(row: area.Row, digest: str, cells: int) -> dict[str, object]:
    """A result of the shape synth() gives, for ``row``."""
    return {
        "block": row.block,
        "params": json.loads(row.key)[2],
        "generic": {"cells": cells, "flip_flops": 3, "transistors": 7 * cells,
                    "transistors_lower_bound": False, "design_digest": digest},
        "ecp5": {"luts": 11, "flip_flops": 3, "fmax_mhz": 99.5},
        "seconds": 1.0,
    }  # fmt: skip


def test_results_are_reused_only_for_an_unchanged_design(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocks, sm = area.rows()
    first, second = blocks[0], blocks[1]
    component, name = first.design()
    digest = design_digest(rtlil_text(component, name))
    results = tmp_path / "area.json"
    results.write_text(json.dumps([stored(first, digest, 4321), stored(second, "0" * 64, 8765)]))
    page = tmp_path / "area.md"
    argv = [str(page), "--json", str(results), "--resume", "--budget", "0"]
    assert area.main(argv) == 0
    text = page.read_text()
    shown = ", ".join(f"{k}={v}" for k, v in json.loads(first.key)[2].items())
    assert f"| {shown} | 4321 | 3 | 30247 | 11 | 3 | 99.5 |" in text
    assert "8765" not in text  # the changed design's result is dropped, not shown
    assert f"{second.block} {second.label}: changed since its result" in capsys.readouterr().err
    waiting = [line for line in text.splitlines() if line.startswith("Not synthesised yet")]
    assert second.label in waiting[0] and first.label not in waiting[0]
    assert all(row.label in waiting[-1] for row in sm)  # the SM's section lists every variant
    kept = json.loads(results.read_text())
    assert [r["generic"]["cells"] for r in kept] == [4321]


def test_digest_follows_the_design() -> None:
    blocks, _ = area.rows()
    texts = [rtlil_text(*row.design()) for row in blocks[:2]]
    assert design_digest(texts[0]) == design_digest(texts[0])
    assert design_digest(texts[0]) != design_digest(texts[1])
