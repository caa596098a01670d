"""``make cosim``: docs/cosim.md, every suite kernel x policy x hws x geometry of the
co-simulation plan (:mod:`reconverge.testbench.cosim_plan`) run on the SM's Verilog against
golden: the agreement level reached, golden's and the RTL's cycles side by side, and every cell
below level 4 with its cause.

    python -m reconverge.testbench.cosimdoc docs/cosim.md [--jobs N] [--sim verilator]
        [--cluster ADDRESS]

The cells of one SM build run in one job, so each build is made once: on ``--jobs`` worker
processes, or on the workers of a Dask cluster (``--cluster``, the executor
``reconverge eval --cluster`` uses: :mod:`reconverge.golden.executor`).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from reconverge.golden.errors import UserError
from reconverge.golden.executor import executor, run_each
from reconverge.golden.output import write_output
from reconverge.golden.policies import variant as variant_named
from reconverge.testbench.cosim_plan import (
    GEOMETRIES,
    HWS,
    KERNELS,
    KNOWN,
    VARIANTS,
    run_cell,
)

Group = tuple[str, str, bool]  # (geometry, variant label, hws): one SM build


@dataclass(frozen=True)
class Row:
    """One cell as the document shows it."""

    kernel: str
    geometry: str
    variant: str
    hws: bool
    level: int
    golden_cycles: int | None
    rtl_cycles: int | None
    difference: str  # the first difference ("" at level 4)
    wrong: tuple[str, ...] | None  # outputs that differ from the oracle; None: not finished
    seconds: float  # wall time of the whole co-simulation (golden, build, RTL run)

    @property
    def cause(self) -> str:
        """The documented cause (:data:`KNOWN`), else the first difference."""
        known = KNOWN.get((self.kernel, self.geometry, self.variant, self.hws))
        return known[1] if known else self.difference

    def command(self) -> str:
        """The ``reconverge cosim`` command that reproduces the cell."""
        geometry = GEOMETRIES[self.geometry]
        return " ".join(
            [
                f"reconverge cosim {self.kernel} --policy {self.variant}",
                *(["--hws"] if self.hws else []),
                f"--warp-size {geometry.warp_size} --simd-width {geometry.simd_width}",
                "--sim verilator --level 4",
            ]
        )


def run_group(group: Group, kernels: Sequence[str], sim: str) -> list[Row]:
    """Every kernel on one SM build (a worker's task)."""
    geometry, label, hws = group
    rows = []
    for kernel in kernels:
        start = time.monotonic()
        try:
            cell = run_cell(kernel, geometry, variant_named(label), hws, sim=sim)
        except Exception as exc:  # the document records what stopped the cell
            what = f"{type(exc).__name__}: {exc}"
            rows.append(Row(kernel, geometry, label, hws, 0, None, None, what, None, 0.0))
            print(f"{kernel} {label}{' +hws' * hws} {geometry}: {what}", flush=True)
            continue
        report = cell.report
        golden, rtl = report.golden.metrics, report.rtl.metrics
        rows.append(
            Row(
                kernel,
                geometry,
                label,
                hws,
                report.reached,
                None if golden is None else golden.cycles,
                None if rtl is None or not report.run.finished else rtl.cycles,
                "" if report.difference is None else str(report.difference),
                None if cell.wrong is None else tuple(cell.wrong),
                time.monotonic() - start,
            )
        )
        print(f"{kernel} {label}{' +hws' * hws} {geometry}: level {report.reached}", flush=True)
    return rows


def groups() -> list[Group]:
    return [(g, v.name, hws) for g in GEOMETRIES for v in VARIANTS for hws in HWS]


def sweep(
    kernels: Sequence[str],
    jobs: int,
    sim: str,
    *,
    cluster: str | None = None,
    chosen: Sequence[Group] | None = None,
) -> list[Row]:
    """Every cell of the plan (of the ``chosen`` builds), the cells of one build in one job:
    on ``jobs`` processes, or on the workers of the Dask ``cluster``
    (:mod:`reconverge.golden.executor`)."""
    work = [(g, tuple(kernels), sim) for g in (groups() if chosen is None else chosen)]
    with executor(jobs, cluster) as pool:
        done = dict(run_each(run_group, work, pool))
    return [row for args in work for row in done[args]]


def _cycles(value: int | None) -> str:
    return "-" if value is None else str(value)


def _level(row: Row) -> str:
    mark = "" if row.level == 4 else " *"
    oracle = "" if row.wrong == () else " (oracle!)"
    return f"{row.level}{mark}{oracle}"


def document(rows: Iterable[Row], sim: str, seconds: float) -> str:
    """The Markdown of docs/cosim.md."""
    rows = list(rows)
    by_key = {(r.kernel, r.geometry, r.variant, r.hws): r for r in rows}
    at_4 = sum(r.level == 4 for r in rows)
    version = metadata.version("verilator") if sim == "verilator" else "Debian's Icarus"
    lines = [
        "# Co-simulation: every suite kernel on the SM's Verilog against golden",
        "",
        "Generated by `make cosim` (`python -m reconverge.testbench.cosimdoc docs/cosim.md`); do "
        "not edit. Each cell is one `reconverge cosim KERNEL --policy P [--hws] --level 4` run: "
        "the suite kernel at its default size, compiled and bound as `reconverge run` does, on "
        "golden and on the generated Verilog of the SM (`hdl/sm/top.py`) under "
        f"{sim} ({version}), at the "
        "cosim configuration (`golden.params.COSIM`: 4 warp slots, short latencies, 32-byte "
        "lines) with the geometry of the section. Agreement levels (DESIGN.md): 1 final memory "
        "and exit codes, 2 each thread's path, 3 each warp's issue stream, 4 the cycle of every "
        "issue and the total cycles. The cycles are the SM's (`cycles` of `reconverge run`); at "
        "level 4 golden's and the RTL's are equal by definition. `*` marks a cell below level "
        "4 (its cause is listed below); `oracle!` marks RTL outputs that differ from the "
        "kernel's oracle. The tests (`testbench/tests/test_cosim_sm.py`) hold every cell to "
        "the level shown here: `make test` and `make test-slow` the W=8 L=4 grid and a subset "
        "of the others, `make test-sweep` the rest.",
        "",
        f"{at_4} of {len(rows)} cells reach level 4 ({len(KERNELS)} kernels x {len(VARIANTS)} "
        f"policies x hws off/on x {len(GEOMETRIES)} geometries; {seconds / 60:.0f} min of wall "
        "time to generate). Policies: "
        + ", ".join(f"`{v.name}`" for v in VARIANTS)
        + ". The same Verilog runs on Icarus, the "
        "default simulator, some tens of SM cycles per second against Verilator's thousands "
        "(`make bench`): `make test` co-simulates `nested` under sps and `ifElse` under mp-orec "
        "with hws on it, `make test-slow` `nested` under the other policies and `ifElse` under "
        "sps with hws.",
        "",
    ]
    for geometry in GEOMETRIES:
        lines += [
            f"## {geometry}",
            "",
            "| kernel | policy | level | golden | RTL | level +hws | golden +hws | RTL +hws |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        ]
        for kernel in KERNELS:
            for variant in VARIANTS:
                cells = []
                for hws in HWS:
                    row = by_key.get((kernel, geometry, variant.name, hws))
                    if row is None:
                        cells += ["not run", "", ""]
                    else:
                        cells += [_level(row), _cycles(row.golden_cycles), _cycles(row.rtl_cycles)]
                lines.append(f"| {kernel} | {variant.name} | " + " | ".join(cells) + " |")
        lines.append("")
    below = [r for r in rows if r.level < 4 or r.wrong]
    lines += ["## Cells below level 4", ""]
    if not below:
        lines.append("None.")
    for row in below:
        cause = row.cause.replace("\n", "\n  ")
        oracle = f"; outputs differ from the oracle: {', '.join(row.wrong)}" if row.wrong else ""
        lines += [
            f"- **{row.kernel}**, {row.variant}{' +hws' * row.hws}, {row.geometry}: level "
            f"{row.level}{oracle}. `{row.command()}`",
            "",
            "  ```",
            f"  {cause}",
            "  ```",
            "",
        ]
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=Path)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--sim", choices=("icarus", "verilator"), default="verilator")
    parser.add_argument("--kernel", action="append", choices=KERNELS,
                        help="only these kernels (default: the whole suite)")  # fmt: skip
    parser.add_argument("--cluster", metavar="ADDRESS",
                        help="run the builds on the workers of this Dask scheduler")  # fmt: skip
    ns = parser.parse_args(argv)
    start = time.monotonic()
    try:
        rows = sweep(ns.kernel or KERNELS, ns.jobs, ns.sim, cluster=ns.cluster)
    except UserError as exc:
        parser.error(str(exc))
    text = document(rows, ns.sim, time.monotonic() - start)
    write_output(ns.output, text)
    print(f"wrote {ns.output}: {sum(r.level == 4 for r in rows)} of {len(rows)} cells at level 4")
    return 0


if __name__ == "__main__":
    sys.exit(main())
