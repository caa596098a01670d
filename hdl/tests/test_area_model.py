"""The analytical area model (golden/cost) counts what the HDL builds: every block's
inventory, from its parameters alone, against the primitives Yosys finds in the block's
word-level netlist (golden/cost/wordcells.py), at the calibration's parameter sets; and the SM's
inventory stage by stage. FFs and memory bits within 2 %, each other primitive within 15 %, or
within 3 % of all the design's logic primitives where it is a small share of them (Amaranth's
lowering adds a few decoders and widens some sums, which the model does not chase)."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace

import pytest
from amaranth.hdl import Cat, Module, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from reconverge.golden.cli import main
from reconverge.golden.cost.area_report import SM_AREA, sm_params
from reconverge.golden.cost.blocks import inventory
from reconverge.golden.cost.calibrate import block_sets
from reconverge.golden.cost.inventory import Kind, decode, reduce
from reconverge.golden.cost.wordcells import word_inventory
from reconverge.golden.params import CONFIGS
from reconverge.golden.policies import Mechanism, variant
from reconverge.hdl.registry import lookup

SETS = block_sets()
EXACT = {Kind.FF: 0.02, Kind.RAM: 0.02}


def agree(model: Counter[Kind], hdl: Counter[Kind]) -> list[str]:
    """The kinds on which the model's count is off the HDL's by more than allowed."""
    logic = sum(n for k, n in hdl.items() if k not in EXACT)
    off = []
    for kind in Kind:
        m, h = model[kind], hdl[kind]
        allowed = EXACT.get(kind, 0.15) * h
        if kind not in EXACT:
            allowed = max(allowed, 0.03 * logic)
        if abs(m - h) > allowed:
            off.append(f"{kind.value}: model {m}, hdl {h}")
    return off


class _Constants(wiring.Component):
    """A 5 -> 32 decoder, a variable equality and a multiplexer of two constants."""

    def __init__(self) -> None:
        super().__init__({"op": In(5), "a": In(8), "b": In(8), "y": Out(32 + 1 + 3)})

    def elaborate(self, platform: object) -> Module:
        m = Module()
        lines = Cat(self.op == r for r in range(32))
        m.d.comb += self.y.eq(Cat(lines, self.a == self.b, Mux(self.a[0], 5, 0)))
        return m


@pytest.mark.synth
def test_the_word_inventory_folds_constants() -> None:
    # the decoder is gates (no XNOR against a constant; op == 0 Yosys writes as a NOR of the
    # bits), the variable equality one comparator bit per bit, the multiplexer of 5 and 0
    # nothing
    gates = decode(5, 31) + reduce(5)
    assert word_inventory(_Constants(), "constants") == Counter({Kind.GATE: gates, Kind.EQ: 8})


@pytest.mark.synth
@pytest.mark.parametrize("params", SETS, ids=[f"{p.name}-{p.label()}" for p in SETS])
def test_block_inventory_counts_what_the_hdl_builds(params: object) -> None:
    spec = lookup(params.name)  # type: ignore[attr-defined]
    hdl = word_inventory(spec.build(params), spec.name)
    assert agree(inventory(params).total(), hdl) == []  # type: ignore[arg-type]


def test_area_command_prints_the_model_per_part(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["area", "arbiter", "--param", "n=8", "--param", "key_width=16", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["block"] == "arbiter" and r["params"]["n"] == 8
    assert set(r["model"]) == {"compare", "select", "mask", "total"}
    assert r["primitives"]["compare"] == {"add": 7 * 16, "eq": 7 * 16}
    assert r["model"]["total"]["ffs"] == 0
    assert main(["area", "arbiter", "--param", "n=8"]) == 0
    text = capsys.readouterr().out
    assert "compare" in text and "transistors" in text


def test_area_command_refuses_what_it_cannot_model(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["area", "sm", "nested"]) == 2
    assert "give no program" in capsys.readouterr().err
    assert main(["area", "arbiter", "--policy", "mp"]) == 2
    assert "only for sm" in capsys.readouterr().err
    # the evaluation SM would need a scoreboard lookup port per split (48 warps x 32)
    assert main(["area", "sm", "--config", "eval", "--policy", "mp-orec"]) == 2
    assert "cannot be built: lookups must be in 1..128" in capsys.readouterr().err


def _sm_cases() -> list[object]:
    """Every variant of docs/area.md at the synthesis configuration (make test); the
    co-simulation SM under three of them and a 16-wide one (make test-slow: a Yosys run of a
    larger SM each, half a minute to a minute)."""
    cases = [
        pytest.param(sm_params(SM_AREA, m), id=f"synth-{m.label.replace(' +', '-')}")
        for m in SM_AREA.variants
    ]
    cosim = CONFIGS["cosim"]
    for name, hws in (("stackless", False), ("dps", False), ("mp-orec", True)):
        mechanism = Mechanism(variant(name), hws)
        config = cosim.config.with_mechanism(mechanism)
        name = f"cosim-{mechanism.label.replace(' +', '-')}"
        cases.append(pytest.param(replace(cosim, config=config), id=name, marks=pytest.mark.slow))
    wide = replace(cosim.geometry, warp_size=16, simd_width=8, warps=2)
    cases.append(pytest.param(replace(cosim, geometry=wide), id="w16-sps", marks=pytest.mark.slow))
    return cases


@pytest.mark.synth
@pytest.mark.parametrize("params", _sm_cases())
def test_sm_inventory_counts_what_the_hdl_builds_stage_by_stage(params: object) -> None:
    from reconverge.golden.cost.sm import sm, stage
    from reconverge.golden.cost.wordcells import word_inventories
    from reconverge.hdl.sm.top import SM

    hdl = word_inventories(SM(params), "sm", depth=2)
    by_stage: dict[str, Counter[Kind]] = {}
    for name, words in hdl.items():
        if name and stage(name) != "core":
            by_stage.setdefault(stage(name), Counter()).update(words)
    # the core's own logic: the core less its submodules of other stages
    others = (hdl[n] for n in hdl if n.startswith("core.") and stage(n) != "core")
    by_stage["core"] = hdl["core"] - sum(others, Counter())
    model = dict(sm(params).groups())  # type: ignore[arg-type]
    parts = set(model) | {name for name, counts in by_stage.items() if counts}
    off = {p: agree(model.get(p, Counter()), by_stage.get(p, Counter())) for p in parts}
    assert {part: problems for part, problems in off.items() if problems} == {}
