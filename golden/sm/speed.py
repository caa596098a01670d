"""Simulation speed of the golden models on one kernel: thread instructions per second of the
functional model or the cycle-level SM under a policy (the best of ``repeat`` runs), printed as
one JSON object.

    python -m reconverge.golden.sm.speed KERNEL SIZE MODEL [--warp-size W] [--simd-width L]

``make bench`` runs it in this tree and, for the ratio against the code before the speed work,
in a checkout of that revision: so it imports only what that revision has too (the kernel
suite, ``run``, ``run_sm`` and their configuration), and nothing else of this package.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

#: The models ``make bench`` compares: the functional model, and the SM under a policy or with
#: enhanced dynamic warp formation.
MODELS = ("functional", "sps", "stackless", "mp-orec", "en-dwf")


def measure(kernel: str, size: int, model: str, warp_size: int, simd_width: int, repeat: int
            ) -> dict[str, float | int]:  # fmt: skip
    """Best wall time of ``repeat`` runs (compilation and input generation excluded), thread
    instructions, and the rate; the run's result is checked against the kernel's oracle."""
    from reconverge.golden.functional import run
    from reconverge.golden.geometry import Geometry
    from reconverge.golden.sm.config import Policy, SMConfig, WarpFormation
    from reconverge.golden.sm.core import run_sm
    from reconverge.kernels import suite

    spec = suite()[kernel]
    if model == "functional":
        config = None
    elif model == "en-dwf":
        config = SMConfig(warp_formation=WarpFormation.EN_DWF)
    else:
        config = SMConfig(policy=Policy(model))
    launch, case = spec.launch(size=size, hints=config is None or config.explicit)
    geometry = Geometry(warp_size=warp_size, simd_width=simd_width)
    launch_config = launch.config(case.grid, case.block, geometry=geometry)
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        if config is None:
            result = run(launch.image, launch_config)
        else:
            result = run_sm(launch.image, launch_config, config)
        best = min(best, time.perf_counter() - start)
    assert result is not None
    result.check()
    outputs = launch.outputs(result)
    for name, want in spec.reference(size).items():
        if outputs[name].tolist() != want.tolist():
            raise AssertionError(f"{kernel} under {model}: {name} differs from the oracle")
    instructions = int(result.thread_instructions.sum())
    return {"seconds": best, "instructions": instructions, "rate": instructions / best}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernel")
    parser.add_argument("size", type=int)
    parser.add_argument("model", choices=MODELS)
    parser.add_argument("--warp-size", type=int, default=32)
    parser.add_argument("--simd-width", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    ns = parser.parse_args(argv)
    out = measure(ns.kernel, ns.size, ns.model, ns.warp_size, ns.simd_width, ns.repeat)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
