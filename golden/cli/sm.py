"""``reconverge run`` and ``reconverge compare``: a program on the cycle-level SM under one policy,
or a set of programs under several policies side by side (also as Python functions)."""

from __future__ import annotations

import argparse
import hashlib
import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from reconverge.golden import cli
from reconverge.golden.cli import programs
from reconverge.golden.cli.command import Command
from reconverge.golden.cli.options import add_sm_options, config_of, geometry_of, memmap_of
from reconverge.golden.compiler.regalloc import ALLOCATORS
from reconverge.golden.config import SMConfig
from reconverge.golden.functional import LaunchConfig
from reconverge.golden.image import Image
from reconverge.golden.memmap import GLOBAL_BASE, MemoryMap
from reconverge.golden.output import atomic_output, check_output, write_output
from reconverge.golden.params import SMParams
from reconverge.golden.policies import (
    HWS_CHOICES,
    HWS_SUMMARY,
    NAMES,
    VARIANTS,
    Mechanism,
    Variant,
    WarpFormation,
    mechanisms,
    variant,
    variant_of,
)
from reconverge.golden.progress import check_memory, progress_for
from reconverge.golden.sm.core import SMResult, memory_needed
from reconverge.golden.sm.lsu import WORD_BYTES
from reconverge.golden.sm.run import run_sm
from reconverge.kernels import suite
from reconverge.kernels.workload import (
    DEFAULT_ALLOCATOR,
    DEFAULT_REGS,
    DEFAULT_SEED,
    Workload,
    load_workload,
)


def chosen(policies: str, hws: str) -> list[Mechanism]:
    """The mechanisms of ``--policies`` (``all`` or a comma list of variant names) and
    ``--hws`` (``off``, ``on``, ``both``); a bad name is a usage error."""
    try:
        return mechanisms(policies, hws)
    except ValueError as exc:
        raise cli.UsageError(str(exc)) from None


def run_variant(ns: argparse.Namespace) -> Variant:
    """The variant ``run`` runs: ``--policy`` (any variant name), ``--no-hints`` making ppc
    ppc-implicit, ``--warp-formation`` naming dwf or en-dwf (which replace the policy, so it
    takes no other ``--policy``)."""
    base = variant(ns.policy or "sps")
    formation = WarpFormation(ns.warp_formation)
    if formation is not WarpFormation.STATIC:
        if ns.policy is not None and ns.policy != formation.value:
            raise cli.UsageError(
                f"--warp-formation {formation.value} replaces the policy: give no --policy "
                f"{ns.policy} (or give --policy {formation.value} alone)"
            )
        return variant(formation.value)
    return variant_of(base.policy, base.hints and ns.hints, base.formation)


def sm_config(ns: argparse.Namespace, mechanism: Mechanism) -> SMConfig:
    """The SM configuration of the options under one mechanism (a variant and hws)."""
    v = mechanism.variant
    return config_of(
        ns, policy=v.policy, hws=mechanism.hws, hints=v.hints, warp_formation=v.formation
    )


def launch_of(ns: argparse.Namespace, work: Workload, config: SMConfig) -> LaunchConfig:
    """The workload's launch on the SM of the options (the named configuration's memory
    windows with ``--config``)."""
    return work.config(
        geometry_of(ns), ns.step_limit, config.explicit, config.dynamic, memmap=memmap_of(ns)
    )


def workload_of(ns: argparse.Namespace, spec: str) -> Workload:
    if (ns.grid is not None and ns.grid < 1) or (ns.block is not None and ns.block < 1):
        raise cli.UsageError(f"grid and block must be positive (got {ns.grid}, {ns.block})")
    # every suite kernel's inputs hold at least --size words: refuse a size that cannot fit
    # before its inputs are generated
    global_size = (memmap_of(ns) or MemoryMap()).global_size
    if ns.size is not None and ns.size > global_size // WORD_BYTES:
        raise cli.UsageError(
            f"--size {ns.size}: the kernel's inputs would not fit the {global_size:#x} bytes "
            f"of global memory (--size at most {global_size // WORD_BYTES})"
        )
    return load_workload(
        spec,
        grid=ns.grid,
        block=ns.block,
        args=tuple(ns.arg),
        allocator=ns.allocator,
        regs=ns.regs,
        size=ns.size,
        seed=ns.seed,
    )


