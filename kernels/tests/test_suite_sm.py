"""Every suite kernel, compiled, on the cycle-level SM under every policy (with and without
hws, and dynamic warp formation), matching the oracle: the compiler's hints agree with the
binary's immediate postdominators (the SM rejects a hint that does not), and no policy changes
what a kernel computes. Policies that use hints run the hinted binary, the others the
hint-free one."""

from __future__ import annotations

import numpy as np
import pytest

from reconverge.golden.config import SMConfig
from reconverge.golden.geometry import Geometry
from reconverge.golden.policies import Policy, WarpFormation
from reconverge.golden.sm.core import SMResult
from reconverge.golden.sm.run import run_sm
from reconverge.kernels import suite

SUITE = suite()
CONFIGS = [
    *(SMConfig(policy=p) for p in Policy),
    SMConfig(policy=Policy.PPC, hints=False),
    SMConfig(warp_formation=WarpFormation.DWF),
    SMConfig(warp_formation=WarpFormation.EN_DWF),
]


def check(
    name: str, geometry: Geometry, configs: list[SMConfig], allocator: str, regs: int = 8
) -> list[SMResult]:
    """Run suite kernel ``name`` under each configuration, each matching the oracle; the
    results, in the order of ``configs``."""
    spec = SUITE[name]
    reference = spec.reference()
    launches = {hints: spec.launch(allocator, regs, hints=hints) for hints in (True, False)}
    results = []
    for config in configs:
        launch, case = launches[config.explicit]
        result = run_sm(launch.image, launch.config(case.grid, case.block, geometry=geometry),
                        config)  # fmt: skip
        label = f"{name} {config.policy.value} {config.warp_formation.value} hws={config.hws}"
        assert result.fault is None, f"{label}: {result.fault}"
        outputs = launch.outputs(result)
        for array, expected in reference.items():
            assert np.array_equal(outputs[array], expected), f"{label}: {array} differs"
        assert result.metrics is not None
        assert (result.metrics.counters.hint_instructions > 0) <= config.explicit, label
        results.append(result)
    return results


@pytest.mark.parametrize("name", list(SUITE))
@pytest.mark.parametrize("hws", [False, True])
def test_every_policy_runs_the_suite(name: str, hws: bool) -> None:
    configs = [SMConfig(**{**c.__dict__, "hws": hws}) for c in CONFIGS]
    check(name, Geometry(warp_size=8, simd_width=4), configs, "affine")


@pytest.mark.parametrize("name", list(SUITE))
def test_w_equals_l_and_wide_warps(name: str) -> None:
    """W = L and W = 32 with L = 8, under the three reconvergence families."""
    configs = [SMConfig(policy=p) for p in (Policy.SPS, Policy.STACKLESS, Policy.MP_OREC)]
    for geometry in (Geometry(warp_size=4, simd_width=4), Geometry(warp_size=32, simd_width=8)):
        check(name, geometry, configs, "linear")
