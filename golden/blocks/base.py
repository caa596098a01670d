"""The convention every golden block twin follows (see docs/hdl.md, "Golden twins").

A golden twin is a pure-Python model of one HDL block with the *same ports* and the *same
cycle behaviour*:

- :attr:`Block.ports` lists the ports (:class:`Port`: name, direction, element width, element
  count). The HDL component's ``wiring.Signature`` is built from this very list
  (``reconverge.hdl.blocks.ports.signature``), so the two vocabularies cannot drift apart.
- A port value is an ``int`` (a bit vector, bit *i* = element *i* for masks) or, for an
  array port, a tuple of ``int`` elements.
- :meth:`Block.outputs` gives the output values during the current cycle: a function of the
  current state and, for combinational paths, of the current inputs. It never changes state.
- :meth:`Block.clock` applies one rising clock edge with the given inputs (the registers take
  their next values). :meth:`Block.reset` applies a synchronous reset (every register back to
  its initial value), which is what one clock edge with ``rst`` high does in the HDL.
- :meth:`Block.step` = ``outputs`` then ``clock``: one whole cycle.

Blocks whose output is a pure function of the inputs seen ``latency`` cycles earlier derive
from :class:`Pipelined` and only define :meth:`Pipelined.compute`. Their registers reset to
what the *idle* inputs (every input port zero) produce, and the HDL initialises its pipeline
registers to the same values, so the two agree from the first cycle after reset.

The functional core of each block (``reduce``, ``squeeze``, ...) is also a plain function of
its module, callable without the cycle machinery.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Literal

PortValue = int | tuple[int, ...]
Values = dict[str, PortValue]


@dataclass(frozen=True)
class Port:
    """One port: ``count`` is None for a plain bit vector of ``width`` bits, else the port is an
    array of ``count`` elements of ``width`` bits each (element 0 in the low bits)."""

    name: str
    direction: Literal["in", "out"]
    width: int
    count: int | None = None

    @property
    def bits(self) -> int:
        return self.width * (1 if self.count is None else self.count)

    def zero(self) -> PortValue:
        return 0 if self.count is None else (0,) * self.count

    def pack(self, value: PortValue) -> int:
        """The port's value as one unsigned integer (its bit pattern on the wire)."""
        if self.count is None:
            if not isinstance(value, int) or not 0 <= value < 1 << self.width:
                raise ValueError(f"port {self.name}: {value!r} does not fit {self.width} bits")
            return value
        if len(value) != self.count:
            raise ValueError(f"port {self.name}: {len(value)} elements, expected {self.count}")
        raw = 0
        for i, element in enumerate(value):
            if not 0 <= element < 1 << self.width:
                raise ValueError(
                    f"port {self.name}[{i}]: {element!r} does not fit {self.width} bits"
                )
            raw |= element << (i * self.width)
        return raw

    def unpack(self, raw: int) -> PortValue:
        """Inverse of :meth:`pack`."""
        if self.count is None:
            return raw
        mask = (1 << self.width) - 1
        return tuple((raw >> (i * self.width)) & mask for i in range(self.count))


class Block(ABC):
    """Base class of the golden twins (the convention is in the module docstring)."""

    #: Registry name shared with the HDL block (``reconverge verilog NAME``).
    name: ClassVar[str]

    @property
    @abstractmethod
    def ports(self) -> tuple[Port, ...]: ...

    @abstractmethod
    def reset(self) -> None: ...

    @abstractmethod
    def outputs(self, inputs: Mapping[str, PortValue]) -> Values: ...

    @abstractmethod
    def clock(self, inputs: Mapping[str, PortValue]) -> None: ...

    def step(self, inputs: Mapping[str, PortValue]) -> Values:
        out = self.outputs(inputs)
        self.clock(inputs)
        return out

    def in_ports(self) -> tuple[Port, ...]:
        return tuple(p for p in self.ports if p.direction == "in")

    def out_ports(self) -> tuple[Port, ...]:
        return tuple(p for p in self.ports if p.direction == "out")

    def idle_inputs(self) -> Values:
        """Every input port at zero."""
        return {p.name: p.zero() for p in self.in_ports()}

    def check_inputs(self, inputs: Mapping[str, PortValue]) -> None:
        """Raise ValueError unless ``inputs`` has exactly the input ports, each in range."""
        names = {p.name for p in self.in_ports()}
        if set(inputs) != names:
            raise ValueError(f"{self.name}: inputs {sorted(inputs)}, expected {sorted(names)}")
        for p in self.in_ports():
            p.pack(inputs[p.name])


class Pipelined(Block):
    """A block whose outputs are ``compute(inputs)`` delayed by :attr:`latency` clock edges
    (0 = combinational). Subclasses set ``latency`` (attribute or property) before
    ``Pipelined.__init__`` runs and implement :meth:`compute`."""

    latency: int

    def __init__(self) -> None:
        self._idle = self.compute(self.idle_inputs())
        self._stages: deque[Values] = deque()
        self.reset()

    @abstractmethod
    def compute(self, inputs: Mapping[str, PortValue]) -> Values:
        """The outputs as a combinational function of the inputs."""

    def idle_outputs(self) -> Values:
        """What the pipeline registers hold after reset: ``compute`` of the idle inputs."""
        return dict(self._idle)

    def reset(self) -> None:
        self._stages = deque([self._idle] * self.latency, maxlen=self.latency or None)

    def outputs(self, inputs: Mapping[str, PortValue]) -> Values:
        if self.latency == 0:
            return self.compute(inputs)
        return dict(self._stages[-1])

    def clock(self, inputs: Mapping[str, PortValue]) -> None:
        if self.latency:
            self._stages.appendleft(self.compute(inputs))


def ceil_log2(n: int) -> int:
    """Levels of a binary reduction tree over ``n`` inputs."""
    return (n - 1).bit_length() if n > 1 else 0


def bits_for(n: int) -> int:
    """Width of an index in ``range(n)`` (at least 1 bit, so no port is zero-width)."""
    return max(1, ceil_log2(n))
