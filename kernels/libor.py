"""LIBOR market model Monte Carlo, after Giles' CUDA code (seed 001 Sec 5.3, Table 5.2 LIB:
"4096 paths for 15 options"): one path per thread. The path calculation moves the ``N``
forward rates over ``NMAT`` timesteps of ``DELTA`` years (the log-normal drift of each rate
sums over the rates before it), with one normal ``z`` per step; the portfolio prices 15
swaptions on the rates past ``NMAT``: the discount factors ``B`` and annuities ``S`` of each
maturity, each swaption's payoff ``max(-swapval, 0)`` with ``swapval = B + K S - 1``, then the
discount to time 0. As in Giles' code the rates and ``B``, ``S`` live in (global) memory, per
path; the only branch on data is the payoff's: low divergence, as Table 5.2 says.

Fixed point Q16 (``ONE``), sized so that no product leaves 32 bits: ``DELTA = 1/4`` is a
shift, ``1/(1 + x)`` is ``1 - x/(1 + x)``, ``exp`` its Taylor polynomial to degree 4 (the
exponents stay below 0.35 with ``z`` clipped to 3), the payoffs are summed before the final
``100 *``. Giles uses N = 80 rates, 40 steps; here N = 8, 4 (maturities scaled by 1/10), so
that a path fits the evaluation's instruction budget. ``z`` comes from the host (Giles' sample
fills it with normals too, where the real code has a Sobol generator)."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, ctaid, kernel, nctaid, ntid, tid
from reconverge.kernels.suite import Case, SuiteKernel, int32_array, split_threads

Q = 16
ONE = 1 << Q
N, NMAT = 8, 4  # forward rates, timesteps (of DELTA = 1/4 year)
NS = N - NMAT  # swaption maturities
NOPT = 15  # swaptions
MATURITIES = (1, 1, 1, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4)  # Giles': 4, 8, 20, 28, 40 of 40
SWAPRATES = (0.045, 0.05, 0.055) * 5
L0 = 0.05  # the initial rates
ZCLIP = 3.0
THIRD = ONE // 3


@kernel
def libor(value: Array, rates: Array, bs: Array, z: Array, lam: Array, swaptions: Array):
    p = ctaid() * ntid() + tid()
    npath = nctaid() * ntid()
    for n in range(NMAT):  # the path: rates[i * npath + p] is forward rate i
        sqez = z[n * npath + p] >> 1  # sqrt(DELTA) z
        v = 0
        for i in range(n + 1, N):
            lm = lam[i - n - 1]
            con1 = lm >> 2  # DELTA lambda
            a = i * npath + p
            li = rates[a]
            v += con1 * li // (ONE + (li >> 2))
            x = (con1 * v >> Q) + (lm * (sqez - (con1 >> 1)) >> Q)
            e = ONE + (x >> 2)  # vrat = e^x = 1 + x (1 + x/2 (1 + x/3 (1 + x/4)))
            e = ONE + ((x * e >> Q) * THIRD >> Q)
            e = ONE + (x * e >> (Q + 1))
            e = ONE + (x * e >> Q)
            rates[a] = li * e >> Q
    b = ONE  # the portfolio: discount factors and annuities of the maturities past NMAT
    s = 0
    for n in range(NMAT, N):
        dl = rates[n * npath + p] >> 2
        b -= b * dl // (ONE + dl)
        s += b >> 2
        o = (n - NMAT) * npath + p
        bs[o] = b
        bs[o + NS * npath] = s
    v = 0
    for i in range(NOPT):
        o = (swaptions[2 * i] - 1) * npath + p
        swapval = bs[o] + (swaptions[2 * i + 1] * bs[o + NS * npath] >> Q) - ONE
        if swapval < 0:
            v -= swapval
    for n in range(NMAT):
        dl = rates[n * npath + p] >> 2
        v -= v * dl // (ONE + dl)
    value[p] = 100 * v


def q16(x: object) -> np.ndarray:
    return int32_array(np.round(np.asarray(x, dtype=np.float64) * ONE))


def lambdas() -> np.ndarray:
    """The volatilities of the rates by time to their fixing (Giles: 0.2 for all), falling."""
    return q16(0.25 - 0.01 * np.arange(N))


def make(size: int, seed: int) -> Case:
    rng = np.random.default_rng(seed)
    grid, block = split_threads(size)
    npath = grid * block
    z = np.clip(rng.standard_normal((NMAT, npath)), -ZCLIP, ZCLIP)
    swaptions = np.array([MATURITIES, np.round(np.array(SWAPRATES) * ONE)]).T
    return Case(
        {"value": np.zeros(npath, np.int32), "rates": q16(np.full(N * npath, L0)),
         "bs": np.zeros(2 * NS * npath, np.int32), "z": q16(z.ravel()), "lam": lambdas(),
         "swaptions": int32_array(swaptions.ravel())},
        grid=grid, block=block,
    )  # fmt: skip


SPEC = SuiteKernel(
    "libor",
    libor,
    make,
    4,
    "seed 001 Table 5.2 LIB: LIBOR Monte Carlo, a payoff max",
    eval_size=768,
    provenance=(
        "Seed 001 Table 5.2 LIB (Giles' LIBOR market model Monte Carlo): one path per thread, "
        "the payoff's max the only data branch; differs in Q16 fixed point and 8 rates over 4 "
        "steps (Giles: 80 rates, 40 steps)."
    ),
)
