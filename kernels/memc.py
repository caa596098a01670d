"""Seed 002's MEMC (Sec 5, Table 1; Hetherington et al.'s memcached on the GPU) in the shape of
its hash-table path: each thread takes one request, hashes its key, a string of one to
``KEYMAX`` words, in a loop over the words, walks the bucket's chain comparing key lengths and
then the keys word by word (memcached's ``memcmp``, leaving at the first difference), and
serves a GET (the value, or a miss) or a SET (the value overwritten in place, or a new item
linked at the head of the chain). Chains hold about three items and vary from none to ten, so
the threads of a warp probe different numbers of items, compare different numbers of words,
and split again at the GET/SET dispatch and the insert.

An item is ``ITEM`` words of ``items``: key length, next item (-1 ends the chain), value, the
key's words. A request is ``REQ`` words: op, key length, key words, value, and the item slot a
SET that misses fills. The reply is status, value, items probed. The launch is race-free by
construction (``make``): no two requests name the same key, no GET names a key a SET writes,
and the inserting SETs hash to buckets of their own that no other request walks, one insert
per bucket, so every policy gives the same memory."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, ctaid, kernel, ntid, tid
from reconverge.kernels.hashtable import hash32, host_hash
from reconverge.kernels.suite import Case, SuiteKernel, int32_array

KEYMAX = 4
ITEM = 3 + KEYMAX
KEYLEN, NEXT, VALUE, KEY = 0, 1, 2, 3
REQ = 4 + KEYMAX  # op, key length, key words, value, slot
GET, SET = 0, 1
HIT, MISS, STORED, INSERTED = 1, 2, 3, 4
REPLY = 3


@kernel
def memc(reply: Array, requests: Array, heads: Array, items: Array, nbuckets: int):
    t = ctaid() * ntid() + tid()
    r = REQ * t
    op = requests[r]
    n = requests[r + 1]
    h = 0
    for k in range(n):
        h = hash32(h * 31 + requests[r + 2 + k])
    b = h % nbuckets
    it = heads[b]
    probes = 0
    while it != -1:
        probes += 1
        if items[it + KEYLEN] == n:
            k = 0
            while k < n and items[it + KEY + k] == requests[r + 2 + k]:
                k += 1
            if k == n:
                break
        it = items[it + NEXT]
    value = 0
    if op == GET:
        if it == -1:
            status = MISS
        else:
            status = HIT
            value = items[it + VALUE]
    else:
        value = requests[r + 2 + KEYMAX]
        if it == -1:  # a new item in the request's slot, at the head of the chain
            it = requests[r + 3 + KEYMAX]
            items[it + KEYLEN] = n
            for k in range(n):
                items[it + KEY + k] = requests[r + 2 + k]
            items[it + VALUE] = value
            items[it + NEXT] = heads[b]
            heads[b] = it
            status = INSERTED
        else:
            items[it + VALUE] = value
            status = STORED
    reply[REPLY * t] = status
    reply[REPLY * t + 1] = value
    reply[REPLY * t + 2] = probes


def key_hash(key: tuple[int, ...]) -> int:
    """The kernel's hash of a key on the host."""
    h = 0
    for word in key:
        h = host_hash(h * 31 + word)
    return h


def make(size: int, seed: int) -> Case:
    """``2 size`` requests (rounded up to full blocks of at most 128) on a table of as many
    items in ``n / 3`` buckets: three GETs in four (half of them hits), the SETs half on stored
    keys and half inserting."""
    rng = np.random.default_rng(seed)
    block = min(size, 128)
    n = block * max(2, -(-2 * size // block))
    nbuckets = max(4, n // 3)
    keys: dict[tuple[int, ...], int] = {}  # every key made, and its bucket
    while len(keys) < 4 * n:
        key = tuple(rng.integers(0, 1 << 31, rng.integers(1, KEYMAX + 1)).tolist())
        keys.setdefault(key, key_hash(key) % nbuckets)
    pool = list(keys)
    stored, absent = pool[:n], pool[n:]
    nset = n // 4
    ninsert = nset // 2
    own = set(rng.choice(nbuckets, ninsert, replace=False).tolist())  # the inserts' buckets
    inserts, taken = [], set()
    for key in absent:
        if len(inserts) < ninsert and keys[key] in own and keys[key] not in taken:
            inserts.append(key)
            taken.add(keys[key])
    ninsert = len(inserts)
    walkable = [k for k in stored if keys[k] not in own]
    misses = [k for k in absent if keys[k] not in own]
    nover = nset - ninsert
    nhit = (n - nset) // 2
    order = rng.permutation(len(walkable))
    overwrites = [walkable[i] for i in order[:nover]]
    hits = [walkable[i] for i in order[nover : nover + nhit]]
    gets = hits + misses[: n - nset - len(hits)]
    items = np.full((n + ninsert, ITEM), 0, np.int64)
    heads = [-1] * nbuckets
    for i, key in enumerate(stored):
        items[i, :3] = len(key), heads[keys[key]], rng.integers(0, 1 << 20)
        items[i, KEY : KEY + len(key)] = key
        heads[keys[key]] = ITEM * i
    requests = np.zeros((n, REQ), np.int64)
    ops = [(GET, k, -1) for k in gets] + [(SET, k, -1) for k in overwrites]
    ops += [(SET, k, ITEM * (n + j)) for j, k in enumerate(inserts)]
    for row, (op, key, slot) in zip(requests, ops, strict=True):
        row[:2] = op, len(key)
        row[2 : 2 + len(key)] = key
        row[2 + KEYMAX :] = rng.integers(0, 1 << 20), slot
    requests = requests[rng.permutation(n)]
    return Case(
        {"reply": np.zeros(REPLY * n, np.int32), "requests": int32_array(requests.ravel()),
         "heads": int32_array(heads), "items": int32_array(items.ravel()), "nbuckets": nbuckets},
        grid=n // block, block=block,
    )  # fmt: skip


SPEC = SuiteKernel(
    "memc", memc, make, 16, "seed 002 MEMC: string keys, chained GETs and SETs", eval_size=768,
    provenance=(
        "Seed 002 Table 1 MEMC (Hetherington et al.): a hash of a multi-word key, a chain walk "
        "with a word-by-word key compare, then GET or SET (overwrite, or insert at the head); "
        "differs in keys of 1-4 words, no expiry or slab classes (the suite's memcached has "
        "those), and a request mix that keeps the SETs race-free (no request walks an "
        "inserting SET's bucket)."
    ),
)  # fmt: skip
