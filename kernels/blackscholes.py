"""Black-Scholes option pricing after NVIDIA's CUDA sample (seed 001 Sec 5.3, Table 5.2 BS): the
closed form for a European call and put,

    d1 = (ln(S / X) + (R + V^2 / 2) T) / (V sqrt(T)),  d2 = d1 - V sqrt(T),
    call = S N(d1) - X e^(-RT) N(d2),  put = X e^(-RT) (1 - N(d2)) - S (1 - N(d1)),

with the cumulative normal N from the Abramowitz-Stegun polynomial as the sample computes it.
"To allow for arbitrary numbers of options, each thread processes more than one index": a
grid-stride loop, and the option count is a multiple of the thread count, so every thread runs
it equally often. "No branch instruction is involved here": everything else is branch-free
(the square root's digits, the exponent of the logarithm, N(-d) = 1 - N(d) by arithmetic on
comparison results; the loops have constant trip counts).

Fixed point (the kernel language has int32 only): prices in cents in, Q8 cents out; T in days
in, Q16 years inside; R and V Q16 (the sample's constants); d in Q12; N and the polynomial Q15.
sqrt(T) takes the binary digits of sqrt(T 2^26) (Q13); log2(S / X) the exponent of the Q19
ratio and a 64-step table of log2 on [1, 2); e^-y = 2^(-y log2 e) a right shift and a 64-step
table of 2^-f on [0, 1), both tables interpolated linearly. A product ``a * b`` of a Q15
fraction ``b`` too wide for int32 is taken as ``(a >> 15) * b + ((a & 0x7FFF) * b >> 15)``
(exact). The sample's ranges (S $5..30, X $1..100, T 0.25..10 years) keep every intermediate
within int32; ``tests/test_blackscholes.py`` holds the prices to floating point within a cent."""

from __future__ import annotations

import math

import numpy as np

from reconverge.golden.compiler import Array, ctaid, kernel, nctaid, ntid, tid
from reconverge.kernels.suite import Case, SuiteKernel, int32_array

OPTIONS = 2  # options per thread
RISKFREE, VOLATILITY = 0.02, 0.30  # the sample's R and V
R = round(RISKFREE * 2**16)  # Q16
V = round(VOLATILITY * 2**16)
DRIFT = round((RISKFREE + VOLATILITY**2 / 2) * 2**16)  # R + V^2 / 2, Q16
EXP2 = 65  # tab: log2(1 + i/64) Q16 for i = 0..64, then 2^(-i/64) Q15 for i = 0..64
LN2 = round(math.log(2) * 2**15)  # Q15
LOG2E = round(math.log2(math.e) * 2**13)  # Q13
P = round(0.2316419 * 2**16)  # Q16
A1, A2, A3, A4, A5 = (round(a * 2**15) for a in (
    0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429))  # fmt: skip
RSQRT2PI = round(2**15 / math.sqrt(2 * math.pi))  # Q15
ONE = 1 << 15  # 1.0 in Q15
DMAX = 8 << 12  # |d| beyond 8 (N within 1e-15 of 0 or 1) is taken as 8


