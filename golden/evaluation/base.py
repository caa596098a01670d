"""What every experiment of ``reconverge eval`` is made of (docs/evaluation.md): the scale it
runs at, its :class:`Claim` rows (a paper's number beside ours), the :class:`Section` it
reports, and the table and figure helpers of the sections."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from reconverge.golden.evaluation.tasks import Task
from reconverge.kernels import benchmarks

Result = dict[str, Any]
Results = dict[Task, Result]
#: A claim's bound (:attr:`Claim.bound`).
Bound = Literal["at least", "at most", "more than"] | None


@dataclass(frozen=True)
class Scale:
    """Where the experiments run: the machine of seeds 000, 002, 003 and 004, seed 001's
    machine (lanes fewer than threads, so hws can squeeze), the kernels, whether they run
    at their evaluation sizes or their (co-simulation) default sizes, and the machine with
    caches of seed 002's memory rows (Sec 6.3-6.4)."""

    machine: str
    quarter_machine: str
    kernels: tuple[str, ...]
    eval_sizes: bool = True
    memory_machine: str = "eval"

    def size(self, kernel: str) -> int:
        spec = benchmarks()[kernel]
        return (spec.eval_size or spec.default_size) if self.eval_sizes else spec.default_size


#: The evaluation proper (docs/evaluation.md).
FULL = Scale("eval", "eval-tesla", tuple(benchmarks()))
#: A slice of every experiment small enough for ``make test`` (the memory rows on the
#: evaluation machine, the co-simulation one having no caches).
SMOKE = Scale("cosim", "cosim", ("ifElse", "loopBreak", "nested"), eval_sizes=False)


def hmean(values: Sequence[float]) -> float:
    return len(values) / sum(1 / v for v in values) if values else 0.0


def amean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def some_kernels(n: int) -> str:
    """``1 kernel``, ``2 kernels``."""
    return "1 kernel" if n == 1 else f"{n} kernels"


@dataclass(frozen=True)
class Claim:
    """A number of a paper and ours for the same quantity, as a change from ``baseline`` (1.0
    for a ratio against a baseline configuration, 0.0 for a correlation). They agree in
    direction when both are above, both below, or both within 1 % of the baseline; in size
    when ours differs from the paper's change by at most ``tolerance`` of that change. A
    claim with a ``bound`` ("at least": the paper says "never worse"; "at most": the paper
    bounds a count; "more than": the paper reports a rise without its size) agrees in both
    when ours keeps to it. ``per_kernel`` and ``columns`` are
    the measurements ``ours`` is made of, from which its finding
    (:func:`~reconverge.golden.evaluation.findings.finding`) is written."""

    what: str
    source: str
    paper: float
    ours: float
    over: str  # which kernels (and which mean) ours covers
    baseline: float = 1.0
    tolerance: float = 0.5
    bound: Bound = None
    #: the quantity per kernel over the kernels ``ours`` covers (empty when ``ours`` is not a
    #: mean, maximum or minimum of per-kernel values)
    per_kernel: Mapping[str, float] = field(default_factory=dict, hash=False)
    #: other columns of the same runs: name (as in the section's tables) -> kernel -> value
    columns: Mapping[str, Mapping[str, float]] = field(default_factory=dict, hash=False)

    def sign(self, x: float) -> int:
        """Which way ``x`` lies from the baseline: 1 above, -1 below, 0 within 1 %."""
        return 0 if abs(x - self.baseline) < 0.01 else (1 if x > self.baseline else -1)

    @property
    def direction_agrees(self) -> bool:
        if self.bound == "at least":
            return self.ours >= self.paper - 0.01
        if self.bound == "at most":
            return self.ours <= self.paper + 0.01
        if self.bound == "more than":
            return self.ours >= self.paper + 0.01
        return self.sign(self.ours) == self.sign(self.paper)

    @property
    def size_agrees(self) -> bool:
        if self.bound is not None:
            return self.direction_agrees
        change = self.paper - self.baseline
        if abs(change) < 0.01:
            return abs(self.ours - self.baseline) < 0.01
        return abs((self.ours - self.baseline) - change) <= self.tolerance * abs(change)


@dataclass
class Section:
    """What an experiment reports: markdown lines, figures (file stem -> a function that
    draws into a matplotlib figure), and its claims."""

    title: str
    lines: list[str] = field(default_factory=list)
    figures: dict[str, Callable[[Any], None]] = field(default_factory=dict)
    claims: list[Claim] = field(default_factory=list)


@dataclass(frozen=True)
class Experiment:
    """An experiment of ``reconverge eval``: its name and title (the command's help), the
    runs it needs at a scale, and the section it makes of their results."""

    name: str
    title: str
    tasks: Callable[[Scale], list[Task]]
    report: Callable[[Scale, Results], Section]


# -- helpers --------------------------------------------------------------------------------


def md_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(r) + " |" for r in rows),
    ]


def bars(ax: Any, kernels: Sequence[str], series: dict[str, list[float]], ylabel: str) -> None:
    width = 0.8 / max(1, len(series))
    for i, (label, values) in enumerate(series.items()):
        ax.bar([x + i * width for x in range(len(kernels))], values, width, label=label)
    ax.set_xticks([x + width * (len(series) - 1) / 2 for x in range(len(kernels))])
    ax.set_xticklabels(kernels, rotation=45, ha="right", fontsize=7)
    ax.axhline(1.0, color="black", linewidth=0.5)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7)


def ratios(num: Sequence[float], den: Sequence[float]) -> list[float]:
    return [a / b for a, b in zip(num, den, strict=True)]


def changed(kernels: Sequence[str], speedups: Iterable[Sequence[float]]) -> list[str]:
    """The kernels on which some configuration's speedup (one sequence per configuration, in
    the order of ``kernels``) is more than 1 % from 1: as seed 002 Sec 5, which reports only
    the benchmarks on which the policies differ ("the other benchmarks execute identically")."""
    rows = list(speedups)
    return [k for i, k in enumerate(kernels) if any(abs(row[i] - 1) > 0.01 for row in rows)]
