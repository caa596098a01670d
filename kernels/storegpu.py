"""StoreGPU's sliding-window hashing with MD5 (seed 001 Sec 5.3, Table 5.2 STO; Al-Kiswany et
al.): thread ``t`` hashes the ``window`` bytes of the input that start at byte ``t * stride``
and writes the four words of their MD5 digest. The window is at most 55 bytes, so its padded
message is one MD5 block: the thread assembles the block in its 16 words of ``msg`` (the
window's words from an unaligned byte offset, the padding byte 0x80, the length in bits), then
runs the 64 steps (RFC 1321) reading the block and the sine table from memory. As the seed
says, the work is memory and arithmetic, "branch divergence is barely involved": the only
branches are the loops and the padding's cases, which depend on the word index, the same in
every thread.

Bytes are packed little-endian into int32 words, as MD5 reads them. The kernel language's
``>>`` is arithmetic, so a logical right shift by ``s`` is ``(x >> s) & mask`` with the low
``32 - s`` bits in the mask, and a rotation is ``(x << s) | ((x >> (32 - s)) & (2**s - 1))``;
``+`` wraps modulo 2**32 as MD5 requires."""

from __future__ import annotations

import math

import numpy as np

from reconverge.golden.compiler import Array, ctaid, kernel, ntid, tid
from reconverge.kernels.suite import Case, SuiteKernel, int32_array

WINDOW = 48  # bytes hashed by a thread (at most 55: one MD5 block)
STRIDE = 1  # bytes between the windows of consecutive threads: every offset, as in chunking
A0, B0, C0, D0 = 0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476


@kernel
def storegpu(digest: Array, msg: Array, data: Array, k: Array, window: int, stride: int):
    t = ctaid() * ntid() + tid()
    o = t * stride
    q = o >> 2
    sh = (o & 3) * 8
    keep = ~((-1 << (31 - sh)) << 1)  # the low 32 - sh bits (all of them when sh is 0)
    m = 16 * t
    lo = data[q]
    for j in range(16):  # the padded block: word j holds bytes 4j .. 4j + 3 of the window
        hi = data[q + j + 1]
        w = ((lo >> sh) & keep) | ((hi << (31 - sh)) << 1)
        lo = hi
        n = window - 4 * j
        if n >= 4:
            msg[m + j] = w
        elif n >= 0:  # the window's last bytes, then 0x80
            msg[m + j] = (w & ((1 << 8 * n) - 1)) | (0x80 << 8 * n)
        elif j == 14:
            msg[m + j] = 8 * window
        else:
            msg[m + j] = 0
    a = A0
    b = B0
    c = C0
    d = D0
    for i in range(0, 16, 4):  # round 1: F(x, y, z) = z ^ (x & (y ^ z)), word i
        x = a + (d ^ (b & (c ^ d))) + k[i] + msg[m + i]
        a = b + ((x << 7) | ((x >> 25) & 0x7F))
        x = d + (c ^ (a & (b ^ c))) + k[i + 1] + msg[m + i + 1]
        d = a + ((x << 12) | ((x >> 20) & 0xFFF))
        x = c + (b ^ (d & (a ^ b))) + k[i + 2] + msg[m + i + 2]
        c = d + ((x << 17) | ((x >> 15) & 0x1FFFF))
        x = b + (a ^ (c & (d ^ a))) + k[i + 3] + msg[m + i + 3]
        b = c + ((x << 22) | ((x >> 10) & 0x3FFFFF))
    for i in range(0, 16, 4):  # round 2: G(x, y, z) = y ^ (z & (x ^ y)), word 5i + 1
        x = a + (c ^ (d & (b ^ c))) + k[16 + i] + msg[m + ((5 * i + 1) & 15)]
        a = b + ((x << 5) | ((x >> 27) & 0x1F))
        x = d + (b ^ (c & (a ^ b))) + k[17 + i] + msg[m + ((5 * i + 6) & 15)]
        d = a + ((x << 9) | ((x >> 23) & 0x1FF))
        x = c + (a ^ (b & (d ^ a))) + k[18 + i] + msg[m + ((5 * i + 11) & 15)]
        c = d + ((x << 14) | ((x >> 18) & 0x3FFF))
        x = b + (d ^ (a & (c ^ d))) + k[19 + i] + msg[m + ((5 * i) & 15)]
        b = c + ((x << 20) | ((x >> 12) & 0xFFFFF))
    for i in range(0, 16, 4):  # round 3: H(x, y, z) = x ^ y ^ z, word 3i + 5
        x = a + (b ^ c ^ d) + k[32 + i] + msg[m + ((3 * i + 5) & 15)]
        a = b + ((x << 4) | ((x >> 28) & 0xF))
        x = d + (a ^ b ^ c) + k[33 + i] + msg[m + ((3 * i + 8) & 15)]
        d = a + ((x << 11) | ((x >> 21) & 0x7FF))
        x = c + (d ^ a ^ b) + k[34 + i] + msg[m + ((3 * i + 11) & 15)]
        c = d + ((x << 16) | ((x >> 16) & 0xFFFF))
        x = b + (c ^ d ^ a) + k[35 + i] + msg[m + ((3 * i + 14) & 15)]
        b = c + ((x << 23) | ((x >> 9) & 0x7FFFFF))
    for i in range(0, 16, 4):  # round 4: I(x, y, z) = y ^ (x | ~z), word 7i
        x = a + (c ^ (b | ~d)) + k[48 + i] + msg[m + ((7 * i) & 15)]
        a = b + ((x << 6) | ((x >> 26) & 0x3F))
        x = d + (b ^ (a | ~c)) + k[49 + i] + msg[m + ((7 * i + 7) & 15)]
        d = a + ((x << 10) | ((x >> 22) & 0x3FF))
        x = c + (a ^ (d | ~b)) + k[50 + i] + msg[m + ((7 * i + 14) & 15)]
        c = d + ((x << 15) | ((x >> 17) & 0x7FFF))
        x = b + (d ^ (c | ~a)) + k[51 + i] + msg[m + ((7 * i + 5) & 15)]
        b = c + ((x << 21) | ((x >> 11) & 0x1FFFFF))
    digest[4 * t] = A0 + a
    digest[4 * t + 1] = B0 + b
    digest[4 * t + 2] = C0 + c
    digest[4 * t + 3] = D0 + d


