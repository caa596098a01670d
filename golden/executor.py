"""Where independent jobs run: in this process, in a pool of processes on this machine, or on
the workers of a Dask distributed cluster (``--cluster ADDRESS`` of ``reconverge eval``,
``make cosim`` and ``make soak``). A job is a module-level function of picklable arguments:
a worker imports it from the installed package, so a cluster's workers must have the same
version of it installed (docs/testing.md, "On a cluster")."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Executor, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from typing import Any, TypeVar

from reconverge.golden.errors import UserError

T = TypeVar("T")

#: Seconds to wait for a Dask scheduler before giving up.
CONNECT_SECONDS = 10


@contextmanager
def cluster_executor(address: str) -> Iterator[Executor]:
    """An executor whose jobs run on the workers of the Dask distributed scheduler at
    ``address``; the connection closes on exit. A scheduler that cannot be reached, or a
    missing ``distributed`` package, is a :class:`UserError`."""
    try:
        from distributed import Client
    except ImportError:
        raise UserError(
            "--cluster needs Dask distributed (pip install distributed; make setup installs it)"
        ) from None
    try:
        client = Client(address, timeout=CONNECT_SECONDS)
    except (OSError, ValueError) as exc:
        raise UserError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    try:
        yield client.get_executor(pure=False)
    finally:
        client.close()


@contextmanager
def executor(jobs: int, cluster: str | None = None) -> Iterator[Executor | None]:
    """The cluster's executor when ``cluster`` names a scheduler; else a pool of ``jobs``
    processes, or None (run in this process) for one job."""
    if cluster:
        with cluster_executor(cluster) as pool:
            yield pool
    elif jobs > 1:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            yield pool
    else:
        yield None


def run_each(
    job: Callable[..., T], arguments: Sequence[tuple[Any, ...]], pool: Executor | None
) -> Iterator[tuple[tuple[Any, ...], T]]:
    """``job(*args)`` for every ``args`` of ``arguments``, on ``pool`` (in this process when
    None), as each finishes: (args, result). A job's exception is raised here."""
    if pool is None:
        for args in arguments:
            yield args, job(*args)
        return
    pending: dict[Future[T], tuple[Any, ...]] = {pool.submit(job, *a): a for a in arguments}
    while pending:
        finished, _ = wait(pending, return_when=FIRST_COMPLETED)
        for future in finished:
            yield pending.pop(future), future.result()
