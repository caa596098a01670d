"""What every ``reconverge`` sub-command shares: the :class:`Command` record and the exit
statuses. A neutral module, so that feature modules (the compiler's, the SM's, the HDL's
``verilog`` / ``synth``) define their commands without importing the CLI that lists them:
``reconverge.golden.cli`` imports them, never the other way round."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass

#: Exit statuses: success; a program ran but a thread faulted or exited non-zero; a user error.
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


@dataclass(frozen=True)
class Command:
    """A sub-command: ``configure`` adds its arguments, ``run`` executes it and returns the exit
    status. Feature modules define their own and ``reconverge.golden.cli.commands`` lists
    them."""

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]
