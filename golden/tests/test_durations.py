"""docs/testing.md's table of the slowest tests (``golden/testing/durations.py``): read from a
pytest log, phases added up, written between the page's markers."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from reconverge.golden.errors import UserError
from reconverge.golden.testing.durations import BEGIN, END, SHOWN, main, read_log, render

LOG = """\
============================= slowest durations =============================
141.70s call     testbench/tests/test_cosim_sm.py::test_suite[aes-mp]@sm-82ef
20.50s setup    golden/tests/test_a.py::test_fixture_heavy
1.25s call     golden/tests/test_a.py::test_fixture_heavy
9.00s call     hdl/tests/test_b.py::test_x[W8]
0.01s teardown hdl/tests/test_b.py::test_x[W8]
=========================== short test summary info ============================
XFAIL testbench/tests/test_power.py::test_power - measured again
===== 3037 passed, 1 skipped, 1 xfailed, 2 warnings in 1333.43s (0:22:13) ======
"""


def test_phases_of_a_test_add_up_and_the_slowest_come_first() -> None:
    slowest = read_log(LOG)
    assert slowest.tests == [
        ("testbench/tests/test_cosim_sm.py::test_suite[aes-mp]@sm-82ef", 141.70),
        ("golden/tests/test_a.py::test_fixture_heavy", 20.50 + 1.25),
        ("hdl/tests/test_b.py::test_x[W8]", 9.00 + 0.01),
    ]
    assert slowest.summary == "3037 passed, 1 skipped, 1 xfailed, 2 warnings in 1333.43s (0:22:13)"


def test_the_table_names_the_build_group_and_stops_at_the_shown_rows() -> None:
    many = "\n".join(f"{100 - i}.00s call     t.py::test_{i}" for i in range(SHOWN + 5))
    text = render(read_log(f"{many}\n===== 40 passed in 9.00s =====\n"), date(2026, 11, 27))
    rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(rows) == 1 + SHOWN
    assert rows[1] == "| 1 | 100.0 | `t.py::test_0` | - |"
    assert "2026-11-27: 40 passed in 9.00s." in text
    grouped = render(read_log(LOG), date(2026, 11, 27))
    assert "| 1 | 141.7 | `testbench/tests/test_cosim_sm.py::test_suite[aes-mp]` | sm-82ef |" in (
        grouped
    )


@pytest.mark.parametrize("log", ["", "===== 3 passed in 1.00s =====", "1.00s call     t.py::a"])
def test_a_log_without_durations_or_summary_is_refused(log: str) -> None:
    with pytest.raises(UserError, match="PYTEST_ADDOPTS=--durations=0"):
        read_log(log)


def test_the_section_between_the_markers_is_rewritten(tmp_path: Path) -> None:
    log, doc = tmp_path / "test.log", tmp_path / "testing.md"
    log.write_text(LOG)
    doc.write_text(f"# Testing\n\n{BEGIN}\nstale table\n{END}\n\nafter\n")
    assert main([str(log), str(doc)]) == 0
    text = doc.read_text()
    assert "stale table" not in text and text.endswith(f"{END}\n\nafter\n")
    assert "`golden/tests/test_a.py::test_fixture_heavy`" in text
    doc.write_text("# Testing without markers\n")
    with pytest.raises(SystemExit, match="markers"):
        main([str(log), str(doc)])
    assert doc.read_text() == "# Testing without markers\n"