def run_on_sm(
    image: Image,
    launch: LaunchConfig,
    config: SMConfig,
    *,
    trace: bool = False,
    quiet: bool = True,
) -> SMResult:
    """Run, refusing a launch that needs more memory than the machine has and turning one the
    SM cannot hold into a usage error; with a progress line on a terminal unless ``quiet``."""
    check_memory(memory_needed(launch), f"a launch of {launch.grid} x {launch.block} threads")
    progress = progress_for(f"{image.source} on the SM", launch.grid, launch.step_limit, quiet)
    try:
        return run_sm(image, launch, config, trace=trace, progress=progress)
    except ValueError as exc:
        raise cli.UsageError(str(exc)) from None
    finally:
        if progress is not None:
            progress.close()


def run_energy(
    result: SMResult, launch: LaunchConfig, config: SMConfig, image: Image
) -> dict[str, Any]:
    """The run's energy on the hardware SM of its geometry and configuration (docs/energy.md),
    or ``{"error": ...}`` where that SM cannot be built, so the model cannot price it."""
    from reconverge.golden.cost.energy import energy, event_counts  # the area model: only here

    code = [s.vaddr + len(s.data) for s in image.segments if "x" in s.flags]
    try:
        params = SMParams.for_program(
            launch.geometry, config, launch.memmap, max(code, default=GLOBAL_BASE)
        )
        return energy(event_counts(result), params).json()
    except ValueError as exc:
        return {"error": f"the hardware SM of this configuration cannot be built: {exc}"}


def format_energy(e: dict[str, Any]) -> str:
    """One line of ``run``: the energy, its parts, the average power."""
    if "error" in e:
        return f"energy: not modelled ({e['error']})"
    return (
        f"energy: {e['total_pj'] / 1e3:.1f} nJ (dynamic {e['dynamic_pj'] / 1e3:.1f}, static "
        f"{e['static_pj'] / 1e3:.1f}), {e['pj_per_thread_instruction']:.1f} pJ per thread "
        f"instruction, {e['average_power_mw']:.1f} mW average at {e['clock_hz'] / 1e9:g} GHz "
        "(docs/energy.md)"
    )


def run_json(
    result: SMResult, launch: LaunchConfig, config: SMConfig, work: Workload
) -> dict[str, Any]:
    """The JSON form of ``reconverge run`` (keys documented in README.md)."""
    out = programs.result_json(result, launch, work.source)
    assert result.metrics is not None
    g = launch.geometry
    out.update(
        {
            "variant": config.variant.name,
            "policy": config.policy.value,
            "hints": config.hints,
            "hws": config.hws,
            "warp_formation": config.warp_formation.value,
            "scheduler": config.scheduler.value,
            "scoreboard": config.scoreboard_kind.value,
            "geometry": {
                "warp_size": g.warp_size,
                "simd_width": g.simd_width,
                "warps": g.warps,
                "stack_depth": g.stack_depth,
                "split_table": g.split_table,
                "reconv_table": g.reconv_table,
                "scoreboard_entries": g.scoreboard_entries,
            },
            "metrics": result.metrics.to_json(),
            "energy": run_energy(result, launch, config, work.image_for(config.explicit)),
            "memory_digest": memory_digest(result),
            "oracle_mismatches": work.mismatches(result, config.explicit)
            if work.launches
            else None,
        }
    )
    return out


def memory_digest(result: SMResult) -> str:
    """SHA-256 of the final global memory: equal for every policy on one program."""
    return hashlib.sha256(result.memory.data.tobytes()).hexdigest()


def results_of(work: Workload, result: SMResult, hints: bool) -> object:
    """What must not depend on the policy: a kernel's output arrays (its code differs with and
    without hints), or a program's whole memory."""
    outputs = work.outputs(result, hints)
    if outputs is None:
        return memory_digest(result)
    return {name: array.tolist() for name, array in outputs.items()}


