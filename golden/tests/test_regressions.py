"""The reproducers ``make soak`` saved (``regressions/*.S``, each a random program that once made
two configurations disagree, shrunk, with its launch in its first line): every configuration,
with hws off and on, at the three geometries of the random tests, agrees with the functional
model on each."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from reconverge.golden.asm import assemble
from reconverge.golden.functional import run
from reconverge.golden.testing import randcheck as checks
from reconverge.golden.testing import soak

FILES = sorted(soak.REGRESSIONS.glob("*.S"))
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


def test_soak_shrinks_and_saves_a_failing_program(tmp_path: Path, monkeypatch) -> None:
    """The soak's own machinery, on a check that fails for every block of three or more
    threads: the saved reproducer is the shrunk case (block 3, grid 1) and replays as written."""

    def fails_from_three_threads(program, block: int, grid: int, tally: soak.Tally) -> None:
        tally.programs += 1
        assert block < 3, "seeded mismatch"

    monkeypatch.setattr(soak, "check", fails_from_three_threads)
    tally = soak.worker(0, 0.5, tmp_path)
    assert tally.mismatches >= 1 and len(tally.reproducers) == tally.mismatches
    saved = Path(tally.reproducers[0])
    assert set(tmp_path.iterdir()) == {Path(r) for r in tally.reproducers}  # no temporary files
    source = saved.read_text()
    match = LAUNCH.match(source)
    assert match and (int(match[1]), int(match[2])) == (1, 3)
    assert run(assemble(source, str(saved)), checks.launch_for((4, 4), 3, 1)).fault is None


def test_soak_runs_its_jobs_on_a_dask_cluster(tmp_path: Path) -> None:
    """``make soak CLUSTER=...``: the soak's workers on the workers of a Dask cluster started on
    this machine (the executor of ``reconverge eval --cluster``): programs checked, none
    failing, the tally written."""
    distributed = pytest.importorskip("distributed")
    tally = tmp_path / "tally.json"
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        argv = ["--seconds", "1", "--jobs", "2", "--batch", "2", "--cluster",
                cluster.scheduler_address, "--out", str(tmp_path / "found"),
                "--json", str(tally)]  # fmt: skip
        assert soak.main(argv) == 0
    counts = json.loads(tally.read_text())
    assert counts["programs"] >= 2 and counts["mismatches"] == 0 and counts["runs"] > 0
    assert not (tmp_path / "found").exists()


def test_soak_refuses_a_bad_cluster_address(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        soak.main(["--seconds", "1", "--cluster", "notanaddress"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "cannot reach the Dask scheduler at notanaddress: missing port" in err
