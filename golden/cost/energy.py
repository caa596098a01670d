"""The energy model (issue 11; docs/energy.md): a run's dynamic energy as the events the golden
SM counts times an energy per event, plus static power from the area model.

*Events* are the issue counters of :class:`~reconverge.golden.sm.metrics.Counters` (warp
instructions, issue passes, memory transactions, shared-memory bank cycles), the cycles, and
:class:`~reconverge.golden.sm.events.Events` (register-file reads and writes, the lanes'
operations, coalescer accesses, divergence-unit updates, arbitrations, squeezes, scoreboard
reservations). :data:`EVENT_STAGES` says which SM stages (the area model's names,
:func:`reconverge.golden.cost.sm.stage`) each event switches.

*Energy per event* is measured, not guessed: co-simulating suite kernels under every policy
(``python -m reconverge.golden.cost.activity``) gives every stage's switching activity in *cell
toggles* (signal-bit toggles weighted by the synthesized cells per bit); a non-negative least
squares fit per stage over those runs (:func:`fit`) gives what each event causes in each stage
it switches. A thread's events (a register word, a lane's operation, an address) cause a fixed
number of cell toggles, whatever the SM's size; a warp instruction's, a control's and a
cycle's have a fixed part and a part that grows with the stage's transistors in the area model
(both fitted: a fetch buffer per split slot stays quiet while it holds its instruction, so the
buffers' toggles do not grow with their number; a split table's W-bit masks all switch on an
update).
``energy.json`` keeps the fit, its rows' residuals and how it was made.

*Joules*: one cell toggle costs :attr:`Technology.pj_per_cell_toggle`, anchored to a 45 nm
32-bit addition of 0.1 pJ (Horowitz, ISSCC 2014) spread over the model's adder transistors;
static power is :attr:`Technology.leakage_nw_per_transistor` times the area model's
transistors. Both are one scale each: they change every policy's energy alike, so rankings and
ratios of dynamic energy do not depend on them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from reconverge.golden.cost.fit import nnls
from reconverge.golden.cost.inventory import Kind
from reconverge.golden.cost.model import area
from reconverge.golden.cost.model import coefficients as area_coefficients
from reconverge.golden.cost.sm import sm as sm_inventory

ENERGY = Path(__file__).with_name("energy.json")
CALIBRATION = Path(__file__).with_name("calibration.json")

#: Every SM stage of the area model (the cycle's clock and comparators reach all of them).
STAGES = (
    "fetch", "decode", "regfile", "lane", "divider", "scoreboard", "unit", "squeezer",
    "writeback", "scheduler", "lsu", "core",
)  # fmt: skip

#: The stages each event switches (the columns of each stage's fit).
EVENT_STAGES: dict[str, tuple[str, ...]] = {
    "cycles": STAGES,
    "warp_instructions": ("fetch", "decode", "scheduler", "scoreboard", "unit", "core"),
    "issue_passes": ("regfile", "lane", "writeback", "core"),
    "regfile_reads": ("regfile",),
    "regfile_writes": ("regfile", "writeback"),
    "alu_ops": ("lane",),
    "mul_ops": ("lane",),
    "div_ops": ("divider",),
    "lsu_accesses": ("lsu", "unit"),
    "memory_transactions": ("lsu", "unit"),
    "shared_accesses": ("lsu",),
    "unit_updates": ("unit", "scheduler", "core"),
    "arbitrations": ("unit",),
    "squeezes": ("squeezer",),
    "reservations": ("scoreboard", "writeback"),
}

#: Events of one thread: cell toggles per event, whatever the SM's size (the others may also
#: switch a fraction of the stage: toggles per event per transistor of the stage).
THREAD_EVENTS = frozenset(
    {"regfile_reads", "regfile_writes", "alu_ops", "mul_ops", "div_ops", "lsu_accesses"}
)


def event_counts(result: Any) -> dict[str, int]:
    """The events of a cycle-level run (a :class:`~reconverge.golden.sm.core.SMResult`), and
    its thread instructions."""
    assert result.metrics is not None and result.events is not None, "a cycle-level result"
    return counts_of(result.metrics.to_json(), result.events.to_json())


def counts_of(metrics: Mapping[str, Any], events: Mapping[str, int]) -> dict[str, int]:
    """The events of a run from the JSON of its metrics and of its
    :class:`~reconverge.golden.sm.events.Events` (as a run's record keeps them)."""
    return {
        "cycles": metrics["cycles"],
        "thread_instructions": metrics["thread_instructions"],  # not priced: per instruction
        "warp_instructions": metrics["warp_instructions"],
        "issue_passes": metrics["issue_passes"],
        "memory_transactions": metrics["memory_transactions"],
        "shared_accesses": metrics["shared_transactions"],
        **events,
    }


@dataclass(frozen=True)
class Technology:
    """The two constants that turn cell toggles and transistors into energy and power."""

    pj_per_cell_toggle: float
    leakage_nw_per_transistor: float
    clock_hz: float
    how: Mapping[str, str]  # where each constant comes from


@dataclass(frozen=True)
class EnergyModel:
    """Per event and stage (event -> stage -> rate): cell toggles per event, and cell toggles
    per event per transistor of the stage; the technology; how the numbers were obtained."""

    toggles: Mapping[str, Mapping[str, float]]
    per_transistor: Mapping[str, Mapping[str, float]]
    technology: Technology
    provenance: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> EnergyModel:
        t = data["technology"]
        tech = Technology(
            t["pj_per_cell_toggle"], t["leakage_nw_per_transistor"], t["clock_hz"], t["how"]
        )
        rates = ("toggles", "toggles_per_transistor", "technology")
        rest = {k: v for k, v in data.items() if k not in rates}
        return cls(data["toggles"], data["toggles_per_transistor"], tech, rest)


#: A 32-bit integer addition at 45 nm, 0.9 V (M. Horowitz, "Computing's energy problem (and
#: what we can do about it)", ISSCC 2014): the anchor of a transistor's switching energy.
ADD32_PJ = 0.1
#: Static power per transistor of the area model: an assumption of a 45 nm general-purpose
#: process's order (a NAND2 leaks some tens of nW at the typical corner), not measured here.
LEAKAGE_NW_PER_TRANSISTOR = 5.0
#: The clock that turns cycles into seconds (an assumption: a GPU core clock of its era).
CLOCK_HZ = 1e9


def technology() -> Technology:
    """The technology constants from the area model's data: a transistor switching costs
    :data:`ADD32_PJ` over the transistors of a 32-bit adder in the fitted area coefficients;
    a Yosys cell toggling costs the mean transistors per cell of the SM rows of the area
    calibration."""
    coeffs = area_coefficients()
    per_transistor = ADD32_PJ / (32 * coeffs.per["transistors"][Kind.ADD])
    rows = json.loads(CALIBRATION.read_text())["rows"]
    sm = [r for r in rows if r["design"] == "sm" and r.get("cells")]
    per_cell = sum(r["transistors"] / r["cells"] for r in sm) / len(sm)
    return Technology(
        per_transistor * per_cell,
        LEAKAGE_NW_PER_TRANSISTOR,
        CLOCK_HZ,
        {
            "pj_per_cell_toggle": f"{ADD32_PJ} pJ per 32-bit add (Horowitz, ISSCC 2014, 45 nm) / "
            f"(32 x {coeffs.per['transistors'][Kind.ADD]:.2f} model transistors per adder bit) "
            f"x {per_cell:.2f} transistors per Yosys cell (mean of {len(sm)} SM rows of "
            "calibration.json)",
            "leakage_nw_per_transistor": "assumed, of a 45 nm general-purpose process's order",
            "clock_hz": "assumed: 1 GHz",
        },
    )


@cache
def model() -> EnergyModel:
    """The fitted model shipped beside this module."""
    return EnergyModel.from_json(json.loads(ENERGY.read_text()))


@dataclass(frozen=True)
class Energy:
    """A run's energy: dynamic per event and per stage, static, and what follows."""

    by_event: dict[str, float]  # pJ
    by_stage: dict[str, float]  # pJ
    static_pj: float
    cycles: int
    thread_instructions: int
    clock_hz: float

    @property
    def dynamic_pj(self) -> float:
        return sum(self.by_event.values())

    @property
    def total_pj(self) -> float:
        return self.dynamic_pj + self.static_pj

    @property
    def seconds(self) -> float:
        return self.cycles / self.clock_hz

    @property
    def average_power_mw(self) -> float:
        return self.total_pj * 1e-9 / self.seconds if self.cycles else 0.0

    @property
    def dynamic_power_mw(self) -> float:
        return self.dynamic_pj * 1e-9 / self.seconds if self.cycles else 0.0

    @property
    def pj_per_thread_instruction(self) -> float:
        return self.total_pj / self.thread_instructions if self.thread_instructions else 0.0

    def json(self) -> dict[str, Any]:
        return {
            "total_pj": round(self.total_pj, 1),
            "dynamic_pj": round(self.dynamic_pj, 1),
            "static_pj": round(self.static_pj, 1),
            "average_power_mw": round(self.average_power_mw, 3),
            "dynamic_power_mw": round(self.dynamic_power_mw, 3),
            "pj_per_thread_instruction": round(self.pj_per_thread_instruction, 3),
            "clock_hz": self.clock_hz,
            "by_event_pj": {k: round(v, 1) for k, v in self.by_event.items()},
            "by_stage_pj": {k: round(v, 1) for k, v in self.by_stage.items()},
        }


@lru_cache(maxsize=64)
def stage_transistors(params: Any) -> dict[str, float]:
    """Transistors of each stage of the SM of ``params`` (an ``SMParams``) in the area model;
    a ``ValueError`` names what the SM cannot be built with."""
    return {name: a.transistors for name, a in area(sm_inventory(params)).items()}


def energy(
    counts: Mapping[str, int], params: Any, energy_model: EnergyModel | None = None
) -> Energy:
    """The energy of a run with event ``counts`` (:func:`event_counts`) on the SM of
    ``params``."""
    em = energy_model or model()
    tech = em.technology
    size = stage_transistors(params)
    by_event = dict.fromkeys(EVENT_STAGES, 0.0)
    by_stage = dict.fromkeys(STAGES, 0.0)
    for scaled, rates in ((False, em.toggles), (True, em.per_transistor)):
        for event, per_stage in rates.items():
            for stage, rate in per_stage.items():
                if stage in size:  # (an SM without hws has no squeezer)
                    n = _column(event, stage, scaled, counts, size)
                    pj = n * rate * tech.pj_per_cell_toggle
                    by_stage[stage] += pj
                    by_event[event] += pj
    seconds = counts["cycles"] / tech.clock_hz
    static = size["total"] * tech.leakage_nw_per_transistor * 1e-9 * seconds * 1e12
    return Energy(
        {k: v for k, v in by_event.items() if v},
        {k: v for k, v in by_stage.items() if v},
        static,
        counts["cycles"],
        counts["thread_instructions"],
        tech.clock_hz,
    )


def _column(
    event: str, stage: str, scaled: bool, counts: Mapping[str, int], size: Mapping[str, float]
) -> float:
    """What multiplies a rate of ``event`` in ``stage``: its count, times the stage's
    transistors for a ``scaled`` rate."""
    n = counts.get(event, 0)
    return n * size.get(stage, 0.0) if scaled else float(n)


#: A rate the fit finds: (event, stage, scaled by the stage's transistors).
Term = tuple[str, str, bool]


def terms(stage: str) -> list[Term]:
    """The rates of ``stage``: every event that reaches it but the cycle at a fixed rate, and
    the scaled parts of the events that are not a thread's. A cycle's switching is the stage's
    own (its registers and the logic they drive, busy or not): it can only grow with the
    stage, which the fit could not tell from the runs of one geometry."""
    events = [e for e, stages in EVENT_STAGES.items() if stage in stages]
    return [(e, stage, False) for e in events if e != "cycles"] + [
        (e, stage, True) for e in events if e not in THREAD_EVENTS
    ]


def _distinguishable(a: np.ndarray, tolerance: float = 1e-9) -> list[int]:
    """The columns of ``a`` (normalised) the rows can tell from the columns before them, in
    order: a column in the span of earlier ones (a per-transistor rate where every run had the
    stage at one size, an event that only ever comes with others) is left out, so the fit
    keeps the earlier rate (the per-event one, :func:`terms`) whatever the machine's rounding
    would have made of a tie between them."""
    kept: list[int] = []
    for j in range(a.shape[1]):
        trial = a[:, [*kept, j]]
        if np.linalg.svd(trial, compute_uv=False).min() > tolerance:
            kept.append(j)
    return kept


def fit(
    rows: Sequence[tuple[Mapping[str, int], Mapping[str, float], Mapping[str, float]]],
) -> tuple[EnergyModel, list[dict[str, float]]]:
    """Per stage, the rates that best explain the measured cell toggles of ``rows`` (event
    counts, stage -> measured cell toggles, stage -> transistors of the row's SM) in relative
    terms (non-negative least squares: a short run weighs as much as a long one). Returns the
    model (with :func:`technology`) and each row's model / measured ratio per stage."""
    rates: dict[bool, dict[str, dict[str, float]]] = {False: {}, True: {}}
    ratios: list[dict[str, float]] = [{} for _ in rows]
    for stage in STAGES:
        used = [i for i, (_, measured, _) in enumerate(rows) if measured.get(stage)]
        if not used:
            continue
        columns = terms(stage)
        a = np.array(
            [[_column(e, s, scaled, rows[i][0], rows[i][2]) for e, s, scaled in columns]
             for i in used]
        )  # fmt: skip
        b = np.array([rows[i][1][stage] for i in used], dtype=float)
        relative = a / b[:, None]
        norm = np.linalg.norm(relative, axis=0)  # columns of one scale: a better conditioned
        norm[norm == 0] = 1.0  # problem with the same solution
        kept = _distinguishable(relative / norm)
        x = np.zeros(len(columns))
        x[kept] = nnls((relative / norm)[:, kept], np.ones(len(used))) / norm[kept]
        for (e, s, scaled), v in zip(columns, x, strict=True):
            if v > 0:
                rates[scaled].setdefault(e, {})[s] = float(v)
        for i, predicted in zip(used, a @ x, strict=True):
            ratios[i][stage] = float(predicted / rows[i][1][stage])
    return EnergyModel(rates[False], rates[True], technology()), ratios
