"""Why our numbers differ from the seeds' where they do (docs/evaluation.md shows each finding
beside its claim), written from the runs the claim is made of: every kernel a finding names
and every number it gives come from the claim's
:attr:`~reconverge.golden.evaluation.experiments.Claim.per_kernel` and
:attr:`~reconverge.golden.evaluation.experiments.Claim.columns` (the rest is the mechanism
and the papers' own numbers). A fact the runs do not hold (a smoke run holds three kernels)
is left out, not assumed."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import partial

from reconverge.golden.evaluation.base import some_kernels as _kernels
from reconverge.golden.evaluation.experiments import (
    PATHFINDER,
    REND,
    SEED002_POLICIES,
    SQUEEZE_VARIANTS,
    THESIS_BUDGET,
    Claim,
    allocator_claim,
    pearson,
    unstructured,
)
from reconverge.golden.evaluation.memory import GPGPU_SIM_SIZE, MC, MEMC, MUM, SEED_SIZE
from reconverge.kernels import benchmarks

Column = Mapping[str, float]
#: The text of a claim's "why", from the claim's measurements.
Finding = Callable[[Claim], str]

# -- numbers and lists ------------------------------------------------------------------------


def _ratio(x: float) -> str:
    return f"{x:.3f}"


def _change(x: float) -> str:
    """A ratio as the change it makes: 1.048 -> +4.8 %."""
    return f"{(x - 1) * 100:+.1f} %"


def _count(x: float) -> str:
    return f"{x:,.0f}"


def _splits(x: float) -> str:
    return f"{x:.2f}"


def _span(values: Iterable[float], fmt: Callable[[float], str] = _ratio) -> str:
    """The least and the greatest of ``values`` as ``fmt`` prints them (one when alike)."""
    vs = list(values)
    lo, hi = fmt(min(vs)), fmt(max(vs))
    return lo if lo == hi else f"{lo} to {hi}"


def _and(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _verb(n: int, singular: str, plural: str) -> str:
    """The verb that agrees with ``n`` things."""
    return singular if n == 1 else plural


def _each(kernels: Iterable[str], column: Column, fmt: Callable[[float], str] = _ratio) -> str:
    """Each kernel with its value: ``montecarlo 1.844 and raytrace 1.514``."""
    return _and([f"{k} {fmt(column[k])}" for k in kernels])


def _by(column: Column, *, largest: bool = True) -> list[str]:
    """The kernels of ``column`` by value, largest (or smallest) first."""
    return sorted(column, key=lambda k: -column[k] if largest else column[k])


def _largest(column: Column, least: float, describe: Callable[[str], str]) -> list[str]:
    """``The largest gain: ...`` (gains for several): the three kernels of ``column`` with the
    largest values, those of ``least`` or more, each as ``describe`` gives it; none: []."""
    top = [k for k in _by(column)[:3] if column[k] >= least]
    if not top:
        return []
    gains = _verb(len(top), "gain", "gains")
    return [f"The largest {gains}: " + _and([describe(k) for k in top]) + "."]


def _near(x: float) -> bool:
    """Within 1 % of 1 (the claims' "no change")."""
    return abs(x - 1) < 0.01


# -- where ours stands -------------------------------------------------------------------------


def _moved(c: Claim, x: float) -> str:
    change = _change(x) if c.baseline == 1.0 else f"{x - c.baseline:+.3f}"
    near = "1 %" if c.baseline == 1.0 else "0.01"
    return {1: f"up ({change})", -1: f"down ({change})", 0: f"unchanged (within {near})"}[c.sign(x)]


def verdict(c: Claim) -> str:
    """How ours stands against the paper's number."""
    if c.bound is not None:
        if c.direction_agrees:
            return f"ours keeps to the paper's bound ({c.bound} {c.paper:g})"
        side = "above" if c.bound == "at most" else "below"
        return f"ours is {side} the paper's bound ({c.bound} {c.paper:g})"
    if not c.direction_agrees:
        return (
            f"the direction differs: ours is {_moved(c, c.ours)}, the paper's {_moved(c, c.paper)}"
        )
    if not c.size_agrees:
        size = "smaller" if abs(c.ours - c.baseline) < abs(c.paper - c.baseline) else "larger"
        return (
            f"the direction agrees, the change is {size} than the paper's: ours is "
            f"{_moved(c, c.ours)}, the paper's {_moved(c, c.paper)}"
        )
    return "ours agrees in direction and size"


def _unexplained(c: Claim) -> str:
    text = verdict(c)
    if len(c.per_kernel) == 1:
        text += f"; on {_each(c.per_kernel, c.per_kernel)}"
    elif c.per_kernel:
        lo, hi = _by(c.per_kernel, largest=False)[0], _by(c.per_kernel)[0]
        text += f"; per kernel from {_each([lo], c.per_kernel)} to {_each([hi], c.per_kernel)}"
    return text + ". Not explained yet (golden/evaluation/findings.py)."


# -- seed 002 -------------------------------------------------------------------------------------


def _few_splits(policy: str, splits: str, c: Claim) -> str:
    """A speedup of seed 002 (``policy`` against sps or dps), by the splits a warp holds."""
    speed, split = c.per_kernel, c.columns[splits]
    half = 1 + (c.paper - 1) / 2
    reach = [k for k in _by(speed) if speed[k] >= half]
    rest = [k for k in _by(speed) if speed[k] < half]
    target = f"{_change(half)} (half of the paper's gain)"
    text = [
        f"{verdict(c)}. Running a warp's splits side by side gains only where a warp holds "
        "several schedulable splits at once: seed 002 Sec 6.2 reports about 50 % to 690 % more "
        f"for REND, MAND, MC, MUM and MEMC, where the {_kernels(len(speed))} of this claim hold "
        f"{_span(split.values(), _splits)} per warp (column *{splits}*)."
    ]
    if not reach:
        text.append(
            f"None of them gains {target}: they change by {_span(speed.values(), _change)}, "
            f"the highest {_each(_by(speed)[:1], speed)}."
        )
    elif not rest:
        text.append(f"All of them gain {target} or more: {_each(reach, speed)}.")
    else:
        more = min(split[k] for k in reach) > max(split[k] for k in rest)
        text.append(
            f"{len(reach)} of them {_verb(len(reach), 'gains', 'gain')} {target} or more: "
            f"{_each(reach, speed)}, holding {_span((split[k] for k in reach), _splits)} "
            f"splits per warp; the other {len(rest)} ({_and(rest)}) "
            f"{_verb(len(rest), 'holds', 'hold')} "
            f"{_span((split[k] for k in rest), _splits)} and change by "
            f"{_span((speed[k] for k in rest), _change)}"
            + (
                ": each kernel that gains holds more splits than any that does not."
                if more
                else "."
            )
        )
    for k in speed:
        others = [p for p in SEED002_POLICIES[1:] if p != policy and not _near(c.columns[p][k])]
        if _near(c.columns[policy][k]) and others:
            text.append(
                f"{k} is among the {len(speed)} only because {_and(others)} "
                f"{_verb(len(others), 'changes', 'change')} its cycles "
                f"({', '.join(f'{p} {_ratio(c.columns[p][k])}' for p in others)}; "
                f"{policy} {_ratio(c.columns[policy][k])})."
            )
    return " ".join(text)


def _simd_gain(c: Claim) -> str:
    ratio, sps, orec = c.per_kernel, c.columns["SIMD sps"], c.columns["SIMD mp-orec"]
    up = [k for k in _by(ratio) if ratio[k] >= 1.01]
    down = [k for k in _by(ratio, largest=False) if ratio[k] <= 0.99]
    same = [k for k in ratio if _near(ratio[k])]
    text = [
        f"{verdict(c)}. mp-orec raises SIMD efficiency over sps only where the threads of a "
        "warp that part meet again before their immediate post-dominator, as threads leaving a "
        "loop by different exits do; seed 002 Sec 6.1 attributes its gain to such flow in REND, "
        "MAND and MC."
    ]
    if up:
        text.append(
            f"{len(up)} of these {_kernels(len(ratio))} {_verb(len(up), 'gains', 'gain')} "
            "(columns *SIMD sps* / *SIMD mp-orec*): "
            + _and([f"{k} {_ratio(sps[k])} to {_ratio(orec[k])}" for k in up])
            + "."
        )
    else:
        text.append(f"None of these {_kernels(len(ratio))} gains more than 1 %.")
    if down:
        text.append(
            "Lower under mp-orec: "
            + _and([f"{k} {_ratio(sps[k])} to {_ratio(orec[k])}" for k in down])
            + "."
        )
    if same:
        text.append(f"Within 1 % of sps: {_and(same)}.")
    return " ".join(text)


def _table_entries(table: str, c: Claim) -> str:
    """Seed 002 Sec 6.6: the most entries of ``table`` (ST or RT) a warp uses."""
    most, mp = c.per_kernel, c.columns[f"{table} mp"]
    over = [k for k in _by(most) if most[k] > c.paper]
    within = [k for k in most if k not in over]
    text = [verdict(c) + "."]
    if over:
        text.append(
            _and([f"{k} uses {most[k]:g} ({benchmarks()[k].shape}; mp: {mp[k]:g})" for k in over])
            + "."
        )
        kept = [k for k in over if mp[k] == most[k]]
        if kept:
            text.append(
                f"On {_and(kept)} mp-orec keeps as many entries as mp: OREC merges splits that "
                "reach one PC, and cannot merge entries that wait at different PCs."
            )
    if within:
        text.append(
            f"The other {_kernels(len(within))} {_verb(len(within), 'stays', 'stay')} within "
            f"the bound (at most {max(most[k] for k in within):g}: column *ST/RT mp-orec*)."
        )
    return " ".join(text)


# -- seed 001 -------------------------------------------------------------------------------------


def _hws(c: Claim) -> str:
    speed, estimate = c.per_kernel, c.columns["estimate"]
    util, util_hws = c.columns["lane util sps"], c.columns["lane util sps+hws"]
    text = [
        f"{verdict(c)}. hws issues a warp instruction in fewer passes where its active threads "
        "fit in fewer quarter-warps, so it gains where lanes sit idle."
    ]
    text += _largest(
        speed,
        1.01,
        lambda k: (
            f"{k} {_ratio(speed[k])} (lane util {_ratio(util[k])}, {_ratio(util_hws[k])} with hws)"
        ),
    )
    full = [k for k in speed if util[k] >= 0.99]
    if full:
        alike = all(_near(speed[k]) for k in full)
        text.append(
            f"The {_kernels(len(full))} whose warps run full (lane util sps 0.99 or more: "
            f"{_and(full)}) {_verb(len(full), 'changes', 'change')} by "
            f"{_span((speed[k] for k in full), _change)}"
            + (", as seed 001's full-warp benchmarks did." if alike else ".")
        )
    high = [k for k in estimate if estimate[k] > 2]
    if high and c.ours > c.paper:
        text.append(
            f"{len(high)} of the {_kernels(len(speed))} {_verb(len(high), 'has', 'have')} Eq 6.1 "
            f"estimates above 2 (column *estimate*: {_and(high)}), where seed 001 names three "
            "low-occupancy benchmarks (BFS, NN, NQU)."
        )
    short = [k for k in speed if estimate[k] >= 1.1 and speed[k] - 1 < (estimate[k] - 1) / 2]
    short = sorted(short, key=lambda k: speed[k] - estimate[k])[:2]
    if short:
        text.append(
            "Measured speedups stay below the estimates where the squeeze, which keeps each "
            "thread in its lane (seed 001 Sec 6.3), cannot fill the quarter-warps: "
            + _and([f"{k} {_ratio(speed[k])} against {_ratio(estimate[k])}" for k in short])
            + "."
        )
    for k in [k for k in _by(speed, largest=False) if speed[k] <= 0.99]:
        text.append(f"{k} loses ({_ratio(speed[k])})")
        if abs(util_hws[k] - util[k]) < 0.005:
            text[-1] += (
                f": hws leaves its lane utilisation at {_ratio(util[k])}, so it pays the "
                "squeeze cycle without saving a pass"
            )
        text[-1] += "."
    return " ".join(text)


def _en_dwf(c: Claim) -> str:
    gain, util, slower = c.per_kernel, c.columns["lane util sps"], c.columns["cycles dwf / sps"]
    top = [k for k in _by(gain)[:4] if gain[k] >= 1.01]
    text = [verdict(c) + "."]
    if top:
        text.append(
            "en-dwf gains over DWF where lanes sit idle and DWF's home-slot rule refuses most "
            "merges: "
            + _and([f"{k} {_ratio(gain[k])} (lane util sps {_ratio(util[k])})" for k in top])
            + "; seed 001's benchmarks ran mostly full warps."
        )
    else:
        text.append(f"en-dwf gains more than 1 % on none of the {_kernels(len(gain))}.")
    simd = {v: c.columns[f"SIMD {v}"] for v in ("sps", "dwf", "en-dwf")}
    for k in [k for k in _by(gain) if gain[k] >= 1.01 and slower[k] >= 1.01][:2]:
        text.append(
            f"On {k} ({_ratio(gain[k])}) en-dwf repairs a loss of DWF's own: dwf runs it "
            f"{slower[k]:.2f}x slower than static warps (SIMD efficiency "
            f"{_ratio(simd['sps'][k])} with static warps, {_ratio(simd['dwf'][k])} under dwf, "
            f"{_ratio(simd['en-dwf'][k])} under en-dwf)."
        )
    losers = [k for k in _by(gain, largest=False) if gain[k] <= 0.99]
    if losers:
        text.append(f"Slower under en-dwf: {_each(losers, gain)}.")
    return " ".join(text)


def _squeeze_alone(c: Claim) -> str:
    """Seed 001 Fig 6.1: the squeeze's own gain, from the lane utilisation with and without."""
    gain = c.per_kernel
    using, not_using = c.columns["lane util with squeeze"], c.columns["lane util without squeeze"]
    up = [k for k in _by(gain) if gain[k] >= 1.01]
    down = [k for k in _by(gain, largest=False) if gain[k] <= 0.99]
    text = [
        f"{verdict(c)}. Without the squeeze hws still leaves out the quarter-warps with no "
        "active thread; the squeeze gains where a warp's active threads occupy more quarters "
        "than their lanes need"
    ]
    if up:
        text[-1] += (
            ": "
            + _and(
                [
                    f"{k} {_ratio(gain[k])} (lane utilisation {_ratio(not_using[k])} to "
                    f"{_ratio(using[k])})"
                    for k in up[:3]
                ]
            )
            + "."
        )
    else:
        text[-1] += f", which no kernel gains 1 % from (the most: {_each(_by(gain)[:1], gain)})."
    if down:
        text.append(
            f"Slower with the squeeze: {_each(down[:3], gain)} (seed 001: RAY and LPS under DWF, "
            "whose squeezed warps merge less)."
        )
    return " ".join(text)


# -- hints (seeds 003 and 000) -------------------------------------------------------------------


def _hints_alone(hinted: str, free: str, c: Claim) -> str:
    """The lowest activity ratio of a hint-free run (``free``) to a hinted one (``hinted``)."""
    k = _by(c.per_kernel, largest=False)[0]
    col = {name: values[k] for name, values in c.columns.items()}
    hints = col["hints"]
    wi_h, wi_f = col["warp instructions hinted"], col["warp instructions hint-free"]
    af_h, af_f = col["activity hinted"], col["activity hint-free"]
    cy_h, cy_f = col["cycles hinted"], col["cycles hint-free"]
    text = f"{verdict(c)}. {k} is the minimum ({_ratio(c.per_kernel[k])})"
    if hints and wi_h - wi_f == hints:
        # A policy does not change a thread's path: the active threads the hinted run has over
        # the hint-free one (activity x warp instructions, in warps) are the hints'.
        hint_af = (af_h * wi_h - af_f * wi_f) / hints
        fuller = hint_af > af_f
        text += (
            f": its two runs differ by the `rhint` instructions alone, the {hinted} run issuing "
            f"exactly its {_count(hints)} hints more ({_count(wi_h)} against {_count(wi_f)} "
            "warp instructions). The hints"
            + (" precede the branches, before the warp diverges, and" if fuller else "")
            + f" run at activity {_ratio(hint_af)}: they {'raise' if fuller else 'lower'} the "
            f"{hinted} run's average to {_ratio(af_h)} from the {_ratio(af_f)} of the "
            "instructions both runs issue"
        )
    else:
        text += (
            f": the {hinted} run issues {_count(hints)} `rhint` instructions and "
            f"{_count(abs(wi_h - wi_f))} {'more' if wi_h >= wi_f else 'fewer'} warp instructions "
            f"in all ({_count(wi_h)} against {_count(wi_f)}), so the runs differ by more than "
            f"the hints (activity {_ratio(af_h)} against {_ratio(af_f)})"
        )
    pace = "not slower" if cy_f <= cy_h else "slower"
    return text + (f"; the {free} run is {pace} ({_count(cy_f)} cycles against {_count(cy_h)}).")


def _fewer_instructions(c: Claim) -> str:
    ratio, col = c.per_kernel, c.columns
    hints = col["hints"]
    wi_h, wi_f = col["warp instructions hinted"], col["warp instructions hint-free"]
    af_h, af_f = col["activity hinted"], col["activity hint-free"]
    k = _by(ratio, largest=False)[0]
    fewer = wi_h[k] - wi_f[k]
    text = [
        f"{verdict(c)}. {k} has the largest reduction ({_ratio(ratio[k])}): its explicit run "
        f"issues {_count(hints[k])} hints, its implicit run {_count(fewer)} fewer warp "
        "instructions"
    ]
    if fewer > hints[k]:
        early = af_f[k] > af_h[k]
        text[-1] += (
            f", {_count(fewer - hints[k])} more than the hints account for: the implicit run "
            + ("also reconverges early" if early else "also groups threads differently")
            + f" (activity factor {_ratio(af_h[k])} explicit, {_ratio(af_f[k])} implicit)."
        )
    else:
        text[-1] += "."
    alone = [j for j in ratio if hints[j] and wi_h[j] - wi_f[j] == hints[j]]
    if alone:
        text.append(
            f"Seed 003's {(1 - c.paper) * 100:.0f} % is the hints alone, on structured "
            f"benchmarks; on the {_kernels(len(alone))} whose runs differ by the hints alone the "
            f"ratio is {_span(ratio[j] for j in alone)}."
        )
    return " ".join(text)


# -- seed 000 -------------------------------------------------------------------------------------


#: How each baseline of seed 000's rows holds back the threads that leave a loop by different
#: exits, which min(SP:PC) merges at their earliest common PC.
_HOLDS = {
    "sps": "sps holds them to the loop's immediate post-dominator",
    "ppc-implicit": "the dual-path stack merges only the two paths of its top entry",
}


def _stackless_gain(base: str, c: Claim) -> str:
    """Seed 000 Sec 5's largest gain of stack-less over ``base`` (sps or the implicit stack)."""
    ratio, sps, less = c.per_kernel, c.columns[f"SIMD {base}"], c.columns["SIMD stackless"]

    def gain(k: str) -> str:
        return f"{k} {_ratio(ratio[k])} ({_ratio(sps[k])} to {_ratio(less[k])})"

    above = [k for k in _by(ratio) if ratio[k] >= c.paper][:3]
    text = [verdict(c) + "."]
    if above:
        text.append(f"Above the paper's {_change(c.paper)}: {_and([gain(k) for k in above])}.")
        loose = [k for k in above if unstructured(k)]
        if loose:
            text.append(
                f"{_and(loose)} {_verb(len(loose), 'leaves', 'leave')} a loop or the "
                "kernel early: where threads leave a loop by different exits, min(SP:PC) merges "
                f"them at their earliest common PC while {_HOLDS[base]}."
            )
    else:
        text.append(
            f"No kernel gains the paper's {_change(c.paper)}: the largest is {gain(_by(ratio)[0])}."
        )
    near = [k for k in ratio if abs(ratio[k] - 1) < c.paper - 1]
    if near:
        text.append(
            "Seed 000 measured regular CUDA kernels (Sec 3: 'current CUDA kernels offer a much "
            "more regular control flow'), where the two differ by a few per cent, as on "
            + (
                f"all {len(ratio)} of our kernels"
                if len(near) == len(ratio)
                else f"{len(near)} of our {_kernels(len(ratio))}"
            )
            + f" ({_span((ratio[k] for k in near), _change)})."
        )
    return " ".join(text)


def _same_code_worst(c: Claim) -> str:
    """Seed 000 Sec 5's worst case against the implicit stack: both run the hint-free code, so
    the threads' paths and thread instructions are the same and the activity ratio is the
    inverse of the warp instructions'."""
    k = _by(c.per_kernel, largest=False)[0]
    col = {name: values[k] for name, values in c.columns.items()}
    wi_l, wi_i = col["warp instructions stackless"], col["warp instructions ppc-implicit"]
    text = (
        f"{verdict(c)}. {k} is the minimum ({_ratio(c.per_kernel[k])}): both policies run its "
        f"hint-free code, stack-less in {_count(wi_l)} warp instructions at activity "
        f"{_ratio(col['activity stackless'])}, ppc-implicit in {_count(wi_i)} at "
        f"{_ratio(col['activity ppc-implicit'])}"
    )
    if wi_l > wi_i:
        text += (
            f": {_count(wi_l - wi_i)} more warp instructions for the same thread instructions, "
            "its threads issuing in more, smaller groups"
        )
    pace = "not slower" if col["cycles stackless"] <= col["cycles ppc-implicit"] else "slower"
    return text + (
        f"; stack-less is {pace} ({_count(col['cycles stackless'])} cycles against "
        f"{_count(col['cycles ppc-implicit'])})."
    )


# -- seed 004 -------------------------------------------------------------------------------------

_ALLOCATORS = {
    "remat": "replaces spill code only for constants and values affine in the thread "
    "index, which it recomputes (seed 004 Fig 4.3, rows (i) and (iii)); other per-thread "
    "values stay in local memory under every allocator.",
    "divergent": "moves the spilled values the simple analysis proves uniform from local "
    "memory, a copy per thread, to shared memory, a copy per warp (seed 004 Fig 4.3, row "
    "(ii)); spilled values that differ per thread stay in local memory.",
    "affine": "adds shared affine values and rematerialisation to the divergent "
    "allocator's rule (all rows of seed 004 Fig 4.3); on Ocelot's PTX the paper's affine "
    "allocator replaced almost half of the spill code (Fig 5.7).",
}


def _allocator(allocator: str, c: Claim) -> str:
    speed = c.per_kernel
    lin, own = c.columns["spills linear"], c.columns[f"spills {allocator}"]
    spilling = [k for k in speed if lin[k]]
    text = [verdict(c) + "."]
    if not spilling:
        text.append(
            f"None of the {_kernels(len(speed))} spills under linear scan at this budget, so no "
            "allocator has spill code to improve."
        )
        return " ".join(text)
    text.append(
        f"At this budget {len(spilling)} of the {_kernels(len(speed))} "
        f"{_verb(len(spilling), 'spills', 'spill')} under linear scan. {allocator} "
        + _ALLOCATORS[allocator]
    )
    changed = [k for k in _by(speed) if not _near(speed[k])]
    if changed:
        text.append(
            f"{allocator} changes the cycles by more than 1 % on "
            + _and(
                [f"{k} {_ratio(speed[k])} ({_count(lin[k])} to {_count(own[k])})" for k in changed]
            )
            + f" (in parentheses, dynamic spill instructions under linear scan and {allocator})."
        )
    else:
        text.append(f"{allocator} changes the cycles of none by more than 1 %.")
    return " ".join(text)


def _analysis_time(c: Claim) -> str:
    ratio, variables = c.per_kernel, c.columns["variables"]
    ks = list(ratio)
    fit = {
        name: pearson([variables[k] for k in ks], [c.columns[f"{name} (us)"][k] for k in ks]) ** 2
        for name in ("simple", "affine")
    }
    lo, hi = _by(ratio, largest=False)[0], _by(ratio)[0]
    return (
        f"{verdict(c)}. The ratio runs from {lo} {ratio[lo]:.2f} to {hi} {ratio[hi]:.2f} over "
        f"the {_kernels(len(ks))}: a constant of the implementation, not of the lattice (our "
        "affine analysis is a Python worklist over polynomial states, built and compared per "
        "visit, the simple one a reachability over sets). The paper's point is that both grow "
        "linearly with the program: against the variables, the simple analysis's time fits a "
        f"line with R^2 {fit['simple']:.3f} and the affine one's with {fit['affine']:.3f} "
        "(seed 004: 0.957 and 0.936)."
    )


def _divergent_variables(c: Claim) -> str:
    variables = c.columns["variables"]
    simple, affine = c.columns["divergent simple"], c.columns["divergent affine"]
    differ = [k for k in variables if simple[k] != affine[k]]
    text = [
        f"{verdict(c)}. Of the {_count(sum(variables.values()))} variables of the "
        f"{_kernels(len(variables))} the simple analysis marks {_count(sum(simple.values()))} "
        f"divergent and the affine one {_count(sum(affine.values()))}"
    ]
    if differ:
        text[-1] += (
            "; they differ only on "
            + _and(
                [f"{k} ({_count(simple[k])} divergent become {_count(affine[k])})" for k in differ]
            )
            + "."
        )
    else:
        text[-1] += ", the same on every kernel."
    paper = "on seed 004's kernels it marks 58.81 % of the variables divergent against 63.78 %"
    if differ:
        text.append(
            "The affine analysis proves uniform what the simple one derives from comparing a "
            "thread-relative value with another of the same slope (seed 004 Fig 2.2), as in "
            f"loops bounded by thread-relative limits; {paper}."
        )
    else:
        text.append(f"Here it proves no variable more uniform than the simple one; {paper}.")
    return " ".join(text)


def _affine_share(c: Claim) -> str:
    """Seed 004 Fig 5.3: the affine analysis's divergent variables that are ``a1*T + a0``."""
    affine, divergent = c.columns["affine in Tid"], c.columns["divergent affine"]
    text = [
        f"{verdict(c)}. Of the {_count(sum(divergent.values()))} variables of the "
        f"{_kernels(len(divergent))} that the affine analysis marks divergent (a1 != 0), "
        f"{_count(sum(affine.values()))} are a1*T + a0 with every higher coefficient 0 "
        "(Theorem 3)"
    ]
    ranked = [k for k in _by(c.per_kernel) if affine[k]]
    if ranked:
        text[-1] += (
            ": the largest shares are "
            + _and([f"{k}'s ({_count(affine[k])} of {_count(divergent[k])})" for k in ranked[:3]])
            + "."
        )
    else:
        text[-1] += "."
    return " ".join(text)


def _degree_two(c: Claim) -> str:
    """Seed 004 Sec 5.3: the uniform variables degree two finds and degree one misses."""
    one, two = c.columns["uniform degree 1"], c.columns["uniform degree 2"]
    gained = {k: two[k] - one[k] for k in two if two[k] != one[k]}
    total = sum(c.columns["variables"].values())
    text = (
        f"{verdict(c)}. Degree two proves {_count(sum(gained.values()))} more of the "
        f"{_count(total)} variables uniform than degree one"
    )
    if gained:
        return text + ": " + _and([f"{k} {_count(n)}" for k, n in sorted(gained.items())]) + "."
    return text + "; seed 004 found 39 in almost 10,000."


def _spill_replaced(c: Claim) -> str:
    """Seed 004 Fig 5.7: the affine allocator's spill code by where it goes."""
    local, shared, remat = (c.columns[name] for name in ("local", "shared", "remat"))
    total = sum(local.values()) + sum(shared.values()) + sum(remat.values())
    text = [
        f"{verdict(c)}. Of the {_count(total)} spill loads and stores of the "
        f"{_kernels(len(local))} that spill, the affine allocator keeps "
        f"{_count(sum(local.values()))} in local memory, puts {_count(sum(shared.values()))} in "
        f"shared memory and rematerialises {_count(sum(remat.values()))}"
    ]
    ranked = _by(c.per_kernel)
    text[-1] += (
        f"; per kernel from {_each(ranked[-1:], c.per_kernel)} to {_each(ranked[:1], c.per_kernel)}"
        "."
    )
    if any(c.per_kernel[k] == 0 for k in ranked):
        none = [k for k in ranked if c.per_kernel[k] == 0]
        text.append(f"{_and(none)} {_verb(len(none), 'keeps', 'keep')} all of it in local memory.")
    return " ".join(text)


# -- seed 002: the memory system ------------------------------------------------------------------


def _bytes(x: float) -> str:
    return f"{x:,.0f} bytes"


def _misses(values: Iterable[float]) -> str:
    """``1 miss``, ``3 misses``, ``2 to 5 misses``."""
    vs = list(values)
    return f"{_span(vs, _count)} {'miss' if max(vs) == 1 else 'misses'}"


def _idle(c: Claim) -> str:
    """Seed 002 Sec 6.3: idle cycles of mp-orec against sps, by the TLP each exposes."""
    ratio, tlp_sps, tlp_orec = c.per_kernel, c.columns["TLP sps"], c.columns["TLP mp-orec"]
    idle_sps, idle_orec = c.columns["idle sps"], c.columns["idle mp-orec"]

    def each(ks: list[str]) -> str:
        return _and(
            [
                f"{k} {_ratio(ratio[k])} ({_count(idle_sps[k])} to {_count(idle_orec[k])} idle "
                f"cycles; TLP {_ratio(tlp_sps[k])} to {_ratio(tlp_orec[k])})"
                for k in ks
            ]
        )

    fewer = [k for k in _by(ratio, largest=False) if ratio[k] <= 0.99]
    more = [k for k in _by(ratio) if ratio[k] >= 1.01]
    text = [
        f"{verdict(c)}. The issue port idles when no split of any warp can issue; seed 002 "
        "(Sec 6.3) traces its fewer idle cycles to the eligible threads MP adds (Fig 14)."
    ]
    if fewer:
        text.append(f"The largest reductions: {each(fewer[:3])}.")
    if more:
        text.append(f"More idle cycles under mp-orec: {each(more[:3])}.")
    up = [k for k in ratio if tlp_orec[k] > tlp_sps[k] + 0.01]
    if fewer and up and set(fewer) <= set(up):
        text.append("Every kernel whose idle cycles fall has more TLP under mp-orec.")
    return " ".join(text)


def _tlp_gain(c: Claim) -> str:
    """Seed 002 Fig 4: the TLP mp adds to sps."""
    gain, sps, mp = c.per_kernel, c.columns["TLP sps"], c.columns["TLP mp"]
    splits = c.columns["splits mp"]
    text = [
        f"{verdict(c)}. sps exposes the threads of a warp's top stack entry, mp those of every "
        "split in its split table, so TLP rises with the splits a warp holds at once."
    ]
    top = _largest(
        gain,
        0.01,
        lambda k: (
            f"{k} {_ratio(sps[k])} to {_ratio(mp[k])} ({_splits(splits[k])} splits per "
            "warp under mp)"
        ),
    )
    text += top
    if not top:
        text.append(f"No kernel gains 0.01: {_each(_by(gain)[:1], gain)} at most.")
    short = [k for k in _by(mp, largest=False) if mp[k] < 0.95][:2]
    if short:
        text.append(
            "Under mp TLP stays lowest where many threads wait at reconvergence points (the "
            f"paper's reason TLP does not reach 100 %) or barriers: {_each(short, mp)}."
        )
    return " ".join(text)


def _tlp_sps(c: Claim) -> str:
    """Seed 002 Fig 4: the share of TLP sps captures (15 % on MC to 65 % on MEMC)."""
    sps, mp = c.per_kernel, c.columns["TLP mp"]
    lo, hi = _by(sps, largest=False)[0], _by(sps)[0]
    text = [
        f"{verdict(c)}. Under sps only the threads of a warp's top stack entry can issue, the "
        "others waiting in the stack for their path or for reconvergence"
    ]
    if lo == hi:
        text[-1] += f": {lo} keeps {_ratio(sps[lo])} of its live threads schedulable."
    else:
        text[-1] += (
            f": of the {_kernels(len(sps))} {lo} keeps the least of its live threads "
            f"schedulable ({_ratio(sps[lo])}; {_ratio(mp[lo])} under mp), {hi} the most "
            f"({_ratio(sps[hi])}; {_ratio(mp[hi])} under mp)."
        )
    most = c.what.endswith("(most)")
    beyond = [k for k in _by(sps, largest=most) if (sps[k] > c.paper if most else sps[k] < c.paper)]
    if most and beyond:
        text.append(
            f"{len(beyond)} of them keep more than the paper's {c.paper:g} schedulable under "
            f"sps (the most: {_each(beyond[:3], sps)})."
        )
    named = [k for k in (MC, MEMC) if k in sps]
    if named:
        text.append(
            "Seed 002 measured 15 % on MC and about 65 % on MEMC; "
            + _and([f"our {k} captures {_ratio(sps[k])}" for k in named])
            + "."
        )
    return " ".join(text)


def _fetch_locality(c: Claim) -> str:
    """Seed 002 Fig 16: mp's instruction misses against sps's, by the code against the cache."""
    ratio, code, cache = c.per_kernel, c.columns["code bytes"], c.columns["cache bytes"]
    sps, mp = c.columns["misses sps"], c.columns["misses mp"]
    fit = [k for k in ratio if code[k] <= cache[k]]
    big = [k for k in _by(code) if k in ratio and code[k] > cache[k]]
    size = f"{next(iter(cache[k] for k in ratio)):,.0f}-byte"
    text = [verdict(c) + "."]

    def which(ks: list[str]) -> str:
        return _and(ks) if len(ks) <= 3 else f"{len(ks)} of them"

    if fit:
        alike = [k for k in fit if sps[k] == mp[k]]
        text.append(
            f"The code of {which(fit)} ({_span((code[k] for k in fit), _bytes)}) fits the "
            f"{size} cache"
            + (
                ", and mp misses as often as sps"
                + ("" if alike == fit else f" on {which(alike)}")
                + f" ({_misses(sps[k] for k in alike)}: a line's first fetch costs a miss "
                "under any policy, and the line stays)"
                if alike
                else ""
            )
            + "."
        )
        differ = [k for k in fit if sps[k] != mp[k]]
        if differ:
            text.append(
                "Where the misses differ, mp against sps: "
                + _and([f"{k} {_count(mp[k])} against {_count(sps[k])}" for k in differ[:3]])
                + "."
            )
    for k in big[:2]:
        text.append(
            f"{k}'s code ({_bytes(code[k])}) is larger than the cache: mp misses "
            f"{_count(mp[k])} times against sps's {_count(sps[k])}"
            + (
                ", running splits of a warp in distant blocks that evict each other's lines, "
                "as seed 002 found on REND"
                if ratio[k] >= 1.01
                else ""
            )
            + "."
        )
    if fit and c.bound == "more than":
        text.append(
            "Seed 002's increase is on REND, a large kernel: MP's frequent fetches from distant "
            "blocks cost misses only where the code does not fit the cache."
        )
    return " ".join(text)


def _fetch_accesses(c: Claim) -> str:
    """Seed 002 Sec 6.4: fetching per split, mp-orec makes fewer accesses than mp."""
    acc, mp, orec = (
        c.per_kernel,
        c.columns["warp instructions mp"],
        c.columns["warp instructions mp-orec"],
    )
    fewer = [k for k in _by(acc, largest=False) if acc[k] <= 0.99]
    text = [
        f"{verdict(c)}. A split fetches each instruction it issues, so the accesses follow the "
        "warp instructions the splits issue, which opportunistic reconvergence lowers where "
        "it merges splits early."
    ]
    if fewer:
        text.append(
            f"mp-orec makes fewer accesses on {len(fewer)} of the {_kernels(len(acc))}, most on "
            + _and(
                [
                    f"{k} ({_ratio(acc[k])}; {_count(orec[k])} warp instructions against "
                    f"{_count(mp[k])})"
                    for k in fewer[:3]
                ]
            )
            + "."
        )
    same = [k for k in acc if _near(acc[k])]
    if same:
        text.append(
            f"On {len(same)} {_verb(len(same), 'kernel', 'kernels')} they are within 1 %: "
            f"mp-orec issues {_span(orec[k] / mp[k] for k in same)} of mp's warp "
            "instructions there."
        )
    return " ".join(text)


def _fetch_merged(c: Claim) -> str:
    """Seed 002 Sec 6.4: mp-orec misses no more than mp in the instruction cache."""
    ratio, mp, orec = c.per_kernel, c.columns["misses mp"], c.columns["misses mp-orec"]
    same = [k for k in ratio if mp[k] == orec[k]]
    differ = [k for k in _by(ratio) if mp[k] != orec[k]]
    text = [verdict(c) + "."]
    if same:
        text.append(
            f"{len(same)} of the {_kernels(len(ratio))} miss as often under both "
            f"({_misses(mp[k] for k in same)})."
        )
    if differ:
        text.append(
            "The others, mp-orec against mp: "
            + _and([f"{k} {_count(orec[k])} against {_count(mp[k])}" for k in differ[:3]])
            + "."
        )
    return " ".join(text)


def _fetch_cost(c: Claim) -> str:
    """Seed 002 Sec 6.4: the cycles a 16 KB instruction cache costs against none."""
    cost, misses, cycles = c.per_kernel, c.columns["misses mp"], c.columns["cycles mp"]
    latency, code, cache = (
        c.columns["miss latency"],
        c.columns["code bytes"],
        c.columns["cache bytes"],
    )
    top = _by(cost)[:2]
    text = [
        f"{verdict(c)}. The cache's cost is its misses, each {_count(latency[top[0]])} cycles "
        "to memory: "
        + _and(
            [
                f"{k} {_ratio(cost[k])} ({_misses([misses[k]])} in a run of "
                f"{_count(cycles[k])} cycles)"
                for k in top
            ]
        )
        + "."
    ]
    if all(code[k] <= cache[k] for k in cost):
        text.append(
            "Every kernel's code fits the cache, so these are first fetches of a line, which "
            "no cache size avoids and which weigh most on the shortest runs"
        )
        longest = _by(cycles)[0]
        text[-1] += (
            f"; the longest run, {longest} ({_count(cycles[longest])} cycles), pays "
            f"{_ratio(cost[longest])}."
            if longest not in top
            else "."
        )
    return " ".join(text)


def _data_locality(c: Claim) -> str:
    """Seed 002 Sec 6.3-6.4 on MEMC or MUM: the L1 misses of its suite kernel, split into the
    ones no cache size saves and the lines evicted before their reuse; MEMC's idle cycles."""
    k = next(iter(c.per_kernel))
    col = {name: values[k] for name, values in c.columns.items()}
    miss = {p: col[f"misses {p}"] for p in ("sps", "mp", "mp-orec")}
    kept = {p: col[f"unavoidable {p}"] for p in ("sps", "mp")}
    lost = {p: miss[p] - kept[p] for p in ("sps", "mp")}
    lines = {p: col[f"load lines {p}"] for p in ("sps", "mp")}
    made = (
        f"{_count(lines['sps'])} line transactions under each policy"
        if lines["sps"] == lines["mp"]
        else f"{_count(lines['sps'])} line transactions under sps, {_count(lines['mp'])} under mp"
    )
    text = [
        f"{verdict(c)}. {k}'s loads make {made}; sps misses {_count(miss['sps'])} "
        f"({col['MPKI sps']:.1f} MPKI), mp {_count(miss['mp'])} ({col['MPKI mp']:.1f}), "
        f"mp-orec {_count(miss['mp-orec'])} ({col['MPKI mp-orec']:.1f})."
    ]
    if "idle" in c.what:
        text.append(
            f"Its idle cycles: sps {_count(col['idle sps'])}, mp-orec {_count(col['idle mp-orec'])}"
            f", with TLP {_ratio(col['TLP sps'])} and {_ratio(col['TLP mp-orec'])}"
            + (
                ": with fewer L1 misses and more threads to issue, mp-orec leaves the port idle "
                "less, where seed 002's MEMC idled more from its extra misses."
                if miss["mp-orec"] < miss["sps"] and col["TLP mp-orec"] > col["TLP sps"]
                else "."
            )
        )
        return " ".join(text)
    text.append(
        f"With an L1 that holds every line, sps misses {_count(kept['sps'])} and mp "
        f"{_count(kept['mp'])} (first touches, and reloads of lines a store evicted): the other "
        f"{_count(lost['sps'])} and {_count(lost['mp'])} are lines evicted before their reuse, "
        f"the run touching at least {_bytes(kept['sps'] * col['line bytes'])} against the "
        f"cache's {_bytes(col['cache bytes'])}."
    )
    if "MPKI" in c.what:
        floor = col["MPKI sps"] * kept["sps"] / miss["sps"] if miss["sps"] else 0.0
        text.append(
            f"Of its {col['MPKI sps']:.1f} MPKI, {floor:.1f} are misses no cache size saves, "
            "the rest its lines outgrowing the cache"
            + (
                f": even the first alone exceed the paper's {c.paper:g}."
                if c.bound == "at most" and floor > c.paper
                else "."
            )
        )
        return " ".join(text)
    if lost["mp"] != lost["sps"]:
        fewer = lost["mp"] < lost["sps"]
        how = (
            "it runs the splits of a warp side by side where sps runs one path after the other, "
            "each path's loads waiting for the paths before it"
            if fewer
            else "its warp splits evict each other's data before the same split uses it again"
        )
        paper = {
            (MEMC, True): "seed 002's MEMC went the other way, its warp splits evicting each "
            "other's data before the same split used it again",
            (MEMC, False): "so did seed 002's MEMC",
            (MUM, True): "seed 002's MUM also missed less under MP",
            (MUM, False): "seed 002's MUM missed less under MP",
        }.get((k, fewer))
        text.append(
            f"mp evicts {'fewer' if fewer else 'more'} lines before their reuse: {how}"
            + (f"; {paper}." if paper else ".")
        )
    return " ".join(text)


FINDINGS: dict[str, Finding] = {
    "dps speedup over sps": partial(_few_splits, "dps", "splits mp"),
    "mp speedup over sps": partial(_few_splits, "mp", "splits mp"),
    "mp-orec speedup over sps": partial(_few_splits, "mp-orec", "splits mp-orec"),
    "mp-orec speedup over dps": partial(_few_splits, "mp-orec", "splits mp-orec"),
    "mp-orec speedup over sps (largest)": partial(_few_splits, "mp-orec", "splits mp-orec"),
    "mp-orec speedup over dps (largest)": partial(_few_splits, "mp-orec", "splits mp-orec"),
    f"mp-orec speedup over sps, {REND}": partial(_few_splits, "mp-orec", "splits mp-orec"),
    "SIMD efficiency, mp-orec / sps": _simd_gain,
    "SIMD efficiency, mp-orec / sps (largest gain)": _simd_gain,
    "idle cycles, mp-orec / sps": _idle,
    "TLP, mp - sps (largest gain)": _tlp_gain,
    "TLP under sps (least)": _tlp_sps,
    "TLP under sps (most)": _tlp_sps,
    **{
        f"I-cache misses, mp / sps, {which} ({size})": _fetch_locality
        for which in ("the kernel with the most code", "the other kernels")
        for size in (SEED_SIZE, GPGPU_SIM_SIZE)
    },
    "I-cache accesses, mp-orec / mp": _fetch_accesses,
    f"I-cache misses, mp-orec / mp ({GPGPU_SIM_SIZE})": _fetch_merged,
    f"cycles of mp, {SEED_SIZE} / none": _fetch_cost,
    **{
        f"{what}, {kernel}": _data_locality
        for kernel, whats in (
            (MEMC, ("L1D misses, mp / sps", "L1D MPKI under sps", "idle cycles, mp-orec / sps")),
            (MUM, ("L1D misses, mp / sps", "L1D MPKI under sps")),
        )
        for what in whats
    },
    "ST entries a warp uses at most, mp-orec": partial(_table_entries, "ST"),
    "RT entries a warp uses at most, mp-orec": partial(_table_entries, "RT"),
    "hws speedup over sps (PDOM)": _hws,
    "en-dwf speedup over dwf": _en_dwf,
    **{
        f"squeeze alone: {v} + hws over hws without the squeeze": _squeeze_alone
        for v in SQUEEZE_VARIANTS
    },
    "activity factor, implicit / explicit, structured kernels": partial(
        _hints_alone, "explicit", "implicit"
    ),
    "dynamic instructions, implicit / explicit (largest reduction)": _fewer_instructions,
    f"dynamic instructions, implicit / explicit, {PATHFINDER}": _fewer_instructions,
    "SIMD efficiency, stackless / sps (largest gain)": partial(_stackless_gain, "sps"),
    "SIMD efficiency, stackless / implicit stack (largest gain)": partial(
        _stackless_gain, "ppc-implicit"
    ),
    "SIMD efficiency, stackless / implicit stack (worst case)": _same_code_worst,
    "SIMD efficiency, stackless / sps (worst case)": partial(_hints_alone, "sps", "stack-less"),
    **{allocator_claim(a): partial(_allocator, a) for a in _ALLOCATORS},
    "divergent variables affine in Tid (share)": _affine_share,
    f"spill code the affine allocator replaces ({THESIS_BUDGET['affine']} registers, share)": (
        _spill_replaced
    ),
    "uniform variables, degree 2 over degree 1 (share of all variables)": _degree_two,
    "affine / simple analysis time": _analysis_time,
    "divergent variables, affine / simple": _divergent_variables,
}
"""The findings by :attr:`Claim.what <reconverge.golden.evaluation.experiments.Claim.what>`."""


def finding(c: Claim) -> str:
    """Why ours differs from the paper's, from the claim's measurements (its verdict and the
    kernels that carry it, for a claim without a finding of its own)."""
    if not c.per_kernel and not any(c.columns.values()):
        return f"{verdict(c)}; no kernel's runs enter it."
    return FINDINGS.get(c.what, _unexplained)(c)
