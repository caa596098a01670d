"""The mc kernel (seed 002 Table 1 MC, photon histories with five exits): the golden SM under
two policies against the oracle, the oracle against a numpy transport that advances every
thread's current history at once, and the benchmark's shape: every exit is taken in one run,
several of them within one warp."""

from __future__ import annotations

import numpy as np
import pytest

from reconverge.golden.policies import Policy
from reconverge.golden.testing.benchmarks import cached_reference, fits_int32, run_policies, wrap32
from reconverge.kernels import mc
from reconverge.kernels.montecarlo import DIRS, LCG_A, LCG_C, NDIR, Q

SPEC = mc.SPEC
SHAPE_SIZE = 128


def step(st: np.ndarray) -> np.ndarray:
    return wrap32(st * LCG_A + LCG_C)


def transport(size: int, seed: int) -> dict[str, np.ndarray]:
    """The tallies, fates and steps of a launch: each round, threads whose history ended start
    the next one, threads at ``MAX_STEPS`` stop, the others take one step."""
    case = SPEC.case(size, seed)
    a = case.args
    threads = case.grid * case.block
    tab = a["tables"].astype(np.int64)
    ln, cos, sin = tab[:DIRS], tab[DIRS::2], tab[DIRS + 1 :: 2]
    optics = a["optics"].astype(np.int64).reshape(-1, mc.OPT)
    medium = a["medium"].astype(np.int64)
    absorbed = np.zeros(mc.NX * mc.NZ, np.int64)
    surface = np.zeros(2 * mc.BINS, np.int64)
    fate = np.zeros((threads, mc.KINDS), np.int64)
    steps = np.zeros(threads, np.int64)
    st = step(wrap32(a["seed"] ^ wrap32(np.arange(threads, dtype=np.int64) * 0x9E3779B9)))
    x, z, d, w, n, done = (np.zeros(threads, np.int64) for _ in range(6))
    fresh = np.ones(threads, bool)

    def end(mask: np.ndarray, kind: int) -> None:
        fate[mask, kind] += 1
        steps[mask] += n[mask]
        done[mask] += 1
        fresh[mask] = True

    while (done < mc.PHOTONS).any():
        start = fresh & (done < mc.PHOTONS)
        st[start] = step(st[start])
        x[start] = (mc.NX << (Q - 1)) + ((st[start] >> 16) & 0x3FF) - 512
        z[start], w[start], n[start] = 0, mc.ONE, 0
        d[start] = NDIR // 4 + ((st[start] >> 8) & 7) - 3
        fresh[start] = False
        live = ~fresh & (done < mc.PHOTONS)
        end(live & (n == mc.MAX_STEPS), mc.STOPPED)
        i = np.flatnonzero(live & (n < mc.MAX_STEPS))
        n[i] += 1
        st[i] = step(st[i])
        s = (ln[(st[i] >> 24) & 0xFF] * optics[medium[(z[i] >> Q) * mc.NX + (x[i] >> Q)], 0]) >> Q
        x[i] = (x[i] + ((s * cos[d[i]]) >> Q)) % (mc.NX << Q)
        z[i] += (s * sin[d[i]]) >> Q
        top, bottom = i[z[i] < 0], i[z[i] >= mc.NZ << Q]
        np.add.at(surface, x[top] >> mc.PIX, w[top] >> mc.WSHIFT)
        np.add.at(surface, mc.BINS + (x[bottom] >> mc.PIX), w[bottom] >> mc.WSHIFT)
        for out, kind in ((top, mc.REFLECTED), (bottom, mc.TRANSMITTED)):
            end(np.isin(np.arange(threads), out), kind)
        i = i[(z[i] >= 0) & (z[i] < mc.NZ << Q)]
        v = (z[i] >> Q) * mc.NX + (x[i] >> Q)
        black = medium[v] == mc.BLACK
        np.add.at(absorbed, v[black], w[i[black]] >> mc.WSHIFT)
        end(np.isin(np.arange(threads), i[black]), mc.ABSORBED)
        i, v = i[~black], v[~black]
        dw = (w[i] * optics[medium[v], 1]) >> 12
        assert fits_int32(w[i] * optics[medium[v], 1])
        np.add.at(absorbed, v, dw >> mc.WSHIFT)
        w[i] -= dw
        st[i] = step(st[i])
        low = w[i] < mc.WMIN
        killed = low & (((st[i] >> 13) & (mc.ROULETTE - 1)) != 0)
        end(np.isin(np.arange(threads), i[killed]), mc.KILLED)
        w[i[low & ~killed]] *= mc.ROULETTE
        i = i[~killed]
        isotropic = ((st[i] >> 20) & 7) == 0
        d[i] = np.where(isotropic, st[i] >> 8, d[i] + ((st[i] >> 8) & 7) - 3) % NDIR
    return {"absorbed": absorbed, "surface": surface, "fate": fate.ravel(), "steps": steps}


@pytest.mark.parametrize(("size", "seed"), [(SPEC.default_size, 0), (40, 3), (SHAPE_SIZE, 1)])
def test_oracle_is_the_host_transport(size: int, seed: int) -> None:
    expected = transport(size, seed)
    reference = cached_reference(SPEC, size, seed)
    for name, values in expected.items():
        assert reference[name].tolist() == values.tolist(), name


def test_golden_sm_matches_the_oracle_under_two_policies() -> None:
    run_policies(SPEC, (Policy.SPS, Policy.MP_OREC))


def test_every_exit_is_taken_and_warps_mix_them() -> None:
    """MC's shape: all five exits of the tracking loop are taken in one launch, and the threads
    of one warp of 32 end their histories by at least four different exits."""
    fate = cached_reference(SPEC, SHAPE_SIZE, 1)["fate"].reshape(-1, mc.KINDS)
    assert (fate.sum(axis=0) > 0).all(), fate.sum(axis=0)
    assert (fate.sum(axis=1) == mc.PHOTONS).all()
    warps = fate.reshape(-1, 32, mc.KINDS).sum(axis=1)
    assert ((warps > 0).sum(axis=1) >= 4).any(), warps
