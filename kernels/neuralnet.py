"""A convolutional network recognising digit bitmaps, after the handwritten-digit network that
seed 001 runs (Sec 5.3, Table 5.2 NN; Simard et al.'s layout: strided convolutions with no
pooling, then fully connected layers), in integers. One block classifies one ``SIDE`` x ``SIDE``
image: every thread computes features of the convolution layer (``NF`` 3x3 filters at stride
2, ReLU) into shared memory; a barrier; the hidden layer's ``NCLS`` neurons, one per thread, on
the first ``NCLS`` threads only; a barrier; the output layer and the argmax on thread 0 alone.
In the seed's benchmark "the last two kernels contain blocks of only one thread each, a
configuration which results in severe reduction of warp occupancy": here those layers are the
two phases in which a warp runs one thread or a few, which is where hybrid warp size gains.

Weights: the filters find a stroke's ink, horizontal and vertical edges and a diagonal; each
hidden neuron is the template of one clean digit (its features less their mean, scaled to
±127: a clean digit's own template scores highest, by Cauchy-Schwarz up to the rounding, which
the tests check); each output excites its class's neuron and inhibits the others. Pixels are
0..255, features are clamped to 0..255. ``act`` keeps each image's features, hidden and output
activations, ``cls`` its class."""

from __future__ import annotations

import functools

import numpy as np

from reconverge.golden.compiler import Array, barrier, ctaid, kernel, ntid, shared, tid
from reconverge.kernels.suite import Case, SuiteKernel, int32_array

SIDE = 9  # image side: a 5x7 glyph and a blank border
NF = 4  # 3x3 filters at stride 2 over the image: 4x4 features each
FEAT = NF * 16
NCLS = 10
CONV_B = NF * 9  # net: the filters, their biases, then each layer's weights and biases
W1 = CONV_B + NF
B1 = W1 + NCLS * FEAT
W2 = B1 + NCLS
B2 = W2 + NCLS * NCLS
NET = B2 + NCLS
ACT = FEAT + 2 * NCLS  # act per image: features, hidden, outputs
FSHIFT, HSHIFT = 2, 8  # right shifts of the convolution's and the hidden layer's sums
LOWEST = -(2**31)


@kernel
def neuralnet(cls: Array, act: Array, images: Array, net: Array):
    feat = shared(FEAT)
    hid = shared(NCLS)
    t = tid()
    img = ctaid() * SIDE * SIDE
    out = ctaid() * ACT
    o = t
    while o < FEAT:  # the convolution: feature o is filter o // 16 at window o % 16
        f = o >> 4
        at = img + ((o >> 2) & 3) * 2 * SIDE + (o & 3) * 2
        w = 9 * f
        acc = net[CONV_B + f]
        for _ in range(3):  # a row of the filter
            acc += net[w] * images[at] + net[w + 1] * images[at + 1] + net[w + 2] * images[at + 2]
            w += 3
            at += SIDE
        acc = min(max(acc, 0) >> FSHIFT, 255)
        feat[o] = acc
        act[out + o] = acc
        o += ntid()
    barrier()
    if t < NCLS:  # the hidden layer: one neuron per thread, NCLS threads
        w = W1 + FEAT * t
        acc = net[B1 + t]
        for i in range(FEAT):
            acc += net[w + i] * feat[i]
        acc = max(acc, 0) >> HSHIFT
        hid[t] = acc
        act[out + FEAT + t] = acc
    barrier()
    if t == 0:  # the output layer and the argmax: one thread
        best = LOWEST
        arg = 0
        w = W2
        for c in range(NCLS):
            acc = net[B2 + c]
            for i in range(NCLS):
                acc += net[w + i] * hid[i]
            w += NCLS
            act[out + FEAT + NCLS + c] = acc
            if acc > best:
                best = acc
                arg = c
        cls[ctaid()] = arg


GLYPHS = (  # 5x7 digits, a row of five bits per entry
    (14, 17, 19, 21, 25, 17, 14), (4, 12, 4, 4, 4, 4, 14), (14, 17, 1, 2, 4, 8, 31),
    (31, 2, 4, 2, 1, 17, 14), (2, 6, 10, 18, 31, 2, 2), (31, 16, 30, 1, 1, 17, 14),
    (6, 8, 16, 30, 17, 17, 14), (31, 1, 2, 4, 8, 8, 8), (14, 17, 17, 14, 17, 17, 14),
    (14, 17, 17, 15, 1, 2, 12),
)  # fmt: skip
FILTERS = (  # ink, horizontal edge, vertical edge, diagonal
    ((1, 1, 1), (1, 1, 1), (1, 1, 1)), ((-1, -1, -1), (2, 2, 2), (-1, -1, -1)),
    ((-1, 2, -1), (-1, 2, -1), (-1, 2, -1)), ((2, -1, -1), (-1, 2, -1), (-1, -1, 2)),
)  # fmt: skip


def clean(digit: int) -> np.ndarray:
    """The ``SIDE`` x ``SIDE`` image of a digit: its glyph in rows 1..7, columns 2..6, ink 255."""
    image = np.zeros((SIDE, SIDE), np.int64)
    for r, bits in enumerate(GLYPHS[digit]):
        image[1 + r, 2:7] = [255 * (bits >> (4 - c) & 1) for c in range(5)]
    return image


def features(image: np.ndarray) -> np.ndarray:
    """The convolution layer on the host (to build the templates)."""
    windows = np.lib.stride_tricks.sliding_window_view(image, (3, 3))[::2, ::2]
    sums = np.einsum("yxij,fij->fyx", windows, np.array(FILTERS))
    return np.minimum(np.maximum(sums, 0) >> FSHIFT, 255).ravel()


@functools.cache
def weights() -> np.ndarray:
    """``net``: filters and biases (zero), templates, output weights (9 on the diagonal, -1
    elsewhere) and biases (zero)."""
    templates = np.array([features(clean(d)) for d in range(NCLS)], np.float64)
    templates -= templates.mean(axis=1, keepdims=True)
    templates /= np.linalg.norm(templates, axis=1, keepdims=True)
    w1 = np.round(templates * 127 / np.abs(templates).max())
    w2 = NCLS * np.eye(NCLS) - 1
    return int32_array(np.concatenate(
        [np.ravel(FILTERS), np.zeros(NF), w1.ravel(), np.zeros(NCLS), w2.ravel(), np.zeros(NCLS)]
    ))  # fmt: skip


def make(size: int, seed: int) -> Case:
    """``size`` images, one block each: random digits, every other one clean, the others with
    fainter ink and background noise."""
    rng = np.random.default_rng(seed)
    images = []
    for i, digit in enumerate(rng.integers(0, NCLS, size)):
        image = clean(digit)
        if i % 2:
            image = image * rng.integers(160, 256) // 255 + rng.integers(0, 64, image.shape)
            image = np.minimum(image, 255)
        images.append(image.ravel())
    return Case(
        {"cls": np.zeros(size, np.int32), "act": np.zeros(size * ACT, np.int32),
         "images": int32_array(np.concatenate(images)), "net": weights()},
        grid=size, block=min(64, 16 * size),
    )  # fmt: skip


SPEC = SuiteKernel(
    "neuralNet", neuralnet, make, 1, "seed 001 Table 5.2 NN: one-thread final layers",
    eval_size=28,
    provenance=(
        "Seed 001 Table 5.2 NN (Simard-style handwritten-digit network): a strided convolution, "
        "then layers computed by a few threads or one, the benchmark's low-occupancy phases; "
        "differs in integer weights chosen as digit templates and one small bitmap per block."
    ),
)  # fmt: skip
