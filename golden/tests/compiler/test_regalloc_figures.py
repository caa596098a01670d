"""Spill placement of seed 004 Ch. 4 on avgSquare with three registers: Fig 4.2 (linear scan,
every spill in local memory) and Fig 4.4 (the affine allocator: d in shared memory, N's
dynamic part in shared memory and N rebuilt from it)."""

from __future__ import annotations

import re

import numpy as np
import pytest

from reconverge.golden.compiler import Array, compile_kernel, device, kernel, regalloc, tid
from reconverge.golden.tests.compiler.helpers import run_case
from reconverge.kernels import avg_square
from reconverge.kernels.suite import Case, SuiteKernel, int32_array


def code(program) -> str:
    """The kernel body's assembly without comments."""
    return re.sub(r"[ \t]*#[^\n]*", "", program.asm.split("avgSquare.b0:")[1])


def placements(program, function: str = "avgSquare") -> dict[str, set[str]]:
    """Source variable -> the placements of its spilled registers."""
    out: dict[str, set[str]] = {}
    for vreg, place in program.allocations[function].spilled.items():
        for var in {v.var for v in vreg.values}:
            out.setdefault(var, set()).add(place.kind)
    return out


def test_fig_4_2_linear_scan_spills_s_d_and_n_to_local_memory() -> None:
    program = compile_kernel(avg_square.avgSquare, "linear", 3)
    spilled = placements(program)
    params = {"c", "m", "v"}
    # Fig 4.2: with three registers s, d and N get local slots; i stays in a register.
    assert set(spilled) - params == {"s", "d", "N"}
    for var in ("s", "d", "N"):
        assert spilled[var] == {regalloc.LOCAL}, var
    assert "i" not in spilled
    # The parameters are reloaded from their home at each use, never stored
    # (Fig 4.2 loads c, m and v from the parameter space: "ld.global [0] c").
    for var in params:
        assert spilled[var] == {regalloc.PARAM}
    local = [k for k in program.spill_code.values() if k == "local"]
    assert local and "shared" not in program.spill_code.values()
    assert "gp" not in code(program)


def test_fig_4_4_affine_allocator_shares_d_and_rebuilds_n() -> None:
    program = compile_kernel(avg_square.avgSquare, "affine", 3)
    spilled = placements(program)
    assert spilled["s"] == {regalloc.LOCAL}  # divergent: stays in local memory
    assert regalloc.SHARED in spilled["d"]  # uniform: one slot per warp (row ii)
    assert spilled["N"] == {regalloc.SHARED_AFFINE}  # N = T + c*c (row iv)
    # The initial d = 0 is its own SSA value, a constant: rematerialised (row i).
    assert spilled["d"] <= {regalloc.SHARED, regalloc.REMAT_CONST}
    alloc = program.allocations["avgSquare"]
    n_place = next(p for r, p in alloc.spilled.items() if r.name.startswith("N"))
    assert n_place.slope == 1
    body = code(program)
    off = 4 * n_place.slot
    # Fig 4.4 L7: N's dynamic part (N - T) stored to shared memory ...
    assert re.search(rf"csrr (\w+), tid\n\s+sub \1, \w+, \1\n\s+sw \1, {off}\(gp\)", body)
    # ... and L9-L10: reloaded and N rebuilt as T + part before the loop test.
    assert re.search(rf"lw (\w+), {off}\(gp\)\n\s+csrr (\w+), tid\n\s+add \2, \2, \1", body)
    # d lives in shared memory: d = d + 1 in the loop loads and stores it there (L18-L20).
    d_slot = 4 * next(p.slot for r, p in alloc.spilled.items() if p.kind == regalloc.SHARED)
    assert re.search(
        rf"lw (\w+), {d_slot}\(gp\)\n\s+addi \1, \1, 1\n\s+sw \1, {d_slot}\(gp\)", body
    )
    assert program.shared_spill_per_warp == 8  # two words per warp (Sec 4.2.1)


@pytest.mark.parametrize("allocator", regalloc.ALLOCATORS)
@pytest.mark.parametrize("warp_size", [1, 4, 32])
def test_avg_square_three_registers_matches_oracle(allocator: str, warp_size: int) -> None:
    _, out, ref = run_case(avg_square.SPEC, allocator, 3, warp_size)
    for name, expected in ref.items():
        assert np.array_equal(out[name], expected), name


def test_loop_uniform_value_live_after_divergent_exit_stays_out_of_shared_memory() -> None:
    """sumTriangle's d_in is uniform inside the loop, but the threads leave the loop at
    different iterations and read it afterwards (d_out = eta(d_in)): one slot per warp would
    hand them the last thread's value, so it stays in local memory."""
    from reconverge.kernels import sum_triangle

    program = compile_kernel(sum_triangle.sumTriangle, "affine", 3)
    spilled = placements(program, "sumTriangle")
    assert regalloc.SHARED not in spilled.get("d", set())
    _, out, ref = run_case(sum_triangle.SPEC, "affine", 3, 32)
    assert np.array_equal(out["v"], ref["v"])


