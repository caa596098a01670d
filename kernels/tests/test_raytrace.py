"""The raytrace kernel (seed 002 REND, seed 001 RAY): the oracle against a host renderer that
traces every pixel against every triangle at once in int64 numpy, checking that no value the
kernel shifts, divides or compares leaves int32; that renderer's geometry against floating-point
Möller-Trumbore on the scene's vertices. (The compiled kernel under every allocator and every
policy: kernels/tests/test_suite.py and test_suite_sm.py, as for every suite kernel.)"""

from __future__ import annotations

import numpy as np
import pytest

from reconverge.kernels import raytrace as rt
from reconverge.kernels.suite import Case

SPEC = rt.SPEC
ONE = 1 << rt.FRAC


def fits(x: np.ndarray, where: np.ndarray | bool = True) -> np.ndarray:
    """``x``, checked to be int32 wherever the kernel computes it."""
    assert np.all(((x >= -(2**31)) & (x < 2**31)) | ~np.asarray(where)), "int32 overflow"
    return x


def dot(a: np.ndarray, b: np.ndarray, where: np.ndarray | bool = True) -> np.ndarray:
    return fits((a * b).sum(-1), where)


def trunc_div(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    return np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))


def primary_rays(case: Case) -> tuple[np.ndarray, np.ndarray]:
    """Every pixel's ray: origins and directions, Q8."""
    w, h = case.args["width"], case.args["height"]
    y, x = np.divmod(np.arange(w * h), w)
    dx = trunc_div((2 * x + 1 - w) * rt.SPAN, w)
    dy = trunc_div((h - 1 - 2 * y) * rt.SPAN, w) - rt.TILT
    return np.tile([0, rt.EYE_Y, rt.EYE_Z], (w * h, 1)), np.stack([dx, dy, np.full(w * h, ONE)], 1)


def hits(tris: np.ndarray, o: np.ndarray, d: np.ndarray, tmax: int) -> np.ndarray:
    """(rays x triangles) t of each hit at 0 < t < tmax (Q8 units of d), else ``rt.MAX_T``."""
    o, d = o[:, None, :], d[:, None, :]
    v0, n, w, u_axis, v_axis = tris[:, 0:3], tris[:, 3:6], tris[:, 6], tris[:, 7:10], tris[:, 10:13]
    dn = dot(d, n)
    t = trunc_div(fits((w - dot(o, n)) * ONE), np.where(dn < 0, dn, -1))
    near = (dn < 0) & (t > 0) & (t < tmax)
    h = o + (fits(t[..., None] * d, near[..., None]) >> rt.FRAC) - v0
    u, v = dot(h, u_axis, near), dot(h, v_axis, near)
    ok = near & (u >= 0) & (v >= 0) & (fits(u + v, near) <= 1 << rt.BARY)
    return np.where(ok, t, rt.MAX_T)


def words(case: Case) -> np.ndarray:
    return case.args["tris"].astype(np.int64).reshape(-1, rt.STRIDE)


def render(case: Case) -> np.ndarray:
    """The image, bounce by bounce for every pixel at once."""
    tris = words(case)
    o, d = primary_rays(case)
    light = np.array([rt.LIGHT_X, rt.LIGHT_Y, rt.LIGHT_Z])
    color, weight, alive = np.zeros(len(o), np.int64), np.full(len(o), ONE), np.ones(len(o), bool)
    for _ in range(rt.DEPTH):
        ts = hits(tris, o, d, rt.MAX_T)
        k, t = ts.argmin(1), ts.min(1)
        miss = alive & (t == rt.MAX_T)
        color += np.where(miss, fits(weight * (rt.SKY + (d[:, 1] >> 2))) >> rt.FRAC, 0)
        alive &= ~miss
        o = np.where(alive[:, None], o + (fits(t[:, None] * d) >> rt.FRAC), o)
        n, mat, albedo = tris[k, 3:6], tris[k, 13], tris[k, 14]
        mirror, glow = alive & (mat == rt.MIRROR), alive & (mat == rt.GLOW)
        d = np.where(mirror[:, None], d - (fits((dot(d, n) >> 8)[:, None] * n) >> 7), d)
        color += np.where(glow, weight, 0)
        odd = ((o[:, 0] >> rt.FRAC) ^ (o[:, 2] >> rt.FRAC)) & 1
        albedo = np.where((mat == rt.CHECKER) & (odd == 1), albedo >> 2, albedo)
        to_light = light - o
        ndotl = dot(n, to_light)
        shadow = hits(tris, o, to_light >> 1, 2 * ONE).min(1) < rt.MAX_T
        falloff = trunc_div(fits(ndotl * rt.POWER), np.maximum(dot(to_light, to_light) >> 8, 1))
        lit = rt.AMBIENT + np.where((ndotl > 0) & ~shadow, falloff, 0)
        shade = fits(weight * np.minimum(255, fits(albedo * lit) >> rt.FRAC)) >> rt.FRAC
        color += np.where(alive & ~mirror & ~glow, shade, 0)
        weight = np.where(mirror, fits(weight * 3) >> 2, weight)
        alive = mirror
    return color


