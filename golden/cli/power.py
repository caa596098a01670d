"""``reconverge power FILE|KERNEL [--config cosim] [--policy P] [--hws] [SM options of cosim]
[--rtl] [--json]``: the energy model's energy of a golden run by stage and by event
(:mod:`reconverge.golden.cost.energy`); ``--rtl`` co-simulates the same run on the
toggle-coverage build and puts the RTL's measured energy by stage beside it."""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from typing import Any

from reconverge.golden import cli
from reconverge.golden.cli.command import Command
from reconverge.golden.cli.cosim import add_params_options
from reconverge.golden.cli.options import params_of
from reconverge.golden.cli.sm import format_energy, run_on_sm, workload_of
from reconverge.golden.cost.energy import energy, event_counts, model
from reconverge.golden.policies import Policy


def _configure(p: argparse.ArgumentParser) -> None:
    add_params_options(p)
    p.add_argument(
        "--rtl", action="store_true",
        help="also co-simulate the run on the SM's toggle-coverage build (Verilator) and put "
        "the RTL's energy by stage beside the model's",
    )  # fmt: skip


def power_json(ns: argparse.Namespace) -> dict[str, Any]:
    """The model's energy of a golden run of the program on the SM of the options, and with
    ``--rtl`` the RTL's, by stage."""
    params = params_of(ns)
    work = workload_of(ns, ns.file)
    launch = work.sm_launch(params, ns.step_limit)
    image = work.image_for(params.config.explicit)
    result = run_on_sm(image, launch, params.config, quiet=ns.json)
    counts = event_counts(result)
    try:
        modelled = energy(counts, params)
    except ValueError as exc:  # an SM the area model (and the hardware) cannot have
        raise cli.UsageError(f"the SM of these options cannot be built: {exc}") from None
    out: dict[str, Any] = {
        "program": work.source,
        "config": ns.config,
        "ok": result.fault is None and not work.mismatches(result, params.config.explicit),
        "fault": None if result.fault is None else str(result.fault),
        "params": params.to_json(),
        "events": counts,
        "energy": modelled.json(),
    }
    if ns.rtl:
        from reconverge.golden.cost.activity import rtl_activity

        activity = rtl_activity(image, launch, params)
        pj = model().technology.pj_per_cell_toggle
        by_stage = {a.stage: a.weighted * pj for a in activity.stages}
        out["rtl"] = {
            "level": activity.report.reached,
            "cycles": activity.cycles,
            "dynamic_pj": round(sum(by_stage.values()), 1),
            "by_stage_pj": {s: round(v, 1) for s, v in by_stage.items()},
        }
    return out


def format_power(r: Mapping[str, Any]) -> str:
    e = r["energy"]
    lines = [
        f"{r['program']} on the SM of --config {r['config']}: {_variant_text(r['params'])}",
        f"cycles {r['events']['cycles']:,}, thread instructions "
        f"{r['events']['thread_instructions']:,}" + (f"; {r['fault']}" if r["fault"] else ""),
        format_energy(e),
        "",
    ]  # fmt: skip
    rtl = r.get("rtl")
    head = ["stage", "model pJ"] + (["RTL pJ", "model / RTL"] if rtl else [])
    rows = []
    stages = set(e["by_stage_pj"]) | set(rtl["by_stage_pj"] if rtl else ())
    for stage in sorted(stages, key=lambda s: -e["by_stage_pj"].get(s, 0.0)):
        m = e["by_stage_pj"].get(stage, 0.0)
        row = [stage, f"{m:,.0f}"]
        if rtl:
            t = rtl["by_stage_pj"].get(stage, 0.0)
            row += [f"{t:,.0f}", f"{m / t:.2f}" if t else "-"]
        rows.append(row)
    total = ["dynamic", f"{e['dynamic_pj']:,.0f}"]
    if rtl:
        total += [f"{rtl['dynamic_pj']:,.0f}", f"{e['dynamic_pj'] / rtl['dynamic_pj']:.2f}"]
    lines += _columns([head, *rows, total])
    if rtl:
        lines.append(f"(RTL: level {rtl['level']} reached, {rtl['cycles']:,} cycles; "
                     "golden/cost/activity.py)")  # fmt: skip
    lines += ["", "event pJ: " + ", ".join(f"{k} {v:,.0f}" for k, v in e["by_event_pj"].items()
                                          if v)]  # fmt: skip
    return "\n".join(lines)


def _variant_text(p: Mapping[str, Any]) -> str:
    implicit = " implicit" if p["policy"] == Policy.PPC.value and not p["hints"] else ""
    g = p["geometry"]
    return (f"{p['policy']}{implicit}, hws {'on' if p['hws'] else 'off'}, W={g['warp_size']} "
            f"L={g['simd_width']} warps={g['warps']}")  # fmt: skip


def _columns(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in
                      enumerate(zip(row, widths, strict=True))) for row in rows]  # fmt: skip


def _cmd_power(ns: argparse.Namespace) -> int:
    r = power_json(ns)
    print(json.dumps(r, indent=1) if ns.json else format_power(r))
    return cli.EXIT_OK if r["ok"] else cli.EXIT_FAILED


COMMANDS = (Command("power", _configure, _cmd_power),)
