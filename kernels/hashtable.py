"""A memcached-style hash-table lookup with chaining: each thread hashes its key and walks
its bucket's chain until the key or the end; chains have different lengths and some keys are
missing."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, ctaid, device, int32, kernel, ntid, tid
from reconverge.kernels.suite import Case, SuiteKernel, int32_array

MULT = 0x045D9F3B


@device
def hash32(k):
    k = k ^ ((k >> 16) & 0xFFFF)
    k = k * MULT
    k = k ^ ((k >> 16) & 0xFFFF)
    return k & 0x7FFFFFFF


@kernel
def hashLookup(out: Array, queries: Array, heads: Array, keys: Array, values: Array,
               nexts: Array, nbuckets: int):  # fmt: skip
    t = ctaid() * ntid() + tid()
    key = queries[t]
    node = heads[hash32(key) % nbuckets]
    result = -1
    while node != -1:
        if keys[node] == key:
            result = values[node]
            break
        node = nexts[node]
    out[t] = result


def host_hash(k: int) -> int:
    """hash32 on the host (int32 semantics)."""
    k = int32.wrap(k)
    k ^= (k >> 16) & 0xFFFF
    k = int32.wrap(k * MULT)
    k ^= (k >> 16) & 0xFFFF
    return k & 0x7FFFFFFF


def make(size: int, seed: int) -> Case:
    rng = np.random.default_rng(seed)
    nkeys, nbuckets = 3 * size, max(2, size // 2)
    keys = rng.choice(100_000, nkeys, replace=False).astype(np.int64)
    heads = [-1] * nbuckets
    nexts = [-1] * nkeys
    for node, key in enumerate(keys.tolist()):
        b = host_hash(key) % nbuckets
        nexts[node], heads[b] = heads[b], node
    block = min(128, max(16, size))  # full warps of 32 from size 32 on
    nq = block * max(2, -(-3 * size // block))  # about one query per key
    present = rng.choice(keys, nq // 2)
    absent = rng.integers(100_000, 200_000, nq - nq // 2)
    queries = int32_array(rng.permutation(np.concatenate([present, absent])))
    return Case(
        {"out": np.zeros(nq, np.int32), "queries": queries, "heads": int32_array(heads),
         "keys": int32_array(keys), "values": int32_array(keys * 3 + 1),
         "nexts": int32_array(nexts), "nbuckets": nbuckets},
        grid=nq // block, block=block,
    )  # fmt: skip


SPEC = SuiteKernel(
    "hashLookup",
    hashLookup,
    make,
    8,
    "hash-table lookup with chaining",
    eval_size=1024,
    provenance=(
        "No paper benchmark by itself: the key-compare chain walk of seed 002's MEMC alone (one "
        "lookup per thread, chains of varying length, missing keys), without memcached's "
        "request dispatch."
    ),
)
