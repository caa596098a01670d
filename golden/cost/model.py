"""The analytical area model: an :class:`~reconverge.golden.cost.inventory.Inventory` priced
in CMOS transistors and ECP5 LUT4s with per-primitive coefficients, and flip-flops counted
as they are stored (docs/area.md, "The model").

The coefficients (``coefficients.json`` beside this module) were fitted once to Yosys runs of
the blocks and the SM (``python -m reconverge.golden.cost.calibrate``); the file records the
tools, the designs and the fit's residuals, so a reader can see where the numbers come from
and reproduce them."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from reconverge.golden.cost.inventory import Inventory, Kind

COEFFICIENTS = Path(__file__).with_name("coefficients.json")

#: What the coefficients price: the generic transistor estimate (Yosys ``stat -tech cmos``)
#: and ECP5 LUT4s (a CCU2C carry cell counting as two).
TARGETS = ("transistors", "luts")


@dataclass(frozen=True)
class Coefficients:
    """Cost of one primitive per target (``per[target][kind]``), and how it was obtained."""

    per: Mapping[str, Mapping[Kind, float]]
    provenance: Mapping[str, Any]

    def price(self, counts: Counter[Kind], target: str) -> float:
        rates = self.per[target]
        return sum(rates.get(kind, 0.0) * n for kind, n in counts.items())

    def json(self) -> dict[str, Any]:
        return {
            "coefficients": {
                t: {k.value: round(v, 4) for k, v in sorted(r.items())} for t, r in self.per.items()
            },
            **self.provenance,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Coefficients:
        per = {
            t: {Kind(k): float(v) for k, v in r.items()} for t, r in data["coefficients"].items()
        }
        return cls(per, {k: v for k, v in data.items() if k != "coefficients"})


@cache
def coefficients() -> Coefficients:
    """The fitted coefficients shipped with the model."""
    return Coefficients.from_json(json.loads(COEFFICIENTS.read_text()))


@dataclass(frozen=True)
class Area:
    """The model's area of some logic: transistors and ECP5 LUT4s (priced), flip-flops and
    memory bits (counted)."""

    transistors: float
    luts: float
    ffs: int
    ram_bits: int

    @classmethod
    def of(cls, counts: Counter[Kind], coeffs: Coefficients | None = None) -> Area:
        c = coeffs or coefficients()
        return cls(
            c.price(counts, "transistors"), c.price(counts, "luts"), counts[Kind.FF],
            counts[Kind.RAM],
        )  # fmt: skip

    def json(self) -> dict[str, float | int]:
        return {
            "transistors": round(self.transistors),
            "luts": round(self.luts),
            "ffs": self.ffs,
            "ram_bits": self.ram_bits,
        }


def area(inv: Inventory, coeffs: Coefficients | None = None) -> dict[str, Area]:
    """The area of each top-level group of ``inv`` and ``"total"``."""
    out = {name: Area.of(counts, coeffs) for name, counts in inv.groups()}
    out["total"] = Area.of(inv.total(), coeffs)
    return out
