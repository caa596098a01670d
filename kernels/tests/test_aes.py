"""The aes kernel (seed 001 Table 5.2 AES): the oracle against FIPS-197's Appendix C.1 example
and against a byte-oriented AES written from FIPS-197 Sec 5.1 (SubBytes, ShiftRows, MixColumns
and AddRoundKey on a 4x4 state, the key schedule of Sec 5.2; no T-tables) on the launch's
blocks. (The compiled kernel under every allocator and every policy: kernels/tests/test_suite.py
and test_suite_sm.py, as for every suite kernel.)"""

from __future__ import annotations

import numpy as np
import pytest

from reconverge.golden.compiler import oracle
from reconverge.kernels import aes

SPEC = aes.SPEC
SBOX = aes.sbox()


def mul(a: int, b: int) -> int:
    """a times b in GF(2^8)."""
    p = 0
    for _ in range(8):
        if b & 1:
            p ^= a
        a = aes.xtime(a)
        b >>= 1
    return p


def round_keys(key: bytes) -> list[list[int]]:
    """FIPS-197 Sec 5.2, on bytes: 11 round keys of 16 bytes."""
    w = [list(key[i : i + 4]) for i in range(0, 16, 4)]
    rcon = 1
    for i in range(4, 44):
        t = list(w[i - 1])
        if i % 4 == 0:
            t = [SBOX[b] for b in t[1:] + t[:1]]
            t[0] ^= rcon
            rcon = mul(rcon, 2)
        w.append([a ^ b for a, b in zip(w[i - 4], t, strict=True)])
    return [[b for word in w[4 * r : 4 * r + 4] for b in word] for r in range(11)]


def encrypt(block: bytes, key: bytes) -> bytes:
    """One block; ``state[r + 4c]`` is row r, column c (the input's byte order)."""
    keys = round_keys(key)
    state = [b ^ k for b, k in zip(block, keys[0], strict=True)]
    for r in range(1, 11):
        state = [SBOX[b] for b in state]
        state = [state[(i + 4 * (i % 4)) % 16] for i in range(16)]  # row r rotates left by r
        if r < 10:
            state = [
                mul(2, col[row]) ^ mul(3, col[(row + 1) % 4]) ^ col[(row + 2) % 4]
                ^ col[(row + 3) % 4]
                for col in (state[4 * c : 4 * c + 4] for c in range(4)) for row in range(4)
            ]  # fmt: skip
        state = [b ^ k for b, k in zip(state, keys[r], strict=True)]
    return bytes(state)


def kernel_encrypt(blocks: bytes, key: bytes) -> bytes:
    n = len(blocks) // 16
    args = {"out": np.zeros(4 * n, np.int32), "inp": aes.words(blocks), "te": aes.tables(),
            "rk": aes.expand_key(key)}  # fmt: skip
    out = oracle.run(aes.aes, args, grid=1, block=n)["out"]
    return out.astype(">u4").tobytes()


def test_fips_197_appendix_c1() -> None:
    key = bytes(range(16))
    plain = bytes.fromhex("00112233445566778899aabbccddeeff")
    expected = bytes.fromhex("69c4e0d86a7b0430d8cdb78070b4c55a")
    assert encrypt(plain, key) == expected
    assert kernel_encrypt(plain * 2, key) == expected * 2


@pytest.mark.parametrize(("size", "seed"), [(SPEC.default_size, 0), (13, 3), (SPEC.eval_size, 0)])
def test_oracle_is_aes_ecb(size: int, seed: int) -> None:
    case = SPEC.case(size, seed)
    key = case.args["rk"][:4].astype(">u4").tobytes()  # the first round key is the key
    plain = case.args["inp"].astype(">u4").tobytes()
    cipher = SPEC.reference(size, seed)["out"].astype(">u4").tobytes()
    blocks = range(0, len(plain), 16)
    sample = blocks if size < 100 else blocks[:: len(blocks) // 64]
    for i in sample:
        assert cipher[i : i + 16] == encrypt(plain[i : i + 16], key), f"block {i // 16}"
    assert cipher[:16] == cipher[16:32] == encrypt(bytes([200] * 16), key)  # ECB: flat runs