#: MD5's table: the integer part of 2**32 |sin(i + 1)| (RFC 1321).
SINES = int32_array([int(abs(math.sin(i + 1)) * 2**32) for i in range(64)])


def pack(data: bytes) -> np.ndarray:
    """Bytes as little-endian int32 words, zero-padded to whole words."""
    return np.frombuffer(data + bytes(-len(data) % 4), "<i4").astype(np.int32)


def case(data: bytes, threads: int, block: int, window: int = WINDOW, stride: int = STRIDE) -> Case:
    """Hash ``threads`` windows of ``data`` (which holds them all) in blocks of ``block``."""
    if not 0 <= window <= 55 or threads % block or (threads - 1) * stride + window > len(data):
        raise ValueError("storeGPU: the windows must lie in the data, at most 55 bytes each")
    return Case(
        {"digest": np.zeros(4 * threads, np.int32), "msg": np.zeros(16 * threads, np.int32),
         "data": pack(data + bytes(68)), "k": SINES, "window": window, "stride": stride},
        grid=threads // block, block=block,
    )  # fmt: skip


def make(size: int, seed: int) -> Case:
    """``size`` windows (rounded up to whole blocks of at most 256) over random bytes."""
    block = min(size, 256)
    threads = block * -(-size // block)
    data = np.random.default_rng(seed).bytes((threads - 1) * STRIDE + WINDOW)
    return case(data, threads, block)


SPEC = SuiteKernel(
    "storeGPU", storegpu, make, 8, "seed 001 Table 5.2 STO: sliding-window MD5",
    eval_size=1536,
    provenance=(
        "Seed 001 Table 5.2 STO (StoreGPU's sliding-window MD5): one window hash per thread, "
        "branches only on the word index; differs in windows of at most 55 bytes (one MD5 "
        "block) over a small input (the paper: 192 KB)."
    ),
)  # fmt: skip
