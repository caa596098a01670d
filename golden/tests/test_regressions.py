"""The reproducers ``make soak`` saved (``regressions/*.S``, each a random program that once made
two configurations disagree, shrunk, with its launch in its first line): every configuration,
with hws off and on, at the three geometries of the random tests, agrees with the functional
model on each."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reconverge.golden.asm import assemble
from reconverge.golden.functional import run
from reconverge.golden.tests import test_sm_random as checks
from reconverge.golden.tests.soak import REGRESSIONS

FILES = sorted(REGRESSIONS.glob("*.S"))
LAUNCH = re.compile(r"# reconverge soak reproducer: grid (\d+) block (\d+)")


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_reproducer(path: Path) -> None:
    source = path.read_text()
    match = LAUNCH.match(source)
    assert match, f"{path}: the first line must give the launch"
    grid, block = int(match[1]), int(match[2])
    image = assemble(source, str(path))
    for geometry in checks.GEOMETRY_SET:
        launch = checks.launch_for(geometry, block, grid)
        reference = run(image, launch)
        assert reference.fault is None, str(reference.fault)
        for hws in (False, True):
            checks.check_image(image, reference, launch, geometry, hws, str(path))
