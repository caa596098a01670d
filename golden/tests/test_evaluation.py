"""The evaluation (issue 10): the claim arithmetic, the result cache and process pool, the
refusal of runs that disagree, and a small slice of every experiment through ``reconverge
eval`` end to end."""

from __future__ import annotations

import json
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest

from reconverge.golden import cli
from reconverge.golden.evaluation.base import SMOKE
from reconverge.golden.evaluation.experiments import (
    EXPERIMENTS,
    Claim,
    hmean,
    pearson,
    unstructured,
)
from reconverge.golden.evaluation.report import EvaluationError, check
from reconverge.golden.evaluation.runner import Cache, Status, run_tasks
from reconverge.golden.evaluation.tasks import Task, run_task
from reconverge.golden.executor import cluster_executor
from reconverge.golden.params import CONFIGS, EVAL, EVAL_TESLA
from reconverge.golden.sm.metrics import geomean
from reconverge.kernels import suite
from reconverge.kernels.suite import MAX_BLOCK


def test_means_and_correlation() -> None:
    assert hmean([1.0, 2.0]) == pytest.approx(4 / 3)
    assert geomean([1.0, 4.0]) == pytest.approx(2.0)
    assert pearson([1, 2, 3], [2, 4, 6]) == pytest.approx(1.0)
    assert pearson([1, 2, 3], [3, 2, 1]) == pytest.approx(-1.0)


def test_claims_agree_in_direction_and_size() -> None:
    def claim(paper: float, ours: float, **kw: Any) -> Claim:
        return Claim("q", "s", paper, ours, "k", **kw)

    assert claim(1.32, 1.30).size_agrees and claim(1.32, 1.30).direction_agrees
    assert claim(1.32, 1.10).direction_agrees and not claim(1.32, 1.10).size_agrees
    assert not claim(1.32, 0.95).direction_agrees
    assert claim(0.70, 0.80).direction_agrees and claim(0.70, 0.80).size_agrees
    assert not claim(1.32, 1.005).direction_agrees  # within 1 %: no change
    assert claim(0.85, 0.60, baseline=0.0).size_agrees
    assert not claim(0.85, -0.2, baseline=0.0).direction_agrees
    assert claim(1.0, 1.2, bound="at least").size_agrees
    assert not claim(1.0, 0.95, bound="at least").direction_agrees
    assert (
        claim(12, 7, bound="at most").direction_agrees
        and claim(12, 12, bound="at most").size_agrees
    )
    assert not claim(13, 17, bound="at most").direction_agrees
    assert claim(1.0, 1.2, bound="more than").size_agrees
    assert not claim(1.0, 1.005, bound="more than").direction_agrees  # within 1 %: no rise


def test_unstructured_means_leaving_a_loop_or_the_kernel_early() -> None:
    assert unstructured("loopBreak")
    assert not unstructured("ifElse") and not unstructured("nested")


def test_the_evaluation_machines_are_named_and_fill_with_full_warps() -> None:
    assert CONFIGS["eval"] is EVAL and CONFIGS["eval-tesla"] is EVAL_TESLA
    g = EVAL.geometry
    assert (g.warp_size, g.simd_width, g.warps, g.scoreboard_entries) == (32, 32, 48, 8)
    assert EVAL_TESLA.geometry.passes == 4
    slots = min(EVAL.geometry.warps, EVAL_TESLA.geometry.warps) * 32
    for name, spec in suite().items():
        case = spec.case(spec.eval_size)
        threads = case.grid * case.block
        assert case.block <= MAX_BLOCK <= slots, (name, case.block)
        if name != "nqueens":  # one thread per first-row queen (seed 001: mostly one active)
            assert case.block % 32 == 0 or case.block > 32 * 4, (name, case.block)
            assert threads >= 256, (name, threads)
        assert spec.case().block <= 32  # the co-simulation case


def test_a_task_key_changes_with_every_field() -> None:
    base = Task("ifElse", 8, "cosim")
    assert base.key() == Task("ifElse", 8, "cosim").key()
    changed = {
        "kernel": "nested", "size": 9, "machine": "eval", "variant": "ppc-implicit",
        "hws": True, "squeeze": False, "allocator": "affine", "regs": 8, "seed": 1,
        "split_table": 2, "scoreboard": "plain", "icache": 2048, "l1d": 0,
    }  # fmt: skip
    assert set(changed) == {f.name for f in fields(Task)}
    keys = {replace(base, **{k: v}).key() for k, v in changed.items()}
    assert len(keys) == len(changed) and base.key() not in keys


def fake_run(task: Task) -> dict[str, Any]:
    """A stand-in for run_task (a module-level function, so the pool can send it)."""
    return {"task": task.kernel, "size": task.size}


def test_results_are_kept_and_reused(tmp_path: Path) -> None:
    calls: list[Task] = []

    def counting(task: Task) -> dict[str, Any]:
        calls.append(task)
        return fake_run(task)

    tasks = [Task("ifElse", n, "cosim") for n in (4, 8, 8, 12)]
    cache = Cache(tmp_path)
    first = run_tasks(tasks, cache=cache, run=counting)
    assert len(calls) == 3 and list(first) == [tasks[0], tasks[1], tasks[3]]
    again = run_tasks([*tasks, Task("nested", 4, "cosim")], cache=cache, run=counting)
    assert len(calls) == 4 and calls[-1].kernel == "nested"
    assert again[tasks[3]] == {"task": "ifElse", "size": 12}
    # a damaged entry is computed again: not JSON, or not a result (issue 26)
    for damaged in ("{not json", "{}", "[1]"):
        cache.path(tasks[0]).write_text(damaged)
        run_tasks(tasks, cache=cache, run=counting)
        assert calls[-1] == tasks[0]
    assert len(calls) == 7


