"""Simulation speed of the golden models on one kernel: thread instructions per second of the
functional model or the cycle-level SM under a policy (the best of ``repeat`` runs), printed as
one JSON object.

    python -m reconverge.golden.evaluation.speed KERNEL SIZE MODEL [--warp-size W] [--simd-width L]
    python -m reconverge.golden.evaluation.speed PROGRAM.elf THREADS MODEL [...]

A program (an ELF file) runs as THREADS / W blocks of W threads, each thread must exit 0.

``make bench`` runs it in this tree and, for the ratio against the code before the speed work,
in a checkout of that revision: so it imports only what that revision has too (the kernel
suite, ``run``, ``run_sm`` and their configuration), and nothing else of this package.
"""

from __future__ import annotations

import argparse
import cProfile
import inspect
import json
import pstats
import sys
import time
from pathlib import Path
from typing import Any

#: The models ``make bench`` compares: the functional model (``functional``: compiled where a C
#: compiler is, ``functional-ref``: its NumPy reference), and the SM under a policy or with
#: enhanced dynamic warp formation.
MODELS = ("functional", "functional-ref", "sps", "stackless", "mp-orec", "en-dwf")
FUNCTIONAL = ("functional", "functional-ref")


def measure(kernel: str, size: int, model: str, warp_size: int, simd_width: int, repeat: int,
            profile: bool = False) -> dict[str, Any]:  # fmt: skip
    """Best wall time of ``repeat`` runs (compilation and input generation excluded), thread
    instructions, and the rate; the run's result is checked against the kernel's oracle (a
    program's: every thread exits 0). ``profile``: one more run under cProfile, its time by
    module (:func:`time_by_module`)."""
    from reconverge.golden.elf import read_elf
    from reconverge.golden.functional import LaunchConfig, run
    from reconverge.golden.geometry import Geometry
    from reconverge.kernels import suite

    try:  # this tree's modules
        from reconverge.golden.config import SMConfig
        from reconverge.golden.policies import Policy, WarpFormation
        from reconverge.golden.sm.run import run_sm
    except ImportError:  # the baseline revision of make bench kept them in golden.sm
        from reconverge.golden.sm.config import Policy, SMConfig, WarpFormation  # type: ignore
        from reconverge.golden.sm.core import run_sm  # type: ignore

    if model in FUNCTIONAL:
        config = None
    elif model == "en-dwf":
        config = SMConfig(warp_formation=WarpFormation.EN_DWF)
    else:
        config = SMConfig(policy=Policy(model))
    geometry = Geometry(warp_size=warp_size, simd_width=simd_width)
    if kernel.endswith(".elf"):
        image = read_elf(Path(kernel).read_bytes(), kernel)
        launch_config = LaunchConfig(size // warp_size, warp_size, geometry=geometry)
        reference = None
    else:
        spec = suite()[kernel]
        launch, case = spec.launch(size=size, hints=config is None or config.explicit)
        image = launch.image
        launch_config = launch.config(case.grid, case.block, geometry=geometry)
        reference = spec.reference(size)

    # a revision before the compiled loop has one functional model, the reference
    engine = {"engine": "reference"} if "engine" in inspect.signature(run).parameters else {}

    def once() -> Any:
        if model == "functional-ref":
            return run(image, launch_config, **engine)
        if config is None:
            return run(image, launch_config)
        return run_sm(image, launch_config, config)

    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = once()
        best = min(best, time.perf_counter() - start)
    assert result is not None
    result.check()
    if reference is None:
        if result.exit_codes.any():
            raise AssertionError(f"{kernel} under {model}: a thread exited non-zero")
    else:
        outputs = launch.outputs(result)
        for name, want in reference.items():
            if outputs[name].tolist() != want.tolist():
                raise AssertionError(f"{kernel} under {model}: {name} differs from the oracle")
    instructions = int(result.thread_instructions.sum())
    out: dict[str, Any] = {"seconds": best, "instructions": instructions}
    out["rate"] = instructions / best
    if profile:
        profiler = cProfile.Profile()
        profiler.runcall(once)
        out["profile"] = time_by_module(pstats.Stats(profiler))
    return out


def time_by_module(stats: pstats.Stats) -> dict[str, float]:
    """The share of the profiled time spent in each module's own code (modules by directory
    and name, NumPy as one, the interpreter's built-ins as one), largest first."""
    by: dict[str, float] = {}
    for (path, _, _), (_, _, own, _, _) in stats.stats.items():  # type: ignore[attr-defined]
        parts = Path(path).parts
        if "numpy" in parts:
            name = "numpy"
        elif not path.endswith(".py"):
            name = "builtins"
        else:
            name = "/".join(parts[-2:])
        by[name] = by.get(name, 0.0) + own
    total = sum(by.values()) or 1.0
    return {k: round(v / total, 3) for k, v in sorted(by.items(), key=lambda kv: -kv[1])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernel")
    parser.add_argument("size", type=int)
    parser.add_argument("model", choices=MODELS)
    parser.add_argument("--warp-size", type=int, default=32)
    parser.add_argument("--simd-width", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="time by module (cProfile)")
    ns = parser.parse_args(argv)
    out = measure(ns.kernel, ns.size, ns.model, ns.warp_size, ns.simd_width, ns.repeat, ns.profile)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
