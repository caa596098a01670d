"""Ray tracing of a triangle mesh in Q8 fixed point: seed 002's REND (Sec 5: real-time ray
tracing of triangle meshes) and seed 001's RAY (Sec 5.3: each pixel rendered by one thread,
with reflections and shadows).

Each thread shoots the ray of its pixel and finds the nearest triangle in a loop over all of
them, with early exits: the triangle faces away or is parallel, t <= 0, t >= the best so far,
u < 0, v < 0, u + v > 1 (the plane first, then barycentric coordinates from a precomputed dual
basis of the edges). A ray that hits nothing takes the background at once; the others shade by
an ``if``/``elif`` on the material: a mirror reflects the ray and goes round the bounce loop
again (up to ``DEPTH`` rays), an emitter shines, the checkered floor and matte faces send a
shadow ray to the point light (the same loop, which ends at the first occluder) and take
Lambert's cosine over the distance. So some warps finish after one loop over the triangles
while others run several, diverged: the load imbalance of seed 002 Sec 6.2.

Scene (``scene``): a checkered floor of two triangles and a row of ``size // 20`` (at least
one) random tetrahedra standing on it, each with an edge towards the camera, the faces it
shows a mirror and a matte face, or a matte face and an emitter, or an emitter and a mirror
(in turn). Triangles are one-sided: a ray meets only a face turned towards it, so a ray
leaving a surface never meets it again. ``tris`` holds ``STRIDE`` words per triangle: vertex
0, the unit normal n (Q8), w = n . vertex 0, the dual basis U and V of the edges (u = U .
(h - vertex 0) in Q20), the material and the albedo; a hit is ``t << 12 | the triangle's
word``. Points stay within ±3.5 units and directions within ±2^10 (Q8), so no value the kernel
shifts, divides or compares leaves int32 (``tests/test_raytrace.py`` checks)."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, ctaid, device, kernel, ntid, tid
from reconverge.kernels.suite import Case, SuiteKernel, int32_array

FRAC = 8  # Q8: 1.0 is 256
BARY = 20  # u and v: 1.0 is 2^20
STRIDE = 15
CHECKER, MATTE, MIRROR, GLOW = 0, 1, 2, 3
FACES = (MIRROR, MATTE, GLOW)  # the materials of a tetrahedron's faces, in turn
DEPTH = 3  # bounces
MAX_T = 1 << 13
EYE_Y, EYE_Z, TILT = -96, -3 << FRAC, 24
SPAN = 154  # the image spans x = -0.6 .. 0.6 at distance 1
LIGHT_X, LIGHT_Y, LIGHT_Z = -512, 768, -384
SKY, AMBIENT, POWER = 96, 24, 3


@device
def trace(tris: Array, last, ox, oy, oz, dx, dy, dz, tmax, shadow):
    """The nearest triangle (up to the one at word ``last``) that the ray o + t d meets at
    0 < t < tmax, as ``t << 12 | its word``, t in Q8 units of d; or -1. A ``shadow`` ray stops
    at its first hit."""
    hit = -1
    b = -STRIDE
    while b < last and (hit < 0 or not shadow):
        b += STRIDE
        nx = tris[b + 3]
        ny = tris[b + 4]
        nz = tris[b + 5]
        dn = dx * nx + dy * ny + dz * nz
        if dn >= 0:  # parallel or facing away
            continue
        t = ((tris[b + 6] - ox * nx - oy * ny - oz * nz) << FRAC) // dn
        if t <= 0 or t >= tmax:
            continue
        hx = ox + ((t * dx) >> FRAC) - tris[b]
        hy = oy + ((t * dy) >> FRAC) - tris[b + 1]
        hz = oz + ((t * dz) >> FRAC) - tris[b + 2]
        u = hx * tris[b + 7] + hy * tris[b + 8] + hz * tris[b + 9]
        if u < 0:
            continue
        v = hx * tris[b + 10] + hy * tris[b + 11] + hz * tris[b + 12]
        if v < 0 or u + v > 1 << BARY:
            continue
        tmax = t
        hit = (t << 12) | b
    return hit


@kernel
def raytrace(image: Array, tris: Array, ntri: int, width: int, height: int):
    p = ctaid() * ntid() + tid()
    if p >= width * height:
        return
    ox = 0
    oy = EYE_Y
    oz = EYE_Z
    dx = (2 * (p % width) + 1 - width) * SPAN // width
    dy = (height - 1 - 2 * (p // width)) * SPAN // width - TILT
    dz = 1 << FRAC
    last = (ntri - 1) * STRIDE
    color = 0
    weight = 1 << FRAC
    for _ in range(DEPTH):
        hit = trace(tris, last, ox, oy, oz, dx, dy, dz, MAX_T, 0)
        if hit < 0:  # background, graded by height
            color += (weight * (SKY + (dy >> 2))) >> FRAC
            break
        t = hit >> 12
        ox += (t * dx) >> FRAC
        oy += (t * dy) >> FRAC
        oz += (t * dz) >> FRAC
        b = hit & 4095
        nx = tris[b + 3]
        ny = tris[b + 4]
        nz = tris[b + 5]
        mat = tris[b + 13]
        if mat == MIRROR:
            dn = (dx * nx + dy * ny + dz * nz) >> FRAC
            dx -= (dn * nx) >> (FRAC - 1)
            dy -= (dn * ny) >> (FRAC - 1)
            dz -= (dn * nz) >> (FRAC - 1)
            weight = (weight * 3) >> 2
            continue
        elif mat == GLOW:
            color += weight
            break
        elif mat == CHECKER:
            albedo = tris[b + 14] >> (2 * (((ox >> FRAC) ^ (oz >> FRAC)) & 1))
        else:
            albedo = tris[b + 14]
        lx = LIGHT_X - ox
        ly = LIGHT_Y - oy
        lz = LIGHT_Z - oz
        ndotl = nx * lx + ny * ly + nz * lz
        light = AMBIENT
        if ndotl > 0 and trace(tris, last, ox, oy, oz, lx >> 1, ly >> 1, lz >> 1, 2 << FRAC, 1) < 0:
            light += ndotl * POWER // ((lx * lx + ly * ly + lz * lz) >> FRAC)
        color += (weight * min(255, (albedo * light) >> FRAC)) >> FRAC
        break
    image[p] = color


def tetrahedron(rng: np.random.Generator, cx: float) -> list[np.ndarray]:
    """The three side faces (3 x 3 vertices, in units) of a random tetrahedron standing on
    the floor around x = ``cx`` with an edge towards the camera (-z), turned outwards, the
    faces turned most towards the camera first."""
    cx, cz = cx + rng.uniform(-0.25, 0.25), rng.uniform(0, 2)
    r, h, a = rng.uniform(0.5, 0.8), rng.uniform(0.9, 1.7), rng.uniform(-0.4, 0.4) - np.pi / 2
    angles = a + np.arange(3) * 2 * np.pi / 3
    base = np.stack([cx + r * np.cos(angles), np.full(3, -1.0), cz + r * np.sin(angles)], 1)
    apex = np.array([cx, h - 1.0, cz])
    inside = np.array([cx, -0.9, cz])
    faces = [outwards(np.stack([base[i], base[(i + 1) % 3], apex]), inside) for i in range(3)]
    return sorted(faces, key=lambda f: normal(f)[2] / np.linalg.norm(normal(f)))


def normal(face: np.ndarray) -> np.ndarray:
    return np.cross(face[1] - face[0], face[2] - face[0])


def outwards(face: np.ndarray, inside: np.ndarray) -> np.ndarray:
    """``face`` with its vertices ordered so that its normal points away from ``inside``."""
    return face if normal(face) @ (face[0] - inside) > 0 else face[[0, 2, 1]]


def triangle_words(face: np.ndarray, material: int, albedo: int) -> list[int]:
    """A triangle's ``STRIDE`` words (see the module docstring)."""
    vertices = np.round(face * (1 << FRAC)).astype(np.int64)
    v0, e1, e2 = vertices[0], vertices[1] - vertices[0], vertices[2] - vertices[0]
    m = normal(vertices)
    area2 = float(m @ m)
    n = np.round(m / np.sqrt(area2) * (1 << FRAC)).astype(np.int64)
    dual = [np.cross(e2, m) / area2, np.cross(m, e1) / area2]  # U.e1 = V.e2 = 1
    u, v = (np.round(x * (1 << BARY)).astype(np.int64) for x in dual)
    return [*v0, *n, int(n @ v0), *u, *v, material, albedo]


