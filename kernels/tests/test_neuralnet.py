"""The neuralNet kernel (seed 001 NN): the oracle's activations and classes against a NumPy
forward pass of the same integer network (exact), and every clean digit recognised. (The
compiled kernel under every allocator and every policy: kernels/tests/test_suite.py and
test_suite_sm.py, as for every suite kernel.)"""

from __future__ import annotations

import numpy as np
import pytest

from reconverge.kernels import neuralnet as nn

SPEC = nn.SPEC


def forward(images: np.ndarray, net: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Activations (features, hidden, outputs) and classes of every image, in int64."""
    net = net.astype(np.int64)
    filters = net[: nn.CONV_B].reshape(nn.NF, 3, 3)
    windows = np.stack(
        [images[:, 2 * y : 2 * y + 3, 2 * x : 2 * x + 3] for y in range(4) for x in range(4)], 1
    )  # (image, window, 3, 3)
    conv = np.einsum("nwij,fij->nfw", windows, filters) + net[nn.CONV_B : nn.W1, None]
    feat = np.minimum(np.maximum(conv, 0) >> nn.FSHIFT, 255).reshape(len(images), nn.FEAT)
    w1 = net[nn.W1 : nn.B1].reshape(nn.NCLS, nn.FEAT)
    hidden = np.maximum(feat @ w1.T + net[nn.B1 : nn.W2], 0) >> nn.HSHIFT
    w2 = net[nn.W2 : nn.B2].reshape(nn.NCLS, nn.NCLS)
    out = hidden @ w2.T + net[nn.B2 : nn.NET]
    assert np.abs(np.concatenate([conv, feat @ w1.T, out], None)).max() < 2**31
    return np.concatenate([feat, hidden, out], 1), out.argmax(1)


@pytest.mark.parametrize(("size", "seed"), [(SPEC.default_size, 0), (3, 3), (SPEC.eval_size, 0)])
def test_oracle_is_the_forward_pass(size: int, seed: int) -> None:
    case = SPEC.case(size, seed)
    images = case.args["images"].astype(np.int64).reshape(size, nn.SIDE, nn.SIDE)
    act, classes = forward(images, case.args["net"])
    ref = SPEC.reference(size, seed)
    assert np.array_equal(ref["act"].reshape(size, nn.ACT), act)
    assert np.array_equal(ref["cls"], classes)
    clean = [next((d for d in range(nn.NCLS) if (nn.clean(d) == im).all()), -1) for im in images]
    assert clean[::2] == ref["cls"][::2].tolist()  # every other image is a clean digit


def test_every_clean_digit_is_recognised() -> None:
    images = np.array([nn.clean(d) for d in range(nn.NCLS)])
    assert forward(images, nn.weights())[1].tolist() == list(range(nn.NCLS))
