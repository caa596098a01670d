"""``make bench``: how fast the golden models simulate, measured side by side in one run on the
same compiled kernels: thread instructions per second of the functional model and of the
cycle-level SM under a few policies, and the SM's slowdown relative to the functional model
(each the best of ``--repeat`` runs); then the co-simulation speed, SM clock cycles per second
of the SM's Verilog on Icarus and Verilator at two geometries (one run each)."""

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
    parser.add_argument("--no-cosim", action="store_true",
                        help="skip the co-simulation speeds (SM builds take minutes)")  # fmt: skip
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
    if not ns.no_cosim:
        cosim_speeds()
    return 0


#: The co-simulation speed section: one kernel under sps at the cosim configuration with two
#: geometries, on both simulators.
COSIM_KERNEL = "loopBreak"
COSIM_GEOMETRIES = {"W=8 L=4": (8, 4), "W=16 L=4": (16, 4)}
COSIM_SIMS = ("icarus", "verilator")


def cosim_speeds() -> None:
    """SM clock cycles per second of the SM's Verilog on each simulator, side by side
    (``reconverge.testbench.cosim.cycles_per_second``: the build and the instruction-store
    load excluded; the builds are cached under build/cosim/)."""
    from dataclasses import replace

    from reconverge.golden.errors import UserError
    from reconverge.golden.sm.params import COSIM
    from reconverge.testbench.cosim import cycles_per_second

    launch, case = suite()[COSIM_KERNEL].launch(hints=True)
    print(f"\nco-simulation: SM clock cycles per second of the SM's Verilog running "
          f"{COSIM_KERNEL} under sps (cosim configuration; build and load excluded)")  # fmt: skip
    print(f"{'geometry':<12}" + "".join(f"{sim:>16}" for sim in COSIM_SIMS))
    for label, (warp_size, simd_width) in COSIM_GEOMETRIES.items():
        geometry = replace(COSIM.geometry, warp_size=warp_size, simd_width=simd_width)
        params = replace(COSIM, geometry=geometry)
        config = launch.config(case.grid, case.block, geometry=geometry, memmap=params.memmap)
        cells = []
        for sim in COSIM_SIMS:
            try:
                rate = cycles_per_second(launch.image, config, params, sim=sim)
                cells.append(f"{rate:,.0f}")
            except UserError as exc:  # no usable Verilator
                cells.append("-")
                print(f"  {sim}: {exc}", file=sys.stderr)
        print(f"{label:<12}" + "".join(f"{c:>16}" for c in cells), flush=True)


if __name__ == "__main__":
    sys.exit(main())
