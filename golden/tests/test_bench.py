"""``make bench``'s measurement: it runs the kernel checked against its oracle, and runs the
same way against another revision of the package (the baseline of the speed ratios)."""

from __future__ import annotations

import shutil

import pytest

from reconverge.golden.evaluation import bench, speed


def test_models_on_the_same_image_run_the_same_thread_instructions() -> None:
    """Each run is checked against the oracle inside ``measure``; the models that run the
    program with its reconvergence hints count the same instructions, and so do those that run
    it without (stack-less and dynamic warp formation read no hints)."""
    counts = {m: speed.measure("loopBreak", 16, m, 8, 4, 1)["instructions"] for m in speed.MODELS}
    assert counts["functional"] == counts["functional-ref"] == counts["sps"] == counts["mp-orec"], (
        counts
    )
    assert counts["stackless"] == counts["en-dwf"], counts
    assert 16 < counts["stackless"] < counts["sps"]  # the same program without its rhints


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_baseline_tree_measures_that_revision(tmp_path: object) -> None:
    with bench.baseline_tree("HEAD") as tree:
        if tree is None:
            pytest.skip("not a git checkout")
        assert (tree / "reconverge" / "golden" / "functional.py").is_file()
        args = [str(tree / bench.SPEED_SCRIPT), "loopBreak", "16", "sps"]
        args += ["--warp-size", "8", "--simd-width", "4", "--repeat", "1"]
        out = bench._python(args, tree)
    now = speed.measure("loopBreak", 16, "sps", 8, 4, 1)
    assert f'"instructions": {now["instructions"]}' in out.stdout
