"""Seed 002's MC (Sec 5, Table 1; MC-GPU, Badal and Badano) in the shape of its histories: each
GPU thread of MC-GPU simulates a batch of photon histories one after another, and a history's
tracking loop ends in one of several ways. Here thread ``t`` runs ``PHOTONS`` histories of
light entering a layered tissue slab (weighted photons with implicit capture and Russian
roulette, as photon-migration codes track them): every step samples a free path against the
cell's mean free path, moves, and then the photon is

* ``REFLECTED`` out through the top face (tallied by position in ``surface``),
* ``TRANSMITTED`` out through the bottom face (tallied after those, in ``surface``),
* ``ABSORBED`` entirely in the black inclusion (a vessel, ``absorbed``),
* ``KILLED`` by roulette once its weight falls below ``WMIN`` (it survives one time in
  ``ROULETTE`` with ``ROULETTE`` times its weight),
* or stopped at ``MAX_STEPS`` (the loop's own exit);

else it deposits the absorbed fraction of its weight in the cell and scatters, forward-peaked
or (one time in eight) isotropically. Five exits at five PCs of one loop, inside the loop over a
thread's histories: the "highly unstructured" control flow and the spread of splits that seed
002 Sec 6.2 reports for MC. The sides are periodic (a slab infinite across). ``fate[KINDS t +
k]`` counts thread ``t``'s histories that ended by ``k``, ``steps[t]`` its steps.

Fixed point as in :mod:`.montecarlo` (whose ``-ln(u)`` and direction tables it reads): positions
Q8 cells, directions ``NDIR`` angles (cos, sin Q8), weights Q16, absorbed fractions Q12;
tallies are weights in units of 2^-12."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, atomic_add, ctaid, kernel, ntid, tid
from reconverge.kernels.montecarlo import DIRS, LCG_A, LCG_C, MFP, NDIR, Q
from reconverge.kernels.montecarlo import tables as montecarlo_tables
from reconverge.kernels.suite import Case, SuiteKernel, int32_array

NX = NZ = 16  # cells across and in depth
PHOTONS = 2  # histories per thread
MAX_STEPS = 16
ONE = 1 << 16  # weight 1.0
WMIN = ONE >> 3
ROULETTE = 8  # a power of two
WSHIFT = 4  # tallies: weight >> WSHIFT
PIX = Q - 1  # the surface tallies' bins: half a cell
BINS = NX << (Q - PIX)  # ``surface``: the top face's bins, then the bottom face's
OPT = 2  # words per material in ``optics``: mean free path (Q8 cells), absorbed fraction (Q12)
BLACK = 3  # the inclusion's material
REFLECTED, TRANSMITTED, ABSORBED, KILLED, STOPPED = range(5)
KINDS = 5


@kernel
def mc(absorbed: Array, surface: Array, fate: Array, steps: Array, medium: Array, optics: Array,
       tables: Array, seed: int):  # fmt: skip
    t = ctaid() * ntid() + tid()
    st = (seed ^ (t * 0x9E3779B9)) * LCG_A + LCG_C
    total = 0
    for _ in range(PHOTONS):
        st = st * LCG_A + LCG_C  # enter the top face near the middle, heading down
        x = (NX << (Q - 1)) + ((st >> 16) & 0x3FF) - 512
        z = 0
        d = NDIR // 4 + ((st >> 8) & 7) - 3
        w = ONE
        kind = STOPPED
        n = 0
        while n < MAX_STEPS:
            n += 1
            st = st * LCG_A + LCG_C
            m = medium[(z >> Q) * NX + (x >> Q)]
            s = (tables[(st >> 24) & 0xFF] * optics[OPT * m]) >> Q
            x = (x + ((s * tables[DIRS + 2 * d]) >> Q)) & ((NX << Q) - 1)
            z += (s * tables[DIRS + 2 * d + 1]) >> Q
            if z < 0:
                atomic_add(surface, x >> PIX, w >> WSHIFT)
                kind = REFLECTED
                break
            if z >= NZ << Q:
                atomic_add(surface, BINS + (x >> PIX), w >> WSHIFT)
                kind = TRANSMITTED
                break
            v = (z >> Q) * NX + (x >> Q)
            m = medium[v]
            if m == BLACK:
                atomic_add(absorbed, v, w >> WSHIFT)
                kind = ABSORBED
                break
            dw = (w * optics[OPT * m + 1]) >> 12
            atomic_add(absorbed, v, dw >> WSHIFT)
            w -= dw
            st = st * LCG_A + LCG_C
            if w < WMIN:
                if (st >> 13) & (ROULETTE - 1) != 0:
                    kind = KILLED
                    break
                w *= ROULETTE
            if (st >> 20) & 7 == 0:  # noqa: SIM108 (a branch, as the scattering models are)
                d = (st >> 8) & (NDIR - 1)
            else:
                d = (d + ((st >> 8) & 7) - 3) & (NDIR - 1)
        fate[KINDS * t + kind] += 1
        total += n
    steps[t] = total


#: Mean free path (Q8 cells) and absorbed fraction per interaction (Q12) of the epidermis, the
#: dermis and the fat below, and the inclusion (absorbs everything).
OPTICS = ((192, 400), (256, 800), (512, 200), (256, 1 << 12))
LAYERS = (4, 10)  # the dermis from row 4, the fat from row 10


def medium(rng: np.random.Generator) -> np.ndarray:
    """The layers, and a black disk of radius 1.5 to 2.5 cells in the dermis placed by ``rng``."""
    z, x = np.mgrid[:NZ, :NX] + 0.5
    cells = np.searchsorted(LAYERS, np.floor(z), side="right")
    cx, cz, r = rng.uniform(4, 12), rng.uniform(5, 9), rng.uniform(1.5, 2.5)
    cells[(x - cx) ** 2 + (z - cz) ** 2 < r * r] = BLACK
    return int32_array(cells.ravel())


def make(size: int, seed: int) -> Case:
    """``size`` threads rounded up to full blocks (of 8 to 128), ``PHOTONS`` histories each."""
    rng = np.random.default_rng(seed)
    block = min(128, max(8, size // 2))
    grid = -(-size // block)
    threads = grid * block
    _, tab = montecarlo_tables()
    return Case(
        {"absorbed": np.zeros(NX * NZ, np.int32), "surface": np.zeros(2 * BINS, np.int32),
         "fate": np.zeros(KINDS * threads, np.int32), "steps": np.zeros(threads, np.int32),
         "medium": medium(rng), "optics": int32_array(np.ravel(OPTICS)), "tables": tab[:MFP],
         "seed": int(rng.integers(1, 1 << 31))},
        grid=grid, block=block,
    )  # fmt: skip


SPEC = SuiteKernel(
    "mc", mc, make, 8, "seed 002 MC: histories per thread, five exits", eval_size=1536,
    provenance=(
        "Seed 002 Table 1 MC (MC-GPU): a batch of photon histories per thread (2), each tracking "
        "loop with five exits at different PCs (reflected, transmitted, absorbed, roulette, "
        "step limit); differs from MC-GPU in weighted photons with roulette in a 2-D layered "
        "slab (MC-GPU: analog x-ray tracking in 3-D voxels, floats)."
    ),
)  # fmt: skip
