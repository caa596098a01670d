"""Monte-Carlo X-ray photon transport in a voxelised 2-D phantom, after MC-GPU (seed 002 Sec 5,
Table 1 MC): each thread emits a photon from the left face and tracks it with
Woodcock (delta) tracking, as MC-GPU does: a free path is sampled against the majorant
attenuation of the photon's energy bin (``-ln(u)`` from a table), the photon moves, and one
random number against the cumulative cross-section fractions of the voxel's material picks
photoelectric absorption (the photon ends), Compton scattering (energy loss, new direction),
Rayleigh scattering (new direction) or a fictitious interaction (nothing). A photon ends when
it is absorbed, leaves the phantom (photons leaving through the right face hit the detector)
or falls below the energy cut-off. This is the control flow seed 002 Sec 6.2 calls highly
unstructured: a data-dependent ``while`` with three early exits, one of them nested in the
else-if chain of the interactions, so the threads of a warp spread over several paths.

Fixed point: positions in voxels Q8, directions (``NDIR`` angles) as cos/sin Q8, energies in
keV, attenuation per voxel Q8, probabilities Q16. Tallies: energy deposited per voxel and
energy per detector pixel (``atomic_add``), and per thread ``kind + 4 * scatterings``."""

from __future__ import annotations

import math

import numpy as np

from reconverge.golden.compiler import Array, atomic_add, ctaid, kernel, ntid, tid
from reconverge.kernels.suite import Case, SuiteKernel, int32_array

NX = NY = 16  # phantom voxels
Q = 8  # fraction bits of positions, directions and attenuation
NDIR = 32  # directions, a power of two
NBIN = 8  # energy bins of 16 keV
PIX = Q - 2  # detector pixels of a quarter voxel
ECUT = 40  # keV: below, the photon's energy is deposited where it is
DIRS = 1 << Q  # ``tables``: -ln(u) (Q8) for 256 steps of u, then cos/sin of the directions,
MFP = DIRS + 2 * NDIR  # then the mean free path (Q8 voxels) of each bin's majorant
LCG_A, LCG_C = 1664525, 1013904223
ABSORBED, ESCAPED, CUT = 0, 1, 2  # what ended a photon


@kernel
def montecarlo(dose: Array, image: Array, fate: Array, phantom: Array, xs: Array,
               tables: Array, seed: int):  # fmt: skip
    t = ctaid() * ntid() + tid()
    st = (seed ^ (t * 0x9E3779B9)) * LCG_A + LCG_C  # emit from the left face
    x = 0
    y = (4 << Q) + ((st >> 16) & 0x7FF)
    d = (((st >> 8) & 0xFFFF) % 3 - 1) & (NDIR - 1)
    e = 50 + ((st >> 27) & 31) * 2
    n = 0
    while True:
        st = st * LCG_A + LCG_C  # a free path against the majorant
        ln = tables[(st >> 24) & 0xFF]
        ux = tables[DIRS + 2 * d]
        uy = tables[DIRS + 2 * d + 1]
        s = (ln * tables[MFP + (e >> 4)]) >> Q
        x += (s * ux) >> Q
        y += (s * uy) >> Q
        if x < 0 or y < 0 or x >= NX << Q or y >= NY << Q:
            if x >= NX << Q and 0 <= y < NY << Q:
                atomic_add(image, y >> PIX, e)
            kind = ESCAPED
            break
        v = (y >> Q) * NX + (x >> Q)
        k = (phantom[v] * NBIN + (e >> 4)) * 3
        photo = xs[k]
        compton = xs[k + 1]
        rayleigh = xs[k + 2]
        st = st * LCG_A + LCG_C  # the interaction, and a scattering angle
        r = (st >> 16) & 0xFFFF
        a = (st >> 11) & (NDIR - 1)
        if r < photo:
            atomic_add(dose, v, e)
            kind = ABSORBED
            break
        elif r < compton:  # E' = E / (1 + E/511 keV (1 - cos a))
            n += 1
            e2 = (e * 511 << Q) // ((511 << Q) + e * ((1 << Q) - tables[DIRS + 2 * a]))
            if e2 < ECUT:
                atomic_add(dose, v, e)
                kind = CUT
                break
            atomic_add(dose, v, e - e2)
            e = e2
            d = (d + a) & (NDIR - 1)
        elif r < rayleigh:  # a small deflection
            n += 1
            d = (d + a % 7 - 3) & (NDIR - 1)
        # else a fictitious interaction: the photon flies on
    fate[t] = kind + 4 * n