def format_metrics(result: SMResult, config: SMConfig) -> str:
    assert result.metrics is not None
    m = result.metrics.to_json()
    occupancy = ", ".join(f"{k} {v}" for k, v in m["max_occupancy"].items()) or "-"
    return "\n".join(
        [
            f"policy {config.label}, scheduler {config.scheduler.value}, "
            f"{config.scoreboard_kind.value} scoreboard",
            f"cycles {m['cycles']}, idle cycles {m['idle_cycles']}, IPC {m['ipc']:.3f}",
            f"warp instructions {m['warp_instructions']}, thread instructions "
            f"{m['thread_instructions']}, hint instructions {m['hint_instructions']}",
            f"SIMD efficiency {m['simd_efficiency']:.3f}, lane utilisation "
            f"{m['lane_utilisation']:.3f}, issue passes {m['issue_passes']}",
            f"splits per warp {m['splits_per_warp']:.2f} (max {m['max_splits_per_warp']}), "
            f"max occupancy: {occupancy}",
            f"memory transactions {m['memory_transactions']}, shared {m['shared_transactions']} "
            f"({m['bank_conflicts']} bank conflicts), TLP {m['tlp']:.3f}",
            *(
                f"{name} cache: {m[f'{key}_accesses']} accesses, {m[f'{key}_misses']} misses "
                f"({m[f'{key}_mpki']:.2f} per 1000 thread instructions)"
                for name, key, cache in (
                    ("instruction", "icache", config.icache),
                    ("L1 data", "l1d", config.l1d),
                )
                if cache is not None
            ),
        ]
    )


# ----------------------------------------------------------------------------------------------
# argparse


def parse_seed(text: str) -> int:
    """An input seed: an integer from 0 to :data:`cli.MAX_LAUNCH`."""
    value = cli.parse_int(text)
    if not 0 <= value <= cli.MAX_LAUNCH:
        raise argparse.ArgumentTypeError(f"must be from 0 to {cli.MAX_LAUNCH}, not {value}")
    return value


def add_kernel_options(p: argparse.ArgumentParser) -> None:
    """How a suite kernel given instead of a program file is compiled and sized (None when not
    given: the kernel's defaults; a program file refuses them)."""
    p.add_argument("--allocator", choices=ALLOCATORS, default=None,
                   help=f"for kernels (default {DEFAULT_ALLOCATOR})")  # fmt: skip
    p.add_argument("--regs", type=cli.parse_int, default=None,
                   help=f"for kernels: registers (default {DEFAULT_REGS})")  # fmt: skip
    p.add_argument("--size", type=cli.parse_positive, default=None, help="for kernels: input size")
    p.add_argument("--seed", type=parse_seed, default=None,
                   help=f"for kernels: input seed (default {DEFAULT_SEED})")  # fmt: skip


