"""``make bench``: how fast the golden models and the command line are, each beside the same
measurement of the code before the speed work (:data:`BASELINE`, checked out of git into a
temporary directory and run in the same session), so the ratios are measured side by side:

* start-up: wall time of ``reconverge --help`` and of ``reconverge exec`` on a small program,
  and the floor, Python importing NumPy (best of :data:`STARTUP_RUNS`);
* thread instructions per second of the functional model and of the cycle-level SM under a
  few policies on the divergent suite kernels at :data:`SIZES`, W = 32, L = 8
  (:mod:`reconverge.golden.evaluation.speed`, a fresh process per measurement);
* the physical reference: qemu-riscv32 running the GNU-built bare-metal program of the tests
  thread by thread, beside the golden models running it (:func:`reference`);
* the co-simulation speed: SM clock cycles per second of the SM's Verilog on Icarus and
  Verilator at the cosim configuration and at the seeds' warp size (W = 32, L = 8, 8 warp
  slots; no baseline: the SM's Verilog is not what the speed work changes).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from io import BytesIO
from pathlib import Path
from typing import Any

from reconverge.golden.evaluation import speed
from reconverge.golden.evaluation.speed import FUNCTIONAL, MODELS

#: The revision the speed work started from (issue 9): the ratios are against it.
BASELINE = "fd85766"
#: The divergent suite kernels and their sizes (full warps at W = 32 where the kernel's block
#: grows with its size; mandelbrot and bfs have blocks of 16 threads).
SIZES = {"loopBreak": 256, "mandelbrot": 32, "bfs": 256, "interpreter": 256}
STARTUP_RUNS = 5
ROOT = Path(__file__).resolve().parents[2]
#: The packages of the source tree, by directory (pyproject.toml, package-dir).
PACKAGES = ("golden", "hdl", "kernels", "testbench")
DEMO = ROOT / "kernels" / "divergent_demo.S"
SPEED_SCRIPT = "reconverge_speed.py"


@contextmanager
def baseline_tree(revision: str) -> Iterator[Path | None]:
    """A directory to put on PYTHONPATH that imports ``reconverge`` as it was at ``revision``
    (None when git or the revision is not available: a source tarball, a shallow clone)."""
    try:
        archive = subprocess.run(
            ["git", "-C", str(ROOT), "archive", "--format=tar", revision, *PACKAGES],
            capture_output=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError) as exc:
        print(f"no baseline ({revision} not available: {exc})", file=sys.stderr)
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="reconverge-baseline-") as tmp:
        package = Path(tmp) / "reconverge"
        package.mkdir()
        (package / "__init__.py").write_text("")
        with tarfile.open(fileobj=BytesIO(archive)) as tar:
            tar.extractall(package, filter="data")
        # this tree's measurement, which imports only what the revision has too
        shutil.copy(speed.__file__, Path(tmp) / SPEED_SCRIPT)
        yield Path(tmp)


def _python(args: Sequence[str], tree: Path | None) -> subprocess.CompletedProcess[str]:
    """Run this interpreter with ``args``, importing ``reconverge`` from ``tree`` if given."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree), env.get("PYTHONPATH")]))
    return subprocess.run(
        [sys.executable, *args], env=env, capture_output=True, text=True, check=True, cwd=ROOT
    )


def startup_seconds(args: Sequence[str], tree: Path | None) -> float:
    """Best wall time of :data:`STARTUP_RUNS` runs of ``python args``."""
    best = float("inf")
    for _ in range(STARTUP_RUNS):
        start = time.perf_counter()
        _python(args, tree)
        best = min(best, time.perf_counter() - start)
    return best


def measured(
    kernel: str,
    model: str,
    ns: argparse.Namespace,
    tree: Path | None,
    *options: str,
    size: int | None = None,
) -> dict[str, Any]:
    """:mod:`reconverge.golden.evaluation.speed` on ``kernel`` at ``size`` (default: its size in
    :data:`SIZES`), in a fresh process."""
    script = ["-m", speed.__name__] if tree is None else [str(tree / SPEED_SCRIPT)]
    args = [*script, kernel, str(size or SIZES[kernel]), model]
    args += ["--warp-size", str(ns.warp_size), "--simd-width", str(ns.simd_width)]
    args += ["--repeat", str(ns.repeat), *options]
    result: dict[str, Any] = json.loads(_python(args, tree).stdout)
    return result


def model_rate(kernel: str, model: str, ns: argparse.Namespace, tree: Path | None) -> float:
    """Thread instructions per second."""
    return float(measured(kernel, model, ns, tree)["rate"])


def _ratio(now: float, before: float | None, *, higher_is_better: bool = True) -> str:
    if before is None:
        return "-"
    return f"{(now / before if higher_is_better else before / now):.2f}x"


