"""``make soak``: random programs (:mod:`.randprog`) against every configuration for a given
time, on several processes; prints the programs, thread instructions and mismatches, and saves
every failing program — shrunk by Hypothesis to a small reproducer — as a regression test.

    python -m reconverge.golden.testing.soak [--seconds S] [--jobs N] [--json FILE]
        [--cluster ADDRESS]

Each program runs as in ``golden/tests/test_sm_random.py`` (:mod:`.randcheck`): the functional
model and every policy, dwf and en-dwf, with hws off and on, at the three geometries of
``GEOMETRY_SET``, all of which must agree. A reproducer goes to
``golden/testing/regressions/<hash>.S`` with its launch in its first line;
``golden/tests/test_regressions.py`` runs every file there the same way. With ``--cluster`` the
``--jobs`` workers run on the workers of a Dask scheduler (:mod:`reconverge.golden.executor`),
which write reproducers to ``--out`` on their own file system.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from reconverge.golden.asm import assemble
from reconverge.golden.errors import UserError
from reconverge.golden.executor import executor, run_each
from reconverge.golden.functional import run
from reconverge.golden.output import write_output
from reconverge.golden.testing import randcheck as checks
from reconverge.golden.testing.randprog import Program, programs, render

REGRESSIONS = Path(__file__).parent / "regressions"
BATCH = 20  # programs per Hypothesis run (a fresh random seed each)
HEADER = "# reconverge soak reproducer: grid {grid} block {block}\n"


@dataclass
class Tally:
    programs: int = 0
    thread_instructions: int = 0  # the functional model's, per configuration run
    runs: int = 0  # SM runs (configuration x hws x geometry)
    mismatches: int = 0
    seconds: float = 0.0
    reproducers: tuple[str, ...] = ()

    def add(self, other: Tally) -> None:
        self.programs += other.programs
        self.thread_instructions += other.thread_instructions
        self.runs += other.runs
        self.mismatches += other.mismatches
        self.reproducers += other.reproducers


def check(program: Program, block: int, grid: int, tally: Tally) -> None:
    """``test_sm_random``'s check of one program, counted."""
    image = assemble(render(program), "random.S")
    for geometry in checks.GEOMETRY_SET:
        reference = run(image, checks.launch_for(geometry, block, grid))
        tally.thread_instructions += (
            int(reference.thread_instructions.sum()) * 2 * len(checks.CONFIGS)
        )
        checks.check_every_policy(program, geometry, block, grid)
        tally.runs += 2 * len(checks.CONFIGS)
    tally.programs += 1


def save_reproducer(source: str, block: int, grid: int, directory: Path) -> Path:
    """Write a failing program (atomically) as ``<hash>.S`` with its launch in line 1."""
    directory.mkdir(parents=True, exist_ok=True)
    text = HEADER.format(grid=grid, block=block) + source
    path = directory / f"{hashlib.sha1(text.encode()).hexdigest()[:12]}.S"
    write_output(path, text)
    return path


def worker(index: int, seconds: float, directory: Path, batch_size: int = BATCH) -> Tally:
    """Batches of ``batch_size`` programs until ``seconds`` have passed; a progress line after
    each batch."""
    tally = Tally()
    start = time.monotonic()
    deadline = start + seconds
    last: dict[str, object] = {}

    # no explain phase: it runs variants after the minimal example, which ``last`` would keep
    @settings(max_examples=batch_size, deadline=None, database=None,
              phases=(Phase.generate, Phase.shrink),
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(program=programs(), block=st.integers(1, 24), grid=st.integers(1, 2))
    def batch(program: Program, block: int, grid: int) -> None:
        last.update(program=program, block=block, grid=grid)
        check(program, block, grid, tally)

    while time.monotonic() < deadline:
        try:
            batch()
        except Exception:  # a mismatch: Hypothesis has shrunk it and replayed the minimal one
            tally.mismatches += 1
            path = save_reproducer(
                render(last["program"]),  # type: ignore[arg-type]
                last["block"],  # type: ignore[arg-type]
                last["grid"],  # type: ignore[arg-type]
                directory,
            )
            tally.reproducers += (str(path),)
        print(
            f"soak worker {index}: {tally.programs} programs, {tally.mismatches} mismatches, "
            f"{time.monotonic() - start:.0f} s",
            file=sys.stderr,
        )
    return tally


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600.0, help="how long to run")
    parser.add_argument("--jobs", type=int, default=2, help="processes")
    parser.add_argument("--json", help="also write the tally to this file")
    parser.add_argument("--out", default=str(REGRESSIONS), help="where reproducers go")
    parser.add_argument("--batch", type=int, default=BATCH,
                        help="programs per Hypothesis run (a fresh random seed each)")  # fmt: skip
    parser.add_argument("--cluster", metavar="ADDRESS",
                        help="run the --jobs workers on this Dask scheduler's workers")  # fmt: skip
    ns = parser.parse_args(argv)
    start = time.monotonic()
    jobs = max(1, ns.jobs)
    total = Tally()
    try:
        with executor(jobs, ns.cluster) as pool:
            work = [(i, ns.seconds, Path(ns.out), max(1, ns.batch)) for i in range(jobs)]
            for _, part in run_each(worker, work, pool):
                total.add(part)
    except UserError as exc:
        parser.error(str(exc))
    total.seconds = round(time.monotonic() - start, 1)
    configs = len(checks.CONFIGS)
    print(
        f"soak: {total.programs} programs in {total.seconds} s ({jobs} processes), each under "
        f"{configs} configurations x hws off/on x {len(checks.GEOMETRY_SET)} geometries: "
        f"{total.runs} SM runs, {total.thread_instructions:,} thread instructions, "
        f"{total.mismatches} mismatches"
    )
    for path in total.reproducers:
        print(f"  reproducer: {path}")
    if ns.json:
        write_output(ns.json, json.dumps(asdict(total), indent=1) + "\n")
    return 1 if total.mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
