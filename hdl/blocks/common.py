"""Combinational helpers every block uses, defined once: a value as a named signal, an OR
tree, one-hot selection, a multiplexer tree, the first-set priority encoder, one-hot to binary, the
"highest kept" encoder."""

from __future__ import annotations

from collections.abc import Sequence

from amaranth.hdl import Cat, Const, Module, Mux, Signal, Value, ValueCastable


def named(m: Module, name: str, value: Value | ValueCastable | int, width: int = 0) -> Signal:
    """``value`` as a signal called ``name`` (``width`` bits; default the value's own). Amaranth
    lowers an expression again wherever it is used, so a value used more than once is better a
    signal; named signals also keep their names in waveforms and in the Verilog."""
    value = Value.cast(value)
    sig = Signal(width or len(value), name=name)
    m.d.comb += sig.eq(value)
    return sig


def named_all(m: Module, name: str, values: Sequence[Value | int]) -> list[Signal]:
    """Each value as a signal ``name0``, ``name1``, ..."""
    return [named(m, f"{name}{i}", v) for i, v in enumerate(values)]


def any_of(bits: Sequence[Value]) -> Value:
    """OR of the bits (0 for none)."""
    return Cat(*bits).any() if bits else Const(0)


def or_tree(values: Sequence[Value | int], width: int = 1) -> Value:
    """OR of the values as a balanced tree (``Const(0, width)`` for none). Not a chain: the
    logic is the same, but Amaranth recomputes an operator's shape from its operands at every
    use, so its simulator compiles a chain of n operators in O(n^2) (the register file's
    live-value lookup at W = L = 8, a chain of 256: 100 s before the first cycle)."""
    level = [Value.cast(v) for v in values]
    if not level:
        return Const(0, width)
    while len(level) > 1:
        pairs = [a | b for a, b in zip(level[::2], level[1::2], strict=False)]
        level = pairs + level[len(pairs) * 2 :]
    return level[0]


def one_hot(selects: Sequence[Value], values: Sequence[Value | int]) -> Value:
    """The value whose select bit is set (selects one-hot or all zero: then 0), as an OR of
    ANDs: no priority chain."""
    return or_tree([Mux(sel, value, 0) for sel, value in zip(selects, values, strict=True)])


def mux_tree(options: Sequence[Value | int], index: Value) -> Value:
    """``options[index]`` as a tree of two-input multiplexers, one level per bit of ``index``
    (low bit first; an odd option out passes up a level)."""
    level = [Value.cast(o) for o in options]
    for bit in Value.cast(index):
        pairs = [Mux(bit, *reversed(level[i : i + 2])) for i in range(0, len(level) - 1, 2)]
        level = pairs + level[len(pairs) * 2 :]
    return level[0]


def first_set(bits: Sequence[Value]) -> list[Value]:
    """Priority encoder: one-hot of the first set bit (lowest index), all zero when none."""
    out, below = [], Value.cast(0)
    for bit in bits:
        out.append(bit & ~below)
        below = below | bit
    return out


def first_set_named(m: Module, name: str, bits: Sequence[Value]) -> tuple[list[Signal], Signal]:
    """:func:`first_set` with every stage a named signal (``name<i>``, ``name_seen<i>``), and
    whether any bit is set."""
    onehot, seen = [], Value.cast(0)
    for i, bit in enumerate(bits):
        onehot.append(named(m, f"{name}{i}", bit & ~seen))
        seen = named(m, f"{name}_seen{i}", seen | bit)
    return onehot, seen  # type: ignore[return-value]


def encode(onehot: Sequence[Value]) -> Value:
    """The index of the set bit of a one-hot vector (0 when none)."""
    return one_hot(onehot, list(range(len(onehot))))


def highest_kept(m: Module, keep: Sequence[Value], width: int, name: str = "kept_depth") -> Signal:
    """1 + the highest index whose ``keep`` bit is set, 0 when none: the depth of a stack left
    after popping every entry above the highest one that stays."""
    depth = Value.cast(0)
    for i, k in enumerate(keep):
        depth = Mux(k, i + 1, depth)
    return named(m, name, depth, width)
