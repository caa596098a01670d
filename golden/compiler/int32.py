"""int32 arithmetic with RV32IM semantics on Python ints: the one definition of what the kernel
language's operators compute. The compiler's constant folding, the affine analysis's constant
coefficients and the oracle's :class:`~reconverge.golden.compiler.oracle.I32` all use it, and it
matches what the generated RV32IM instructions do:

* ``+ - *`` wrap modulo 2**32 (``add``, ``sub``, ``mul``);
* ``//`` truncates toward zero (``div``), ``%`` takes the sign of the dividend (``rem``): these
  are C's and RISC-V's operators, not Python's floor division; division by zero gives -1 and
  remainder by zero the dividend, ``-2**31 // -1`` is ``-2**31`` (RISC-V's defined results);
* ``<< >>`` use the low five bits of the shift amount (``sll``, ``sra``), ``>>`` is arithmetic;
* comparisons are signed and give 0 or 1.
"""

from __future__ import annotations

from collections.abc import Callable

MASK = 0xFFFF_FFFF
INT_MIN = -(1 << 31)
INT_MAX = (1 << 31) - 1


def wrap(x: int) -> int:
    """``x`` modulo 2**32 as a signed 32-bit value."""
    x &= MASK
    return x - (1 << 32) if x >> 31 else x


def div(a: int, b: int) -> int:
    if b == 0:
        return -1
    if a == INT_MIN and b == -1:
        return INT_MIN
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def rem(a: int, b: int) -> int:
    if b == 0:
        return a
    if a == INT_MIN and b == -1:
        return 0
    return a - div(a, b) * b


def shl(a: int, b: int) -> int:
    return wrap(a << (b & 31))


def shr(a: int, b: int) -> int:
    return a >> (b & 31)


#: Binary operators of the IR by name: (Python operator text, function on signed int32 values).
BINARY: dict[str, tuple[str, Callable[[int, int], int]]] = {
    "add": ("+", lambda a, b: wrap(a + b)),
    "sub": ("-", lambda a, b: wrap(a - b)),
    "mul": ("*", lambda a, b: wrap(a * b)),
    "div": ("//", div),
    "rem": ("%", rem),
    "and": ("&", lambda a, b: a & b),
    "or": ("|", lambda a, b: a | b),
    "xor": ("^", lambda a, b: a ^ b),
    "shl": ("<<", shl),
    "shr": (">>", shr),
    "lt": ("<", lambda a, b: int(a < b)),
    "le": ("<=", lambda a, b: int(a <= b)),
    "gt": (">", lambda a, b: int(a > b)),
    "ge": (">=", lambda a, b: int(a >= b)),
    "eq": ("==", lambda a, b: int(a == b)),
    "ne": ("!=", lambda a, b: int(a != b)),
    "min": ("min", min),
    "max": ("max", max),
}

#: Unary operators: ``neg`` (-x), ``inv`` (~x), ``lnot`` (not x), ``abs``.
UNARY: dict[str, tuple[str, Callable[[int], int]]] = {
    "neg": ("-", lambda a: wrap(-a)),
    "inv": ("~", lambda a: ~a),
    "lnot": ("not", lambda a: int(a == 0)),
    "abs": ("abs", lambda a: wrap(abs(a))),
}

COMPARISONS = frozenset({"lt", "le", "gt", "ge", "eq", "ne"})
