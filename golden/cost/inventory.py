"""The vocabulary of the analytical area model (docs/area.md, "The model"): a unit's logic as
counts of a few bit-level primitives, read from the geometry and configuration alone.

A :class:`Inventory` holds, per named part of a unit (a block's tables, comparators, select
logic, pipeline registers, ...), how many of each :class:`Kind` the part has. The counts follow
the HDL's structure (one flip-flop per stored bit, one comparator bit per compared bit, an
n-way selection of w bits as (n - 1) w two-input multiplexer bits) without knowing how a tool
maps them; :mod:`reconverge.golden.cost.model` turns counts into transistors and ECP5 LUT4s
with coefficients fitted once to Yosys runs."""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field


class Kind(enum.StrEnum):
    """A bit-level primitive of the model."""

    FF = "ff"  # a flip-flop: one stored bit, with its load enable or reset
    MUX = "mux"  # a two-input multiplexer bit; an n-way selection of w bits is (n - 1) w
    GATE = "gate"  # a two-input AND/OR bit: masking, and n - 1 of them per n-input reduction
    EQ = "eq"  # one bit of an equality comparison (an XNOR and its share of the AND tree)
    ADD = "add"  # one bit of a carry chain: adder, subtractor, incrementer, magnitude compare
    MUL = "mul"  # a partial-product bit of a multiplier (w x w bits: w * w)
    RAM = "ram"  # one bit of a memory (register file, stores): not logic, listed apart


#: Kinds counted as logic (cells / LUTs); RAM bits are a memory's, outside the cell counts.
LOGIC = tuple(k for k in Kind if k is not Kind.RAM)


def log2(n: int) -> int:
    """Bits of an index over ``n`` items (at least 1), as ``Signal(range(n))`` gives."""
    return max(1, (n - 1).bit_length())


def select(ways: int, width: int) -> int:
    """Two-input multiplexer bits of a ``ways``-to-1 selection of ``width`` bits."""
    return max(0, ways - 1) * width


def pick(ways: int, width: int) -> int:
    """Multiplexer bits of a parallel ``ways``-to-1 selection of ``width`` bits by a decoded
    index: an Amaranth ``Array`` read by a signal is one AND-OR term per way (one for a single
    way too, as the HDL writes it; synthesis removes that one)."""
    return ways * width


def reduce(inputs: int) -> int:
    """Two-input gates of an ``inputs``-wide AND/OR reduction."""
    return max(0, inputs - 1)


def decode(bits: int, outputs: int | None = None) -> int:
    """Two-input gates of ``outputs`` (all ``2**bits`` by default) equalities of one
    ``bits``-bit value with distinct constants: no XNOR (a constant picks each bit or its
    complement), so each is an AND over the bits; with many of them, a decoder (two
    predecoders of half the bits each, one AND per line), whichever is smaller. (Yosys generic
    gates, this repository's flow: 12 cells for 3 -> 8, 24 for 4 -> 16, 56 for 5 -> 32; this
    counts 12, 24 and 52.)"""
    lines = 2**bits if outputs is None else outputs
    high = (bits + 1) // 2
    low = bits - high
    predecoded = lines * (low > 0) + 2**high * reduce(high) + 2**low * reduce(low)
    return min(lines * reduce(bits), predecoded)


@dataclass
class Inventory:
    """Primitive counts per part: ``parts[name][kind]``."""

    parts: dict[str, Counter[Kind]] = field(default_factory=dict)

    def add(self, part: str, **counts: int) -> Inventory:
        """Add counts (keyword = :class:`Kind` value) to ``part``; returns self."""
        bucket = self.parts.setdefault(part, Counter())
        for name, n in counts.items():
            if n < 0:
                raise ValueError(f"{part}: negative count {name}={n}")
            bucket[Kind(name)] += n
        return self

    def include(self, other: Inventory, prefix: str = "") -> Inventory:
        """Add every part of ``other`` (renamed ``prefix/part`` when a prefix is given)."""
        for name, counts in other.parts.items():
            self.parts.setdefault(f"{prefix}/{name}" if prefix else name, Counter()).update(counts)
        return self

    def total(self, parts: Iterable[str] | None = None) -> Counter[Kind]:
        out: Counter[Kind] = Counter()
        for name in self.parts if parts is None else parts:
            out.update(self.parts[name])
        return out

    def groups(self) -> Iterator[tuple[str, Counter[Kind]]]:
        """The top-level groups (the part names before their first ``/``) and their totals."""
        tops: dict[str, Counter[Kind]] = {}
        for name, counts in self.parts.items():
            tops.setdefault(name.split("/", 1)[0], Counter()).update(counts)
        yield from tops.items()

    def json(self) -> dict[str, dict[str, int]]:
        return {p: {k.value: n for k, n in sorted(c.items()) if n} for p, c in self.parts.items()}

    @classmethod
    def of(cls, parts: Mapping[str, Mapping[str, int]]) -> Inventory:
        inv = cls()
        for name, counts in parts.items():
            inv.add(name, **counts)
        return inv