def startup(revision: str, tree: Path | None) -> None:
    cli = ["-m", "reconverge.golden.cli"]
    rows = {
        "python + numpy (floor)": ["-c", "import numpy"],
        "reconverge --help": [*cli, "--help"],
        "reconverge exec": [*cli, "exec", str(DEMO), "--block", "16"],
    }
    print(f"start-up: seconds (best of {STARTUP_RUNS}); goal under 0.3 s")
    print(f"{'command':<26}{'now':>10}{revision:>10}{'speed-up':>10}")
    for label, args in rows.items():
        now = startup_seconds(args, None)
        before = startup_seconds(args, tree) if tree is not None else None
        cell = "-" if before is None else f"{before:.3f}"
        print(f"{label:<26}{now:>10.3f}{cell:>10}{_ratio(now, before, higher_is_better=False):>10}",
              flush=True)  # fmt: skip


def models(ns: argparse.Namespace, tree: Path | None) -> None:
    print(f"\nthread instructions per second (W = {ns.warp_size}, L = {ns.simd_width}; best of "
          f"{ns.repeat}): now, and the speed-up over {ns.baseline}")  # fmt: skip
    print("goals: 5 M functional, 1 M cycle-level SM; functional-ref is the functional "
          "model's NumPy reference (the compiled loop's oracle)")  # fmt: skip
    print(f"{'kernel':<18}" + "".join(f"{m:>22}" for m in MODELS))
    for kernel, size in SIZES.items():
        cells = []
        for model in MODELS:
            now = model_rate(kernel, model, ns, None)
            before = model_rate(kernel, model, ns, tree) if tree is not None else None
            cells.append(f"{now:>12,.0f} ({_ratio(now, before)})")
        print(f"{f'{kernel} {size}':<18}" + "".join(f"{c:>22}" for c in cells), flush=True)


#: Where the time goes (``--profile``): these kernels under these models.
PROFILED = (
    ("interpreter", "functional"),
    ("interpreter", "functional-ref"),
    ("interpreter", "sps"),
    ("bfs", "mp-orec"),
)
PROFILE_ROWS = 8


def profiles(ns: argparse.Namespace, tree: Path | None) -> None:
    """The share of run time by module (one run under cProfile), now and at the baseline."""
    for kernel, model in PROFILED:
        print(f"\n{kernel} {SIZES[kernel]} on {model}: share of time by module (cProfile)")
        columns = {"now": measured(kernel, model, ns, None, "--profile")["profile"]}
        if tree is not None:
            columns[ns.baseline] = measured(kernel, model, ns, tree, "--profile")["profile"]
        for label, shares in columns.items():
            top = [(name, share) for name, share in shares.items() if share >= 0.005]
            top = top[:PROFILE_ROWS]
            print(f"  {label:<8} " + ", ".join(f"{name} {share:.0%}" for name, share in top))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warp-size", type=int, default=32)
    parser.add_argument("--simd-width", type=int, default=8)
    parser.add_argument("--baseline", default=BASELINE, help="git revision to compare with")
    parser.add_argument("--profile", action="store_true",
                        help="also where the time goes, by module (cProfile)")  # fmt: skip
    parser.add_argument("--no-cosim", action="store_true",
                        help="skip the co-simulation speeds (SM builds take minutes)")  # fmt: skip
    ns = parser.parse_args(argv)
    with baseline_tree(ns.baseline) as tree:
        startup(ns.baseline, tree)
        models(ns, tree)
        if ns.profile:
            profiles(ns, tree)
    reference(ns)
    if not ns.no_cosim:
        cosim_speeds()
    return 0


#: The physical reference: the bare-metal C program of the tests, built by GNU gcc, on
#: qemu-riscv32 thread by thread (qemu_main.S calls main for each thread id in turn, in one
#: process) beside the golden models running the same program as one launch.
PROGRAM_DIR = ROOT / "golden" / "tests" / "programs" / "baremetal"
SOURCE = PROGRAM_DIR / "main.c"
REFERENCE_THREADS = 256  # main.c's MAX_THREADS
QEMU_RUNS = 20
#: README.md's bare-metal build. For qemu: the thread id from qemu_main.S instead of the SIMT
#: CSRs; crt0.S's call of main to qemu_main.S's loop over the threads (``--wrap``); the data on
#: a page of its own (qemu's ELF loader faults on a page shared by the text and data segments,
#: which Linux's loader allows).
GCC_FLAGS = ("-march=rv32ima_zicsr", "-mabi=ilp32", "-O2", "-nostdlib", "-nostartfiles",
             "-T", str(ROOT / "kernels" / "link.ld"))  # fmt: skip
QEMU_FLAGS = ("-DQEMU_USER", "-Wl,--wrap=main", "-Wl,--section-start=.data=0x80010000")


