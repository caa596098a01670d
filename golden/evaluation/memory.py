"""Seed 002's rows on the memory system (Sec 2.2 Fig 4, Sec 6.3 and 6.4 Fig 16 and 17), measured
on the machine with caches (:attr:`Scale.memory_machine`: ``eval``, golden's 16 KB instruction
and 32 KB L1 data caches, docs/architecture.md rules 7-9): thread-level parallelism (TLP) under
each policy; the instruction cache's misses against sps at the seed's 16 KB and at the 2 KB of
GPGPU-Sim's own GTX 480 file, the accesses opportunistic reconvergence saves, and the cycles the
16 KB cache costs against none; the L1 data cache's misses and MPKI, and the idle cycles the
seed ties to them on MEMC."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from reconverge.golden.config import Cache
from reconverge.golden.evaluation.base import (
    Bound,
    Claim,
    Results,
    Scale,
    Section,
    amean,
    bars,
    changed,
    md_table,
    some_kernels,
)
from reconverge.golden.evaluation.tasks import Task
from reconverge.golden.params import CONFIGS, GPGPU_SIM_ICACHE

#: The policies whose instruction fetch Fig 16 sets against sps.
FETCH_POLICIES = ("sps", "mp", "mp-orec")
#: The seed benchmarks that model seed 002's MEMC and MUM (Table 1; kernels/memc.py,
#: kernels/mum.py, their provenance in docs/compiler.md), which Sec 6.3-6.4 name.
MEMC, MUM = "memc", "mum"
#: Seed 002's MC (kernels/mc.py), the other kernel of its Fig 4.
MC = "mc"
#: Instruction-cache sizes besides the machine's own: GPGPU-Sim's (2 KB), none (0: every
#: fetch hits, the cycles a cache costs).
SMALL_ICACHE, NO_ICACHE = GPGPU_SIM_ICACHE.size, 0
#: An L1 data cache that holds every line the kernels touch: its misses are the ones no
#: capacity avoids (first touches, and reloads of lines a store evicted), run on MEMC and MUM.
WHOLE_L1D = 16 << 20
#: The policies of those runs.
WHOLE_POLICIES = ("sps", "mp")
#: The instruction-cache sizes as the claims name them: the machine's (seed 002's 16 KB) and
#: GPGPU-Sim's own.
SEED_SIZE, GPGPU_SIM_SIZE = "the seed's I-cache", "GPGPU-Sim's I-cache"

Metrics = dict[str, Any]


def memory_task(
    scale: Scale, kernel: str, policy: str, icache: int | None = None, l1d: int | None = None
) -> Task:
    """A run of the memory rows: ``kernel`` under ``policy`` on the machine with caches, its
    instruction cache or L1 data cache resized to ``icache`` or ``l1d`` bytes (0: none) when
    given."""
    size = scale.size(kernel)
    return Task(kernel, size, scale.memory_machine, variant=policy, icache=icache, l1d=l1d)


def memory_tasks(scale: Scale, policies: Sequence[str]) -> list[Task]:
    """Every kernel under ``policies`` (sps first), under the fetch policies with GPGPU-Sim's
    instruction cache, under mp with none; MEMC and MUM with an L1 that holds all."""
    ks = scale.kernels
    tasks = [memory_task(scale, k, p) for k in ks for p in policies]
    tasks += [memory_task(scale, k, p, SMALL_ICACHE) for k in ks for p in FETCH_POLICIES]
    tasks += [memory_task(scale, k, "mp", NO_ICACHE) for k in ks]
    named = [k for k in (MEMC, MUM) if k in ks]
    return tasks + [memory_task(scale, k, p, l1d=WHOLE_L1D) for k in named for p in WHOLE_POLICIES]


def _share(num: float, den: float) -> float | None:
    """``num / den``, None without a denominator."""
    return num / den if den else None


def _cell(x: float | None, fmt: str = "{:.3f}") -> str:
    return "-" if x is None else fmt.format(x)


def _of(values: dict[str, float | None]) -> dict[str, float]:
    """The kernels that have a value."""
    return {k: v for k, v in values.items() if v is not None}


Runs = dict[tuple[str, str], Metrics]


@dataclass
class MemoryRuns:
    """The metrics of :func:`memory_tasks`' runs by (kernel, policy): with the machine's
    caches (``run``), with GPGPU-Sim's instruction cache (``small``), with an L1 that holds
    every line (``whole``); of mp without an instruction cache by kernel (``bare``); each
    kernel's code bytes; the kernels on which some policy changes the cycles (``chosen``)."""

    kernels: tuple[str, ...]
    run: Runs
    small: Runs
    whole: Runs
    bare: dict[str, Metrics]
    code: dict[str, float]
    chosen: list[str]

    @classmethod
    def of(cls, scale: Scale, results: Results, policies: Sequence[str]) -> MemoryRuns:
        ks = scale.kernels
        res = {(k, p): results[memory_task(scale, k, p)] for k in ks for p in policies}
        run = {key: r["metrics"] for key, r in res.items()}
        small = {
            (k, p): results[memory_task(scale, k, p, SMALL_ICACHE)]["metrics"]
            for k in ks
            for p in FETCH_POLICIES
        }
        whole = {
            (k, p): results[memory_task(scale, k, p, l1d=WHOLE_L1D)]["metrics"]
            for k in (MEMC, MUM)
            if k in ks
            for p in WHOLE_POLICIES
        }
        bare = {k: results[memory_task(scale, k, "mp", NO_ICACHE)]["metrics"] for k in ks}
        code = {k: float(res[k, "sps"]["code_bytes"]) for k in ks}
        speedups = ([run[k, "sps"]["cycles"] / run[k, p]["cycles"] for k in ks] for p in policies)
        return cls(ks, run, small, whole, bare, code, changed(ks, speedups))

    def metric(self, name: str, p: str, runs: Runs | None = None) -> dict[str, float]:
        """``name`` of every kernel's run under ``p`` (of ``runs``, the machine's by default)."""
        runs = self.run if runs is None else runs
        return {k: runs[k, p][name] for k in self.kernels}

    def over_sps(self, name: str, p: str, runs: Runs | None = None) -> dict[str, float]:
        """``name`` under ``p`` against sps's, for the kernels where sps's is not 0."""
        runs = self.run if runs is None else runs
        return _of({k: _share(runs[k, p][name], runs[k, "sps"][name]) for k in self.kernels})