VOXEL_CM = 0.4
#: rho (g/cm3), photoelectric and Rayleigh mass attenuation at 30 keV (cm2/g) of air, soft
#: tissue and bone; photoelectric falls as E^-3, Rayleigh as E^-2, Compton is about flat.
MATERIALS = ((0.0012, 0.15, 0.04), (1.0, 0.15, 0.04), (1.85, 1.0, 0.1))


def attenuation(material: int, kev: float) -> tuple[float, float, float]:
    """Photoelectric, Compton and Rayleigh attenuation (per voxel) at ``kev``."""
    rho, photo, rayleigh = MATERIALS[material]
    scale = rho * VOXEL_CM
    return (scale * photo * (30 / kev) ** 3, scale * (0.2 - 0.0005 * kev),
            scale * rayleigh * (30 / kev) ** 2)  # fmt: skip


def tables() -> tuple[np.ndarray, np.ndarray]:
    """``xs``: per material and energy bin, the cumulative fractions (Q16) of photoelectric,
    +Compton, +Rayleigh of the bin's majorant; ``tables``: -ln(u) (Q8), cos/sin (Q8) of the
    directions, mean free paths of the majorants (Q8 voxels)."""
    kevs = [16 * b + 8 for b in range(NBIN)]
    mu = np.array([[attenuation(m, kev) for kev in kevs] for m in range(len(MATERIALS))])
    majorant = mu.sum(axis=2).max(axis=0)
    xs = np.round((1 << 16) * mu.cumsum(axis=2) / majorant[None, :, None])
    ln = [round(-math.log((i + 0.5) / 256) * (1 << Q)) for i in range(256)]
    angles = [2 * math.pi * i / NDIR for i in range(NDIR)]
    dirs = [round(f(a) * (1 << Q)) for a in angles for f in (math.cos, math.sin)]
    return int32_array(xs.ravel()), int32_array(ln + dirs + np.round((1 << Q) / majorant).tolist())


def phantom(rng: np.random.Generator) -> np.ndarray:
    """Soft tissue (an ellipse) in air around a bone disk placed by ``rng``."""
    y, x = np.mgrid[:NY, :NX] + 0.5
    voxels = np.where(((x - 8) / 7) ** 2 + ((y - 8) / 6) ** 2 < 1, 1, 0)
    cx, cy = rng.uniform(5, 11, 2)
    voxels[(x - cx) ** 2 + (y - cy) ** 2 < 2.5**2] = 2
    return int32_array(voxels.ravel())


def make(size: int, seed: int) -> Case:
    rng = np.random.default_rng(seed)
    block = min(128, max(8, size // 2))
    grid = -(-size // block)
    xs, tab = tables()
    return Case(
        {"dose": np.zeros(NX * NY, np.int32), "image": np.zeros(NY << (Q - PIX), np.int32),
         "fate": np.zeros(grid * block, np.int32), "phantom": phantom(rng), "xs": xs,
         "tables": tab, "seed": int(rng.integers(1, 1 << 31))},
        grid=grid, block=block,
    )  # fmt: skip


SPEC = SuiteKernel(
    "montecarlo",
    montecarlo,
    make,
    16,
    "MC-GPU photon transport: early exits",
    eval_size=1536,
    provenance=(
        "Seed 002 Table 1 MC (MC-GPU photon transport): Woodcock tracking with three exits "
        "(absorbed, escaped, energy cut-off), one nested in the interaction's else-if chain; "
        "differs in a 16 x 16 2-D phantom of three materials in fixed point (MC-GPU: 3-D "
        "voxels, floats); the benchmarks kernel mc adds step-limit and roulette exits."
    ),
)
