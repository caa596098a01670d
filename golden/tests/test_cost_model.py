"""The analytical area model's machinery (golden/cost): the inventory arithmetic, the
non-negative fit, and the shipped coefficients against the synthesis rows they were fitted to."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconverge.golden.cost.fit import fit, nnls
from reconverge.golden.cost.inventory import Inventory, Kind, decode, reduce, select
from reconverge.golden.cost.model import COEFFICIENTS, Area, coefficients


def test_inventory_parts_groups_and_totals() -> None:
    inv = Inventory().add("tables/st", ff=10, eq=4).add("tables/rt", ff=6).add("select", mux=3)
    assert inv.total() == Counter({Kind.FF: 16, Kind.EQ: 4, Kind.MUX: 3})
    assert dict(inv.groups()) == {
        "tables": Counter({Kind.FF: 16, Kind.EQ: 4}),
        "select": Counter({Kind.MUX: 3}),
    }
    outer = Inventory().include(inv, prefix="unit")
    assert set(outer.parts) == {"unit/tables/st", "unit/tables/rt", "unit/select"}
    assert Inventory.of(inv.json()).total() == inv.total()
    with pytest.raises(ValueError, match="negative"):
        Inventory().add("x", ff=-1)
    assert select(4, 8) == 24 and select(1, 8) == 0 and reduce(5) == 4


def test_decode_counts_a_decoder_or_separate_ands_whichever_is_smaller() -> None:
    # two predecoders and an AND per line (Yosys's generic flow: 12, 24 and 56 cells)
    assert [decode(b) for b in (1, 2, 3, 4, 5)] == [0, 4, 12, 24, 52]
    # a few constants against a wide value: one AND tree each
    assert decode(32, 2) == 2 * 31 and decode(5, 2) == 2 * 4
    assert decode(3, 7) == 7 + 4 * 1 + 2 * 0


@given(st.integers(1, 12), st.integers(1, 64))
def test_decode_is_never_more_than_one_and_tree_per_line(bits: int, lines: int) -> None:
    assert 0 <= decode(bits, lines) <= lines * reduce(bits)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_nnls_finds_a_nonnegative_exact_solution(seed: int) -> None:
    rng = np.random.default_rng(seed)
    a = rng.random((12, 4))
    truth = rng.random(4) * (rng.random(4) > 0.4)  # some coefficients exactly zero
    x = nnls(a, a @ truth)
    assert (x >= 0).all()
    assert np.allclose(x, truth, atol=1e-8)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_nnls_is_optimal_under_the_constraint(seed: int) -> None:
    """KKT: the gradient vanishes on the positive coefficients and points up on the zeros."""
    rng = np.random.default_rng(seed)
    a, b = rng.standard_normal((10, 5)), rng.standard_normal(10)
    x = nnls(a, b)
    gradient = a.T @ (a @ x - b)
    assert (x >= 0).all()
    assert np.allclose(gradient[x > 0], 0, atol=1e-8)
    assert (gradient[x == 0] >= -1e-8).all()


def test_fit_recovers_per_primitive_costs() -> None:
    truth = {Kind.FF: 20.0, Kind.MUX: 12.0, Kind.EQ: 18.0}
    rng = np.random.default_rng(7)
    rows = [Counter({k: int(rng.integers(1, 500)) for k in truth}) for _ in range(8)]
    measured = [sum(truth[k] * c[k] for k in truth) for c in rows]
    got = fit(rows, measured)
    assert set(got) == set(truth)  # kinds no row uses are not priced
    assert all(got[k] == pytest.approx(v) for k, v in truth.items())


def test_the_prior_decides_between_primitives_the_rows_cannot_tell_apart() -> None:
    """Adders always beside comparators: any split of their cost fits; the prior picks one."""
    rows = [Counter({Kind.ADD: n, Kind.EQ: n}) for n in (10, 20, 40)]
    measured = [3.0 * n for n in (10, 20, 40)]
    got = fit(rows, measured, {Kind.ADD: 2.0, Kind.EQ: 1.0}, strength=0.01)
    assert got[Kind.ADD] + got[Kind.EQ] == pytest.approx(3.0, rel=0.01)
    assert got[Kind.ADD] == pytest.approx(2.0, rel=0.05)


def test_shipped_coefficients_are_the_fit_of_the_shipped_rows() -> None:
    """coefficients.json is what calibrate's fit makes of calibration.json (nothing edited by
    hand), and its recorded ratios are what those coefficients give."""
    from reconverge.golden.cost.calibrate import CALIBRATION, fit_rows

    rows = json.loads(CALIBRATION.read_text())["rows"]
    coeffs, ratios = fit_rows(rows)
    shipped = coefficients()
    for target, rates in coeffs.per.items():
        for kind, value in rates.items():
            assert shipped.per[target][kind] == pytest.approx(value, abs=1e-4)
    assert json.loads(COEFFICIENTS.read_text())["ratios"] == ratios


def test_area_prices_counts_and_counts_flip_flops() -> None:
    counts = Counter({Kind.FF: 3, Kind.MUX: 2, Kind.RAM: 64})
    a = Area.of(counts)
    c = coefficients()
    assert a.ffs == 3 and a.ram_bits == 64
    assert a.luts == pytest.approx(3 * c.per["luts"].get(Kind.FF, 0) + 2 * c.per["luts"][Kind.MUX])