REMAT_AFFINE_KERNEL = """\
from reconverge.golden.compiler import *


@kernel
def k(out: Array, inp: Array, n: int):
    a = 3 * tid() + 5
    s = 0
    t = n
    for i in range(n):
        s = s + inp[i] * t
        t = t + s
    out[tid()] = s + a + t
"""


def test_fig_4_3_row_iii_a_known_affine_value_is_rematerialised() -> None:
    """Row (iii) of Fig 4.3: a spilled value whose state is (c1, c2), both known — here
    a = 3T + 5 across a loop that needs the registers — is never stored: each reload is the
    sequence c1 * T + c2."""
    from reconverge.golden.compiler import kernels_from_source, oracle
    from reconverge.golden.functional import run
    from reconverge.golden.geometry import Geometry

    k = kernels_from_source(REMAT_AFFINE_KERNEL, "<fig 4.3 iii>")["k"]
    program = compile_kernel(k, "affine", 3)
    (place,) = [p for r, p in program.allocations["k"].spilled.items() if r.name.startswith("a")]
    assert (place.kind, regalloc.ROWS[place.kind]) == (regalloc.REMAT_AFFINE, "iii")
    assert (place.slope, place.offset, place.slot) == (3, 5, None)
    body = re.sub(r"[ \t]*#[^\n]*", "", program.asm)
    assert re.search(r"csrr (\w+), tid\n\s+li (\w+), 3\n\s+mul \1, \1, \2\n\s+addi \1, \1, 5", body)
    args = {"out": np.zeros(8, np.int32), "inp": np.arange(8, dtype=np.int32), "n": 5}
    ref = oracle.run(k, args, block=8, warp_size=4)
    launch = program.bind(**args)
    result = run(launch.image, launch.config(1, 8, geometry=Geometry(4, 4))).check()
    assert np.array_equal(launch.read(result, "out"), ref["out"])


# A device function that assigns one of its parameters again (``best``, the running minimum):
# spilled, the parameter cannot be reloaded from its home, which holds the argument (found by
# the evaluation: raytrace's ``tmax`` at 6 registers drew the farthest triangle).
@device
def _nearest(xs: Array, n, a, b, best):
    i = 0
    hit = -1
    while i < n:
        v = xs[i] * a + b
        if v < best:
            best = v
            hit = i
        i += 1
    return hit * 1000 + best


@kernel
def _reassigned(out: Array, xs: Array, n: int):
    t = tid()
    out[t] = _nearest(xs, n, t + 1, t * 3, 1 << 20) + t


def _reassigned_case(size: int, seed: int) -> Case:
    rng = np.random.default_rng(seed)
    xs = int32_array(rng.integers(0, 1000, 20))
    return Case({"out": np.zeros(size, np.int32), "xs": xs, "n": 20}, grid=1, block=size)


REASSIGNED = SuiteKernel(
    "reassigned", _reassigned, _reassigned_case, 8, "parameter reassigned",
    provenance="No paper benchmark: a test case for spilling a reassigned parameter.",
)  # fmt: skip


@pytest.mark.parametrize("allocator", regalloc.ALLOCATORS)
@pytest.mark.parametrize("regs", [3, 5, 6])
def test_a_reassigned_parameter_spills_like_a_value(allocator: str, regs: int) -> None:
    program, outputs, reference = run_case(REASSIGNED, allocator, regs)
    assert np.array_equal(outputs["out"], reference["out"])
    best = {p.kind for v, p in program.allocations["_nearest"].spilled.items()
            if "best" in {x.var for x in v.values}}  # fmt: skip
    assert regalloc.PARAM not in best


@pytest.mark.parametrize(("name", "allocator", "regs"), [
    ("lud", "affine", 8), ("raytrace", "affine", 8), ("raytrace", "linear", 9),
    ("nqueens", "divergent", 8), ("mandelbrot", "remat", 6),
])  # fmt: skip
def test_fig_5_7_pattern_counts_are_the_spill_code_emitted(
    name: str, allocator: str, regs: int
) -> None:
    """Each counted load (store) pattern that goes to memory is one spill load (store) of its
    memory in the emitted code; rematerialised patterns have none (seed 004 Fig 5.7)."""
    from reconverge.kernels import benchmarks

    program = compile_kernel(benchmarks()[name].kernel, allocator, regs)
    counted: dict[tuple[str, str], int] = {}
    for alloc in program.allocations.values():
        for (kind, way), n in alloc.patterns.items():
            memory = regalloc.Placement(kind).memory or (
                "param" if kind == regalloc.PARAM else None
            )
            if memory is not None:
                counted[memory, way] = counted.get((memory, way), 0) + n
    emitted: dict[tuple[str, str], int] = {}
    for pc, way in program.image.spills.items():
        key = (program.spill_code[pc], way)
        emitted[key] = emitted.get(key, 0) + 1
    # a parameter needs no store: its home holds it
    counted = {k: n for k, n in counted.items() if k != ("param", "store")}
    assert counted == emitted
    assert sum(counted.values()) > 0
