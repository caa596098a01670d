"""AES-128 encryption of an image in ECB mode (seed 001 Sec 5.3, Table 5.2 AES: "we encrypt a
256x256 image with a 128-bit encryption key"): one 16-byte block per thread, in the T-table
formulation of the CUDA implementations that seed 001 runs (Manavski): the state is four
big-endian column words; each of the nine full rounds is sixteen lookups in the tables
``T0..T3`` (SubBytes, ShiftRows and MixColumns at once) and the round key, the last round
sixteen S-box lookups. The key is expanded on the host (FIPS-197 Sec 5.2) and passed with the
tables. Every thread runs the same instructions: the low branch divergence of Table 5.2."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, ctaid, kernel, ntid, tid
from reconverge.kernels.suite import Case, SuiteKernel, int32_array, split_threads

ROUNDS = 10
T1, T2, T3, S = 256, 512, 768, 1024  # offsets in ``te``: T0 at 0, then T1, T2, T3, the S-box


@kernel
def aes(out: Array, inp: Array, te: Array, rk: Array):
    b = 4 * (ctaid() * ntid() + tid())
    s0 = inp[b] ^ rk[0]
    s1 = inp[b + 1] ^ rk[1]
    s2 = inp[b + 2] ^ rk[2]
    s3 = inp[b + 3] ^ rk[3]
    for r in range(1, ROUNDS):
        k = 4 * r
        t0 = (te[(s0 >> 24) & 255] ^ te[T1 + ((s1 >> 16) & 255)] ^ te[T2 + ((s2 >> 8) & 255)]
              ^ te[T3 + (s3 & 255)] ^ rk[k])  # fmt: skip
        t1 = (te[(s1 >> 24) & 255] ^ te[T1 + ((s2 >> 16) & 255)] ^ te[T2 + ((s3 >> 8) & 255)]
              ^ te[T3 + (s0 & 255)] ^ rk[k + 1])  # fmt: skip
        t2 = (te[(s2 >> 24) & 255] ^ te[T1 + ((s3 >> 16) & 255)] ^ te[T2 + ((s0 >> 8) & 255)]
              ^ te[T3 + (s1 & 255)] ^ rk[k + 2])  # fmt: skip
        t3 = (te[(s3 >> 24) & 255] ^ te[T1 + ((s0 >> 16) & 255)] ^ te[T2 + ((s1 >> 8) & 255)]
              ^ te[T3 + (s2 & 255)] ^ rk[k + 3])  # fmt: skip
        s0 = t0
        s1 = t1
        s2 = t2
        s3 = t3
    k = 4 * ROUNDS  # the last round: SubBytes and ShiftRows, no MixColumns
    out[b] = ((te[S + ((s0 >> 24) & 255)] << 24) ^ (te[S + ((s1 >> 16) & 255)] << 16)
              ^ (te[S + ((s2 >> 8) & 255)] << 8) ^ te[S + (s3 & 255)] ^ rk[k])  # fmt: skip
    out[b + 1] = ((te[S + ((s1 >> 24) & 255)] << 24) ^ (te[S + ((s2 >> 16) & 255)] << 16)
                  ^ (te[S + ((s3 >> 8) & 255)] << 8) ^ te[S + (s0 & 255)] ^ rk[k + 1])  # fmt: skip
    out[b + 2] = ((te[S + ((s2 >> 24) & 255)] << 24) ^ (te[S + ((s3 >> 16) & 255)] << 16)
                  ^ (te[S + ((s0 >> 8) & 255)] << 8) ^ te[S + (s1 & 255)] ^ rk[k + 2])  # fmt: skip
    out[b + 3] = ((te[S + ((s3 >> 24) & 255)] << 24) ^ (te[S + ((s0 >> 16) & 255)] << 16)
                  ^ (te[S + ((s1 >> 8) & 255)] << 8) ^ te[S + (s2 & 255)] ^ rk[k + 3])  # fmt: skip


def xtime(x: int) -> int:
    """x times 2 in GF(2^8) modulo x^8 + x^4 + x^3 + x + 1."""
    return ((x << 1) ^ (0x1B if x & 0x80 else 0)) & 0xFF


def sbox() -> list[int]:
    """The S-box (FIPS-197 Sec 5.1.1): the inverse in GF(2^8), then the affine map."""
    exp, log = [0] * 255, [0] * 256
    x = 1
    for i in range(255):  # powers of the generator 3
        exp[i], log[x] = x, i
        x ^= xtime(x)
    box = []
    for a in range(256):
        inv = exp[-log[a] % 255] if a else 0
        rot = [((inv << k) | (inv >> (8 - k))) & 0xFF for k in range(5)]
        box.append(rot[0] ^ rot[1] ^ rot[2] ^ rot[3] ^ rot[4] ^ 0x63)
    return box


def tables() -> np.ndarray:
    """``te``: T0[x] = (2 S[x], S[x], S[x], 3 S[x]) as a big-endian word, T1..T3 its byte
    rotations to the right, then the S-box."""
    box = sbox()
    t0 = [(xtime(s) << 24) | (s << 16) | (s << 8) | (xtime(s) ^ s) for s in box]
    rot = [[((w >> 8 * k) | (w << (32 - 8 * k))) & 0xFFFFFFFF for w in t0] for k in range(1, 4)]
    return int32_array(t0 + rot[0] + rot[1] + rot[2] + box)


def expand_key(key: bytes) -> np.ndarray:
    """The 44 round-key words of a 16-byte key (FIPS-197 Sec 5.2)."""
    box = sbox()
    w = [int.from_bytes(key[4 * i : 4 * i + 4], "big") for i in range(4)]
    rcon = 1
    for i in range(4, 4 * (ROUNDS + 1)):
        t = w[i - 1]
        if i % 4 == 0:
            t = ((t << 8) | (t >> 24)) & 0xFFFFFFFF  # RotWord, SubWord, Rcon
            t = int.from_bytes(bytes(box[(t >> s) & 0xFF] for s in (24, 16, 8, 0)), "big")
            t ^= rcon << 24
            rcon = xtime(rcon)
        w.append(w[i - 4] ^ t)
    return int32_array(w)


def words(data: bytes) -> np.ndarray:
    """Bytes as big-endian int32 words (AES's column order)."""
    return np.frombuffer(data, ">u4").astype(np.int64).astype(np.int32)


def image(blocks: int, rng: np.random.Generator) -> bytes:
    """A grey-level image of ``16 * blocks`` pixels: a gradient with noise and flat runs (equal
    plaintext blocks, which ECB maps to equal ciphertext blocks)."""
    pixels = (np.arange(16 * blocks) // 5 + rng.integers(0, 4, 16 * blocks)) % 256
    pixels[: 16 * (blocks // 4)] = 200
    return pixels.astype(np.uint8).tobytes()


def make(size: int, seed: int) -> Case:
    rng = np.random.default_rng(seed)
    grid, block = split_threads(size)
    n = grid * block
    key = rng.integers(0, 256, 16, dtype=np.uint8).tobytes()
    return Case(
        {"out": np.zeros(4 * n, np.int32), "inp": words(image(n, rng)), "te": tables(),
         "rk": expand_key(key)},
        grid=grid, block=block,
    )  # fmt: skip


SPEC = SuiteKernel(
    "aes",
    aes,
    make,
    8,
    "seed 001 Table 5.2 AES: uniform table lookups",
    eval_size=768,
    provenance=(
        "Seed 001 Table 5.2 AES (Manavski's T-table AES-128 of an image): kept as the benchmark "
        "computes it, one 16-byte block per thread, uniform table lookups; differs in the image "
        "size."
    ),
)