def add_memory_rows(s: Section, scale: Scale, results: Results, policies: Sequence[str]) -> None:
    """Seed 002's memory rows into ``s``: the tables, figures and claims of this module's
    runs (:func:`memory_tasks`; ``policies``: sps first)."""
    config = CONFIGS[scale.memory_machine].config
    if config.icache is None or config.l1d is None:
        s.lines += [f"`{scale.memory_machine}` has no caches: no memory rows of seed 002.", ""]
        return
    r = MemoryRuns.of(scale, results, policies)
    s.lines += [
        f"Seed 002's memory system (Sec 2.2, 6.3, 6.4) on `{scale.memory_machine}`, with "
        f"golden's caches (instruction: {config.icache.describe()}; L1 data: "
        f"{config.l1d.describe()}; a miss pays the global latency, {config.latencies.global_} "
        "cycles; docs/architecture.md rules 7-9).",
        "",
        *_tlp_table(r, policies),
        *_fetch_table(r, config.icache),
        *_data_table(r, policies),
    ]
    cols = {
        label: {
            "code bytes": r.code,
            "misses sps": r.metric("icache_misses", "sps", runs),
            "misses mp": r.metric("icache_misses", "mp", runs),
            "cache bytes": dict.fromkeys(r.kernels, float(size)),
        }
        for label, size, runs in (
            (SEED_SIZE, config.icache.size, r.run),
            (GPGPU_SIM_SIZE, SMALL_ICACHE, r.small),
        )
    }
    if r.chosen:
        s.claims += _tlp_claims(r)
        for label, runs in ((SEED_SIZE, r.run), (GPGPU_SIM_SIZE, r.small)):
            ratio = r.over_sps("icache_misses", "mp", runs)
            s.claims += _locality_claims(
                label, {k: ratio[k] for k in r.chosen if k in ratio}, cols[label]
            )
        s.claims += _fetch_claims(r, cols[SEED_SIZE], config.latencies.global_)
    s.claims += _data_claims(r, config.l1d)

    def fig16(ax: Any) -> None:
        ratios = {p: r.over_sps("icache_misses", p, r.small) for p in FETCH_POLICIES[1:]}
        series = {f"{p} / sps": [ratios[p].get(k, 0.0) for k in r.kernels] for p in ratios}
        bars(ax, r.kernels, series, f"I-cache misses, {SMALL_ICACHE >> 10} KB")

    def fig17(ax: Any) -> None:
        ratios = {p: r.over_sps("l1d_misses", p) for p in policies[1:]}
        series = {f"{p} / sps": [ratios[p].get(k, 0.0) for k in r.kernels] for p in ratios}
        bars(ax, r.kernels, series, "L1 data cache misses")

    s.figures |= {"seed002-icache": fig16, "seed002-l1d": fig17}


