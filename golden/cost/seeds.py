"""The seeds' cost figures beside this project's (issue 11; docs/energy.md, "The seeds' cost
figures"): what each seed says about the area of its mechanism, and what the area model and the
synthesis calibration (``calibration.json``) say about ours.

- Seed 002 Sec 6.6: the masked scoreboard is ~1.9x the plain one (175,432 / 91,365 um^2,
  NCSU FreePDK 45 nm, an SRAM with 6 read and 3 write ports) and draws ~4.4 mW against 1 mW.
- Seed 000 Sec 4.3: the stack-less unit costs little (per-thread PC and SP, the memory
  arbiter's tree reused); a Tesla-class stack cache is 3 KB per warp processor.
- Seed 002 Fig 19 / Sec 6.6: with OREC a warp needs at most 12 ST and 13 RT entries.
- Seed 001 Sec 7: the squeezer's area is future work (no figure).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any

from reconverge.golden.cost.energy import CALIBRATION, stage_transistors
from reconverge.golden.cost.model import area
from reconverge.golden.cost.sm import unit
from reconverge.golden.params import EVAL_TESLA, SMParams
from reconverge.golden.policies import Policy

#: Seed 002 Sec 6.6: the two scoreboards of a GTX 480 SM (48 warps x 8 entries).
PLAIN_UM2, MASKED_UM2 = 91_365, 175_432
PLAIN_MW, MASKED_MW = 1.0, 4.4
PAPER_ENTRIES = 48 * 8
PAPER_ADDED_BITS = 1536 * 8  # "adds 1.5KB storage": a 32-bit R-mask per entry


@dataclass(frozen=True)
class ScoreboardPair:
    """The plain and masked scoreboards of one parameter set, through Yosys."""

    params: dict[str, int]
    plain: int  # transistors
    masked: int

    @property
    def ratio(self) -> float:
        return self.masked / self.plain

    @property
    def entries(self) -> int:
        return self.params["warps"] * self.params["entries"]

    @property
    def entry_in_mask_bits(self) -> float:
        """A plain entry's cost in units of one R-mask bit added to it."""
        per_bit = (self.masked - self.plain) / (self.entries * self.params["warp_size"])
        return self.plain / self.entries / per_bit


def paper_entry_in_mask_bits() -> float:
    """The same for seed 002's SRAM: a plain entry's area over the area one mask bit adds."""
    per_bit = (MASKED_UM2 - PLAIN_UM2) / PAPER_ADDED_BITS
    return PLAIN_UM2 / PAPER_ENTRIES / per_bit


def scoreboard_pairs() -> list[ScoreboardPair]:
    """Every parameter set the calibration synthesised both scoreboards at."""
    rows = json.loads(CALIBRATION.read_text())["rows"]
    plain = {json.dumps(r["params"], sort_keys=True): r for r in rows
             if r["design"] == "scoreboard"}  # fmt: skip
    pairs = []
    for r in rows:
        if r["design"] == "masked_scoreboard":
            base = plain.get(json.dumps(r["params"], sort_keys=True))
            if base is not None:
                pairs.append(ScoreboardPair(r["params"], base["transistors"], r["transistors"]))
    return sorted(pairs, key=lambda p: (p.params["warp_size"], p.params["warps"]))


def with_policy(params: SMParams, policy: Policy, **geometry: int) -> SMParams:
    """``params`` under ``policy`` (and other table sizes)."""
    return replace(
        params,
        geometry=replace(params.geometry, **geometry),
        config=replace(params.config, policy=policy, hws=False),
    )


def unit_per_warp(params: SMParams) -> dict[str, Any]:
    """One warp's divergence unit in the area model: transistors and flip-flops."""
    a = area(unit(params))["total"]
    return {"transistors": a.transistors, "ffs": a.ffs}


def divergence_units(base: SMParams = EVAL_TESLA) -> list[dict[str, Any]]:
    """Each policy's unit per warp at ``base``'s geometry (W = 32 on seed 001's machine), and
    the split tables at seed 002's OREC bounds (12 ST, 13 RT entries)."""
    rows = []
    for label, policy, extra in (
        ("sps", Policy.SPS, {}),
        ("stackless", Policy.STACKLESS, {}),
        ("dps", Policy.DPS, {}),
        ("mp-orec", Policy.MP_OREC, {}),
        ("mp-orec, 12 ST / 13 RT", Policy.MP_OREC, {"split_table": 12, "reconv_table": 13}),
    ):
        params = with_policy(base, policy, **extra)
        rows.append({"unit": label, "geometry": params.geometry, **unit_per_warp(params)})
    return rows


def squeezer_share(base: SMParams = EVAL_TESLA) -> dict[str, float]:
    """The squeezer's transistors and their share of the SM with hws (seed 001's machine)."""
    params = replace(base, config=replace(base.config, policy=Policy.SPS, hws=True))
    size = stage_transistors(params)
    return {"squeezer": size["squeezer"], "sm": size["total"],
            "share": size["squeezer"] / size["total"]}  # fmt: skip
