"""Fitting the model's coefficients to synthesis: non-negative least squares over relative
errors, so a small block weighs as much as a large one, and every primitive costs >= 0."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

import numpy as np

from reconverge.golden.cost.inventory import LOGIC, Kind


def nnls(a: np.ndarray, b: np.ndarray, iterations: int = 500) -> np.ndarray:
    """argmin ||a x - b|| subject to x >= 0 (Lawson and Hanson's active-set method)."""
    n = a.shape[1]
    x = np.zeros(n)
    passive = np.zeros(n, dtype=bool)
    w = a.T @ (b - a @ x)
    tolerance = 1e-10 * max(1.0, float(np.abs(a).max()))
    for _ in range(iterations):
        if passive.all() or (w[~passive] <= tolerance).all():
            break
        j = int(np.argmax(np.where(passive, -np.inf, w)))
        passive[j] = True
        while True:
            z = np.zeros(n)
            z[passive] = np.linalg.lstsq(a[:, passive], b, rcond=None)[0]
            if (z[passive] > 0).all():
                x = z
                break
            shrinking = passive & (z <= 0)
            alpha = np.min(x[shrinking] / (x[shrinking] - z[shrinking]))
            x = x + alpha * (z - x)
            passive &= x > tolerance
            x[~passive] = 0.0
        w = a.T @ (b - a @ x)
    return x


#: What one primitive costs in a textbook mapping: the values the fit is pulled towards where
#: the rows cannot tell two primitives apart (adders and comparators come together in these
#: designs, so an unregularised fit may price one of them at zero).
PRIORS: dict[str, dict[Kind, float]] = {
    # ECP5: the flip-flop has its own enable and reset; a 2:1 multiplexer bit is 3 of a LUT4's
    # inputs; a LUT4 takes three 2-input gates or two bits of an XNOR-AND comparison; a CCU2C
    # adds two bits in two LUT4s; a multiplier goes to a DSP block (its glue only).
    "luts": {Kind.FF: 0.1, Kind.MUX: 0.5, Kind.GATE: 0.33, Kind.EQ: 0.67, Kind.ADD: 1.0,
             Kind.MUL: 0.02},
    # static CMOS (Yosys ``stat -tech cmos``): a D flip-flop with its enable multiplexer, a
    # 2:1 multiplexer, an AND/OR, an XNOR with its share of the AND tree, a full adder, an
    # AND and a full adder per partial product
    "transistors": {Kind.FF: 40.0, Kind.MUX: 12.0, Kind.GATE: 6.0, Kind.EQ: 12.0,
                    Kind.ADD: 28.0, Kind.MUL: 34.0},
}  # fmt: skip
#: How strongly the fit keeps to :data:`PRIORS`: each coefficient's relative distance from
#: its prior weighs as one row's relative error times this.
PRIOR_STRENGTH = 0.3


def fit(
    counts: Sequence[Counter[Kind]],
    measured: Sequence[float],
    prior: Mapping[Kind, float] | None = None,
    strength: float = PRIOR_STRENGTH,
) -> dict[Kind, float]:
    """Per-primitive costs that best predict ``measured`` from ``counts`` in relative terms
    (each row divided by its measurement), pulled towards ``prior`` with ``strength``; kinds
    no row uses cost 0."""
    used = [k for k in LOGIC if any(c[k] for c in counts)]
    target = np.asarray(measured, dtype=float)
    a = np.array([[c[k] for k in used] for c in counts], dtype=float) / target[:, None]
    b = np.ones(len(counts))
    if prior and strength:
        p = np.array([prior[k] for k in used])
        a = np.vstack([a, np.sqrt(strength) * np.diag(1 / p)])
        b = np.concatenate([b, np.sqrt(strength) * np.ones(len(used))])
    x = nnls(a, b)
    return {k: float(v) for k, v in zip(used, x, strict=True)}