def _tlp_table(r: MemoryRuns, policies: Sequence[str]) -> list[str]:
    """Fig 4 per policy: TLP, and mp's splits per warp."""
    tlp = {p: r.metric("tlp", p) for p in policies}
    splits = r.metric("splits_per_warp", "mp")
    return [
        "TLP (Fig 4) is the share of the live threads of resident warps that are in a "
        "schedulable split, over their resident cycles:",
        "",
        *md_table(
            ["kernel", *(f"TLP {p}" for p in policies), "splits mp"],
            [[k, *(f"{tlp[p][k]:.3f}" for p in policies), f"{splits[k]:.2f}"] for k in r.kernels],
        ),
        "",
    ]


def _fetch_table(r: MemoryRuns, icache: Cache) -> list[str]:
    """Fig 16: instruction misses against sps at two sizes, OREC's accesses, the cost."""
    kb, small_kb = icache.size >> 10, SMALL_ICACHE >> 10
    ratios = {
        (size, p): r.over_sps("icache_misses", p, runs)
        for size, runs in ((kb, r.run), (small_kb, r.small))
        for p in FETCH_POLICIES[1:]
    }
    accesses, cost = _accesses(r), _cost(r)
    rows = []
    for k in r.kernels:
        row = [k, f"{r.code[k]:.0f}"]
        for size, runs in ((kb, r.run), (small_kb, r.small)):
            row.append(f"{runs[k, 'sps']['icache_misses']}")
            row += [_cell(ratios[size, p].get(k)) for p in FETCH_POLICIES[1:]]
        rows.append([*row, _cell(accesses.get(k)), f"{cost[k]:.3f}"])
    return [
        f"Instruction-cache misses (Fig 16) with the seed's {kb} KB cache and with GPGPU-Sim's "
        f"own {small_kb} KB, against sps; the accesses mp-orec makes against mp (a split "
        f"fetches its own instructions, Sec 6.4); the cycles of mp with the {kb} KB cache "
        "against none (every fetch hits):",
        "",
        *md_table(
            [
                "kernel",
                "code bytes",
                *(
                    name
                    for size in (kb, small_kb)
                    for name in (f"misses sps {size} KB", "mp / sps", "mp-orec / sps")
                ),
                "accesses mp-orec / mp",
                "cycles / none",
            ],
            rows,
        ),
        "",
    ]


def _data_table(r: MemoryRuns, policies: Sequence[str]) -> list[str]:
    """Fig 17 and 15: L1 MPKI and misses against sps per policy, idle cycles of mp-orec."""
    mpki = {p: r.metric("l1d_mpki", p) for p in policies}
    data = {p: r.over_sps("l1d_misses", p) for p in policies[1:]}
    idle = r.over_sps("idle_cycles", "mp-orec")
    lines = r.metric("l1d_accesses", "sps")
    return [
        "L1 data cache (Fig 17): MPKI (misses per thousand thread instructions) per policy, "
        "misses against sps, and idle cycles of mp-orec against sps (Fig 15):",
        "",
        *md_table(
            [
                "kernel",
                "load lines",
                *(f"MPKI {p}" for p in policies),
                *(f"misses {p} / sps" for p in policies[1:]),
                "idle mp-orec / sps",
            ],
            [
                [
                    k,
                    f"{lines[k]:.0f}",
                    *(f"{mpki[p][k]:.2f}" for p in policies),
                    *(_cell(data[p].get(k)) for p in policies[1:]),
                    _cell(idle.get(k)),
                ]
                for k in r.kernels
            ],
        ),
        "",
    ]


def _accesses(r: MemoryRuns) -> dict[str, float]:
    """The instruction-cache accesses of mp-orec against mp's."""
    acc = {p: r.metric("icache_accesses", p) for p in ("mp", "mp-orec")}
    return _of({k: _share(acc["mp-orec"][k], acc["mp"][k]) for k in r.kernels})


