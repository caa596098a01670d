"""``reconverge eval``: run the seeds' experiments (all, or the ones named) on the golden SM,
through the result cache and a process pool, and write docs/evaluation.md with its figures."""

from __future__ import annotations

import argparse
import json
import os
from contextlib import ExitStack
from dataclasses import asdict
from pathlib import Path

from reconverge.golden import cli
from reconverge.golden.cli.command import Command
from reconverge.golden.evaluation.base import FULL, SMOKE
from reconverge.golden.evaluation.experiments import EXPERIMENTS
from reconverge.golden.evaluation.report import EvaluationError, check, render, sections
from reconverge.golden.evaluation.runner import DEFAULT_CACHE, Cache, run_tasks
from reconverge.golden.executor import cluster_executor
from reconverge.golden.output import check_output, write_output

SCALES = {"full": FULL, "smoke": SMOKE}


def _configure(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "experiments", nargs="*", metavar="EXPERIMENT",
        help="which to run (default: all): "
        + ", ".join(f"{e.name} ({e.title})" for e in EXPERIMENTS.values()),
    )  # fmt: skip
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="runs in parallel")
    p.add_argument("--json", action="store_true", help="print the claims and runs as JSON")
    p.add_argument("--output", default="docs/evaluation.md", help="the page to write")
    p.add_argument(
        "--figures", type=cli.parse_folder,
        help="folder of the PNG figures (default: figures/ beside --output)",
    )  # fmt: skip
    p.add_argument("--cache", type=cli.parse_folder, default=str(DEFAULT_CACHE),
                   help="folder of kept results")  # fmt: skip
    p.add_argument("--no-cache", action="store_true", help="run everything again")
    p.add_argument(
        "--cluster", metavar="ADDRESS",
        help="run on the workers of this Dask distributed scheduler (tcp://HOST:PORT)",
    )  # fmt: skip
    p.add_argument(
        "--scale", choices=sorted(SCALES), default="full",
        help="full: the evaluation machines and sizes; smoke: a small slice of each experiment",
    )  # fmt: skip


#: The most processes ``--jobs`` starts: more than a few per processor only waits.
MAX_JOBS = 4 * (os.cpu_count() or 1)


def _run(ns: argparse.Namespace) -> int:
    names = ns.experiments or list(EXPERIMENTS)
    unknown = [n for n in names if n not in EXPERIMENTS]
    if unknown:
        raise cli.UsageError(
            f"unknown experiment {', '.join(unknown)} (known: {', '.join(EXPERIMENTS)})"
        )
    if not 1 <= ns.jobs <= MAX_JOBS:
        raise cli.UsageError(
            f"--jobs must be from 1 to {MAX_JOBS} (4 per processor of this machine), not {ns.jobs}"
        )
    output = Path(ns.output)
    figures = Path(ns.figures) if ns.figures else output.parent / "figures"
    check_output(output)
    # the figures' folder (made if missing) must take files: checked before any run
    if figures.exists() and not figures.is_dir():
        raise cli.UsageError(f"{figures} is a file, not the figures' folder")
    check_output(figures / "probe.png" if figures.is_dir() else figures)
    scale = SCALES[ns.scale]
    tasks = [t for n in names for t in EXPERIMENTS[n].tasks(scale)]
    cache = None if ns.no_cache else Cache(Path(ns.cache))
    with ExitStack() as stack:
        executor = stack.enter_context(cluster_executor(ns.cluster)) if ns.cluster else None
        results = run_tasks(tasks, jobs=ns.jobs, cache=cache, executor=executor)
    try:
        check(results)
    except EvaluationError as exc:
        print(f"reconverge eval: {exc}")
        return cli.EXIT_FAILED
    parts = sections(scale, names, results)
    page = render(scale, parts, results, figures, os.path.relpath(figures, output.parent))
    write_output(output, page + "\n")
    claims = [c for s in parts for c in s.claims]
    if ns.json:
        print(json.dumps({
            "claims": [{**asdict(c), "direction_agrees": c.direction_agrees,
                        "size_agrees": c.size_agrees} for c in claims],
            "runs": list(results.values()),
        }, indent=1))  # fmt: skip
        return cli.EXIT_OK
    agree = sum(c.direction_agrees and c.size_agrees for c in claims)
    print(f"{output}: {len(claims)} claims of the seeds, {agree} agree in direction and size; "
          f"{len(results)} runs; figures in {figures}")  # fmt: skip
    return cli.EXIT_OK


COMMANDS = (Command("eval", _configure, _run),)
