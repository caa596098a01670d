"""A switch-heavy interpreter loop: each thread runs one of several bytecode programs on its
own input (an if/elif chain on the opcode every step), with loops and conditional jumps in the
bytecode, so the threads of a warp take different cases and leave at different steps.

Bytecode: 3 words per instruction ``op a b``; registers ``acc`` and ``cnt``.
0 halt; 1 ``acc += a``; 2 ``acc *= a``; 3 ``acc ^= a``; 4 ``acc >>= a``; 5 ``if acc < a: goto
b``; 6 ``cnt -= 1; if cnt > 0: goto b``; 7 ``cnt = a``; 8 ``acc %= a``."""

from __future__ import annotations

import numpy as np

from reconverge.golden.compiler import Array, ctaid, kernel, ntid, tid
from reconverge.kernels.suite import Case, SuiteKernel, int32_array, split_threads


@kernel
def interpreter(out: Array, code: Array, starts: Array, inputs: Array, nprog: int,
                max_steps: int):  # fmt: skip
    t = ctaid() * ntid() + tid()
    pc = starts[t % nprog]
    acc = inputs[t]
    cnt = 0
    steps = 0
    while steps < max_steps:
        op = code[pc]
        a = code[pc + 1]
        b = code[pc + 2]
        pc += 3
        steps += 1
        if op == 0:
            break
        elif op == 1:
            acc += a
        elif op == 2:
            acc *= a
        elif op == 3:
            acc ^= a
        elif op == 4:
            acc >>= a
        elif op == 5:
            if acc < a:
                pc = b
        elif op == 6:
            cnt -= 1
            if cnt > 0:
                pc = b
        elif op == 7:
            cnt = a
        else:
            acc %= a
    out[t] = acc * 1000 + steps


def program(rng: np.random.Generator, start: int) -> list[int]:
    """A random terminating program at word offset ``start``."""
    words: list[int] = []

    def emit(op: int, a: int = 0, b: int = 0) -> None:
        words.extend((op, a, b))

    for _ in range(rng.integers(2, 5)):
        kind = rng.integers(0, 3)
        if kind == 0:  # a counted loop of arithmetic
            emit(7, int(rng.integers(1, 5)))
            top = start + len(words)
            emit(int(rng.choice([1, 2, 3])), int(rng.integers(1, 9)))
            emit(8, int(rng.integers(50, 1000)))
            emit(6, 0, top)
        elif kind == 1:  # a forward conditional jump over a block
            skip = start + len(words) + 3 * 3
            emit(5, int(rng.integers(0, 500)), skip)
            emit(1, int(rng.integers(-50, 50)))
            emit(4, int(rng.integers(0, 3)))
        else:
            emit(int(rng.choice([1, 2, 3, 8])), int(rng.integers(2, 97)))
    emit(0)
    return words


def make(size: int, seed: int) -> Case:
    rng = np.random.default_rng(seed)
    nprog = 4
    code: list[int] = []
    starts = []
    for _ in range(nprog):
        starts.append(len(code))
        code += program(rng, len(code))
    grid, block = split_threads(size)
    n = grid * block
    inputs = int32_array(rng.integers(0, 400, n))
    return Case(
        {"out": np.zeros(n, np.int32), "code": int32_array(code), "starts": int32_array(starts),
         "inputs": inputs, "nprog": nprog, "max_steps": 64},
        grid=grid, block=block,
    )  # fmt: skip


SPEC = SuiteKernel(
    "interpreter",
    interpreter,
    make,
    8,
    "switch-heavy bytecode interpreter",
    eval_size=1536,
    provenance=(
        "No paper benchmark: a switch-heavy shape (an if/elif opcode dispatch every step, "
        "bytecode loops and jumps), the parallel paths that seed 002 Sec 6.2 attributes to "
        "switch and else-if statements."
    ),
)