def scene(size: int, seed: int) -> list[tuple[np.ndarray, int, int]]:
    """The triangles (3 x 3 vertices in units, material, albedo): the floor, then the row of
    tetrahedra across the view."""
    rng = np.random.default_rng(seed)
    floor = np.array([(-3.5, -1, -3.5), (3.5, -1, -3.5), (3.5, -1, 3.5), (-3.5, -1, 3.5)])
    below = np.array([0, -2, 0])
    triangles = [(outwards(floor[q], below), CHECKER, 240) for q in ([0, 1, 2], [0, 2, 3])]
    count = max(1, size // 20)
    for i in range(count):
        faces = tetrahedron(rng, 1.5 * (2 * i + 1 - count) / count)
        albedos = rng.integers(120, 250, len(faces)).tolist()
        triangles += [(f, FACES[(i + j) % len(FACES)], albedos[j]) for j, f in enumerate(faces)]
    return triangles


def make(size: int, seed: int) -> Case:
    width, height = size, max(2, size * 3 // 8)
    triangles = scene(size, seed)
    words = [w for triangle in triangles for w in triangle_words(*triangle)]
    pixels = width * height
    block = min(128, pixels)
    return Case(
        {"image": np.zeros(pixels, np.int32), "tris": int32_array(words), "ntri": len(triangles),
         "width": width, "height": height},
        grid=-(-pixels // block), block=block,
    )  # fmt: skip


SPEC = SuiteKernel(
    "raytrace",
    raytrace,
    make,
    8,
    "ray tracing: shadows, mirrors, early misses",
    eval_size=64,
    provenance=(
        "Seed 001 Table 5.2 RAY and, in part, seed 002 Table 1 REND: one thread per pixel, "
        "mirrors, emitters and shadow rays; differs from REND in testing every triangle per ray "
        "(no BVH; the benchmarks kernel rend traverses one with a stack) and from RAY in 3 "
        "bounces over a few tetrahedra."
    ),
)
