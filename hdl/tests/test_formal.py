"""The formal checks (hdl/formal/, docs/formal.md) at the smallest parameter sets: every
arbiter property proven by k-induction, its covers reached, and a broken arbiter refuted with a
counterexample trace that shows the broken output."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconverge.golden.blocks.arbiter import ArbiterParams
from reconverge.hdl.blocks.arbiter import Arbiter
from reconverge.hdl.formal import arbiter
from reconverge.hdl.formal.check import FAIL, PASS, Harness, run

pytestmark = pytest.mark.formal
DEPTH = 20


def top(params: ArbiterParams, name: str, make: type[Arbiter] = Arbiter) -> Harness:
    return arbiter.harnesses(params, make)[name]()


@pytest.mark.parametrize("params", [ArbiterParams(4, 4, 0), ArbiterParams(5, 4, 1)],
                         ids=lambda p: p.describe())  # fmt: skip
@pytest.mark.parametrize("name", list(arbiter.PROPERTIES))
def test_arbiter_property_is_proven(params: ArbiterParams, name: str, tmp_path: Path) -> None:
    outcome = run(top(params, name), "prove", DEPTH, tmp_path)
    assert outcome.status == PASS, outcome.log
    assert outcome.trace is None


def test_arbiter_covers_are_reached(tmp_path: Path) -> None:
    outcome = run(top(ArbiterParams(4, 4, 0), "covers"), "cover", DEPTH, tmp_path)
    assert outcome.status == PASS, outcome.log
    assert len(list((tmp_path / "cover" / "engine_0").glob("trace*.vcd"))) == 3


class _TieToLowerInput(Arbiter):
    """A broken arbiter: on equal keys only the lower input is selected."""

    def _merge(self, m, level, i, a, b):  # type: ignore[no-untyped-def]
        (va, ka, _), (vb, kb, mb) = a, b
        return super()._merge(m, level, i, a, (vb & ~(va & (ka == kb)), kb, mb))


def test_a_broken_arbiter_is_refuted_with_a_trace(tmp_path: Path) -> None:
    """The tie-breaking bug breaks the winning group (two inputs on the minimum, only one in
    the mask) but not the winner's key: the checker finds the first, not the second."""
    params = ArbiterParams(4, 4, 0)
    refuted = run(top(params, "mask_is_the_winning_group", _TieToLowerInput), "bmc", DEPTH,
                  tmp_path / "mask")  # fmt: skip
    assert refuted.status == FAIL
    assert refuted.trace is not None and refuted.trace.name == "trace.vcd"
    vcd = refuted.trace.read_text()
    assert "$var" in vcd and " mask " in vcd and " min_key " in vcd
    kept = run(top(params, "winner_is_the_minimum", _TieToLowerInput), "prove", DEPTH,
               tmp_path / "winner")  # fmt: skip
    assert kept.status == PASS