def first_hits_in_floats(case: Case, triangles: list[tuple[np.ndarray, int, int]]) -> np.ndarray:
    """Each pixel's nearest triangle (-1: none) by two-sided Möller-Trumbore in floats."""
    o, d = (x / ONE for x in primary_rays(case))
    v = np.array([f for f, _, _ in triangles])
    e1, e2 = v[:, 1] - v[:, 0], v[:, 2] - v[:, 0]
    p = np.cross(d[:, None], e2)
    det = (p * e1).sum(-1)
    s = o[:, None] - v[:, 0]
    q = np.cross(s, e1)
    u, w, t = ((s * p).sum(-1) / det, (d[:, None] * q).sum(-1) / det, (e2 * q).sum(-1) / det)
    t = np.where((u >= 0) & (w >= 0) & (u + w <= 1) & (t > 0), t, np.inf)
    return np.where(np.isfinite(t.min(1)), t.argmin(1), -1)


@pytest.mark.parametrize(("size", "seed"), [(SPEC.default_size, 0), (9, 3), (SPEC.eval_size, 1)])
def test_oracle_matches_the_host_renderer(size: int, seed: int) -> None:
    assert SPEC.reference(size, seed)["image"].tolist() == render(SPEC.case(size, seed)).tolist()


@pytest.mark.parametrize("size", [SPEC.default_size, SPEC.eval_size])
def test_fixed_point_geometry_agrees_with_floats(size: int) -> None:
    case = SPEC.case(size)
    tris, triangles = words(case), rt.scene(size, 0)
    for row, (face, _, _) in zip(tris, triangles, strict=True):
        edges = np.round(face * ONE)[1:] - row[0:3]
        cosines = edges @ row[3:6] / np.linalg.norm(edges, axis=1) / ONE
        assert abs(np.linalg.norm(row[3:6]) - ONE) < 1 and np.all(abs(cosines) < 0.01)
        bary = edges @ np.stack([row[7:10], row[10:13]], 1) / (1 << rt.BARY)  # (u, v) at v1, v2
        assert np.allclose(bary, np.eye(2), atol=0.01)
    o, d = primary_rays(case)
    ts = hits(tris, o, d, rt.MAX_T)
    fixed = np.where(ts.min(1) < rt.MAX_T, ts.argmin(1), -1)
    assert np.mean(fixed == first_hits_in_floats(case, triangles)) > 0.99


def test_eval_image_takes_every_branch() -> None:
    case = SPEC.case(SPEC.eval_size)
    image, tris = render(case), words(case)  # render() checks int32 at the evaluation size
    o, d = primary_rays(case)
    ts = hits(tris, o, d, rt.MAX_T)
    seen = tris[ts.argmin(1)[ts.min(1) < rt.MAX_T], 13]
    assert set(seen.tolist()) == {rt.CHECKER, rt.MATTE, rt.MIRROR, rt.GLOW}
    assert 0.2 < np.mean(ts.min(1) == rt.MAX_T) < 0.8  # the background: early finishers
    shadowed = {240 * rt.AMBIENT >> rt.FRAC, 60 * rt.AMBIENT >> rt.FRAC}  # checker, ambient only
    assert shadowed <= set(image.tolist())
