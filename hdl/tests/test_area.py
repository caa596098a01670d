"""``make area`` (golden/cost/area_report.py) keeps its results between runs: a stored result is
reused only while the design digest it carries is what the design gives now, and a run with a budget
renders what it has and lists the rest. The synthesis itself is not run here (hdl/sm/tests/
test_sm_tools.py runs the flow); the stored results are written by the test."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reconverge.golden.blocks.units import sm_lookups
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


def test_variant_runs_only_the_named_sm_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--variant`` synthesises the SM rows it names and nothing else (here each row's
    synthesis records that it ran instead); an unknown label is refused with the list."""
    blocks, sm = area.rows()
    ran: list[str] = []

    def fake(row: area.Row) -> area.Row:
        def run() -> dict[str, object]:
            ran.append(row.label)
            return stored(row, "0" * 64, 5) | {"variant": row.label}

        return area.Row(row.key, row.block, row.label, row.design, run)

    monkeypatch.setattr(area, "rows", lambda: ([fake(r) for r in blocks], [fake(r) for r in sm]))
    monkeypatch.setattr(area, "render", lambda results, pending=None: "")  # (not this test's)
    argv = [str(tmp_path / "area.md"), "--variant", "ppc-implicit", "--variant", "sps +hws"]
    assert area.main(argv) == 0
    assert ran == ["ppc-implicit", "sps +hws"]
    with pytest.raises(SystemExit):
        area.main([str(tmp_path / "area.md"), "--variant", "ppc-explicit"])
    assert "no SM row ppc-explicit: the rows are sps, stackless" in capsys.readouterr().err


def test_digest_follows_the_design() -> None:
    blocks, _ = area.rows()
    texts = [rtlil_text(*row.design()) for row in blocks[:2]]
    assert design_digest(texts[0]) == design_digest(texts[0])
    assert design_digest(texts[0]) != design_digest(texts[1])


def sm_result(variant: str, luts: int, ffs: int, fmax: float | None, unit: int, sb: int) -> dict:
    """An SM row of the shape synth_sm gives, with a unit and a scoreboard submodule."""

    def res(luts: int) -> dict[str, int]:
        return {"luts": luts, "flip_flops": 1, "ebr": 0, "lutram": 0}

    subs = {"core": res(unit + sb + 10), "core.unit0": res(unit), "core.scoreboard": res(sb)}
    ecp5 = {"luts": luts, "flip_flops": ffs, "fits": fmax is not None, "fmax_mhz": fmax,
            "submodules": subs}  # fmt: skip
    return {"block": "sm", "variant": variant, "ecp5": ecp5}


def test_mechanism_costs_are_ratios_to_the_sps_row() -> None:
    rows = [
        sm_result("sps", 1000, 400, 50.0, 200, 100),
        sm_result("mp", 1500, 500, 40.0, 300, 250),
        sm_result("mp-orec", 2000, 600, None, 500, 250),  # does not fit: no Fmax ratio
    ]
    table = [line for line in area.mechanism_costs(rows, area.SM_AREA) if line.startswith("| ")]
    cells = {line.split(" | ")[0][2:]: line.split(" | ")[1:] for line in table[1:]}
    ports = {v.label: sm_lookups(area.sm_params(area.SM_AREA, v)) for v in area.SM_AREA.variants}
    assert ports["mp"] > ports["sps"]  # a lookup per buffer entry of each split slot
    sps = ["1.00x", "1.00x", "1.00x", "200 (1.00x)", f"100 (1.00x; {ports['sps']} lookups)"]
    assert cells["sps"][:5] == sps
    mp = ["1.50x", "1.25x", "0.80x", "300 (1.50x)", f"250 (2.50x; {ports['mp']} lookups)"]
    assert cells["mp"][:5] == mp
    assert cells["mp-orec"][:4] == ["2.00x", "1.50x", "-", "500 (2.50x)"]
    assert cells["mp"][5] == "-"  # no squeezer
    assert "1.92x" in cells["mp"][-1]  # seed 002 Sec 6.6's claim beside it
    assert area.mechanism_costs(rows[1:], area.SM_AREA) == []  # nothing to compare with