def _cost(r: MemoryRuns) -> dict[str, float]:
    """The cycles of mp with the machine's instruction cache against none."""
    return {k: r.run[k, "mp"]["cycles"] / r.bare[k]["cycles"] for k in r.kernels}


def _extreme(values: dict[str, float], pick: Callable[..., str]) -> str:
    return pick(values, key=values.__getitem__)


def _tlp_claims(r: MemoryRuns) -> list[Claim]:
    """Fig 4: the TLP mp adds to sps, and the range sps captures."""
    chosen = r.chosen
    sps = {k: r.run[k, "sps"]["tlp"] for k in chosen}
    mp = {k: r.run[k, "mp"]["tlp"] for k in chosen}
    gain = {k: mp[k] - sps[k] for k in chosen}
    columns = {
        "TLP sps": sps,
        "TLP mp": mp,
        "splits mp": {k: r.run[k, "mp"]["splits_per_warp"] for k in chosen},
    }
    top, lo, hi = _extreme(gain, max), _extreme(sps, min), _extreme(sps, max)
    n = len(chosen)
    return [
        Claim(
            "TLP, mp - sps (largest gain)",
            "seed 002 Sec 2.2 (Fig 4: up to 35 % more)",
            0.35,
            gain[top],
            f"maximum over {some_kernels(n)} ({top})",
            baseline=0.0,
            per_kernel=gain,
            columns=columns,
        ),
        Claim(
            "TLP under sps (least)",
            "seed 002 Sec 2.2 (Fig 4: 15 % on MC)",
            0.15,
            sps[lo],
            f"minimum over {some_kernels(n)} ({lo})",
            baseline=0.0,
            per_kernel=sps,
            columns=columns,
        ),
        Claim(
            "TLP under sps (most)",
            "seed 002 Sec 2.2 (Fig 4: about 65 % on MEMC)",
            0.65,
            sps[hi],
            f"maximum over {some_kernels(n)} ({hi})",
            baseline=0.0,
            per_kernel=sps,
            columns=columns,
        ),
    ]


def _locality_claims(
    label: str, ratio: dict[str, float], columns: dict[str, dict[str, float]]
) -> list[Claim]:
    """Fig 16 at one instruction-cache size: mp's misses against sps's on the kernel with the
    most code (seed 002's REND, a large kernel: a considerable increase) and on the others
    (small code: negligible)."""
    if not ratio:
        return []
    code, size = columns["code bytes"], f"{next(iter(columns['cache bytes'].values())):,.0f}"
    big = max(ratio, key=code.__getitem__)
    others = {k: v for k, v in ratio.items() if k != big}
    source = "seed 002 Sec 6.4 (Fig 16"
    out = [
        Claim(
            f"I-cache misses, mp / sps, the kernel with the most code ({label})",
            f"{source}: a considerable increase on REND, a large kernel)",
            1.0,
            ratio[big],
            f"{big} ({code[big]:,.0f} bytes of code; a {size}-byte cache)",
            bound="more than",
            per_kernel={big: ratio[big]},
            columns=columns,
        ),
    ]
    if others:
        top = _extreme(others, max)
        out.append(
            Claim(
                f"I-cache misses, mp / sps, the other kernels ({label})",
                f"{source}: small static code, not a problem)",
                1.0,
                others[top],
                f"maximum over {some_kernels(len(others))} ({top}; a {size}-byte cache)",
                per_kernel=others,
                columns=columns,
            )
        )
    return out


