"""The slow-path estimate (``hdl/tools/timing.py``) on hand-built ECP5 netlists whose arrival
times follow from the delay table alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reconverge.hdl.tools.timing import DELAYS, ROUTING, endpoints, slow_paths

FF, LUT = DELAYS["TRELLIS_FF"], DELAYS["LUT4"]


def _cell(kind: str, **ports: tuple[str, list[int | str]]) -> dict[str, Any]:
    return {
        "type": kind,
        "port_directions": {p: d for p, (d, _) in ports.items()},
        "connections": {p: bits for p, (_, bits) in ports.items()},
    }


def _ff(name: str, d: int, q: int) -> tuple[str, dict[str, Any]]:
    return name, _cell("TRELLIS_FF", CLK=("input", [1]), DI=("input", [d]), Q=("output", [q]))


def _lut(name: str, a: int, b: int | str, z: int) -> tuple[str, dict[str, Any]]:
    return name, _cell("LUT4", A=("input", [a]), B=("input", [b]), Z=("output", [z]))


def _module(cells: list[tuple[str, dict[str, Any]]], nets: dict[str, int]) -> dict[str, Any]:
    return {"cells": dict(cells), "netnames": {n: {"bits": [b]} for n, b in nets.items()}}


def test_a_chain_of_luts_between_two_registers() -> None:
    """start -> two LUTs -> end; a second register one LUT from start: each endpoint's arrival
    is the source's clock to output plus a cell delay and a hop per cell."""
    module = _module(
        [
            _ff("start_TRELLIS_FF_Q", 2, 10),
            _lut("x_LUT4_Z", 10, "0", 11),
            _lut("y_LUT4_Z", 11, 10, 12),
            _ff("end_TRELLIS_FF_Q", 12, 2),
            _ff("near_TRELLIS_FF_Q", 11, 13),
        ],
        {"start": 10, "x": 11, "y": 12, "end": 2, "near": 13},
    )
    found = {e.name: e for e in endpoints(module)}
    source = FF + ROUTING
    assert found["end:DI"].arrival == pytest.approx(source + 2 * (LUT + ROUTING))
    assert found["near:DI"].arrival == pytest.approx(source + LUT + ROUTING)
    assert [step[2] for step in found["end:DI"].path] == ["start", "x", "y"]
    assert found["end:DI"].start == "start"
    assert found["start:DI"].arrival == pytest.approx(found["end:DI"].arrival - 2 * (LUT + ROUTING))


def test_a_carry_chain_adds_its_chain_delay_not_a_hop_per_cell(tmp_path: Path) -> None:
    """Two CCU2C cells: the second's sum comes through the first's carry out (no routing on
    the chain) and its carry-in-to-sum delay, later than its own input (b, as early as a);
    ``slow_paths`` lists the endpoint over the period once, under its start register."""
    ccu = "CCU2C"
    first = _cell(
        ccu, A0=("input", [20]), CIN=("input", ["0"]), COUT=("output", [22]), S0=("output", [23])
    )
    second = _cell(ccu, A0=("input", [21]), CIN=("input", [22]), S0=("output", [24]))
    cells = [
        _ff("a_TRELLIS_FF_Q", 30, 20),
        _ff("b_TRELLIS_FF_Q", 30, 21),
        ("c0", first),
        ("c1", second),
        _ff("sum_TRELLIS_FF_Q", 24, 30),
    ]
    module = _module(cells, {"a": 20, "b": 21, "carry": 22, "s0": 23, "s1": 24, "sum": 30})
    found = {e.name: e for e in endpoints(module)}
    carry_out = FF + ROUTING + DELAYS["CARRY_IN"]  # a's input to the first cell's carry out
    assert found["sum:DI"].arrival == pytest.approx(carry_out + DELAYS["CARRY_SUM"] + ROUTING)
    flat = tmp_path / "flat.json"
    flat.write_text(json.dumps({"modules": {"top": module}}))
    report = slow_paths(flat, "top", period_ns=found["sum:DI"].arrival - 0.1)
    assert report["over"] == 1 and report["endpoints"] == 3
    assert report["by_start"] == [
        {"endpoint": "sum:DI", "arrival_ns": round(found["sum:DI"].arrival, 1), "start": "a",
         "cells": 3}
    ]  # fmt: skip
