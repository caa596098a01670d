"""A 3-D Laplace stencil with boundary branches: interior points take the 7-point Laplacian,
boundary points copy their input (the boundary test diverges along every face)."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, ctaid, kernel, ntid, tid
from reconverge.kernels.suite import Case, SuiteKernel, int32_array


@kernel
def laplace3d(out: Array, u: Array, nx: int, ny: int, nz: int):
    p = ctaid() * ntid() + tid()
    if p < nx * ny * nz:
        x = p % nx
        y = (p // nx) % ny
        z = p // (nx * ny)
        if x == 0 or y == 0 or z == 0 or x == nx - 1 or y == ny - 1 or z == nz - 1:
            out[p] = u[p]
        else:
            plane = nx * ny
            s = u[p - 1] + u[p + 1] + u[p - nx] + u[p + nx] + u[p - plane] + u[p + plane]
            out[p] = s - 6 * u[p]


def make(size: int, seed: int) -> Case:
    rng = np.random.default_rng(seed)
    nx, ny, nz = size, size - 1, 3
    n = nx * ny * nz
    u = int32_array(rng.integers(-100, 100, n))
    block = 32
    return Case(
        {"out": np.zeros(n, np.int32), "u": u, "nx": nx, "ny": ny, "nz": nz},
        grid=-(-n // block), block=block,
    )  # fmt: skip


SPEC = SuiteKernel(
    "laplace3d",
    laplace3d,
    make,
    5,
    "3-D Laplace stencil: boundary branches",
    eval_size=48,
    provenance=(
        "Seed 001 Table 5.2 LPS and seed 002 Table 1 LPS (GPGPU-Sim's 3-D Laplace solver, one "
        "iteration): the boundary branches of the stencil; differs in one point per thread over "
        "a small grid, without the benchmark's shared-memory tiling and its nested variable "
        "index."
    ),
)
