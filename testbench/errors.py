"""The errors of a co-simulation that are not a disagreement with golden."""

from __future__ import annotations

from reconverge.golden.errors import UserError


class CosimError(UserError):
    """The program cannot run on this SM (code outside the instruction store, a launch the SM
    cannot hold, an unknown simulator or level): one line, exit status 2."""


class SimulationError(RuntimeError):
    """The simulator or the cocotb test failed without results (a broken build, a crash)."""
