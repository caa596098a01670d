"""The rend kernel (seed 002 Table 1 REND, BVH traversal with a per-thread stack): the golden
SM under two policies against the oracle, the oracle against a recursive host traversal of
the same BVH (its shading written again here), the BVH's nearest hit against a brute-force
test of every box, and the benchmark's shape: the load imbalance across threads and warps."""

from __future__ import annotations

import numpy as np
import pytest

from reconverge.golden.policies import Policy
from reconverge.golden.testing.benchmarks import c_div, cached_reference, fits_int32, run_policies
from reconverge.kernels import rend

SPEC = rend.SPEC
F = rend.FRAC
SHAPE_SIZE = 24  # 384 pixels: 12 warps, the top ones over the roofs


def slab(box: list[int], o: list[int], inv: list[int]) -> tuple[int, int, int]:
    """Entry and exit t of the ray into ``box`` and the entry's axis."""
    ts = []
    for k in range(3):
        products = [(box[k] - o[k]) * inv[k], (box[k + 3] - o[k]) * inv[k]]
        assert fits_int32(np.array(products))
        ts.append(sorted(p >> F for p in products))
    axis = max(range(3), key=lambda k: (ts[k][0], -k))  # the first axis of the largest entry
    return ts[axis][0], min(t[1] for t in ts), axis


class Ray:
    """A ray traced down the BVH recursively: ``best``, ``hit`` and its ``axis``, ``visits``.
    A primary ray meets the floor (y = 0) first if it heads down."""

    def __init__(self, nodes: list[list[int]], o: list[int], d: list[int], best: int,
                 skip: int, any_hit: bool) -> None:  # fmt: skip
        self.nodes, self.o, self.d, self.skip, self.any_hit = nodes, o, d, skip, any_hit
        self.inv = [int(c_div(rend.INV, c)) if c else rend.BIG for c in d]
        self.best, self.hit, self.axis, self.visits = best, -1, 0, 0
        self.floor = (-o[1] * self.inv[1]) >> F if not any_hit and d[1] < 0 else rend.MAX_T
        if self.floor < best:
            self.best, self.hit, self.axis = self.floor, rend.FLOOR, 1
        self.visit(0)

    def visit(self, i: int) -> bool:
        """Test node ``i`` and its subtree; whether an any-hit ray is done."""
        self.visits += 1
        node = self.nodes[i]
        lo, hi, axis = slab(node, self.o, self.inv)
        if hi < max(lo, 0) or lo >= self.best or i == self.skip:
            return False
        if node[6] < 0:
            self.best, self.hit, self.axis = max(lo, 0), i, axis
            return self.any_hit
        near, far = (node[6], node[7]) if self.d[node[8]] >= 0 else (node[7], node[6])
        return self.visit(near) or self.visit(far)

    def brute_force(self) -> tuple[int, bool]:
        """The nearest entry t over every primitive, and whether any primitive is met."""
        ts = []
        for i, node in enumerate(self.nodes):
            lo, hi, _ = slab(node, self.o, self.inv)
            if node[6] < 0 and i != self.skip and hi >= max(lo, 0):
                ts.append(max(lo, 0))
        return min([*ts, self.floor]), bool(ts)


def render(size: int, seed: int) -> tuple[list[int], list[int]]:
    case = SPEC.case(size, seed)
    w, h = case.args["width"], case.args["height"]
    flat = case.args["nodes"].tolist()
    nodes = [flat[k : k + rend.NODE] for k in range(0, len(flat), rend.NODE)]
    light = [rend.LIGHT_X, rend.LIGHT_Y, rend.LIGHT_Z]
    image, visits = [], []
    for p in range(w * h):
        d = [int(c_div((2 * (p % w) + 1 - w) * rend.SPAN, w)),
             int(c_div((h - 1 - 2 * (p // w)) * rend.SPAN, w)) - rend.TILT, 1 << F]  # fmt: skip
        primary = Ray(nodes, [0, rend.EYE_Y, rend.EYE_Z], d, rend.MAX_T, -1, False)
        nearest, _ = primary.brute_force()
        assert primary.best == nearest, p
        count = primary.visits
        if primary.hit == -1:
            color = rend.SKY + (d[1] >> 2)
        else:
            k = primary.axis
            floor = primary.hit == rend.FLOOR
            albedo = rend.FLOOR_ALBEDO if floor else nodes[primary.hit][7]
            point = [o + ((primary.best * c) >> F) for o, c in zip(primary.o, d, strict=True)]
            color = (albedo * rend.AMBIENT) >> F
            towards = [(lt - x) >> rend.SHADOW for lt, x in zip(light, point, strict=True)]
            box = [] if floor else nodes[primary.hit]
            on_max_side = floor or 2 * point[k] >= box[k] + box[k + 3]  # the floor: its top
            if (towards[k] > 0) == on_max_side:  # the face looks towards the light
                tmax = 1 << (F + rend.SHADOW)
                shadow = Ray(nodes, point, towards, tmax, primary.hit, True)
                assert (shadow.hit >= 0) == shadow.brute_force()[1], p
                count += shadow.visits
                if shadow.hit < 0:
                    color += (albedo * (rend.FACE_X, rend.FACE_Y, rend.FACE_Z)[k]) >> F
        image.append(color)
        visits.append(count)
    return image, visits


@pytest.mark.parametrize(("size", "seed"), [(SPEC.default_size, 0), (16, 1)])
def test_oracle_is_the_host_traversal(size: int, seed: int) -> None:
    image, visits = render(size, seed)
    reference = cached_reference(SPEC, size, seed)
    assert reference["image"].tolist() == image
    assert reference["visits"].tolist() == visits


def test_golden_sm_matches_the_oracle_under_two_policies() -> None:
    run_policies(SPEC, (Policy.SPS, Policy.MP_OREC))


def test_work_is_imbalanced_across_threads_and_warps() -> None:
    """REND's shape: a ray missing the city's box tests the root alone, one among the buildings
    dozens of nodes; within a warp of 32 the threads' work differs by more than 2x, and some
    warps finish after a fraction of the work of others (their longest threads differ by more
    than 2x)."""
    visits = cached_reference(SPEC, SHAPE_SIZE, 1)["visits"]
    assert visits.max() > 2 * max(1, int(np.median(visits[visits > 1]) // 2))
    warps = visits[: len(visits) // 32 * 32].reshape(-1, 32)
    assert (warps.max(axis=1) > 2 * warps.min(axis=1)).any()
    assert warps.max(axis=1).max() > 2 * warps.max(axis=1).min()
    assert (visits == 1).any() and visits.max() >= 20
