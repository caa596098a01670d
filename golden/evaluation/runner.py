"""Runs the evaluation's tasks: each result is kept in a content-addressed cache (a file named
by :meth:`Task.key`, so a re-run computes only the tasks whose kernel, inputs, configuration
or code changed), the others run as independent processes of a pool, and a status line on a
terminal shows how far the runs are."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Executor
from contextlib import nullcontext
from pathlib import Path
from typing import Any, TextIO

from reconverge.golden.evaluation.tasks import Task, run_task
from reconverge.golden.executor import executor as local_executor
from reconverge.golden.executor import run_each
from reconverge.golden.output import write_output

#: Where results are kept unless told otherwise.
DEFAULT_CACHE = Path("build/eval-cache")

Result = dict[str, Any]


class Cache:
    """One JSON file per task key under ``root`` (written atomically)."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def path(self, task: Task) -> Path:
        """The file of ``task``'s result."""
        key = task.key()
        return self.root / key[:2] / f"{key}.json"

    def get(self, task: Task) -> Result | None:
        path = self.path(task)
        if not path.is_file():
            return None
        try:
            entry = json.loads(path.read_text())
        except (OSError, ValueError):
            return None  # a damaged entry is computed again
        return entry if isinstance(entry, dict) and "task" in entry else None

    def put(self, task: Task, result: Result) -> None:
        path = self.path(task)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_output(path, json.dumps(result) + "\n")


class Status:
    """``eval: 12/40 runs (8 cached), 1m05s, about 3m left`` redrawn on a terminal's standard
    error; nothing when it is not a terminal."""

    def __init__(self, total: int, stream: TextIO | None = None) -> None:
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.show = self.stream.isatty()
        self.start = time.monotonic()
        self.done = self.cached = 0

    def update(self, *, cached: bool = False) -> None:
        self.done += 1
        self.cached += cached
        if not self.show:
            return
        elapsed = time.monotonic() - self.start
        ran = self.done - self.cached
        left = self.total - self.done
        eta = f", about {_minutes(elapsed / ran * left)} left" if ran and left else ""
        self.stream.write(
            f"\reval: {self.done}/{self.total} runs ({self.cached} cached), "
            f"{_minutes(elapsed)}{eta}\x1b[K"
        )
        self.stream.flush()

    def close(self) -> None:
        if self.show:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _minutes(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    return f"{m}m{s:02d}s"


def run_tasks(
    tasks: Iterable[Task],
    *,
    jobs: int = 1,
    cache: Cache | None = None,
    run: Callable[[Task], Result] = run_task,
    status: Status | None = None,
    executor: Executor | None = None,
) -> dict[Task, Result]:
    """Every task's result: from the cache when there, otherwise computed (on ``executor``,
    a cluster's, when given; else in ``jobs`` processes when more than one) and stored."""
    todo = list(dict.fromkeys(tasks))
    status = status or Status(len(todo))
    results: dict[Task, Result] = {}
    missing = []
    for task in todo:
        hit = cache.get(task) if cache else None
        if hit is not None:
            results[task] = hit
            status.update(cached=True)
        else:
            missing.append(task)

    def keep(task: Task, result: Result) -> None:
        results[task] = result
        if cache:
            cache.put(task, result)
        status.update()

    given = nullcontext(executor) if executor is not None else None
    try:
        with given or local_executor(jobs if len(missing) > 1 else 1) as pool:
            for (task,), result in run_each(run, [(t,) for t in missing], pool):
                keep(task, result)
    finally:
        status.close()
    return {task: results[task] for task in todo}
