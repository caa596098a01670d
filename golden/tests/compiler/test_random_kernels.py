"""Property tests on random kernels (Hypothesis): every allocator and register budget from 5
up gives the oracle's memory on the golden model, and the affine analysis is sound (checked
dynamically at every executed definition and uniform branch)."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from reconverge.golden.compiler import (
    compile_kernel,
    kernels_from_source,
    oracle,
    regalloc,
    soundness,
)
from reconverge.golden.geometry import Geometry

#: The atomics whose final value does not depend on the order the threads apply them in (all but
#: swap), so that the oracle's per-thread order gives the SM's result. A kernel uses one of them
#: (two different ones on a word, such as add and and, do not commute with each other).
COMMUTATIVE_ATOMICS = ["add", "and", "or", "xor", "min", "max", "minu", "maxu"]

HEADER = """\
from reconverge.golden.compiler import Array, barrier, ctaid, device, kernel
from reconverge.golden.compiler import laneid, ntid, shared, tid, warpid
from reconverge.golden.compiler import atomic_add, atomic_and, atomic_max, atomic_maxu
from reconverge.golden.compiler import atomic_min, atomic_minu, atomic_or, atomic_xor


@device
def helper(a, b):
    s = 0
    k = 0
    while k < (b & 3):
        if (a + k) % 3 == 0:
            s += a * k
        else:
            s -= b
        k += 1
    return s + a


@kernel
def rk(out: Array, data: Array, acc: Array, p: int):
    t = tid()
    g = ctaid() * ntid() + t
    v0 = data[t & 15]
    v1 = p
    v2 = t * 3 + p
    v3 = 0
"""
BARRIER = """\
    buf = shared(64)
    buf[t] = v0 + t
    barrier()
    v3 = buf[(t + 1) % ntid()]
"""
FOOTER = "".join(f"    out[g * 4 + {k}] = v{k}\n" for k in range(4))
VARS = [f"v{k}" for k in range(4)]


class _Gen:
    """Draws a random kernel body (statements and expressions of the language)."""

    def __init__(self, draw: st.DrawFn) -> None:
        self.draw = draw
        self.lines: list[str] = []
        self.loops = 0
        self.scope: list[str] = []  # loop variables usable here
        self.atomic = self.pick(COMMUTATIVE_ATOMICS)  # the kernel's one atomic operation

    def pick(self, options: list):  # type: ignore[no-untyped-def]
        return self.draw(st.sampled_from(options))

    def chance(self, p: int) -> bool:
        return self.draw(st.integers(0, 99)) < p

    def leaf(self) -> str:
        options = [*VARS, "t", "p", "CONST", "tid()", "ntid()", *self.scope]
        options += ["ctaid()", "laneid()", "warpid()"]
        choice = self.pick(options)
        if choice == "CONST":
            return str(self.draw(st.integers(-8, 8)))
        return choice

    def expr(self, depth: int = 2) -> str:
        if depth == 0 or self.chance(30):
            return self.leaf()
        kind = self.draw(st.integers(0, 7))
        a, b = self.expr(depth - 1), self.expr(depth - 1)
        if kind <= 2:
            op = self.pick(["+", "-", "*", "//", "%", "&", "|", "^"])
            return f"({a} {op} {b})"
        if kind == 3:
            return f"({a} {self.pick(['<<', '>>'])} ({b} & 7))"
        if kind == 4:
            return self.pick(
                [f"(-{a})", f"(~{a})", f"abs({a})", f"min({a}, {b})", f"max({a}, {b})"]
            )
        if kind == 5:
            return f"data[{a} & 15]"
        if kind == 6:
            return f"({a} if {self.cond(1)} else {b})"
        return f"({a} {self.pick(['<', '<=', '>', '>=', '==', '!='])} {b})"

    def cond(self, depth: int = 2) -> str:
        if depth > 0 and self.chance(25):
            op = self.pick(["and", "or"])
            return f"({self.cond(depth - 1)} {op} {self.cond(depth - 1)})"
        if depth > 0 and self.chance(10):
            return f"not {self.cond(depth - 1)}"
        op = self.pick(["<", "<=", ">", ">=", "==", "!="])
        return f"{self.expr(1)} {op} {self.expr(1)}"

    def emit(self, indent: int, text: str) -> None:
        self.lines.append("    " * indent + text)

    def block(self, indent: int, depth: int, n: int | None = None) -> None:
        count = n if n is not None else self.draw(st.integers(1, 3))
        for _ in range(count):
            self.stmt(indent, depth)

    def stmt(self, indent: int, depth: int) -> None:
        kind = self.draw(st.integers(0, 11 if depth > 0 else 4))
        var = self.pick(VARS)
        if kind <= 1:
            self.emit(indent, f"{var} = {self.expr()}")
        elif kind == 2:
            self.emit(indent, f"{var} {self.pick(['+=', '-=', '*=', '^='])} {self.expr(1)}")
        elif kind == 3:
            self.emit(indent, f"out[g * 4 + {self.draw(st.integers(0, 3))}] = {self.expr(1)}")
        elif kind == 4:
            self.emit(indent, f"atomic_{self.atomic}(acc, {self.expr(1)} & 3, {self.expr(1)})")
        elif kind == 5:
            self.emit(indent, f"{var} = helper({self.expr(1)}, {self.expr(1)})")
        elif kind in (6, 7):
            self.emit(indent, f"if {self.cond()}:")
            self.block(indent + 1, depth - 1)
            if self.chance(50):
                self.emit(indent, "else:")
                self.block(indent + 1, depth - 1)
        elif kind == 8:
            self.loops += 1
            i = f"i{self.loops}"
            lo = self.draw(st.integers(0, 2))
            hi = lo + self.draw(st.integers(0, 3))
            head = f"range({hi}, {lo}, -1)" if self.chance(20) else f"range({lo}, {hi})"
            self.emit(indent, f"for {i} in {head}:")
            self.loop_body(indent + 1, depth, i)
        elif kind == 9:
            self.loops += 1
            w = f"w{self.loops}"
            bound = self.pick(["3", "(v0 & 3)", "(p & 3)", "(t & 3)", "(v1 & 7)"])
            self.emit(indent, f"{w} = 0")
            self.emit(indent, f"while {w} < {bound}:")
            self.emit(indent + 1, f"{w} += 1")
            self.loop_body(indent + 1, depth, w)
        elif kind == 10 and self.scope:
            self.emit(indent, f"if {self.cond(1)}:")
            self.emit(indent + 1, self.pick(["break", "continue"]))
        elif kind == 11 and self.chance(30):
            self.emit(indent, f"if {self.cond(1)}:")
            self.emit(indent + 1, "return")
        else:
            self.emit(indent, f"{var} = {self.expr(1)}")

    def loop_body(self, indent: int, depth: int, var: str) -> None:
        self.scope.append(var)
        self.block(indent, depth - 1)
        self.scope.pop()


@st.composite
def random_kernels(draw: st.DrawFn) -> str:
    gen = _Gen(draw)
    gen.block(1, 3, draw(st.integers(1, 5)))
    barrier = BARRIER if draw(st.booleans()) else ""
    return HEADER + barrier + "\n".join(gen.lines) + "\n" + FOOTER


GEOMETRIES = [Geometry(1, 1), Geometry(4, 4), Geometry(8, 4), Geometry(32, 8)]


def check_random_kernel(source: str, allocator: str, regs: int, geometry: Geometry,
                        grid: int, block: int, seed: int) -> None:  # fmt: skip
    name = f"<random kernel {hashlib.sha1(source.encode()).hexdigest()[:12]}>"
    k = kernels_from_source(source, name)["rk"]
    rng = np.random.default_rng(seed)
    args = {
        "out": np.zeros(4 * grid * block, np.int32),
        "data": rng.integers(-50, 50, 16).astype(np.int32),
        "acc": np.zeros(4, np.int32),
        "p": int(rng.integers(-20, 20)),
    }
    ref = oracle.run(k, args, grid=grid, block=block, warp_size=geometry.warp_size)
    program = compile_kernel(k, allocator, regs)
    launch = program.bind(**args)
    config = launch.config(grid, block, geometry=geometry)
    result, violations, _ = soundness.check(launch, config)
    result.check()
    out = launch.outputs(result)
    for key, expected in ref.items():
        assert np.array_equal(out[key], expected), f"{key}: {out[key]} != {expected}\n{source}"
    assert not violations, "\n".join(map(str, violations[:5])) + "\n" + source


REGRESSIONS = [
    # A call under a divergent condition inside a uniform loop whose counter lives in a shared
    # slot: before the caller moved sp ahead of the jal, the threads that did not call ran the
    # remaining iterations first under min(SP:PC) and advanced the shared counter.
    (
        HEADER
        + """\
    v0 = (v0 + (v0 if v0 < v0 else v0))
    for i1 in range(0, 3):
        if v0 < t:
            v0 = helper((v0 + v3), i1)
