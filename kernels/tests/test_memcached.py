"""The memcached kernel: the oracle against a host key-value store (a dict of items serving the
requests one by one), every reply kind exercised at the default size. (The compiled kernel under
every allocator and every policy: kernels/tests/test_suite.py and test_suite_sm.py, as for every
suite kernel.)"""

from __future__ import annotations

import numpy as np
import pytest

from reconverge.kernels import memcached as mc

SPEC = mc.SPEC


def serve(case) -> tuple[list[int], list[int]]:
    """Replies and final items of a dict-based store: the lazy expiry, slab checksums and
    arithmetic of memcached, written per request kind."""
    items = case.args["items"].astype(np.int64).reshape(-1, mc.ITEM)
    slab, now = case.args["slab"].tolist(), case.args["now"]
    store = {int(row[mc.KEY]): row for row in items}
    reply: list[int] = []
    for op, key, arg in case.args["requests"].reshape(-1, 3).tolist():
        item = store.get(key)
        status, value = mc.MISS, 0
        if item is not None and 0 < item[mc.EXPTIME] <= now:
            status = mc.EXPIRED
        elif item is not None and op == mc.GET:
            status, value = mc.HIT, int(item[mc.DATA])
            if item[mc.SLAB]:
                words = slab[value : value + item[mc.SLAB]]
                value = sum(w * 31 ** (len(words) - 1 - i) for i, w in enumerate(words))
                value = (value + 2**31) % 2**32 - 2**31
        elif item is not None and op == mc.DELETE:
            status, item[mc.EXPTIME] = mc.DELETED, now
        elif item is not None and item[mc.SLAB]:
            status = mc.NOT_NUMERIC
        elif item is not None:
            change = arg if op == mc.INCR else -arg
            status, value = mc.STORED, max(0, int(item[mc.DATA]) + change)
            item[mc.DATA] = value
        reply += [status, value]
    return reply, items.ravel().tolist()


@pytest.mark.parametrize(("size", "seed"), [(SPEC.default_size, 0), (17, 3), (64, 1)])
def test_oracle_matches_the_host_store(size: int, seed: int) -> None:
    case = SPEC.case(size, seed)
    ref = SPEC.reference(size, seed)
    reply, items = serve(case)
    assert ref["reply"].tolist() == reply
    assert ref["items"].tolist() == items


def test_default_requests_take_every_path() -> None:
    case = SPEC.case()
    ops = case.args["requests"].reshape(-1, 3)[:, 0]
    status = SPEC.reference()["reply"].reshape(-1, 2)[:, 0]
    items = case.args["items"].reshape(-1, mc.ITEM)
    assert set(zip(ops.tolist(), status.tolist(), strict=True)) >= {
        (mc.GET, mc.HIT), (mc.GET, mc.MISS), (mc.GET, mc.EXPIRED), (mc.DELETE, mc.DELETED),
        (mc.INCR, mc.NOT_NUMERIC), (mc.INCR, mc.STORED), (mc.DECR, mc.STORED),
    }  # fmt: skip
    assert (items[:, mc.SLAB] > 0).any() and (items[:, mc.SLAB] == 0).any()
