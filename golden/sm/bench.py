"""``make bench``: how fast the golden models simulate, measured side by side in one run on the
same compiled kernels: thread instructions per second of the functional model and of the
cycle-level SM under a few policies, and the SM's slowdown relative to the functional model
(each the best of ``--repeat`` runs)."""

from __future__ import annotations

import argparse
import sys
import time

from reconverge.golden.functional import LaunchConfig, RunResult, run
from reconverge.golden.geometry import Geometry
from reconverge.golden.image import Image
from reconverge.golden.sm.config import Policy, SMConfig, WarpFormation
from reconverge.golden.sm.core import run_sm
from reconverge.kernels import suite

KERNELS = ("loopBreak", "mandelbrot", "bfs", "interpreter")
MODELS: dict[str, SMConfig | None] = {
    "functional": None,
    "sm sps": SMConfig(policy=Policy.SPS),
    "sm stackless": SMConfig(policy=Policy.STACKLESS),
    "sm mp-orec": SMConfig(policy=Policy.MP_OREC),
    "sm en-dwf": SMConfig(warp_formation=WarpFormation.EN_DWF),
}


def best_time(
    image: Image, launch: LaunchConfig, config: SMConfig | None, repeat: int
) -> tuple[float, RunResult]:
    """The best wall time of ``repeat`` runs on the functional model (``config`` None) or the
    cycle-level SM, and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run(image, launch) if config is None else run_sm(image, launch, config)
        best = min(best, time.perf_counter() - start)
    assert result is not None
    return best, result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warp-size", type=int, default=8)
    parser.add_argument("--simd-width", type=int, default=4)
    ns = parser.parse_args(argv)
    geometry = Geometry(warp_size=ns.warp_size, simd_width=ns.simd_width)
    kernels = suite()
    print(f"thread instructions per second (W = {ns.warp_size}, L = {ns.simd_width}; best of "
          f"{ns.repeat}); in brackets: time relative to the functional model")  # fmt: skip
    header = f"{'kernel':<12}" + "".join(f"{name:>22}" for name in MODELS)
    print(header)
    for name in KERNELS:
        spec = kernels[name]
        cells, base = [], 0.0
        for config in MODELS.values():
            launch, case = spec.launch(hints=config is None or config.explicit)
            launch_config = launch.config(case.grid, case.block, geometry=geometry)
            seconds, result = best_time(launch.image, launch_config, config, ns.repeat)
            base = base or seconds
            result.check()
            rate = int(result.thread_instructions.sum()) / seconds
            cells.append(f"{rate:>12,.0f} ({seconds / base:4.1f}x)")
        print(f"{name:<12}" + "".join(f"{c:>22}" for c in cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
