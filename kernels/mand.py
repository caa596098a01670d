"""Seed 002's MAND (Sec 5, Table 1: "Mandelbrot computes a visualization of mandelbrot set in a
complex cartesian space. It partitions the space into pixels and assigns several pixels to
each thread"): thread ``t`` of ``T`` renders pixels ``t, t + T, t + 2T, ...`` (a grid-stride
loop, coalesced), each an escape-time loop of its own length, so one thread's pixels take
different numbers of iterations and the threads of a warp leave their escape loops at
different times for every pixel: the unstructured, interleavable divergence seed 002 Sec 6.2
reports for MAND. As Mandelbrot renderers do, a pixel in the main cardioid (which never
escapes) is settled by a closed-form test and ``continue`` before any iteration.

Fixed point Q12. The escape loop is a device function that keeps ``zx^2`` and ``zy^2`` between
iterations; its values stay within int32: |z| <= 2 before a step and |c| < 2.5 bound every
product by 2^30, and the cardioid test's by 2^31 over the window ``make`` picks
(``tests/test_mand.py`` checks). ``out[p]`` is pixel ``p``'s escape count (``max_iter`` if it
never escapes), ``iters[t]`` the iterations thread ``t`` ran."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, ctaid, device, kernel, nctaid, ntid, tid
from reconverge.kernels.suite import Case, SuiteKernel

FRAC = 12
PIXELS_PER_THREAD = 4
MAX_ITER = 48
SPAN_X, SPAN_Y = 3 << FRAC, 5 << (FRAC - 1)  # the window: 3 x 2.5


@device
def escape(cx, cy, max_iter):
    """Iterations of z = z^2 + c from z = 0 until |z| > 2, at most ``max_iter``."""
    zx = 0
    zy = 0
    x2 = 0
    y2 = 0
    i = 0
    while i < max_iter and x2 + y2 <= 4 << FRAC:
        zy = ((zx * zy) >> (FRAC - 1)) + cy
        zx = x2 - y2 + cx
        x2 = (zx * zx) >> FRAC
        y2 = (zy * zy) >> FRAC
        i += 1
    return i


@kernel
def mand(out: Array, iters: Array, width: int, height: int, x0: int, y0: int, max_iter: int):
    t = ctaid() * ntid() + tid()
    threads = nctaid() * ntid()
    total = 0
    p = t
    while p < width * height:
        cx = x0 + SPAN_X * (p % width) // width
        cy = y0 + SPAN_Y * (p // width) // height
        xq = cx - (1 << (FRAC - 2))
        y2 = (cy * cy) >> FRAC
        q = ((xq * xq) >> FRAC) + y2
        if (q * (q + xq)) >> FRAC < y2 >> 2:  # in the main cardioid: it never escapes
            out[p] = max_iter
            p += threads
            continue
        i = escape(cx, cy, max_iter)
        out[p] = i
        total += i
        p += threads
    iters[t] = total


def make(size: int, seed: int) -> Case:
    """A ``2 size`` x ``size`` image of the window at (-2.25, -1.25) (nudged by ``seed`` by
    up to 1/16), ``PIXELS_PER_THREAD`` pixels per thread in blocks of 32 or 64 threads (the
    last thread may have fewer)."""
    rng = np.random.default_rng(seed)
    width, height = 2 * size, size
    block = 32 if size < 32 else 64
    grid = max(1, -(-width * height // (PIXELS_PER_THREAD * block)))
    nudge = rng.integers(-(1 << (FRAC - 4)), 1 << (FRAC - 4), 2, endpoint=True)
    return Case(
        {"out": np.zeros(width * height, np.int32), "iters": np.zeros(grid * block, np.int32),
         "width": width, "height": height, "x0": -(9 << (FRAC - 2)) + int(nudge[0]),
         "y0": -(5 << (FRAC - 2)) + int(nudge[1]), "max_iter": MAX_ITER},
        grid=grid, block=block,
    )  # fmt: skip


SPEC = SuiteKernel(
    "mand", mand, make, 8, "seed 002 MAND: several pixels per thread", eval_size=56,
    provenance=(
        "Seed 002 Table 1 MAND: several pixels per thread (a grid-stride loop of 4), each an "
        "escape loop of its own length, so a thread's iterations vary over its pixels; "
        "differs in Q12 fixed point, a main-cardioid shortcut of our own, and 48 iterations."
    ),
)  # fmt: skip
