"""The mummer kernel: the oracle against string search (the longest substring of each query found
in the reference, by ``str.find``), the host suffix tree's shape. (The compiled kernel under
every allocator and every policy: kernels/tests/test_suite.py and test_suite_sm.py, as for every
suite kernel.)"""

from __future__ import annotations

import numpy as np
import pytest

from reconverge.kernels import mummer as mu

SPEC = mu.SPEC


def text(codes: np.ndarray) -> str:
    return "".join("ACGTN"[c] for c in codes.tolist())


def longest_matches(case) -> list[int]:
    """Per query: the longest substring found in the reference (the first from the left on a
    tie), its query offset, its first position in the reference (-1: none) and the offsets a
    search that stops when no later offset can be longer walks."""
    ref = text(case.args["ref"])
    out: list[int] = []
    for query in case.args["queries"].reshape(-1, mu.QLEN):
        s = text(query)
        lengths = [max(k for k in range(len(s) - q + 1) if s[q : q + k] in ref)
                   for q in range(len(s))]  # fmt: skip
        m = max(lengths)
        q = lengths.index(m)
        walked = next(i for i in range(len(s) + 1) if i + max(lengths[:i], default=0) >= len(s))
        out += [m, q, ref.find(s[q : q + m]) if m else -1, walked]
    return out


@pytest.mark.parametrize(("size", "seed"), [(SPEC.default_size, 0), (9, 3), (64, 1)])
def test_oracle_matches_string_search(size: int, seed: int) -> None:
    case = SPEC.case(size, seed)
    assert SPEC.reference(size, seed)["match"].tolist() == longest_matches(case)


@pytest.mark.parametrize("seed", range(3))
def test_host_tree_is_a_compact_suffix_tree(seed: int) -> None:
    ref = np.random.default_rng(seed).integers(0, 4, 40).tolist()
    child, depth, pos = mu.suffix_tree(ref)
    kids = np.asarray(child).reshape(-1, 4)
    assert len(depth) <= 2 * len(ref)
    s = text(np.asarray(ref))
    for node in range(1, len(depth)):
        leaf = pos[node] + depth[node] == len(ref)
        assert leaf or (kids[node] >= 0).sum() >= 2, "a non-leaf with one child"
        assert s.find(s[pos[node] : pos[node] + depth[node]]) == pos[node]
    # every substring is spelt by a path: the number of distinct ones is the sum of edge lengths
    parent_depth = {int(c): depth[p] for p in range(len(depth)) for c in kids[p] if c >= 0}
    distinct = {s[i:j] for i in range(len(s)) for j in range(i + 1, len(s) + 1)}
    assert sum(depth[c] - d for c, d in parent_depth.items()) == len(distinct)
