"""The bitonicSort kernel (AMD APP SDK BitonicSort): the oracle against ``np.sort`` of each
block's elements, in the launch's direction. (The compiled kernel under every allocator and
every policy: kernels/tests/test_suite.py and test_suite_sm.py, as for every suite kernel.)"""

from __future__ import annotations

import numpy as np
import pytest

from reconverge.kernels import bitonic

SPEC = bitonic.SPEC


@pytest.mark.parametrize(("size", "seed"), [(SPEC.default_size, 0), (21, 1), (SPEC.eval_size, 0)])
def test_oracle_sorts_each_block(size: int, seed: int) -> None:
    case = SPEC.case(size, seed)
    blocks = case.args["a"].reshape(case.grid, 2 * case.block)
    expected = np.sort(blocks, axis=1)
    if not case.args["direction"]:
        expected = expected[:, ::-1]
    assert np.array_equal(SPEC.reference(size, seed)["a"].reshape(blocks.shape), expected)
