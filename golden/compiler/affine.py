"""Divergence analysis with affine constraints (seed 004 Sec 3.5, Fig 3.8, Table 3.6), of
degree 1 (the paper's ``a1*T + a0``) and degree 2 (``a2*T^2 + a1*T + a0``, the paper's
default), where ``T`` is the thread index in the block (``tid()``, CSR 0xCC0).

Coefficients live in the lattice ``C``: ``⊤`` (not yet known) above the int32 constants above
``⊥`` (not a compile-time constant), with Table 3.6's meet, sum and product (``0 × ⊥ = 0``). An
abstract state is a tuple of coefficients, highest degree first, met coefficient-wise.

Meaning of a state, for the threads that execute a definition together: a ``⊥`` in the highest
coefficient means nothing is known (the value is *divergent*); otherwise the value is
``Σ a_i T^i`` (mod 2**32) where each ``⊥`` coefficient stands for one value shared by those
threads. So ``0T² + 0T + ⊥`` is uniform, ``0T² + 1T + ⊥`` affine with a statically known slope
(rematerialisable from ``T`` and one uniform value, Fig 4.3 row iv), ``0T² + 1T + 3`` fully
known (row iii).

The rules are those of Fig 3.8 generalised to the degree: TIDA, CNTA, ASGA, SUMA, MLCA/MLVA (the
product polynomial, divergent when a non-zero coefficient exceeds the degree), GBZA/GBNA and
GUZA/GUNA (other operations are uniform on uniform operands, else divergent), LDUA/LDDA, ATMA,
GAMA/ETAA/PDVA (a gamma or eta is divergent when one of its predicates is not uniform) and RMUA
(a mu is the meet of its operands). Extensions, each a consequence of ring arithmetic modulo
2**32: ``x - y`` is ``x + (-1)y``, ``-x`` and ``~x = -x - 1`` are affine, ``x << k`` by a
constant is ``x × 2^k``; ``x == y`` and ``x != y`` are uniform when ``x - y`` is (constant when
``x - y`` is a known constant); ``x < y`` (and ``<=``, ``>``, ``>=``) is uniform when ``x - y``
is uniform: this is the paper's argument for avgSquare's loop (Sec 2.3, ``N - i = (1-1)T +
(c1 - c2)``). It holds over the integers; with int32 wrap-around it needs the compared values
not to wrap between the threads of a warp (docs/compiler.md, "Soundness").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from reconverge.golden.compiler import int32
from reconverge.golden.compiler.gsa import MU
from reconverge.golden.compiler.ir import Const, Function, Instr, Operand, Value


class _Symbol:
    def __init__(self, text: str, name: str) -> None:
        self.text = text
        self.name = name

    def __repr__(self) -> str:
        return self.text


TOP = _Symbol("⊤", "top")
BOT = _Symbol("⊥", "bottom")
Coef = int | _Symbol


# -- the coefficient lattice C (Table 3.6) --------------------------------------------------------


def c_meet(a: Coef, b: Coef) -> Coef:
    if a is TOP:
        return b
    if b is TOP:
        return a
    return a if a == b and a is not BOT else BOT


def c_add(a: Coef, b: Coef) -> Coef:
    if a is TOP or b is TOP:
        return TOP
    if a is BOT or b is BOT:
        return BOT
    return int32.wrap(a + b)  # type: ignore[operator]


def c_mul(a: Coef, b: Coef) -> Coef:
    if a is TOP or b is TOP:
        return TOP
    if a == 0 or b == 0:
        return 0
    if a is BOT or b is BOT:
        return BOT
    return int32.wrap(a * b)  # type: ignore[operator]


@dataclass(frozen=True)
class State:
    """An abstract state ``(a_n, ..., a_1, a_0)``, highest degree first (the paper's tuple
    notation of Fig 3.10)."""

    coefs: tuple[Coef, ...]

    @property
    def degree(self) -> int:
        return len(self.coefs) - 1

    # Constructors
    @classmethod
    def top(cls, degree: int) -> State:
        return cls((TOP,) * (degree + 1))

    @classmethod
    def divergent(cls, degree: int) -> State:
        return cls((BOT,) * (degree + 1))

    @classmethod
    def const(cls, degree: int, value: int) -> State:
        return cls((0,) * degree + (int32.wrap(value),))

    @classmethod
    def uniform(cls, degree: int) -> State:
        return cls((0,) * degree + (BOT,))

    @classmethod
    def tid(cls, degree: int) -> State:
        return cls((0,) * (degree - 1) + (1, 0))

    # Queries
    @property
    def is_top(self) -> bool:
        return any(c is TOP for c in self.coefs)

    @property
    def is_uniform(self) -> bool:
        """Every coefficient of T^i, i >= 1, is exactly 0 (Theorem 2): one value per warp."""
        return all(c == 0 and c is not BOT for c in self.coefs[:-1]) and not self.is_top

    @property
    def constant(self) -> int | None:
        """The value when it is a compile-time constant."""
        a0 = self.coefs[-1]
        return a0 if self.is_uniform and isinstance(a0, int) else None

    @property
    def is_affine(self) -> bool:
        """Not uniform, but ``a1*T + a0`` with one (possibly unknown) ``a1, a0`` per warp
        (Theorem 3): every coefficient above T^1 is 0."""
        return (
            not self.is_top
            and not self.is_uniform
            and self.degree >= 1
            and all(c == 0 and c is not BOT for c in self.coefs[:-2])
            and self.coefs[0] is not BOT
        )

    @property
    def is_divergent(self) -> bool:
        """Neither uniform nor affine (nothing usable is known)."""
        return not (self.is_top or self.is_uniform or self.is_affine)

    @property
    def slope(self) -> int | None:
        """``c`` of an affine ``c*T + a0`` with a known ``c`` (Fig 4.3 rows iii and iv)."""
        a1 = self.coefs[-2] if self.degree >= 1 else None
        return a1 if self.is_affine and isinstance(a1, int) else None

    @property
    def offset(self) -> int | None:
        a0 = self.coefs[-1]
        return a0 if isinstance(a0, int) else None

    def classify(self) -> str:
        """``constant``, ``uniform``, ``affine constant`` (known a1, a0), ``affine``,
        ``divergent`` (Sec 3.6's five classes), or ``undefined`` (⊤: never computed)."""
        if self.is_top:
            return "undefined"
        if self.is_uniform:
            return "constant" if self.constant is not None else "uniform"
        if self.is_affine:
            known = isinstance(self.coefs[-2], int) and isinstance(self.coefs[-1], int)
            return "affine constant" if known else "affine"
        return "divergent"

    # Operations
    def meet(self, other: State) -> State:
        return State(tuple(c_meet(a, b) for a, b in zip(self.coefs, other.coefs, strict=True)))

    def __add__(self, other: State) -> State:
        return State(tuple(c_add(a, b) for a, b in zip(self.coefs, other.coefs, strict=True)))

    def scale(self, k: int) -> State:
        return State(tuple(c_mul(a, int32.wrap(k)) for a in self.coefs))

    def __sub__(self, other: State) -> State:
        return self + other.scale(-1)

    def __mul__(self, other: State) -> State:
        """The product polynomial; divergent when a coefficient above the degree is not 0
        (MLVA), else truncated (MLCA)."""
        n = self.degree
        a, b = self.coefs[::-1], other.coefs[::-1]  # lowest degree first
        prod: list[Coef] = [0] * (2 * n + 1)
        for i, x in enumerate(a):
            for j, y in enumerate(b):
                prod[i + j] = c_add(prod[i + j], c_mul(x, y))
        if any(c is TOP for c in prod):
            return State.top(n)
        if any(c != 0 or c is BOT for c in prod[n + 1 :]):
            return State.divergent(n)
        return State(tuple(prod[: n + 1][::-1]))

    # Notation
    def tuple_text(self) -> str:
        return "(" + ", ".join(map(str, self.coefs)) + ")"

    def __str__(self) -> str:
        """The paper's notation: ``0T² + 1T + ⊥``."""
        terms = []
        for power, c in zip(range(self.degree, -1, -1), self.coefs, strict=True):
            t = "T" + ("²" if power == 2 else f"^{power}" if power > 2 else "") if power else ""
            terms.append(f"{c}{t}")
        return " + ".join(terms)

    def ascii(self) -> str:
        """``a2*T^2 + a1*T + a0`` with ``top``/``bottom`` for ⊤/⊥."""
        terms = []
        for power, c in zip(range(self.degree, -1, -1), self.coefs, strict=True):
            word = c.name if isinstance(c, _Symbol) else str(c)
            terms.append(word + ("*T" + (f"^{power}" if power > 1 else "") if power else ""))
        return " + ".join(terms)

    def to_json(self) -> list[int | str]:
        return [c.name if isinstance(c, _Symbol) else c for c in self.coefs]


# -- the analysis ---------------------------------------------------------------------------------

#: CSRs whose value is the same for every thread of a warp.
UNIFORM_CSRS = frozenset({"ntid", "ctaid", "nctaid", "warpid", "warpsize"})
#: Comparisons decided by the difference of their operands.
ORDERED = frozenset({"lt", "le", "gt", "ge"})


class AffineAnalysis:
    """Fixed point of the constraint system over a function in GSA form."""

    def __init__(self, fn: Function, degree: int = 2) -> None:
        if degree not in (1, 2):
            raise ValueError(f"degree must be 1 or 2, not {degree}")
        self.fn = fn
        self.degree = degree
        self.state: dict[Value, State] = {}

    def of(self, operand: Operand) -> State:
        if isinstance(operand, Const):
            return State.const(self.degree, operand.value)
        return self.state.get(operand, State.top(self.degree))

    def run(self) -> dict[Value, State]:
        """The fixed point, from ⊤ down. A value can only stay ⊤ on a cycle of values waiting
        for each other (a gamma whose predicate depends on the gamma through a loop): every
        value is computed at run time, so ⊤ is no answer; those values are set to ⊥ (nothing
        known) and the fixed point resumed, until none is left."""
        instrs = [i for _, i in self.fn.instructions() if i.dest is not None]
        forced: set[Value] = set()
        while True:
            changed = True
            while changed:
                changed = False
                for ins in instrs:
                    if ins.dest in forced:
                        continue
                    new = self.transfer(ins)
                    if new != self.state.get(ins.dest):  # type: ignore[arg-type]
                        self.state[ins.dest] = new  # type: ignore[index]
                        changed = True
            waiting = [i.dest for i in instrs if self.state[i.dest].is_top]  # type: ignore[index]
            if not waiting:
                return self.state
            first = waiting[0]
            forced.add(first)  # type: ignore[arg-type]
            self.state[first] = State.divergent(self.degree)  # type: ignore[index]

    def transfer(self, ins: Instr) -> State:
        n = self.degree
        op = ins.op
        args = [self.of(a) for a in ins.args]
        if op == "phi":
            return self.phi(ins, args)
        if any(a.is_top for a in args):
            return State.top(n)
        if op == "mov":
            return args[0]  # ASGA / CNTA
        if op == "csr":
            if ins.attr == "tid":
                return State.tid(n)  # TIDA
            return State.uniform(n) if ins.attr in UNIFORM_CSRS else State.divergent(n)
        if op == "param":
            return State.uniform(n) if self.fn.kind == "kernel" else State.divergent(n)
        if op == "load":
            return State.uniform(n) if args[0].is_uniform else State.divergent(n)  # LDUA/LDDA
        if op in ("atomic", "call"):
            return State.divergent(n)  # ATMA; a callee's result is not tracked
        if op == "add":
            return args[0] + args[1]  # SUMA
        if op == "sub":
            return args[0] - args[1]
        if op == "mul":
            return args[0] * args[1]  # MLCA / MLVA
        if op == "neg":
            return args[0].scale(-1)
        if op == "inv":
            return args[0].scale(-1) + State.const(n, -1)
        if op == "shl" and args[1].constant is not None:
            return args[0].scale(1 << (args[1].constant & 31))
        if op in int32.COMPARISONS:
            return self.compare(op, args[0], args[1])
        return self.generic(op, args)

    def generic(self, op: str, args: list[State]) -> State:
        """GBZA / GUZA: uniform operands give a uniform result (folded when constant);
        GBNA / GUNA and the mixed cases: divergent."""
        n = self.degree
        if not all(a.is_uniform for a in args):
            return State.divergent(n)
        values = [a.constant for a in args]
        if any(v is None for v in values):
            return State.uniform(n)
        fn = int32.BINARY[op][1] if len(args) == 2 else int32.UNARY[op][1]
        return State.const(n, fn(*values))  # type: ignore[arg-type]

    def compare(self, op: str, a: State, b: State) -> State:
        n = self.degree
        if a.is_uniform and b.is_uniform:
            return self.generic(op, [a, b])
        diff = a - b
        if not diff.is_uniform:
            return State.divergent(n)
        if op in ("eq", "ne") and diff.constant is not None:
            return State.const(n, int((diff.constant == 0) == (op == "eq")))
        return State.uniform(n)

    def phi(self, ins: Instr, args: list[State]) -> State:
        n = self.degree
        gate = ins.gsa
        if gate is not None and gate.kind != MU:
            preds = [self.of(p) for p in gate.predicates]
            if any(p.is_top for p in preds):
                return State.top(n)
            if not all(p.is_uniform for p in preds):
                return State.divergent(n)  # PDVA
        out = State.top(n)
        for a in args:  # RMUA, GAMA, ETAA
            out = out.meet(a)
        return out


def analyse(fn: Function, degree: int = 2) -> dict[Value, State]:
    """The abstract state of every value of ``fn`` (in GSA form)."""
    return AffineAnalysis(fn, degree).run()


def uniform_values(states: Mapping[Value, State]) -> set[Value]:
    return {v for v, s in states.items() if s.is_uniform}


def format_states(values: Iterable[Value], states: Mapping[Value, State]) -> list[str]:
    return [f"{v!r}: {states[v]}" for v in values if v in states]
