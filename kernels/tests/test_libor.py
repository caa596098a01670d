"""The libor kernel (seed 001 Table 5.2 LIB): the oracle's Q16 rates and portfolio values
against the same LIBOR market model in float64 (numpy, every path at once, Giles' formulas
with ``exp`` and division), on the same normals, volatilities and swaptions. (The compiled
kernel under every allocator and every policy: kernels/tests/test_suite.py and
test_suite_sm.py, as for every suite kernel.)"""

from __future__ import annotations

import numpy as np
import pytest

from reconverge.kernels import libor
from reconverge.kernels.suite import Case

SPEC = libor.SPEC
DELTA = 0.25
#: Fixed-point error allowed: rates (absolute; a Q16 step is 1.5e-5), path values (absolute, in
#: the payoff's units of 100 x notional, values up to about 10: 15 swaptions x 100 make one Q16
#: step of a swap value 0.023, and the truncations of B, S and the discount add up to about 4)
#: and their mean (the Monte Carlo price: the truncations bias it by about one step).
RATE_TOL, VALUE_TOL, PRICE_TOL = 2e-4, 0.1, 0.04


def model(case: Case) -> tuple[np.ndarray, np.ndarray]:
    """Final forward rates (N x paths) and discounted portfolio values (paths) in float64."""
    a = case.args
    q = float(libor.ONE)
    npath = case.grid * case.block
    rates = a["rates"].reshape(libor.N, npath) / q
    z = a["z"].reshape(libor.NMAT, npath) / q
    lam = a["lam"] / q
    swaptions = a["swaptions"].reshape(-1, 2)
    for n in range(libor.NMAT):
        sqez = np.sqrt(DELTA) * z[n]
        v = np.zeros(npath)
        for i in range(n + 1, libor.N):
            con1 = DELTA * lam[i - n - 1]
            v += con1 * rates[i] / (1 + DELTA * rates[i])
            rates[i] *= np.exp(con1 * v + lam[i - n - 1] * (sqez - 0.5 * con1))
    b = np.cumprod(1 / (1 + DELTA * rates[libor.NMAT :]), axis=0)
    s = np.cumsum(DELTA * b, axis=0)
    value = np.zeros(npath)
    for maturity, rate in swaptions:
        swapval = b[maturity - 1] + rate / q * s[maturity - 1] - 1
        value += np.where(swapval < 0, -100 * swapval, 0)
    value /= np.prod(1 + DELTA * rates[: libor.NMAT], axis=0)
    return rates, value


@pytest.mark.parametrize(("size", "seed"), [(SPEC.default_size, 0), (13, 3), (SPEC.eval_size, 0)])
def test_oracle_is_the_float_model(size: int, seed: int) -> None:
    case = SPEC.case(size, seed)
    ref = SPEC.reference(size, seed)
    rates, value = model(case)
    q = float(libor.ONE)
    assert np.abs(ref["rates"].reshape(rates.shape) / q - rates).max() < RATE_TOL
    assert np.abs(ref["value"] / q - value).max() < VALUE_TOL
    assert abs(ref["value"].mean() / q - value.mean()) < PRICE_TOL
    assert 0 < (value > 0).sum() < len(value)  # some paths pay, some do not
