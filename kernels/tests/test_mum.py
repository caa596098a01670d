"""The mum kernel (seed 002 Table 1 and seed 001 Table 5.2 MUM, MUMmerGPU's suffix-link walk):
the golden SM under three policies against the oracle, the oracle against a brute-force search
of the reference string for every query position, and the benchmark's shape: match lengths and
per-thread work that vary with the queries."""

from __future__ import annotations

import numpy as np
import pytest

from reconverge.golden.testing.benchmarks import cached_reference, run_policies
from reconverge.kernels import mum

SPEC = mum.SPEC
BASES = "ACGTN"


def matching(size: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Every query position's longest match (at most ``DMAX``, never through an ``N``), its
    leftmost start, and each thread's steps, by searching the reference string."""
    case = SPEC.case(size, seed)
    ref = "".join(BASES[c] for c in mum.reference(size, seed))
    queries = case.args["queries"].reshape(-1, mum.QMAX)
    match = np.zeros((len(queries), mum.QMAX, 2), np.int64)
    walk = np.zeros(len(queries), np.int64)
    for t, (row, n) in enumerate(zip(queries.tolist(), case.args["qlens"].tolist(), strict=True)):
        query = "".join(BASES[c] for c in row[:n])
        carried = 0
        for i in range(n):
            length = 0
            top = min(mum.DMAX, n - i)
            while length < top and query[i : i + length + 1] in ref and query[i + length] != "N":
                length += 1
            start = ref.find(query[i : i + length]) if length >= mum.MINMATCH else -1
            match[t, i] = length, start
            walk[t] += length - carried + (length > 0)  # extensions, then the suffix link
            carried = max(length - 1, 0)
    return match.ravel(), walk


@pytest.mark.parametrize(("size", "seed"), [(SPEC.default_size, 0), (20, 3), (64, 1)])
def test_oracle_is_the_string_search(size: int, seed: int) -> None:
    match, walk = matching(size, seed)
    reference = cached_reference(SPEC, size, seed)
    assert reference["match"].tolist() == match.tolist()
    assert reference["walk"].tolist() == walk.tolist()


def test_golden_sm_matches_the_oracle_under_three_policies() -> None:
    run_policies(SPEC)


def test_matches_and_walks_vary() -> None:
    """MUM's shape: within a query the match length changes along it (mismatches end matches,
    suffix links shorten them), matches reach ``DMAX`` in some queries and stay short in the
    random ones, and the threads' walks differ by more than 2x."""
    case = SPEC.case(64, 1)
    out = cached_reference(SPEC, 64, 1)
    lengths = out["match"].reshape(-1, mum.QMAX, 2)[:, :, 0]
    qlens = case.args["qlens"]
    varied = [len(set(row[:n].tolist())) > 2 for row, n in zip(lengths, qlens, strict=True)]
    assert np.mean(varied) > 0.9
    assert (lengths.max(axis=1) == mum.DMAX).any() and (lengths.max(axis=1) < mum.MINMATCH).any()
    walk = out["walk"]
    assert walk.max() > 2 * walk.min()
