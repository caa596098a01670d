"""The mand kernel (seed 002 Table 1 MAND, several pixels per thread): the golden SM under three
policies against the oracle, the oracle against a numpy escape-time renderer of every pixel at
once, and the benchmark's shape: a thread's pixels take different numbers of iterations."""

from __future__ import annotations

import numpy as np
import pytest

from reconverge.golden.testing.benchmarks import c_div, cached_reference, fits_int32, run_policies
from reconverge.kernels import mand

SPEC = mand.SPEC
F = mand.FRAC
#: A size of 512 threads (the eval size's oracle alone takes seconds).
SHAPE_SIZE = 32


def render(size: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Every pixel's escape count and every thread's iterations, computed on the host with all
    pixels at once; asserts that no intermediate leaves int32."""
    case = SPEC.case(size, seed)
    a = case.args
    w, h, n = a["width"], a["height"], a["max_iter"]
    p = np.arange(w * h, dtype=np.int64)
    cx = a["x0"] + c_div(mand.SPAN_X * (p % w), w)
    cy = a["y0"] + c_div(mand.SPAN_Y * (p // w), h)
    xq = cx - (1 << (F - 2))
    q = ((xq * xq) >> F) + ((cy * cy) >> F)
    assert fits_int32(q * (q + xq))
    inside = (q * (q + xq)) >> F < ((cy * cy) >> F) >> 2
    zx, zy, x2, y2 = (np.zeros_like(p) for _ in range(4))
    count = np.zeros_like(p)
    for _ in range(n):
        live = x2 + y2 <= 4 << F
        assert fits_int32(zx * zx, zx * zy, zy * zy)
        zy, zx = (
            np.where(live, ((zx * zy) >> (F - 1)) + cy, zy),
            np.where(live, x2 - y2 + cx, zx),
        )
        x2, y2 = (zx * zx) >> F, (zy * zy) >> F
        count += live
    out = np.where(inside, n, count)
    threads = case.grid * case.block
    iters = np.zeros(threads, np.int64)
    np.add.at(iters, p % threads, np.where(inside, 0, count))
    return out, iters


@pytest.mark.parametrize(("size", "seed"), [(SPEC.default_size, 0), (13, 2), (SHAPE_SIZE, 1)])
def test_oracle_is_the_host_renderer(size: int, seed: int) -> None:
    out, iters = render(size, seed)
    reference = cached_reference(SPEC, size, seed)
    assert reference["out"].tolist() == out.tolist()
    assert reference["iters"].tolist() == iters.tolist()


def test_golden_sm_matches_the_oracle_under_three_policies() -> None:
    run_policies(SPEC)


def test_a_threads_pixels_take_different_iteration_counts() -> None:
    """MAND's shape: every thread renders several pixels, and in most threads they escape after
    different numbers of iterations (or never), so one thread's work varies over its pixels."""
    case = SPEC.case(SHAPE_SIZE, 1)
    out = cached_reference(SPEC, SHAPE_SIZE, 1)["out"]
    threads = case.grid * case.block
    per_thread = [out[t::threads] for t in range(threads)]
    assert min(len(px) for px in per_thread) >= mand.PIXELS_PER_THREAD - 1
    varied = sum(len(set(px.tolist())) > 1 for px in per_thread)
    assert varied > 0.9 * threads, varied
    assert 0 < (out == case.args["max_iter"]).mean() < 0.5  # some never escape, most do
