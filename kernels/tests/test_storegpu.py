"""The storeGPU kernel (seed 001 STO): the oracle's digests against Python's hashlib.md5 of every
window, exactly, at the suite's sizes and at other window lengths and strides (every padding
case, unaligned offsets). (The compiled kernel under every allocator and every policy:
kernels/tests/test_suite.py and test_suite_sm.py, as for every suite kernel.)"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from reconverge.golden.compiler import oracle
from reconverge.kernels import storegpu as sto
from reconverge.kernels.suite import Case

SPEC = sto.SPEC


def md5_words(case: Case) -> np.ndarray:
    """The digests of every window, as the kernel writes them (four little-endian words)."""
    data = case.args["data"].astype("<i4").tobytes()
    window, stride = case.args["window"], case.args["stride"]
    windows = (data[t * stride : t * stride + window] for t in range(case.grid * case.block))
    return np.concatenate([np.frombuffer(hashlib.md5(w).digest(), "<i4") for w in windows])


@pytest.mark.parametrize(("size", "seed"), [(SPEC.default_size, 0), (9, 3), (SPEC.eval_size, 0)])
def test_oracle_digests_are_md5(size: int, seed: int) -> None:
    case = SPEC.case(size, seed)
    assert np.array_equal(SPEC.reference(size, seed)["digest"], md5_words(case))


@pytest.mark.parametrize(("window", "stride"), [(0, 1), (1, 3), (3, 2), (4, 5), (53, 7), (55, 4)])
def test_other_windows_and_strides(window: int, stride: int) -> None:
    data = np.random.default_rng(window).bytes(8 * stride + window)
    case = sto.case(data, 8, 4, window, stride)
    out = oracle.run(sto.storegpu, case.args, grid=case.grid, block=case.block)
    assert np.array_equal(out["digest"], md5_words(case))


def test_windows_longer_than_one_block_are_refused() -> None:
    with pytest.raises(ValueError, match="55 bytes"):
        sto.case(bytes(100), 1, 1, 56)
