"""One run of the evaluation: a suite kernel at a size, on a named machine
(:data:`~reconverge.golden.params.CONFIGS`), under one divergence configuration, compiled
with one register allocator. A :class:`Task` is a frozen value with a content key (the task and
the version of the code that computes it), so that the runner can keep its result and reuse it
until either changes."""

from __future__ import annotations

import hashlib
import json
import re
import sys
import time
from dataclasses import asdict, dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

from reconverge.golden.compiler.errors import CompileError
from reconverge.golden.config import ScoreboardKind
from reconverge.golden.params import CONFIGS, Machine
from reconverge.golden.policies import Mechanism, WarpFormation, variant
from reconverge.golden.sm.run import run_sm
from reconverge.kernels import benchmarks

#: Packages of golden that no run imports: the area model, the command line, test support
#: (of the evaluation only this module counts).
NOT_RUN = ("cost", "cli", "testing")
#: A kernel module's imports of other kernel modules.
KERNEL_IMPORT = re.compile(r"^from reconverge\.kernels\.(\w+) import", re.MULTILINE)


@dataclass(frozen=True)
class Task:
    """A kernel at ``size`` on machine ``machine`` under the policy ``variant`` (a name of
    :mod:`reconverge.golden.policies`) and ``hws``, compiled with ``allocator`` into ``regs``
    registers; ``split_table``/``scoreboard``, when set, override the machine's, and
    ``icache``/``l1d`` the size in bytes of its instruction or L1 data cache (0: none);
    ``squeeze`` False runs hws without its squeeze (golden only, like dynamic warp formation:
    applied to the configuration in :func:`run_task`)."""

    kernel: str
    size: int
    machine: str
    variant: str = "sps"
    hws: bool = False
    squeeze: bool = True
    allocator: str = "linear"
    regs: int = 16
    seed: int = 0
    split_table: int | None = None
    scoreboard: str | None = None
    icache: int | None = None
    l1d: int | None = None

    @property
    def mechanism(self) -> Mechanism:
        return Mechanism(variant(self.variant), self.hws)

    @property
    def label(self) -> str:
        """The configuration's name in tables (the labels of ``reconverge compare``)."""
        return self.mechanism.label

    def params(self) -> Machine:
        """The machine with this task's overrides (dynamic warp formation is not hardware, so
        it is applied to the configuration only, in :func:`run_task`)."""
        params = CONFIGS[self.machine]
        geometry = params.geometry
        if self.split_table is not None:
            geometry = replace(geometry, split_table=self.split_table)
        config = replace(
            params.config.with_mechanism(self.mechanism),
            warp_formation=WarpFormation.STATIC,
            scoreboard=None if self.scoreboard is None else ScoreboardKind(self.scoreboard),
        )
        for name in ("icache", "l1d"):
            size, cache = getattr(self, name), getattr(config, name)
            if size is not None:
                if cache is None:
                    raise ValueError(f"machine {self.machine} has no {name} to resize")
                config = replace(config, **{name: replace(cache, size=size) if size else None})
        return replace(params, geometry=geometry, config=config)

    def key(self) -> str:
        """Content address: the task and the version of the code that computes it."""
        text = json.dumps(asdict(self), sort_keys=True) + code_version()
        text += kernel_version(self.kernel)
        return hashlib.sha256(text.encode()).hexdigest()


def _digest(paths: list[Path], root: Path) -> str:
    h = hashlib.sha256()
    for path in paths:
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


@cache
def code_version() -> str:
    """SHA-256 over the source of the models and the compiler (tests excluded)."""
    package = Path(__file__).resolve().parents[2]
    paths = []
    for path in sorted((package / "golden").rglob("*.py")):
        report = "evaluation" in path.parts and path.name != Path(__file__).name
        apart = "tests" in path.parts or any(p in path.parts for p in NOT_RUN)
        if not (report or apart):
            paths.append(path)
    return _digest(paths, package)


@cache
def kernel_version(kernel: str) -> str:
    """SHA-256 over a suite kernel's module, the kernel modules it imports, and the suite's
    common code and start-up files (so adding a kernel leaves the others' results valid)."""

    folder = Path(__file__).resolve().parents[2] / "kernels"
    module = Path(sys.modules[benchmarks()[kernel].kernel.fn.__module__].__file__ or "")
    seen = {folder / "suite.py", folder / "crt0.S", folder / "link.ld"}
    todo = [module]
    while todo:
        path = todo.pop()
        if path not in seen:
            seen.add(path)
            todo += [folder / f"{m}.py" for m in KERNEL_IMPORT.findall(path.read_text())]
    return _digest(sorted(seen), folder)


#: Per-run metrics kept in a result (the per-warp lists are summarised, not kept).
KEPT = (
    "cycles", "idle_cycles", "ipc", "warp_instructions", "thread_instructions",
    "simd_efficiency", "lane_utilisation", "issue_passes", "memory_transactions",
    "shared_transactions", "bank_conflicts", "hint_instructions", "spill_loads",
    "spill_stores", "splits_per_warp", "max_splits_per_warp", "max_occupancy",
    "active_histogram", "hws_estimate", "tlp", "icache_accesses", "icache_misses",
    "icache_mpki", "l1d_accesses", "l1d_misses", "l1d_mpki",
)  # fmt: skip


@cache
def _reference(kernel: str, size: int, seed: int) -> dict[str, np.ndarray]:
    """The oracle's outputs, computed once per process (every configuration of a kernel at one
    size compares with the same)."""

    return benchmarks()[kernel].reference(size, seed)


def run_task(task: Task) -> dict[str, Any]:
    """Compile, bind and run the task on the golden SM; the kept metrics, the launch, whether
    the run ended cleanly, the output arrays that differ from the oracle's, a digest of the
    outputs (equal under every configuration), the bytes of its code and the seconds it
    took; for a kernel that does not compile (too few registers), the compiler's message as
    ``error``."""

    started = time.monotonic()
    params = task.params()
    config = replace(params.config.with_mechanism(task.mechanism), squeeze=task.squeeze)
    kernel = benchmarks()[task.kernel]
    try:
        launch, case = kernel.launch(
            task.allocator, task.regs, task.size, task.seed, hints=config.explicit
        )
    except CompileError as exc:  # e.g. too few registers for this allocator
        return {"task": asdict(task), "error": str(exc), "seconds": time.monotonic() - started}
    run_config = launch.config(
        case.grid, case.block, geometry=params.geometry, memmap=params.memmap,
        step_limit=config.max_cycles,
    )  # fmt: skip
    result = run_sm(launch.image, run_config, config)
    assert result.metrics is not None
    outputs = launch.outputs(result)
    reference = _reference(task.kernel, task.size, task.seed)
    digest = hashlib.sha256()
    for name in sorted(outputs):
        digest.update(name.encode() + np.ascontiguousarray(outputs[name]).tobytes())
    metrics = result.metrics.to_json()
    return {
        "task": asdict(task),
        "grid": case.grid,
        "block": case.block,
        "ok": result.ok,
        "fault": None if result.fault is None else str(result.fault),
        "oracle_mismatches": [
            n for n, want in reference.items() if not np.array_equal(outputs[n], want)
        ],
        "outputs_digest": digest.hexdigest(),
        "code_bytes": sum(len(s.data) for s in launch.image.segments if "x" in s.flags),
        "metrics": {k: metrics[k] for k in KEPT},
        "seconds": time.monotonic() - started,
    }
