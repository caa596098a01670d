"""What the tests of the seed benchmarks (``kernels/tests/test_mand.py`` and its siblings,
docs/compiler.md) share: a kernel compiled and run on the cycle-level SM under several policies,
each run's memory held to the oracle, and int32 arithmetic of a host-side model."""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from reconverge.golden.config import SMConfig
from reconverge.golden.geometry import Geometry
from reconverge.golden.policies import Policy
from reconverge.golden.sm.core import SMResult
from reconverge.golden.sm.run import run_sm
from reconverge.kernels.suite import SuiteKernel

#: The policies a benchmark's test runs under by default: the stack, the stack-less order and
#: the split tables with early reconvergence (seed 002's baseline and its proposal).
POLICIES = (Policy.SPS, Policy.STACKLESS, Policy.MP_OREC)
#: Their geometry: the seeds' W = 32 on L = 8 (the evaluation's warps).
GEOMETRY = Geometry(warp_size=32, simd_width=8)


@functools.cache
def cached_reference(spec: SuiteKernel, size: int, seed: int) -> dict[str, np.ndarray]:
    """The oracle's outputs for ``spec``'s case, computed once per test session."""
    return spec.reference(size, seed)


def run_policies(
    spec: SuiteKernel,
    policies: Sequence[Policy] = POLICIES,
    size: int | None = None,
    seed: int = 0,
    geometry: Geometry = GEOMETRY,
    allocator: str = "linear",
    regs: int = 12,
) -> dict[Policy, SMResult]:
    """Run ``spec``'s case at ``size`` on the golden SM under each policy (the hinted binary
    for the policies that use hints), asserting that every output array equals the oracle's
    and that the policies' cycles are not all the same (the seed benchmarks diverge)."""
    expected_outputs = spec.reference(size, seed)
    results = {}
    for policy in policies:
        config = SMConfig(policy=policy)
        launch, case = spec.launch(allocator, regs, size, seed, hints=config.explicit)
        result = run_sm(launch.image, launch.config(case.grid, case.block, geometry=geometry),
                        config)  # fmt: skip
        assert result.fault is None, f"{spec.name} {policy.value}: {result.fault}"
        outputs = launch.outputs(result)
        for name, expected in expected_outputs.items():
            assert np.array_equal(outputs[name], expected), f"{spec.name} {policy.value}: {name}"
        results[policy] = result
    cycles = {r.metrics.cycles for r in results.values() if r.metrics is not None}
    assert len(policies) < 2 or len(cycles) > 1, f"{spec.name}: every policy took {cycles}"
    return results


def wrap32(values: np.ndarray) -> np.ndarray:
    """int64 values taken modulo 2**32 into the int32 range (RV32's wrapping arithmetic)."""
    return (values + (1 << 31)) % (1 << 32) - (1 << 31)


def c_div(a: np.ndarray, b: np.ndarray | int) -> np.ndarray:
    """Integer division truncating towards zero, as C and RISC-V ``div`` (``//`` floors)."""
    q = np.abs(a) // np.abs(b)
    return np.where((np.asarray(a) < 0) != (np.asarray(b) < 0), -q, q)


def fits_int32(*values: np.ndarray | int) -> bool:
    """Whether every value lies in the int32 range (no intermediate of the kernel wraps)."""
    return all(
        np.size(v) == 0 or (int(np.min(v)) >= -(1 << 31) and int(np.max(v)) < 1 << 31)
        for v in values
    )
