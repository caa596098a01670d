"""Memcached's request path on the GPU (seed 002 Sec 5, MEMC; Hetherington et al.): each thread
takes one request, hashes its key, walks the bucket's chain comparing keys, and then handles
the request through an ``if/elif`` dispatch on what it found and on the request kind: a miss,
a lazily expired item, a GET of an inline value or of a value in the large slab class (a
checksum loop over its words), a DELETE, a non-numeric INCR/DECR, an INCR, a DECR clamped at 0.
The threads of a warp take many of these paths at once: the "switch and else if statements that
increase the number of parallel control flow paths" of seed 002 Sec 6.2.

An item is ``ITEM`` words in ``items``: key, next item in the chain (-1 ends it), expiry time
(0: never), value length in the large slab class (0: the value is inline), value or slab
offset. A request is ``op key arg``; the reply is ``status value``. Requests that write
(DELETE, INCR, DECR) have keys no other request touches, so the kernel is race-free."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, ctaid, kernel, ntid, tid
from reconverge.kernels.hashtable import hash32, host_hash
from reconverge.kernels.suite import Case, SuiteKernel, int32_array

ITEM = 5
KEY, NEXT, EXPTIME, SLAB, DATA = range(ITEM)
GET, DELETE, INCR, DECR = range(4)
HIT, MISS, EXPIRED, DELETED, NOT_NUMERIC, STORED = range(1, 7)


@kernel
def memcached(reply: Array, requests: Array, heads: Array, items: Array, slab: Array,
              nbuckets: int, now: int):  # fmt: skip
    t = ctaid() * ntid() + tid()
    op = requests[3 * t]
    key = requests[3 * t + 1]
    arg = requests[3 * t + 2]
    it = heads[hash32(key) % nbuckets]
    while it != -1 and items[it + KEY] != key:
        it = items[it + NEXT]
    value = 0
    if it == -1:
        status = MISS
    elif items[it + EXPTIME] != 0 and items[it + EXPTIME] <= now:
        status = EXPIRED
    elif op == GET:
        status = HIT
        length = items[it + SLAB]
        if length == 0:
            value = items[it + DATA]
        else:
            base = items[it + DATA]
            for i in range(length):
                value = value * 31 + slab[base + i]
    elif op == DELETE:
        status = DELETED
        items[it + EXPTIME] = now  # expires now: later requests miss it
    elif items[it + SLAB] != 0:
        status = NOT_NUMERIC
    else:
        status = STORED
        value = items[it + DATA]
        value = value + arg if op == INCR else max(value - arg, 0)  # DECR stops at 0
        items[it + DATA] = value
    reply[2 * t] = status
    reply[2 * t + 1] = value


def make(size: int, seed: int) -> Case:
    """``2 * size`` requests (rounded up to full blocks of at most 128) on a table of about
    one item per two requests, three items per bucket."""
    rng = np.random.default_rng(seed)
    block = min(size, 128)
    n = block * max(2, -(-2 * size // block))
    nitems, now = n // 2, 1000
    nbuckets = max(2, nitems // 3)
    keys = rng.choice(1 << 20, nitems + n, replace=False)
    stored, absent = keys[:nitems], keys[nitems:]
    lengths = np.where(rng.random(nitems) < 0.3, rng.integers(2, 9, nitems), 0)
    offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
    expiry = rng.choice([0, now - 100, now + 100], nitems, p=[0.5, 0.25, 0.25])
    items = np.zeros((nitems, ITEM), np.int64)
    items[:, KEY], items[:, EXPTIME], items[:, SLAB] = stored, expiry, lengths
    items[:, DATA] = np.where(lengths > 0, offsets, rng.integers(0, 100, nitems))
    heads = [-1] * nbuckets
    for i, key in enumerate(stored.tolist()):
        b = host_hash(key) % nbuckets
        items[i, NEXT], heads[b] = heads[b], ITEM * i
    # Writers get one stored key each (never read by another request); readers get the rest,
    # some repeated, and absent keys.
    nwrite = min(nitems // 2, n // 3)
    order = rng.permutation(stored)
    ops = np.full(n, GET)
    ops[:nwrite] = DELETE + np.arange(nwrite) % 3
    gets = np.where(rng.random(n - nwrite) < 0.7, rng.choice(order[nwrite:], n - nwrite),
                    absent[: n - nwrite])  # fmt: skip
    requests = np.stack([ops, np.concatenate([order[:nwrite], gets]), rng.integers(0, 60, n)])
    requests = requests[:, rng.permutation(n)].T
    return Case(
        {"reply": np.zeros(2 * n, np.int32), "requests": int32_array(requests.ravel()),
         "heads": int32_array(heads), "items": int32_array(items.ravel()),
         "slab": int32_array(rng.integers(0, 1 << 16, max(1, int(lengths.sum())))),
         "nbuckets": nbuckets, "now": now},
        grid=n // block, block=block,
    )  # fmt: skip


SPEC = SuiteKernel(
    "memcached",
    memcached,
    make,
    16,
    "memcached requests: an if/elif dispatch",
    eval_size=768,
    provenance=(
        "Seed 002 Table 1 MEMC (Hetherington et al.): one request per thread, a hashed chain "
        "walk comparing keys, then an if/elif dispatch over GET, DELETE, INCR and DECR "
        "outcomes; differs in having no SET that inserts (the benchmarks kernel memc adds sets "
        "and longer chains) and in small integer keys."
    ),
)
