"""The test tiers' machinery (docs/testing.md, "Tiers"): the tool markers of
``golden/testing/plugin.py`` skip a test whose tool is missing, saying which and how to install
it, and fail it when ``make`` requires every tool; pytest-xdist's ``loadgroup`` keeps the tests
of one ``xdist_group`` on one worker (so an SM build is made once, by the worker that runs its
tests: pytest 9.2 broke that silently, pytest-xdist#1386, which is why pytest is pinned below
it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

from reconverge.golden.testing.plugin import REQUIRE

TOOL_TEST = """
import pytest

@pytest.mark.qemu
def test_needs_qemu():
    pass
"""

GROUP_TEST = """
import os
import pytest

@pytest.mark.parametrize("i", range(4))
@pytest.mark.xdist_group("build")
def test_in_group(i):
    print("worker", os.environ["PYTEST_XDIST_WORKER"])
"""


def pytest_in(folder: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run pytest (this interpreter's) in ``folder``; its output."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=folder, capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    return done.stdout + done.stderr


def test_a_missing_tool_skips_with_its_reason_and_fails_when_required(tmp_path: Path) -> None:
    (tmp_path / "test_tool.py").write_text(TOOL_TEST)
    env = {k: v for k, v in os.environ.items() if k != REQUIRE}
    env["PATH"] = str(tmp_path)  # no qemu-riscv32 on it
    plugin = ("-p", "reconverge.golden.testing.plugin", "-rs")
    out = pytest_in(tmp_path, *plugin, env=env)
    assert "1 skipped" in out, out
    assert "missing: qemu-riscv32 (`make setup` installs it)" in out, out
    out = pytest_in(tmp_path, *plugin, env={**env, REQUIRE: "1"})
    assert "1 error" in out and f"{REQUIRE} is set" in out, out  # failed at set-up


def test_loadgroup_keeps_a_group_on_one_worker(tmp_path: Path) -> None:
    (tmp_path / "test_group.py").write_text(textwrap.dedent(GROUP_TEST))
    out = pytest_in(tmp_path, "-n", "2", "--dist", "loadgroup", "-v", "-s")
    assert "4 passed" in out, out
    workers = set(re.findall(r"^\[(gw\d)\] .*PASSED", out, re.M))
    assert len(workers) == 1, out