"""
        + FOOTER,
        "divergent", 5, Geometry(4, 4), 1, 6, 0,
    ),
    # A gamma whose predicate depended on the gamma itself through the loop (a join found by
    # mere reachability): the values stayed ⊤ and a loop-carried value was called constant.
    (
        HEADER
        + """\
    for i4 in range(0, 3):
        if ((v0 + v0) < (v0 if (v0 + v0) < (v0 + v0) else v0) and (v0 + v0) < (v0 + -8)):
            v0 += data[v0 & 15]
        else:
            v3 = max(data[ntid() & 15], min(v2, i4))
        if ((tid() <= 0) <= (p >> (v3 & 7)) and v3 <= (tid() << (v3 & 7))):
            break
"""
        + FOOTER,
        "remat", 14, Geometry(8, 4), 2, 1, 390,
    ),
    # Phi-joined values in one register, one live across a divergent if (needed by the threads
    # of the else side) and another defined in a loop on the then side: one shared slot for
    # the register let the then side overwrite the else side's value.
    (
        HEADER
        + """\
    v1 = data[(ntid() + -1) & 15]
    if ((v0 < p and (v0 + v0) > (v1 * v0)) and v0 < tid()):
        v0 = v2
        if v0 < v0:
            v0 += v0
        else:
            w1 = 0
            while w1 < 3:
                w1 += 1
                v0 = (v0 + (v0 if not v0 < v0 else v0))
                v1 = p
                v0 = (v0 + v0)
"""
        + FOOTER,
        "affine", 5, Geometry(4, 4), 1, 12, 0,
    ),
]  # fmt: skip


@pytest.mark.parametrize("case", REGRESSIONS, ids=lambda c: f"{c[1]}-{c[2]}")
def test_random_kernel_regressions(case) -> None:  # type: ignore[no-untyped-def]
    check_random_kernel(*case)


common = dict(
    source=random_kernels(),
    allocator=st.sampled_from(regalloc.ALLOCATORS),
    regs=st.integers(5, regalloc.MAX_REGS),
    geometry=st.sampled_from(GEOMETRIES),
    grid=st.integers(1, 2),
    block=st.integers(1, 12),
    seed=st.integers(0, 1000),
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**common)
def test_random_kernels_match_oracle_and_analysis_is_sound(**kw) -> None:  # type: ignore[no-untyped-def]
    check_random_kernel(**kw)


@pytest.mark.slow
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**common)
def test_random_kernels_many(**kw) -> None:  # type: ignore[no-untyped-def]
    check_random_kernel(**kw)
