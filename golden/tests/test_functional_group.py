"""The functional model's issue group (``_Group``) is only a cache of the stack-less
arbitration (seed 000 Sec 4.1): every warp issues the same instructions for the same threads as
when it arbitrates the minimum SP:PC before every issue."""

from __future__ import annotations

import numpy as np
import pytest

from reconverge.golden import functional
from reconverge.golden.functional import LaunchConfig, run
from reconverge.golden.geometry import Geometry
from reconverge.golden.image import Image
from reconverge.kernels import suite

#: Calls and returns (sp moves), loops with breaks, data-dependent branches, barriers.
KERNELS = ("recursion", "condCall", "loopBreak", "bfs", "nqueens", "interpreter", "laplace3d")


def issues(image: Image, config: LaunchConfig) -> tuple[list[tuple[int, ...]], np.ndarray]:
    """(block, warp, pc, lanes...) of every warp instruction, and each thread's count."""
    seen: list[tuple[int, ...]] = []

    def observe(block: int, warp: int, pc: int, lanes: np.ndarray, _: np.ndarray) -> None:
        seen.append((block, warp, pc, *lanes.tolist()))

    result = run(image, config, observer=observe).check()
    return seen, result.thread_instructions


@pytest.mark.parametrize("kernel", KERNELS)
@pytest.mark.parametrize("warp_size", [4, 32])
def test_the_group_issues_as_arbitration_every_time(
    kernel: str, warp_size: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    launch, case = suite()[kernel].launch()
    config = launch.config(case.grid, case.block, geometry=Geometry(warp_size, simd_width=4))
    cached, cached_counts = issues(launch.image, config)

    original = functional._Warp.issue

    def arbitrating(warp: functional._Warp) -> tuple[int, np.ndarray]:
        warp.flush()  # no group kept: the minimum SP:PC over every runnable thread
        return original(warp)

    monkeypatch.setattr(functional._Warp, "issue", arbitrating)
    reference, reference_counts = issues(launch.image, config)
    assert cached == reference
    assert np.array_equal(cached_counts, reference_counts)
    assert len({row[3:] for row in cached}) > 1  # the kernel diverged