def build_reference(gcc: str, directory: Path, *flags: str) -> tuple[Path, Path]:
    """The program built for the SM (``simt.elf``) and for qemu-riscv32 (``qemu.elf``) in
    ``directory``, with more compiler ``flags`` (-DFAIL)."""
    simt, user = directory / "simt.elf", directory / "qemu.elf"
    crt0 = ROOT / "kernels" / "crt0.S"
    for elf, extra, sources in (
        (simt, (), [crt0, SOURCE]),
        (user, QEMU_FLAGS, [crt0, PROGRAM_DIR / "qemu_main.S", SOURCE]),
    ):
        cmd = [gcc, *GCC_FLAGS, *extra, *flags, *map(str, sources), "-o", str(elf)]
        subprocess.run(cmd, check=True)
    return simt, user


def _qemu_seconds(qemu: str, elf: Path, threads: int) -> float:
    """Best wall time of :data:`QEMU_RUNS` runs of the program's ``threads`` threads."""
    best = float("inf")
    for _ in range(QEMU_RUNS):
        start = time.perf_counter()
        done = subprocess.run([qemu, str(elf), str(threads)], capture_output=True)
        best = min(best, time.perf_counter() - start)
        if done.returncode:
            raise RuntimeError(f"qemu-riscv32 {elf.name} {threads}: exit status {done.returncode}")
    return best


def reference(ns: argparse.Namespace) -> None:
    """Thread instructions per second of qemu-riscv32 (its start-up subtracted: the same
    program with no threads) and of the golden models on the same GNU-built program."""
    gcc, qemu = shutil.which("riscv64-unknown-elf-gcc"), shutil.which("qemu-riscv32")
    if gcc is None or qemu is None:
        print("\nno physical reference: it needs riscv64-unknown-elf-gcc and qemu-riscv32 "
              "(make setup installs them)")  # fmt: skip
        return
    with tempfile.TemporaryDirectory(prefix="reconverge-reference-") as tmp:
        simt, user = build_reference(gcc, Path(tmp))
        start_up = _qemu_seconds(qemu, user, 0)
        total = _qemu_seconds(qemu, user, REFERENCE_THREADS)
        golden = {m: measured(str(simt), m, ns, None, size=REFERENCE_THREADS)
                  for m in ("functional", "functional-ref", "sps")}  # fmt: skip
    instructions = golden["functional"]["instructions"]
    net = instructions / (total - start_up)
    print(f"\nphysical reference: {SOURCE.relative_to(ROOT)} built by gcc -O2, "
          f"{REFERENCE_THREADS} threads (blocks of W = {ns.warp_size}, L = {ns.simd_width}): "
          f"{instructions:,} thread instructions (golden's count)")  # fmt: skip
    print(f"  qemu-riscv32, thread by thread in one process: {total * 1e3:.2f} ms, "
          f"{start_up * 1e3:.2f} ms of it start-up (best of {QEMU_RUNS}): {net / 1e6:,.0f} M "
          f"per second net of start-up ({instructions / total / 1e6:,.0f} M with it)")  # fmt: skip
    for model, r in golden.items():
        name = model if model in FUNCTIONAL else f"SM {model}"
        print(f"  golden {name}: {r['rate']:,.0f} per second (qemu net {net / r['rate']:,.0f}x)")


#: The co-simulation speed section: one kernel under sps at the cosim configuration with two
#: geometries, on both simulators.
COSIM_KERNEL = "loopBreak"
COSIM_SIMS = ("icarus", "verilator")


def cosim_speeds() -> None:
    """SM clock cycles per second of the SM's Verilog on each simulator, side by side
    (``reconverge.testbench.cosim.cycles_per_second``: the build and the instruction-store
    load excluded; the builds are cached under build/cosim/)."""
    from dataclasses import replace

    from reconverge.golden.errors import UserError
    from reconverge.golden.params import COSIM
    from reconverge.kernels import suite
    from reconverge.testbench.cosim import cycles_per_second
    from reconverge.testbench.cosim_plan import COSIM_GEOMETRY, GEOMETRIES, SEEDS_GEOMETRY

    launch, case = suite()[COSIM_KERNEL].launch(hints=True)
    print(f"\nco-simulation: SM clock cycles per second of the SM's Verilog running "
          f"{COSIM_KERNEL} under sps (cosim configuration; build and load excluded)")  # fmt: skip
    print(f"{'geometry':<14}" + "".join(f"{sim:>16}" for sim in COSIM_SIMS))
    for label in (COSIM_GEOMETRY, SEEDS_GEOMETRY):
        geometry = GEOMETRIES[label]
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
        print(f"{label:<14}" + "".join(f"{c:>16}" for c in cells), flush=True)


if __name__ == "__main__":
    sys.exit(main())
