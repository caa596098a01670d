"""The montecarlo kernel (seed 002 Table 1 MC): the oracle against a host-side transport that moves
every photon of a launch at once (numpy, index arrays, the interaction picked by counting the
cumulative fractions below the random number). (The compiled kernel under every allocator and
every policy: kernels/tests/test_suite.py and test_suite_sm.py, as for every suite kernel.)"""

from __future__ import annotations

import numpy as np
import pytest

from reconverge.kernels import montecarlo as mc
from reconverge.kernels.suite import Case

SPEC = mc.SPEC


def wrap(v: np.ndarray) -> np.ndarray:
    """int64 values taken modulo 2**32 into the int32 range."""
    return (v + (1 << 31)) % (1 << 32) - (1 << 31)


def step(st: np.ndarray) -> np.ndarray:
    return wrap(st * mc.LCG_A + mc.LCG_C)


def transport(case: Case) -> tuple[dict[str, np.ndarray], int, int]:
    """Dose, image and every photon's fate; the emitted energy and the energy that left the
    phantom elsewhere than into the detector."""
    a = case.args
    threads = case.grid * case.block
    tab = a["tables"].astype(np.int64)
    ln, mfp = tab[: mc.DIRS], tab[mc.MFP :]
    cos, sin = tab[mc.DIRS : mc.MFP : 2], tab[mc.DIRS + 1 : mc.MFP : 2]
    xs = a["xs"].astype(np.int64).reshape(-1, mc.NBIN, 3)
    phantom = a["phantom"].reshape(mc.NY, mc.NX)
    dose = np.zeros((mc.NY, mc.NX), np.int64)
    image = np.zeros(len(a["image"]), np.int64)
    fate = np.zeros(threads, np.int64)
    side = np.array([mc.NX, mc.NY]) << mc.Q
    st = step(wrap(a["seed"] ^ wrap(np.arange(threads, dtype=np.int64) * 0x9E3779B9)))
    pos = np.zeros((threads, 2), np.int64)
    pos[:, 1] = (4 << mc.Q) + ((st >> 16) & 0x7FF)
    d = (((st >> 8) & 0xFFFF) % 3 - 1) % mc.NDIR
    e = 50 + 2 * ((st >> 27) & 31)
    emitted, lost = int(e.sum()), 0
    n = np.zeros(threads, np.int64)
    live = np.arange(threads)
    while live.size:
        st[live] = step(st[live])
        s = (ln[(st[live] >> 24) & 0xFF] * mfp[e[live] >> 4]) >> mc.Q
        pos[live] += (s[:, None] * np.stack([cos[d[live]], sin[d[live]]], 1)) >> mc.Q
        x, y = pos[live].T
        gone = ((pos[live] < 0) | (pos[live] >= side)).any(axis=1)
        seen = gone & (x >= side[0]) & (y >= 0) & (y < side[1])
        np.add.at(image, y[seen] >> mc.PIX, e[live][seen])
        lost += int(e[live][gone & ~seen].sum())
        fate[live[gone]] = mc.ESCAPED + 4 * n[live[gone]]
        live = live[~gone]
        st[live] = step(st[live])
        r, angle = (st[live] >> 16) & 0xFFFF, (st[live] >> 11) & (mc.NDIR - 1)
        vx, vy = (pos[live] >> mc.Q).T
        cumulative = xs[phantom[vy, vx], e[live] >> 4]
        which = (r[:, None] >= cumulative).sum(axis=1)  # photo, Compton, Rayleigh, none
        photo, compton, rayleigh = (which == 0), (which == 1), (which == 2)
        n[live[compton | rayleigh]] += 1
        ei = e[live]
        e2 = (ei * 511 << mc.Q) // ((511 << mc.Q) + ei * ((1 << mc.Q) - cos[angle]))
        cut = compton & (e2 < mc.ECUT)
        kept = compton & ~cut
        ends = photo | cut
        np.add.at(dose, (vy[ends], vx[ends]), ei[ends])
        np.add.at(dose, (vy[kept], vx[kept]), ei[kept] - e2[kept])
        fate[live[ends]] = np.where(photo, mc.ABSORBED, mc.CUT)[ends] + 4 * n[live[ends]]
        e[live[kept]] = e2[kept]
        d[live[kept]] = (d[live[kept]] + angle[kept]) % mc.NDIR
        d[live[rayleigh]] = (d[live[rayleigh]] + angle[rayleigh] % 7 - 3) % mc.NDIR
        live = live[~ends]
    out = {"dose": dose.ravel(), "image": image, "fate": fate}
    return out, emitted, lost


@pytest.mark.parametrize(("size", "seed"), [(SPEC.default_size, 0), (40, 3), (SPEC.eval_size, 0)])
def test_oracle_is_the_host_transport(size: int, seed: int) -> None:
    expected, emitted, lost = transport(SPEC.case(size, seed))
    reference = SPEC.reference(size, seed)
    for name, values in expected.items():
        assert reference[name].tolist() == values.tolist(), name
    assert int(reference["dose"].sum() + reference["image"].sum()) + lost == emitted


def test_eval_workload_takes_every_path() -> None:
    fate = SPEC.reference(SPEC.eval_size)["fate"]
    kinds = np.bincount(fate & 3, minlength=3)
    scatters = np.bincount(fate >> 2)
    assert (kinds > 0).all() and len(scatters) > 4, (kinds, scatters)