@kernel
def blackscholes(call: Array, put: Array, s: Array, x: Array, t: Array, tab: Array, n: int):
    i = ctaid() * ntid() + tid()
    while i < n:
        years = (t[i] << 16) // 365
        rem = years << 10  # sqrt(T 2^26) digit by digit: sqrt(T) in Q13
        root = 0
        bit = 1 << 28
        for _ in range(15):
            trial = root + bit
            take = -(rem >= trial)
            rem -= trial & take
            root = (root >> 1) + (bit & take)
            bit >>= 2
        vs = (V * root) >> 13  # V sqrt(T), Q16
        rt = ((years >> 4) * R) >> 12  # R T, Q16
        q = (s[i] << 19) // x[i]  # S / X, Q19
        e = 0
        for b in range(4, -1, -1):  # e = floor(log2(q))
            e += ((q >> (e + (1 << b))) != 0) << b
        m = q << (30 - e)  # the mantissa, its leading one at bit 30
        j = (m >> 24) & 63
        f = (m >> 8) & 0xFFFF
        lg = ((e - 19) << 16) + tab[j] + (((tab[j + 1] - tab[j]) * f) >> 16)  # log2(S/X) Q16
        num = (lg >> 15) * LN2 + (((lg & 0x7FFF) * LN2) >> 15) + (((years >> 4) * DRIFT) >> 12)
        d1 = (num << 12) // vs  # Q12
        w = (rt * LOG2E) >> 13  # e^(-RT) = 2^-w, w Q16
        j = EXP2 + ((w >> 10) & 63)
        disc = (tab[j] + (((tab[j + 1] - tab[j]) * (w & 1023)) >> 10)) >> (w >> 16)
        sq = s[i] << 8  # S, Q8 cents
        xe = ((x[i] << 8) >> 15) * disc + ((((x[i] << 8) & 0x7FFF) * disc) >> 15)  # X e^(-RT)
        c = 0
        p = 0
        for h in range(2):  # N(d1) weighted by S, then N(d2) weighted by -X e^(-RT)
            d = d1 - h * (vs >> 4)
            ad = min(abs(d), DMAX)
            k = (1 << 30) // ((1 << 15) + ((P * ad) >> 13))  # 1 / (1 + P |d|), Q15
            poly = A4 + ((k * A5) >> 15)
            poly = A3 + ((k * poly) >> 15)
            poly = A2 + ((k * poly) >> 15)
            poly = A1 + ((k * poly) >> 15)
            poly = (k * poly) >> 15
            w = (((ad * ad) >> 13) * LOG2E) >> 9  # e^(-d^2/2) = 2^-w, w Q16
            j = EXP2 + ((w >> 10) & 63)
            g = (tab[j] + (((tab[j + 1] - tab[j]) * (w & 1023)) >> 10)) >> min(w >> 16, 31)
            nd = (((RSQRT2PI * g) >> 15) * poly) >> 15  # N(-|d|)
            nd += (d > 0) * (ONE - 2 * nd)  # N(d)
            weight = sq - h * (sq + xe)
            c += (weight >> 15) * nd + (((weight & 0x7FFF) * nd) >> 15)
            p -= (weight >> 15) * (ONE - nd) + (((weight & 0x7FFF) * (ONE - nd)) >> 15)
        call[i] = c
        put[i] = p
        i += ntid() * nctaid()


def tables() -> np.ndarray:
    """``tab``: log2(1 + i/64) (Q16), then 2^(-i/64) (Q15), i = 0..64."""
    log2 = [round(math.log2(1 + i / 64) * 2**16) for i in range(65)]
    return int32_array(log2 + [round(2 ** (-i / 64) * 2**15) for i in range(65)])


def make(size: int, seed: int) -> Case:
    """``size`` threads (rounded up to whole blocks of at most 256), ``OPTIONS`` options each,
    in the sample's ranges: S in $5..30, X in $1..100, T in 0.25..10 years."""
    rng = np.random.default_rng(seed)
    block = min(size, 256)
    grid = -(-size // block)
    n = OPTIONS * grid * block
    return Case(
        {"call": np.zeros(n, np.int32), "put": np.zeros(n, np.int32),
         "s": int32_array(rng.integers(500, 3001, n)),
         "x": int32_array(rng.integers(100, 10001, n)),
         "t": int32_array(rng.integers(91, 3651, n)), "tab": tables(), "n": n},
        grid=grid, block=block,
    )  # fmt: skip


SPEC = SuiteKernel(
    "blackScholes", blackscholes, make, 8, "seed 001 Table 5.2 BS: closed form, no branches",
    eval_size=1536,
    provenance=(
        "Seed 001 Table 5.2 BS (NVIDIA's CUDA sample): the closed-form call and put with a "
        "grid-stride loop and no data branch, as the sample; differs in fixed point, with "
        "table-based log, exp and a digit-by-digit square root instead of floats."
    ),
)  # fmt: skip
