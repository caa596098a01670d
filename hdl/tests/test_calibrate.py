"""``python -m reconverge.golden.cost.calibrate``'s bookkeeping of the synthesis rows: a resumed
run synthesises only what is not recorded (``--only`` narrows that to the designs named), and a
run stopped part way leaves every recorded row behind. Synthesis itself is replaced by a
stand-in here (the rows' figures are not under test; tests of hdl/tools/synth.py run Yosys)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reconverge.golden.blocks import BlockParams
from reconverge.golden.cost import calibrate
from reconverge.hdl.registry import lookup
from reconverge.hdl.tools.synth import design_digest
from reconverge.hdl.tools.verilog import rtlil_text

ARBITER = lookup("arbiter").params.parse({"n": 4, "key_width": 8, "pipeline_every": 0})
SQUEEZER = lookup("squeezer").params.parse({"warp_size": 8, "simd_width": 4, "latency": 0})
WIDE = lookup("arbiter").params.parse({"n": 8, "key_width": 8, "pipeline_every": 0})


class Synthesis:
    """Stands in for :func:`calibrate.measure`: a row per design, every call recorded; the
    designs in ``fail`` raise as a synthesis that dies would."""

    def __init__(self, fail: tuple[BlockParams, ...] = ()) -> None:
        self.calls: list[str] = []
        self.fail = fail

    def __call__(self, params: BlockParams) -> dict[str, Any]:
        self.calls.append(params.describe())
        if params in self.fail:
            raise RuntimeError("yosys died")
        text = rtlil_text(lookup(params.name).build(params), params.name)
        return calibrate.row(
            params.name,
            params.values(),
            {
                "generic": {"transistors": 1, "cells": 1, "design_digest": design_digest(text)},
                "ecp5": {"luts": 1, "flip_flops": 0},
            },
        )


@pytest.fixture
def recorded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "calibration.json"
    monkeypatch.setattr(calibrate, "CALIBRATION", path)
    monkeypatch.setattr(calibrate, "sm_sets", dict)
    return path


def _run(monkeypatch: pytest.MonkeyPatch, designs: list[BlockParams], synth: Synthesis,
         *args: str) -> None:  # fmt: skip
    monkeypatch.setattr(calibrate, "block_sets", lambda: designs)
    monkeypatch.setattr(calibrate, "measure", synth)
    assert calibrate.main(["--no-fit", *args]) == 0


def _labels(path: Path) -> list[str]:
    rows = json.loads(path.read_text())["rows"]
    return [", ".join(f"{k}={v}" for k, v in r["params"].items()) for r in rows]


def test_resume_synthesises_only_the_designs_not_recorded(
    recorded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = Synthesis()
    _run(monkeypatch, [ARBITER, SQUEEZER], first)
    assert first.calls == [ARBITER.describe(), SQUEEZER.describe()]
    again = Synthesis()
    _run(monkeypatch, [ARBITER, WIDE, SQUEEZER], again, "--resume", "--only", "squeezer")
    # WIDE is neither recorded nor named: skipped, and not in the rows
    assert again.calls == []
    assert _labels(recorded) == [ARBITER.describe(), SQUEEZER.describe()]
    _run(monkeypatch, [ARBITER, WIDE, SQUEEZER], again, "--resume", "--only", "arbiter")
    assert again.calls == [WIDE.describe()]
    assert _labels(recorded) == [ARBITER.describe(), WIDE.describe(), SQUEEZER.describe()]


def test_only_without_resume_synthesises_the_named_again_and_keeps_the_rest(
    recorded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _run(monkeypatch, [ARBITER, SQUEEZER], Synthesis())
    again = Synthesis()
    _run(monkeypatch, [ARBITER, SQUEEZER], again, "--only", "squeezer")
    assert again.calls == [SQUEEZER.describe()]
    assert _labels(recorded) == [ARBITER.describe(), SQUEEZER.describe()]


def test_a_run_stopped_part_way_keeps_the_rows_not_reached(
    recorded: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _run(monkeypatch, [ARBITER, SQUEEZER], Synthesis())
    dying = Synthesis(fail=(WIDE,))
    with pytest.raises(RuntimeError, match="yosys died"):
        _run(monkeypatch, [ARBITER, WIDE, SQUEEZER], dying, "--resume")
    assert dying.calls == [WIDE.describe()]
    assert _labels(recorded) == [ARBITER.describe(), SQUEEZER.describe()]
