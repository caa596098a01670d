"""Errors of the compiler a user can cause: every one is a
:class:`~reconverge.golden.errors.UserError`, printed by the CLI as one line."""

from __future__ import annotations

from dataclasses import dataclass

from reconverge.golden.errors import UserError


@dataclass(frozen=True)
class Pos:
    """A place in a kernel's source file (1-based line, 1-based column)."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class CompileError(UserError):
    """A kernel that cannot be compiled as given (bad option, register budget, launch)."""


class LanguageError(CompileError):
    """A construct outside the kernel language, or a misuse of one inside it: reported as
    ``file:line:col: what is wrong; write ... instead``."""

    def __init__(self, pos: Pos | None, message: str, hint: str | None = None) -> None:
        text = message if hint is None else f"{message}; {hint}"
        super().__init__(text if pos is None else f"{pos}: {text}")
        self.pos = pos
        self.message = message
        self.hint = hint


class OracleError(UserError):
    """A kernel run by the oracle did something the language forbids at run time (an index
    out of bounds, a barrier some threads never reach, no completion within the step limit)."""
