"""Fixed-point Mandelbrot (Q10): one pixel per thread, iterating until the point escapes or
``max_iter``: a data-dependent loop exit, the classic divergent workload."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, ctaid, kernel, ntid, tid
from reconverge.kernels.suite import Case, SuiteKernel

FRAC = 10


@kernel
def mandelbrot(out: Array, width: int, height: int, max_iter: int):
    p = ctaid() * ntid() + tid()
    if p < width * height:
        x = p % width
        y = p // width
        cx = ((3 * x) << FRAC) // width - (2 << FRAC)
        cy = ((2 * y) << FRAC) // height - (1 << FRAC)
        zx = 0
        zy = 0
        i = 0
        while i < max_iter:
            x2 = (zx * zx) >> FRAC
            y2 = (zy * zy) >> FRAC
            if x2 + y2 > (4 << FRAC):
                break
            zy = ((zx * zy) >> (FRAC - 1)) + cy
            zx = x2 - y2 + cx
            i += 1
        out[p] = i


def make(size: int, seed: int) -> Case:
    width, height = size, max(2, size // 2 + seed % 3)
    block = min(64, max(16, size))  # full warps of 32 from size 32 on
    grid = -(-(width * height) // block)
    return Case(
        {"out": np.zeros(width * height, np.int32), "width": width, "height": height,
         "max_iter": 24},
        grid=grid, block=block,
    )  # fmt: skip


SPEC = SuiteKernel(
    "mandelbrot",
    mandelbrot,
    make,
    8,
    "fixed-point Mandelbrot: divergent exits",
    eval_size=128,
    provenance=(
        "Seed 002 Table 1 MAND in part: the data-dependent escape loop of Mandelbrot; differs "
        "in one pixel per thread, where MAND assigns several pixels to each thread (the "
        "benchmarks kernel mand has that shape)."
    ),
)
