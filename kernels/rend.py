"""Seed 002's REND (Sec 5, Table 1: Tsiodras' real-time renderer, which traces rays through a
bounding volume hierarchy) in the shape of its traversal: each thread traces its pixel's ray
down a BVH with a stack of its own (in global memory, ``DEPTH`` words per thread), nearest
child first, culling every node the ray meets no nearer than its best hit, then a shadow ray
towards the light through the same loop, which stops at the first occluder (any hit). A ray
that misses the city's bounds leaves after the root's box, one among the roofs visits dozens of
nodes: the load imbalance seed 002 Sec 6.2 reports for REND, where "some warps exit the kernel
early while others continue execution under divergence".

The scene is a city: up to ``GRID`` x ``GRID`` boxes of random size (``city``, fewer at small
sizes) on the floor, the plane y = 0, which a primary ray meets (or not) before it enters the
tree; the boxes are the BVH's leaves (one primitive each), so one slab test serves the inner
nodes and the primitives. A node is ``NODE`` words: its box (min x,
y, z, max x, y, z, Q8 units), then for an inner node its two children and the axis it was split
on, for a leaf -1, the albedo and 0. The entry axis of the slab test gives the hit face's
normal. ``image[p]`` is the pixel's shade, ``visits[p]`` the nodes its rays tested. Coordinates
stay within ±32 units and inverse directions within 2^17, so no product leaves int32
(``tests/test_rend.py`` checks)."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, ctaid, kernel, ntid, tid
from reconverge.kernels.suite import Case, SuiteKernel, int32_array

FRAC = 8  # Q8
NODE = 9
DEPTH = 16  # stack words per thread
GRID = 4  # the city's blocks across, at most
INV = 1 << 16  # 1 / d in Q8 is INV // d
BIG = 1 << 17  # 1 / 0
MAX_T = 1 << 16
UNBOUNDED = 1 << 30  # beyond every slab's t (at most 2^31 / 2^FRAC)
SHADOW = 3  # the shadow ray is (light - hit) >> SHADOW, so the light is at t = 2^(FRAC + SHADOW)
EYE_Y, EYE_Z, TILT, SPAN = 5 << FRAC, -12 << FRAC, 90, 150
LIGHT_X, LIGHT_Y, LIGHT_Z = -7 << FRAC, 12 << FRAC, -5 << FRAC
SKY, AMBIENT = 120, 60
FLOOR, FLOOR_ALBEDO = -2, 200  # the floor's "node" and albedo
FACE_X, FACE_Y, FACE_Z = 150, 196, 110  # the light's contribution by the face's axis


@kernel
def rend(image: Array, visits: Array, nodes: Array, stack: Array, width: int, height: int):
    p = ctaid() * ntid() + tid()
    if p >= width * height:
        return
    base = p * DEPTH
    ox = 0
    oy = EYE_Y
    oz = EYE_Z
    dx = (2 * (p % width) + 1 - width) * SPAN // width
    dy = (height - 1 - 2 * (p // width)) * SPAN // width - TILT
    dz = 1 << FRAC
    best = MAX_T
    skip = -1
    color = 0
    albedo = 0
    face = 0
    count = 0
    for ray in range(2):  # the primary ray, then the shadow ray
        ix = INV // dx if dx != 0 else BIG
        iy = INV // dy if dy != 0 else BIG
        iz = INV // dz if dz != 0 else BIG
        hit = -1
        axis = 0
        if ray == 0 and dy < 0 and ((-oy * iy) >> FRAC) < best:  # the floor, y = 0 (no box)
            best = (-oy * iy) >> FRAC
            hit = FLOOR
            axis = 1
        sp = 0
        node = 0
        while node >= 0:
            count += 1
            b = node * NODE
            lo = -UNBOUNDED
            hi = UNBOUNDED
            entry = 0
            for a in range(3):  # the slabs: the latest entry and the earliest exit
                o = ox if a == 0 else (oy if a == 1 else oz)
                inv = ix if a == 0 else (iy if a == 1 else iz)
                t0 = ((nodes[b + a] - o) * inv) >> FRAC
                t1 = ((nodes[b + a + 3] - o) * inv) >> FRAC
                if min(t0, t1) > lo:
                    lo = min(t0, t1)
                    entry = a
                hi = min(hi, max(t0, t1))
            if hi >= max(lo, 0) and lo < best and node != skip:
                if nodes[b + 6] < 0:  # a primitive, nearer than the best so far
                    best = max(lo, 0)
                    hit = node
                    axis = entry
                    if ray == 1:
                        break
                else:  # visit the near child, push the far one
                    split = nodes[b + 8]
                    d = dx if split == 0 else (dy if split == 1 else dz)
                    near = nodes[b + 6] if d >= 0 else nodes[b + 7]
                    stack[base + sp] = nodes[b + 7] if d >= 0 else nodes[b + 6]
                    sp += 1
                    node = near
                    continue
            if sp == 0:
                node = -1
            else:
                sp -= 1
                node = stack[base + sp]
        if ray == 1:  # lit unless something stands between the point and the light
            if hit == -1:
                light = FACE_X if face == 0 else (FACE_Y if face == 1 else FACE_Z)
                color += (albedo * light) >> FRAC
            break
        if hit == -1:
            color = SKY + (dy >> 2)
            break
        albedo = FLOOR_ALBEDO if hit == FLOOR else nodes[hit * NODE + 7]
        face = axis
        ox += (best * dx) >> FRAC
        oy += (best * dy) >> FRAC
        oz += (best * dz) >> FRAC
        color = (albedo * AMBIENT) >> FRAC
        dx = (LIGHT_X - ox) >> SHADOW
        dy = (LIGHT_Y - oy) >> SHADOW
        dz = (LIGHT_Z - oz) >> SHADOW
        d = dx if face == 0 else (dy if face == 1 else dz)
        mid = -UNBOUNDED  # the floor's top side
        if hit != FLOOR:
            mid = nodes[hit * NODE + face] + nodes[hit * NODE + face + 3]  # twice the middle
        if (d > 0) == ((ox if face == 0 else (oy if face == 1 else oz)) << 1 < mid):
            break  # the face (on the box's min or max side) looks away from the light
        best = 1 << (FRAC + SHADOW)
        skip = hit
    image[p] = color
    visits[p] = count


def city(blocks: int, seed: int) -> list[tuple[np.ndarray, int]]:
    """The boxes (2 x 3 corners in units) and their albedos: the buildings of the ``blocks`` x
    ``blocks`` blocks that have one (the first, and about two in three of the others)."""
    rng = np.random.default_rng(seed)
    boxes = []
    for i in range(blocks):
        for j in range(blocks):
            if rng.random() < 1 / 3 and i + j > 0:
                continue
            cx = 3 * (i - (blocks - 1) / 2) + rng.uniform(-0.4, 0.4)
            cz = 1 + 3 * j + rng.uniform(-0.4, 0.4)
            hx, hz, h = rng.uniform(0.4, 1.1), rng.uniform(0.4, 1.1), rng.uniform(0.5, 5)
            box = np.array([[cx - hx, 1 / 64, cz - hz], [cx + hx, h, cz + hz]])
            boxes.append((box, int(rng.integers(100, 256))))
    return boxes


def bvh(boxes: list[tuple[np.ndarray, int]]) -> list[list[int]]:
    """The nodes (``NODE`` words each, the root first) of a BVH over ``boxes``, split at the
    median of the box centres along the axis where they spread most."""
    q8 = [(np.round(b * (1 << FRAC)).astype(np.int64), a) for b, a in boxes]
    nodes: list[list[int]] = []

    def build(items: list[tuple[np.ndarray, int]]) -> int:
        index = len(nodes)
        corners = np.stack([b for b, _ in items])
        bounds = [*corners[:, 0].min(axis=0).tolist(), *corners[:, 1].max(axis=0).tolist()]
        nodes.append(bounds)
        if len(items) == 1:
            nodes[index] += [-1, items[0][1], 0]
            return index
        centres = corners.sum(axis=1)
        axis = int(np.argmax(np.ptp(centres, axis=0)))
        order = sorted(range(len(items)), key=lambda k: (centres[k, axis], k))
        half = len(items) // 2
        left = build([items[k] for k in order[:half]])
        right = build([items[k] for k in order[half:]])
        nodes[index] += [left, right, axis]
        return index

    build(q8)
    return nodes


def depth(nodes: list[list[int]], node: int = 0) -> int:
    """The levels of the tree below ``node`` (a leaf: 1)."""
    left, right = nodes[node][6], nodes[node][7]
    return 1 if left < 0 else 1 + max(depth(nodes, left), depth(nodes, right))


def make(size: int, seed: int) -> Case:
    """A ``size`` x ``2 size / 3`` image of the city of ``seed`` (``size // 4`` blocks across,
    2 to ``GRID``), one thread per pixel."""
    width, height = size, max(2, size * 2 // 3)
    nodes = bvh(city(min(GRID, max(2, size // 4)), seed))
    if depth(nodes) > DEPTH:
        raise ValueError(f"rend: the BVH is {depth(nodes)} levels deep, the stack {DEPTH}")
    pixels = width * height
    block = min(64, pixels)
    grid = -(-pixels // block)
    return Case(
        {"image": np.zeros(pixels, np.int32), "visits": np.zeros(pixels, np.int32),
         "nodes": int32_array(np.ravel(nodes)), "stack": np.zeros(grid * block * DEPTH, np.int32),
         "width": width, "height": height},
        grid=grid, block=block,
    )  # fmt: skip


SPEC = SuiteKernel(
    "rend", rend, make, 8, "seed 002 REND: BVH traversal with a stack", eval_size=48,
    provenance=(
        "Seed 002 Table 1 REND (Tsiodras' renderer): a per-thread stack traversal of a BVH, "
        "near child first with culling, then an any-hit shadow ray, so per-thread work varies "
        "widely; differs in box primitives (a city of boxes, not triangle meshes), Q8 fixed "
        "point and no reflections."
    ),
)  # fmt: skip
