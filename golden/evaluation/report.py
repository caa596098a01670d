"""docs/evaluation.md: the machines, the kernels at their evaluation sizes, every claim of the
seeds beside ours, each experiment's tables and figures (PNG), and why ours differs where it
does (:func:`~reconverge.golden.evaluation.findings.finding`, from the same runs)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reconverge.golden.evaluation.experiments import (
    EXPERIMENTS,
    Claim,
    Results,
    Scale,
    Section,
)
from reconverge.golden.evaluation.findings import finding
from reconverge.golden.evaluation.tasks import Task
from reconverge.golden.params import CONFIGS
from reconverge.kernels import benchmarks


class EvaluationError(Exception):
    """A run that must not happen in an evaluation: a fault, an output that differs from the
    oracle's, or two configurations computing different outputs."""


def check(results: Results) -> None:
    """Refuse results in which a run failed or configurations disagree on what a kernel
    computes (a policy never changes it: DESIGN.md)."""
    digests: dict[tuple[str, int, int], set[str]] = defaultdict(set)
    for task, r in results.items():
        if "error" in r:
            continue  # a kernel that does not compile is reported as such
        if not r["ok"] or r["oracle_mismatches"]:
            raise EvaluationError(
                f"{task.kernel} (size {task.size}) under {task.label} on {task.machine}, "
                f"{task.allocator} allocation into {task.regs} registers: "
                f"fault {r['fault']}, outputs differing from the oracle: {r['oracle_mismatches']}"
            )
        digests[task.kernel, task.size, task.seed].add(r["outputs_digest"])
    for (kernel, size, _), seen in digests.items():
        if len(seen) > 1:
            raise EvaluationError(
                f"{kernel} (size {size}): configurations computed different outputs"
            )


def _machine(name: str) -> str:
    p = CONFIGS[name]
    g, c, lat = p.geometry, p.config, p.config.latencies
    return (
        f"- `{name}`: W = {g.warp_size}, L = {g.simd_width}, {g.warps} warp slots, stack "
        f"{g.stack_depth}, ST {g.split_table}, RT {g.reconv_table}, scoreboard "
        f"{g.scoreboard_entries} entries per warp, {c.scheduler.value} scheduler; latencies "
        f"alu {lat.alu}, mul {lat.mul}, div {lat.div} (one per {lat.div_interval}), shared "
        f"{lat.shared}, global "
        f"{lat.global_}, branch {lat.branch}; the hardware's pipeline (a pass executes "
        f"{lat.execute} cycles after its issue, a branch, jump or exit reaches its divergence "
        f"unit {lat.resolve} cycles after its last pass); {c.line_bytes}-byte lines, "
        f"{c.shared_banks} shared banks"
        + "".join(
            f"; golden's {name} cache {cache.describe()}"
            for name, cache in (("instruction", c.icache), ("L1 data", c.l1d))
            if cache is not None
        )
        + (" (docs/architecture.md, rules 7-9)." if c.cached else ".")
    )


def _kernels(scale: Scale, results: Results) -> list[str]:
    rows = []
    for k in scale.kernels:
        sps = results.get(Task(k, scale.size(k), scale.machine))
        if sps is None or "metrics" not in sps:
            continue
        m = sps["metrics"]
        spec = benchmarks()[k]
        provenance = spec.provenance.replace("|", "\\|")  # a table cell
        rows.append(
            f"| {k} | {spec.shape} | {provenance} | {scale.size(k)} | "
            f"{sps['grid']} x {sps['block']} | {m['thread_instructions']:,} | {m['cycles']:,} |"
        )
    return [
        "| kernel | shape | provenance | size | grid x block | thread instructions (sps) | "
        "cycles (sps) |",
        "|---|---|---|---|---|---|---|",
        *rows,
    ]


def _claims(claims: Sequence[Claim]) -> list[str]:
    def yes(ok: bool) -> str:
        return "yes" if ok else "**no**"

    out = [
        "| quantity | paper | ours | over | direction | size | source |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in claims:
        out.append(
            f"| {c.what} | {c.paper:.3f} | {c.ours:.3f} | {c.over} | "
            f"{yes(c.direction_agrees)} | {yes(c.size_agrees)} | {c.source} |"
        )
    return out


def _why(claims: Sequence[Claim]) -> list[str]:
    out = []
    for c in claims:
        if c.direction_agrees and c.size_agrees:
            continue
        out += [f"- **{c.what}** (paper {c.paper:.3f}, ours {c.ours:.3f}): {finding(c)}"]
    return out


def draw(figures: dict[str, Any], folder: Path) -> list[Path]:
    """Write each figure as ``folder/NAME.png``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, plot in figures.items():
        fig, ax = plt.subplots(figsize=(7, 3.6))
        plot(ax)
        fig.tight_layout()
        path = folder / f"{name}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def sections(scale: Scale, names: Sequence[str], results: Results) -> list[Section]:
    return [EXPERIMENTS[n].report(scale, results) for n in names]


def render(
    scale: Scale,
    parts: Sequence[Section],
    results: Results,
    figures: Path | None,
    figures_link: str = "figures",
) -> str:
    """The markdown page of the experiments' sections (from :func:`sections` of checked
    results); with ``figures``, the PNGs written there and linked as ``figures_link/NAME.png``."""
    claims = [c for s in parts for c in s.claims]
    memory = (
        [scale.memory_machine] if any(t.machine == scale.memory_machine for t in results) else []
    )
    machines = dict.fromkeys([scale.machine, scale.quarter_machine, *memory])
    lines = [
        "# Evaluation: the seeds' experiments on the kernel suite",
        "",
        "Generated by `make eval` (`reconverge eval`) from runs of the golden cycle-level SM; "
        "every run ended cleanly, matched the kernel's oracle, and computed the same outputs "
        "under every configuration. The machines (golden/params.py):",
        "",
        *(_machine(m) for m in machines),
        "",
        "The kernels, at their "
        + ("evaluation" if scale.eval_sizes else "default (co-simulation)")
        + " sizes (linear-scan allocation, 16 registers):",
        "",
        *_kernels(scale, results),
        "",
        "## Every claim beside ours",
        "",
        "*direction*: ours changes the same way as the paper's (both up, both down, or both "
        "within 1 % of the baseline); *size*: our change is within half of the paper's change "
        "of it. *over* names the mean each paper uses and the kernels ours covers.",
        "",
        *_claims(claims),
        "",
    ]
    why = _why(claims)
    if why:
        lines += ["## Where ours differs, and why", "", *why, ""]
    for s in parts:
        lines += [f"## {s.title}", "", *s.lines]
        if s.claims:
            lines += [*_claims(s.claims), ""]
        if figures is not None:
            draw(s.figures, figures)
            lines += [f"![{name}]({figures_link}/{name}.png)" for name in s.figures]
            lines += [""]
    return "\n".join(lines)
