"""The pathfinder kernel (seed 003 Sec IV, Rodinia): the oracle against the dynamic program row
by row over the whole width (numpy: each cell's weight plus the least of the three cells above,
clamped at the grid's edges), which knows nothing of blocks, halos or pyramids. (The compiled
kernel under every allocator and every policy: kernels/tests/test_suite.py and
test_suite_sm.py, as for every suite kernel.)"""

from __future__ import annotations

import numpy as np
import pytest

from reconverge.kernels import pathfinder

SPEC = pathfinder.SPEC


@pytest.mark.parametrize(("size", "seed"), [(SPEC.default_size, 0), (37, 3), (SPEC.eval_size, 0)])
def test_oracle_is_the_row_by_row_minimum(size: int, seed: int) -> None:
    case = SPEC.case(size, seed)
    cols = case.args["cols"]
    cost = case.args["src"].astype(np.int64)
    for row in case.args["wall"].reshape(case.args["iteration"], cols):
        left = np.concatenate([cost[:1], cost[:-1]])
        right = np.concatenate([cost[1:], cost[-1:]])
        cost = np.minimum(np.minimum(left, cost), right) + row
    assert SPEC.reference(size, seed)["result"].tolist() == cost.tolist()
