"""The memc kernel (seed 002 Table 1 MEMC, GETs and SETs on chained buckets with string keys):
the golden SM under three policies against the oracle, the oracle against a host table of
Python dicts and lists (replies, and the table after the launch), and the benchmark's shape:
chains of varying length, GETs beside SETs in one warp, and every SET readable afterwards."""

from __future__ import annotations

import numpy as np
import pytest

from reconverge.golden.testing.benchmarks import cached_reference, run_policies
from reconverge.kernels import memc
from reconverge.kernels.suite import Case

SPEC = memc.SPEC


def chains(heads: list[int], items: np.ndarray) -> list[list[int]]:
    """Each bucket's item words, head first."""
    out = []
    for head in heads:
        chain, it = [], head
        while it != -1:
            chain.append(it)
            it = int(items[it + memc.NEXT])
        out.append(chain)
    return out


def key_of(items: np.ndarray, it: int) -> tuple[int, ...]:
    return tuple(items[it + memc.KEY : it + memc.KEY + items[it + memc.KEYLEN]].tolist())


def serve(case: Case) -> dict[str, list[int]]:
    """Replies and the final ``heads`` and ``items``: every request against the table as it was
    (``make`` keeps the requests independent), the SETs then applied."""
    a = case.args
    items = a["items"].astype(np.int64).copy()
    heads = a["heads"].tolist()
    table = chains(heads, items)
    requests = a["requests"].reshape(-1, memc.REQ).tolist()
    replies = []
    for op, n, *rest in requests:
        key, value, slot = tuple(rest[:n]), rest[memc.KEYMAX], rest[memc.KEYMAX + 1]
        b = memc.key_hash(key) % a["nbuckets"]
        keys = [key_of(items, it) for it in table[b]]
        found = keys.index(key) if key in keys else -1
        probes = found + 1 if found >= 0 else len(keys)
        if op == memc.GET:
            hit = found >= 0
            replies += [memc.HIT if hit else memc.MISS, items[table[b][found] + memc.VALUE] if hit
                        else 0, probes]  # fmt: skip
        elif found >= 0:
            items[table[b][found] + memc.VALUE] = value
            replies += [memc.STORED, value, probes]
        else:
            items[slot : slot + memc.KEY + n] = [n, heads[b], value, *key]
            heads[b] = slot
            replies += [memc.INSERTED, value, probes]
    return {"reply": [int(r) for r in replies], "heads": heads, "items": items.tolist()}


@pytest.mark.parametrize(("size", "seed"), [(SPEC.default_size, 0), (40, 3), (SPEC.eval_size, 1)])
def test_oracle_is_the_host_table(size: int, seed: int) -> None:
    expected = serve(SPEC.case(size, seed))
    reference = cached_reference(SPEC, size, seed)
    for name, values in expected.items():
        assert reference[name].tolist() == values, name


def test_golden_sm_matches_the_oracle_under_three_policies() -> None:
    run_policies(SPEC)


def test_gets_and_sets_meet_chains_of_every_length() -> None:
    """MEMC's shape: probes range over the chain lengths, GETs hit and miss beside SETs that
    overwrite and insert in one warp, and after the launch every SET's key holds its value."""
    size, seed = SPEC.eval_size, 1
    case = SPEC.case(size, seed)
    out = cached_reference(SPEC, size, seed)
    reply = out["reply"].reshape(-1, memc.REPLY)
    probes = reply[:, 2]
    assert probes.min() <= 1 and probes.max() >= 6
    warps = reply[:, 0].reshape(-1, 32)
    statuses = [memc.HIT, memc.MISS, memc.STORED, memc.INSERTED]
    assert any(all((w == s).any() for s in statuses) for w in warps)
    final = chains(out["heads"].tolist(), out["items"])
    found = {
        key_of(out["items"], it): int(out["items"][it + memc.VALUE]) for c in final for it in c
    }
    for op, n, *rest in case.args["requests"].reshape(-1, memc.REQ).tolist():
        if op == memc.SET:
            assert found[tuple(rest[:n])] == rest[memc.KEYMAX]