def _fetch_claims(r: MemoryRuns, code: dict[str, dict[str, float]], latency: int) -> list[Claim]:
    """Sec 6.4: fetching per split, mp-orec makes fewer accesses and misses than mp; with a
    16 KB cache the instruction misses cost little (``code``: the code and cache bytes)."""
    chosen, run, small = r.chosen, r.run, r.small
    accesses, cost = _accesses(r), _cost(r)
    fewer = {k: accesses[k] for k in chosen if k in accesses}
    missed = _of(
        {
            k: _share(small[k, "mp-orec"]["icache_misses"], small[k, "mp"]["icache_misses"])
            for k in chosen
        }
    )
    warp = {
        f"warp instructions {p}": {k: run[k, p]["warp_instructions"] for k in chosen}
        for p in ("mp", "mp-orec")
    }
    source = "seed 002 Sec 6.4 (fetch per warp split"
    miss_columns = {
        f"misses {p}": {k: small[k, p]["icache_misses"] for k in missed} for p in ("mp", "mp-orec")
    }
    spent = {k: cost[k] for k in chosen}
    spent_columns = {
        "misses mp": {k: run[k, "mp"]["icache_misses"] for k in chosen},
        "cycles mp": {k: run[k, "mp"]["cycles"] for k in chosen},
        "miss latency": dict.fromkeys(chosen, float(latency)),
        **{name: {k: code[name][k] for k in chosen} for name in ("code bytes", "cache bytes")},
    }
    means = [
        (
            "I-cache accesses, mp-orec / mp",
            f"{source}: fewer accesses with OREC)",
            fewer,
            warp,
            "at most",
        ),
        (
            f"I-cache misses, mp-orec / mp ({GPGPU_SIM_SIZE})",
            f"{source}: fewer misses with OREC)",
            missed,
            miss_columns,
            "at most",
        ),
        (
            f"cycles of mp, {SEED_SIZE} / none",
            "seed 002 Sec 6.4 (negligible with a 16 KB cache)",
            spent,
            spent_columns,
            None,
        ),
    ]
    return [
        Claim(
            what,
            src,
            1.0,
            amean(list(values.values())),
            f"arithmetic mean over {some_kernels(len(values))}",
            bound=bound,
            per_kernel=values,
            columns=columns,
        )
        for what, src, values, columns, bound in means
        if values
    ]


def _data_claims(r: MemoryRuns, l1d: Cache) -> list[Claim]:
    """Sec 6.3-6.4 on the kernels standing for MEMC and MUM, where the scale has them: their
    L1 misses under mp against sps, their MPKI under sps, MEMC's idle cycles."""
    ks, run, whole = r.kernels, r.run, r.whole
    idle = r.over_sps("idle_cycles", "mp-orec")

    def columns(k: str) -> dict[str, dict[str, float]]:
        out = {
            f"{name} {p}": {k: float(run[k, p][key])}
            for p in FETCH_POLICIES
            for name, key in (
                ("MPKI", "l1d_mpki"),
                ("misses", "l1d_misses"),
                ("load lines", "l1d_accesses"),
                ("cycles", "cycles"),
                ("idle", "idle_cycles"),
                ("TLP", "tlp"),
            )
        }
        out |= {f"unavoidable {p}": {k: whole[k, p]["l1d_misses"]} for p in WHOLE_POLICIES}
        out |= {"cache bytes": {k: l1d.size}, "line bytes": {k: l1d.line_bytes}}
        return out

    def ratio(k: str) -> float | None:
        return _share(run[k, "mp"]["l1d_misses"], run[k, "sps"]["l1d_misses"])

    memc = "seed 002 Sec 6.4 (MEMC: from 30 to 82 MPKI, over 80 % more misses)"
    mum = "seed 002 Sec 6.4 (MUM: fewer L1 misses in MP, under 0.3 MPKI)"
    specs: list[tuple[str, str, str, float, float | None, Bound]] = [
        (MEMC, "L1D misses, mp / sps", memc, 82 / 30, ratio(MEMC) if MEMC in ks else None, None),
        (MEMC, "L1D MPKI under sps", memc, 30.0, None, None),
        (
            MEMC,
            "idle cycles, mp-orec / sps",
            "seed 002 Sec 6.3 (Fig 15: about 7 % more idle cycles on MEMC, from its L1 misses)",
            1.07,
            idle.get(MEMC),
            None,
        ),
        (MUM, "L1D MPKI under sps", mum, 0.3, None, "at most"),
        (MUM, "L1D misses, mp / sps", mum, 1.0, ratio(MUM) if MUM in ks else None, "at most"),
    ]
    out = []
    for k, what, source, paper, ours, bound in specs:
        if k not in ks:
            continue
        if "MPKI" in what:
            ours = run[k, "sps"]["l1d_mpki"]
        if ours is None:  # no misses (or idle cycles) under sps to compare with
            continue
        baseline = 0.0 if "MPKI" in what else 1.0
        out.append(
            Claim(
                f"{what}, {k}",
                source,
                paper,
                ours,
                k,
                baseline=baseline,
                bound=bound,
                per_kernel={k: ours},
                columns=columns(k),
            )
        )
    return out
