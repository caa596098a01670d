"""The base of every error a user can cause (bad file, bad option, malformed program): the CLI
prints such an error as one line and exits with status 2, never with a traceback."""

from __future__ import annotations


class UserError(Exception):
    """A mistake in the user's input, reported in one line that names the cause."""
