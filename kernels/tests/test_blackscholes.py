"""The blackScholes kernel (seed 001 BS): the oracle's fixed-point prices against the closed form
in floating point (``math.erf`` for N, not the kernel's polynomial) within a cent, and
put-call parity (call - put = S - X e^-RT) within a cent. (The compiled kernel under every
allocator and every policy: kernels/tests/test_suite.py and test_suite_sm.py, as for every
suite kernel.)"""

from __future__ import annotations

import math

import pytest

from reconverge.kernels import blackscholes as bs

SPEC = bs.SPEC
CENT = 1 << 8  # the prices are Q8 cents
TOLERANCE = CENT


def normal(d: float) -> float:
    return (1 + math.erf(d / math.sqrt(2))) / 2


def closed_form(s: float, x: float, t: float) -> tuple[float, float, float]:
    """Call, put (in cents) and X e^-RT for S and X in cents, T in years."""
    r, v = bs.RISKFREE, bs.VOLATILITY
    d1 = (math.log(s / x) + (r + v * v / 2) * t) / (v * math.sqrt(t))
    d2 = d1 - v * math.sqrt(t)
    xe = x * math.exp(-r * t)
    return s * normal(d1) - xe * normal(d2), xe * normal(-d2) - s * normal(-d1), xe


@pytest.mark.parametrize(("size", "seed"), [(SPEC.default_size, 0), (9, 3), (SPEC.eval_size, 0)])
def test_oracle_prices_match_the_closed_form(size: int, seed: int) -> None:
    case = SPEC.case(size, seed)
    args = case.args
    assert args["n"] == bs.OPTIONS * case.grid * case.block  # every thread prices OPTIONS
    ref = SPEC.reference(size, seed)
    for i in range(args["n"]):
        s, x = int(args["s"][i]), int(args["x"][i])
        call, put, xe = closed_form(s, x, int(args["t"][i]) / 365)
        got_call, got_put = int(ref["call"][i]), int(ref["put"][i])
        assert abs(got_call - call * CENT) <= TOLERANCE, (i, got_call / CENT, call)
        assert abs(got_put - put * CENT) <= TOLERANCE, (i, got_put / CENT, put)
        assert abs(got_call - got_put - (s - xe) * CENT) <= TOLERANCE, i
