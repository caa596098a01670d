"""Running a program on the cycle-level SM: the static-warp SM (:mod:`.core`) or, under dynamic
warp formation, its warp-pool variant (:mod:`.dwf`)."""

from __future__ import annotations

from reconverge.golden.config import SMConfig
from reconverge.golden.functional import LaunchConfig
from reconverge.golden.image import Image
from reconverge.golden.policies import WarpFormation
from reconverge.golden.progress import Callback
from reconverge.golden.sm.core import SM, Observer, SMResult
from reconverge.golden.sm.dwf import DwfSM
from reconverge.golden.sm.program import Program


def run_sm(
    image: Image,
    launch: LaunchConfig,
    config: SMConfig | None = None,
    *,
    trace: bool = False,
    observer: Observer | None = None,
    progress: Callback | None = None,
    program: Program | None = None,
) -> SMResult:
    """Run ``image`` on the cycle-level SM. Like the functional model it never raises for a
    fault of the program: the result carries it. ``observer`` is called after every issue
    (before the next) with the issue record and the warp's divergence unit. With dynamic warp
    formation (``config.warp_formation``) the SM is :class:`~reconverge.golden.sm.dwf.DwfSM`.
    ``progress`` is called every ``golden.progress.EVERY`` warp instructions with the warp
    instructions and the blocks finished so far. ``program``: the image's decoded program, when
    the caller has it (the co-simulation decodes it once for golden and the testbench)."""
    config = config or SMConfig()
    machine = SM if config.warp_formation is WarpFormation.STATIC else DwfSM
    return machine(
        image, launch, config, trace=trace, observer=observer, progress=progress, program=program
    ).run()