def test_the_pool_runs_tasks_in_other_processes(tmp_path: Path) -> None:
    tasks = [Task("ifElse", n, "cosim") for n in range(1, 6)]
    status = Status(len(tasks))
    results = run_tasks(tasks, jobs=2, cache=Cache(tmp_path), run=fake_run, status=status)
    assert [r["size"] for r in results.values()] == [1, 2, 3, 4, 5]
    assert status.done == 5 and status.cached == 0


def test_runs_that_disagree_or_fail_are_refused() -> None:
    a = Task("ifElse", 8, "cosim")
    b = replace(a, variant="mp")
    ra, rb = run_task(a), run_task(b)
    assert ra["ok"] and not ra["oracle_mismatches"] and ra["outputs_digest"] == rb["outputs_digest"]
    check({a: ra, b: rb})
    with pytest.raises(EvaluationError, match="different outputs"):
        check({a: ra, b: {**rb, "outputs_digest": "0"}})
    with pytest.raises(EvaluationError, match="fault"):
        check({a: ra, b: {**rb, "ok": False, "fault": "illegal instruction"}})
    with pytest.raises(EvaluationError, match="oracle"):
        check({a: {**ra, "oracle_mismatches": ["out"]}})


def test_the_smoke_slice_of_every_experiment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``reconverge eval --scale smoke``: every experiment's runs, the page with each section,
    claim table and figure, and the JSON; a second run takes everything from the cache."""
    out = tmp_path / "evaluation.md"
    args = ["eval", "--scale", "smoke", "--jobs", "2", "--output", str(out),
            "--cache", str(tmp_path / "cache")]  # fmt: skip
    assert cli.main(args) == 0
    page = out.read_text()
    for title in ("Seed 002", "Seed 001", "Seed 003", "Seed 000", "Seed 004", "Combined"):
        assert f"## {title}" in page
    for png in (
        "seed002-speedup",
        "seed002-splits",
        "seed001-active-threads",
        "seed003-activity",
        "seed004-analysis-time",
    ):
        data = (tmp_path / "figures" / f"{png}.png").read_bytes()
        assert data.startswith(b"\x89PNG") and f"(figures/{png}.png)" in page
    tasks = {t for e in EXPERIMENTS.values() for t in e.tasks(SMOKE)}
    assert f"{len(tasks)} runs" in capsys.readouterr().out
    assert cli.main([*args, "--json", "seed001"]) == 0
    report = json.loads(capsys.readouterr().out)
    hws = next(c for c in report["claims"] if c["what"] == "hws speedup over sps (PDOM)")
    runs = {(r["task"]["kernel"], r["task"]["hws"], r["task"]["variant"]): r
            for r in report["runs"] if r["task"]["squeeze"]}  # fmt: skip
    by_kernel = [runs[k, False, "sps"]["metrics"]["cycles"]
                 / runs[k, True, "sps"]["metrics"]["cycles"] for k in SMOKE.kernels]  # fmt: skip
    assert hws["ours"] == pytest.approx(sum(by_kernel) / len(by_kernel))
    assert hws["paper"] == 1.20


@pytest.mark.parametrize(
    ("args", "message"),
    [(["nosuch"], "unknown experiment nosuch"), (["--jobs", "0"], "--jobs must be from 1"),
     (["--figures", "{file}"], "argument --figures: {file} is a file, not a folder"),
     (["--cache", "{file}"], "argument --cache: {file} is a file, not a folder")],
)  # fmt: skip
def test_bad_arguments_are_usage_errors(
    args: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "file"
    file.write_text("")
    args = [a.format(file=file) for a in args]
    assert cli.main(["eval", *args, "--output", str(tmp_path / "e.md")]) == 2
    assert message.format(file=file) in capsys.readouterr().err
    assert not (tmp_path / "e.md").exists()


def test_a_dask_cluster_runs_the_tasks(tmp_path: Path) -> None:
    """``--cluster``: the same runner on the workers of a Dask distributed cluster that the test
    starts on this machine (two worker processes); the results equal the local ones."""
    distributed = pytest.importorskip("distributed")
    tasks = [Task("ifElse", 8, "cosim", variant=p) for p in ("sps", "mp")]
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        cluster_executor(cluster.scheduler_address) as executor,
    ):
        results = run_tasks(tasks, executor=executor)
    for task, result in results.items():
        local = run_task(task)
        assert result["metrics"] == local["metrics"] and result["ok"]


@pytest.mark.parametrize(
    ("address", "why"),
    [
        ("notanaddress", "missing port number"),
        pytest.param("tcp://127.0.0.1:9", "Timed out", marks=pytest.mark.slow),  # 10 s of retries
    ],
)
def test_an_unreachable_cluster_is_a_usage_error(
    address: str, why: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["eval", "seed000", "--scale", "smoke", "--cluster", address,
            "--output", str(tmp_path / "e.md"), "--cache", str(tmp_path / "c")]  # fmt: skip
    assert cli.main(args) == 2
    err = capsys.readouterr().err
    assert f"cannot reach the Dask scheduler at {address}" in err and why in err, err
    assert not (tmp_path / "e.md").exists()
