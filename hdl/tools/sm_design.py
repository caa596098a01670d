"""The whole SM as a design the tools build: the bare SM (``hdl.sm.top.SM``) or a board top with
its program, with the parameters it is elaborated from, and both synthesis flows for it
(``reconverge verilog sm``, ``synth sm``, ``area sm``, ``make area``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from reconverge.golden.params import SMParams

#: The name of the whole SM on the command line (beside the blocks of the registry).
SM_NAME = "sm"


@dataclass(frozen=True)
class SMDesign:
    """The SM as the options select it: the parameters and, for a board top, the program."""

    params: SMParams
    config: str
    source: str | None
    build: Callable[[], Any]  # a fresh elaboratable (each flow consumes one)
    module: str

    def json(self) -> dict[str, Any]:
        """The configuration name, the program, and every parameter (cosim's JSON form)."""
        return {"config": self.config, "program": self.source, **self.params.to_json()}

    def label(self) -> str:
        """One line: what is built, the policy and switches, the geometry."""
        c, g = self.params.config, self.params.geometry
        what = f"board top running {self.source}" if self.source else "bare SM"
        return (
            f"{SM_NAME} ({what}; config {self.config}: {c.variant.name}, "
            f"hws {'on' if c.hws else 'off'}, "
            f"W={g.warp_size} L={g.simd_width} warps={g.warps}, "
            f"{self.params.imem_words}-word instruction store)"
        )


def bare_sm(params: SMParams, config: str) -> SMDesign:
    """The SM alone (``hdl.sm.top.SM``), ``params`` derived from the named ``config``."""

    def build() -> Any:
        from reconverge.hdl.sm.top import SM

        return SM(params)

    return SMDesign(params, config, None, build, SM_NAME)


def synth_sm(design: SMDesign, **options: Any) -> dict[str, Any]:
    """Both synthesis flows for the SM: the bare SM in the harness (its I/O is wide), a board
    top alone (it has its own pins); LUTs and flip-flops per submodule."""
    from reconverge.hdl.tools.synth import synth_design

    return synth_design(
        design.module,
        design.build,
        {"label": design.label(), "params": design.json()},
        harness=design.source is None,
        breakdown=True,
        **options,
    )