def _configure_run(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", help="ELF file, .S assembly, or a suite kernel (name or FILE.py)")
    p.add_argument("--policy", choices=NAMES, default=None, help="the policy variant (default sps)")
    p.add_argument("--hws", action="store_true", help="hybrid warp size (seed 001)")
    p.add_argument(
        "--hints", action=argparse.BooleanOptionalAction, default=True,
        help="ppc: explicit (with reconvergence PCs) or implicit (--no-hints: ppc-implicit)",
    )  # fmt: skip
    p.add_argument(
        "--warp-formation", choices=[f.value for f in WarpFormation], default="static",
        help="dynamic warp formation (golden only): the same as --policy dwf or en-dwf",
    )  # fmt: skip
    p.add_argument("--trace", help="write the issue trace here as JSON lines")
    p.add_argument("--plot", help="write a PNG of warp activity and occupancy here")
    cli.add_launch_options(p, grid=None, block=None, warp=None)
    add_kernel_options(p)
    add_sm_options(p)


#: The image formats of ``--plot``.
PLOT_SUFFIXES = (".png", ".svg", ".pdf")


def _cmd_run(ns: argparse.Namespace) -> int:
    if ns.trace:
        check_output(ns.trace)
    if ns.plot:
        check_output(ns.plot, PLOT_SUFFIXES)
        if ns.trace and os.path.realpath(ns.trace) == os.path.realpath(ns.plot):
            raise cli.UsageError(f"--trace and --plot name the same file, {ns.plot}")
    work = workload_of(ns, ns.file)
    mechanism = Mechanism(run_variant(ns), ns.hws)
    config = sm_config(ns, mechanism)
    launch = launch_of(ns, work, config)
    image = work.image_for(config.explicit)
    result = run_on_sm(image, launch, config, trace=bool(ns.trace or ns.plot), quiet=ns.json)
    if ns.trace:
        write_output(ns.trace, "".join(json.dumps(r.to_json()) + "\n" for r in result.trace))
    if ns.plot:
        from reconverge.golden.sm.plot import plot_run  # matplotlib: only when plotting

        assert result.metrics is not None
        with atomic_output(ns.plot, PLOT_SUFFIXES) as path:
            plot_run(
                result.trace,
                cycles=result.metrics.cycles,
                warp_size=launch.geometry.warp_size,
                simd_width=launch.geometry.simd_width,
                title=f"{Path(ns.file).name} under {mechanism.label}",
                path=path,
            )
    wrong = work.mismatches(result, config.explicit)
    if ns.json:
        print(json.dumps(run_json(result, launch, config, work), indent=1))
    else:
        print(programs.format_result(result, launch, work.source))
        print(format_metrics(result, config))
        print(format_energy(run_energy(result, launch, config, image)))
        if work.launches is not None and result.fault is None:
            print(f"outputs differ from the oracle: {', '.join(wrong)}" if wrong else
                  "outputs match the oracle")  # fmt: skip
    return cli.EXIT_OK if result.ok and not wrong else cli.EXIT_FAILED


def compare(
    files: Sequence[str], ns: argparse.Namespace, chosen: list[Mechanism]
) -> list[dict[str, Any]]:
    """One row per (file, variant): the run's metrics, its speedup over the first variant,
    and whether its results equal the first variant's (they always must)."""
    rows: list[dict[str, Any]] = []
    for path in files:
        work = workload_of(ns, path)
        first: tuple[SMResult, object] | None = None
        for mechanism in chosen:
            config = sm_config(ns, mechanism)
            launch = launch_of(ns, work, config)
            image = work.image_for(config.explicit)
            result = run_on_sm(image, launch, config, quiet=ns.json)
            assert result.metrics is not None
            energy = run_energy(result, launch, config, image)
            outcome = (results_of(work, result, config.explicit), result.exit_codes.tolist())
            first = first or (result, outcome)
            assert first[0].metrics is not None
            same = outcome == first[1]
            rows.append(
                {
                    "file": work.source,
                    "variant": mechanism.variant.name,
                    "policy": config.policy.value,
                    "hints": config.hints,
                    "hws": config.hws,
                    "warp_formation": config.warp_formation.value,
                    "label": mechanism.label,
                    "icache": config.icache is not None,
                    "l1d": config.l1d is not None,
                    "ok": result.ok,
                    "fault": None if result.fault is None else str(result.fault),
                    "same_results": same,
                    "oracle_mismatches": work.mismatches(result, config.explicit)
                    if work.launches
                    else None,
                    "speedup": first[0].metrics.cycles / result.metrics.cycles
                    if result.metrics.cycles
                    else 0.0,
                    **result.metrics.to_json(),
                    "energy": energy,
                    "energy_nj": energy["total_pj"] / 1e3 if "error" not in energy else None,
                    "pj_per_thread_instruction": energy.get("pj_per_thread_instruction"),
                }
            )
    return rows


COLUMNS = (
    ("label", "policy", "{}"),
    ("cycles", "cycles", "{}"),
    ("speedup", "speedup", "{:.2f}"),
    ("warp_instructions", "warp instr", "{}"),
    ("simd_efficiency", "SIMD eff", "{:.3f}"),
    ("lane_utilisation", "lane util", "{:.3f}"),
    ("idle_cycles", "idle", "{}"),
    ("splits_per_warp", "splits/warp", "{:.2f}"),
    ("tlp", "TLP", "{:.2f}"),
    ("memory_transactions", "mem tx", "{}"),
    ("icache_misses", "I$ miss", "{}"),
    ("l1d_misses", "L1D miss", "{}"),
    ("l1d_mpki", "L1D MPKI", "{:.1f}"),
    ("hint_instructions", "hints", "{}"),
    ("energy_nj", "energy nJ", "{:.1f}"),
    ("pj_per_thread_instruction", "pJ/thr instr", "{:.1f}"),
)


#: Columns that mean nothing for some configurations: (column key, the configurations whose
#: label starts with one of these): dynamic warp formation has no warp splits.
NOT_APPLICABLE = {"splits_per_warp": ("dwf", "en-dwf"), "tlp": ("dwf", "en-dwf")}
#: The columns of golden's caches, by the row's flag that its run had that cache: a table
#: shows them when some run had it, "-" for the others.
CACHE_COLUMNS = {"icache_misses": "icache", "l1d_misses": "l1d", "l1d_mpki": "l1d"}


def _cell(row: dict[str, Any], key: str, fmt: str) -> str:
    if row["label"].startswith(NOT_APPLICABLE.get(key, ())):
        return "-"
    if key in CACHE_COLUMNS and not row[CACHE_COLUMNS[key]]:
        return "-"
    if row[key] is None:  # not modelled: the line under the table says why
        return "n/a"
    return fmt.format(row[key])


def _fastest(group: list[dict[str, Any]]) -> str:
    """The line naming a file's fastest configuration (among the runs that completed)."""
    done = [r for r in group if r["ok"] and r["cycles"]]
    if not done:
        return "  fastest: none completed"
    best = min(done, key=lambda r: r["cycles"])
    return (
        f"  fastest: {best['label']}, {best['cycles']} cycles, {best['speedup']:.2f}x "
        f"{group[0]['label']}"
    )


def format_table(rows: list[dict[str, Any]]) -> str:
    lines = []
    for path in dict.fromkeys(r["file"] for r in rows):
        group = [r for r in rows if r["file"] == path]
        columns = [
            c
            for c in COLUMNS
            if c[0] not in CACHE_COLUMNS or any(r[CACHE_COLUMNS[c[0]]] for r in group)
        ]
        cells = [[title for _, title, _ in columns]] + [
            [_cell(r, key, fmt) for key, _, fmt in columns] for r in group
        ]
        widths = [max(len(c[i]) for c in cells) for i in range(len(columns))]
        lines.append(path)
        for i, row in enumerate(cells):
            lines.append(
                "  "
                + "  ".join(
                    c.rjust(w) if j else c.ljust(w)
                    for j, (c, w) in enumerate(zip(row, widths, strict=True))
                )
            )
            if i == 0:
                lines.append("  " + "  ".join("-" * w for w in widths))
        for r in group:
            if r["fault"]:
                lines.append(f"  {r['label']}: {r['fault']}")
            elif not r["same_results"]:
                lines.append(f"  {r['label']}: RESULTS DIFFER from {group[0]['label']}")
            elif r["oracle_mismatches"]:
                lines.append(f"  {r['label']}: differs from the oracle in {r['oracle_mismatches']}")
            if "error" in r["energy"]:
                lines.append(f"  {r['label']}: energy not modelled: {r['energy']['error']}")
        lines += [_fastest(group), ""]
    return "\n".join(lines)


def format_summary(rows: list[dict[str, Any]]) -> str:
    """The closing statement of a comparison: every run checked, or what failed."""
    files = len({r["file"] for r in rows})
    failed = [r for r in rows if not r["ok"]]
    differ = [r for r in rows if not r["same_results"]]
    wrong = [r for r in rows if r["oracle_mismatches"]]
    if not (failed or differ or wrong):
        kernels = sum(r["oracle_mismatches"] is not None for r in rows)
        checked = (
            f"every kernel run ({kernels}) matched its oracle (the kernel run as plain Python "
            "per thread), and "
            if kernels
            else ""
        )
        return (
            f"All {len(rows)} runs of {files} file(s) completed: {checked}every configuration "
            "of a file left the same results."
        )
    parts = []
    if failed:
        parts.append(f"{len(failed)} run(s) faulted or exited non-zero")
    if differ:
        parts.append(f"{len(differ)} run(s) left other results than the first configuration")
    if wrong:
        parts.append(f"{len(wrong)} run(s) differ from the kernel's oracle")
    return "FAILED: " + "; ".join(parts) + " (see above)."


def format_preamble(ns: argparse.Namespace, chosen: list[Mechanism]) -> str:
    """What a comparison ran on: the geometry and configuration, and the legend of labels."""
    g = geometry_of(ns)
    config = sm_config(ns, chosen[0])
    lat = config.latencies
    lines = [
        f"SM: W = {g.warp_size} threads per warp on L = {g.simd_width} lanes, {g.warps} warp "
        f"slots, {config.scheduler.value} scheduler, stacks {g.stack_depth} deep, split table "
        f"{g.split_table},\n    reconvergence table {g.reconv_table}, latencies alu {lat.alu}, "
        f"mul {lat.mul}, div {lat.div} (one per {lat.div_interval}), shared {lat.shared}, "
        f"global {lat.global_}, branch "
        f"{lat.branch}, {config.line_bytes}-byte lines",
    ]
    for name, cache in (("instruction", config.icache), ("L1 data", config.l1d)):
        if cache is not None:
            lines.append(f"    golden's {name} cache: {cache.describe()}")
    lines += [
        "configurations:",
    ]
    names = {m.variant.name for m in chosen}
    lines += [f"  {v.name:<15} {v.summary}" for v in VARIANTS if v.name in names]
    if any(m.hws for m in chosen):
        lines.append(f"  {'+hws':<15} {HWS_SUMMARY}")
    lines.append(
        "columns: speedup over the first configuration; SIMD eff = active threads / W per "
        "warp instruction;\n    lane util = active threads / (passes x L); '-': not applicable"
    )
    return "\n".join(lines) + "\n"


def _compare_options(
    p: argparse.ArgumentParser, *, hws: str, warp_size: int, simd_width: int
) -> None:
    p.add_argument("--policies", default="all", help=f"all, or a comma list of {', '.join(NAMES)}")
    p.add_argument("--hws", choices=HWS_CHOICES, default=hws, help="off, on or both")
    cli.add_launch_options(p, grid=None, block=None, warp=None)
    add_kernel_options(p)
    add_sm_options(p, warp_size=warp_size, simd_width=simd_width)


def configure_compare(p: argparse.ArgumentParser) -> None:
    """The options of `reconverge compare` (``make results`` parses its runs with them)."""
    p.add_argument("files", nargs="+", help="ELF, .S, suite kernels (names or FILE.py), or all")
    _compare_options(p, hws="off", warp_size=32, simd_width=8)


def _cmd_compare(ns: argparse.Namespace) -> int:
    files = list(suite()) if ns.files == ["all"] else ns.files
    picked = chosen(ns.policies, ns.hws)
    rows = compare(files, ns, picked)
    if ns.json:
        print(json.dumps(rows, indent=1))
    else:
        print(format_preamble(ns, picked))
        print(format_table(rows))
        print(format_summary(rows))
    good = all(r["ok"] and r["same_results"] and not r["oracle_mismatches"] for r in rows)
    return cli.EXIT_OK if good else cli.EXIT_FAILED


#: The main job's default: kernels whose control flow the seeds study (seed 002 Fig 6 and
#: Fig 10, a data-dependent loop), compiled, run under every policy, compared.
DEMO_KERNELS = ("nested", "loopBreak", "mandelbrot")


def _configure_demo(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "files", nargs="*", default=list(DEMO_KERNELS),
        help=f"kernels or programs (default: {' '.join(DEMO_KERNELS)})",
    )  # fmt: skip
    p.add_argument("--policies", default="all", help=f"all, or a comma list of {', '.join(NAMES)}")
    p.add_argument("--hws", choices=HWS_CHOICES, default="both", help="off, on or both")
    cli.add_launch_options(p, grid=None, block=None, warp=None)
    add_kernel_options(p)
    add_sm_options(p, warp_size=8, simd_width=4)


COMMANDS = (
    Command("demo", _configure_demo, lambda ns: _cmd_compare(ns)),
    Command("run", _configure_run, _cmd_run),
    Command("compare", configure_compare, _cmd_compare),
)
