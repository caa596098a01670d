"""The slowest tests of a ``make test`` run, for docs/testing.md ("The 25 slowest tests").

    git clone . /tmp/cc && cd /tmp/cc
    make test PYTEST_ADDOPTS=--durations=0 2>&1 | tee /tmp/test.log
    python -m reconverge.golden.testing.durations /tmp/test.log docs/testing.md

reads pytest's ``slowest durations`` lines (setup, call and teardown of each test, added up)
and its summary line from the log, and rewrites the section between the markers of the page.
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from dataclasses import dataclass
from datetime import date
from pathlib import Path

from reconverge.golden.errors import UserError
from reconverge.golden.output import write_section

BEGIN = "<!-- BEGIN SLOWEST TESTS (python -m reconverge.golden.testing.durations LOG) -->"
END = "<!-- END SLOWEST TESTS -->"
#: Rows of the table.
SHOWN = 25

_DURATION = re.compile(r"^(\d+(?:\.\d+)?)s (?:setup|call|teardown)\s+(\S+)$", re.M)
_SUMMARY = re.compile(r"^=+ (\d+ passed.*? in [\d.]+s.*?) =+$", re.M)


@dataclass(frozen=True)
class Slowest:
    """The tests of a run by their seconds (phases added up), slowest first, and the run's
    summary line."""

    tests: list[tuple[str, float]]
    summary: str


def read_log(text: str) -> Slowest:
    """The durations and summary of a pytest log; a UserError when it has neither (a run
    without ``--durations``, or one that did not finish)."""
    seconds: Counter[str] = Counter()
    for value, test in _DURATION.findall(text):
        seconds[test] += float(value)
    summary = _SUMMARY.findall(text)
    if not seconds or not summary:
        raise UserError(
            "the log has no pytest durations or no summary line: run make test with "
            "PYTEST_ADDOPTS=--durations=0 to the end"
        )
    return Slowest(sorted(seconds.items(), key=lambda item: -item[1]), summary[-1])


def render(slowest: Slowest, when: date) -> str:
    """The section: what was measured, then a table of the :data:`SHOWN` slowest tests with
    their xdist group (the first test of an SM build's group carries the build)."""
    rows = [
        f"`make test PYTEST_ADDOPTS=--durations=0`, {when.isoformat()}: "
        f"{slowest.summary}. The first test of each `sm-...` group carries that SM's build "
        "(Verilog generation and Verilator's compile); seconds are setup, call and teardown "
        "together, on the worker that ran the test.",
        "",
        "| # | seconds | test | group |",
        "|---:|---:|---|---|",
    ]
    for rank, (test, seconds) in enumerate(slowest.tests[:SHOWN], 1):
        name, _, group = test.partition("@")
        rows.append(f"| {rank} | {seconds:.1f} | `{name}` | {group or '-'} |")
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    if not argv:
        raise SystemExit(__doc__)
    log, doc = Path(argv[0]), Path(argv[1] if len(argv) > 1 else "docs/testing.md")
    try:
        when = date.fromtimestamp(log.stat().st_mtime)  # the run's day, not today's
        body = render(read_log(log.read_text(errors="replace")), when)
        changed = write_section(doc, BEGIN, END, body)
    except (OSError, UserError) as exc:
        raise SystemExit(f"error: {exc}") from None
    print(f"{doc}: {'updated' if changed else 'unchanged'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
