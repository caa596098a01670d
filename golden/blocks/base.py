"""The convention every golden block twin follows (see docs/hdl.md, "Golden twins").

A block is described once, by a frozen **parameter dataclass** (:class:`BlockParams`) next to
its golden twin: it validates itself (a ValueError names the parameter), derives the widths
and declares the ports as a tree of :class:`Port` s in named :class:`Group` s. The golden
twin and the HDL component are both built from one params object, so they cannot drift
apart: the HDL component's nested ``wiring.Signature`` is built from :attr:`BlockParams.ports`
(``reconverge.hdl.blocks.ports.signature``) and the twin's flat port list from the same tree
(:func:`flatten`), named as Amaranth names the Verilog ports (``group__member``).

A golden twin is a pure-Python model of one HDL block with the *same ports* and the *same
cycle behaviour*:

- :attr:`Block.ports` lists the flat ports (:class:`Port`: name, direction, element width,
  element count).
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

import enum
import typing
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from typing import Any, ClassVar, Literal, Self

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


@dataclass(frozen=True)
class Group:
    """A named group of ports (and groups) that belong together: an HDL component has one
    nested ``wiring.Signature`` member per group, whose members become Verilog ports named
    ``group__member``; each member keeps its own direction."""

    name: str
    members: tuple[Port | Group, ...]


#: The ports of a block as declared: ports and groups of ports.
PortTree = tuple[Port | Group, ...]

#: Separator of group and member in a flat port name (Amaranth's Verilog port names).
SEP = "__"


def flatten(tree: PortTree, prefix: str = "") -> tuple[Port, ...]:
    """The ports of ``tree`` with their flat names (``group__member``), in declaration order."""

    def walk(items: PortTree, prefix: str) -> Iterator[Port]:
        for item in items:
            if isinstance(item, Group):
                yield from walk(item.members, f"{prefix}{item.name}{SEP}")
            else:
                yield replace(item, name=prefix + item.name)

    return tuple(walk(tree, prefix))


def param(default: Any, help: str) -> Any:
    """A parameter field of a :class:`BlockParams` dataclass with its help text (what
    ``reconverge verilog --help`` lists)."""
    return field(default=default, metadata={"help": help})


def check_range(name: str, value: int, low: int, high: int, what: str = "") -> None:
    """ValueError naming the parameter unless ``low <= value <= high``."""
    if not low <= value <= high:
        raise ValueError(f"{name} must be in {low}..{high}{what}, not {value}")


class BlockParams:
    """Base of the frozen parameter dataclasses, one per block (``@dataclass(frozen=True)``
    subclasses whose fields are the parameters, each declared with :func:`param`).

    A subclass sets :attr:`name` (the registry name shared with the HDL block and the CLI),
    implements :meth:`validate` (ValueError naming the parameter), :attr:`ports` (the port
    tree) and :attr:`latency`, and :meth:`twin` (its golden twin). Field types are ``int``,
    ``bool`` or an ``enum.Enum``; :meth:`parse` reads them from the command line's strings."""

    name: ClassVar[str]

    def __post_init__(self) -> None:
        for f, kind in self.field_types().items():
            value = getattr(self, f)
            ok = (
                isinstance(value, kind)
                if kind is not int
                else isinstance(value, int) and not isinstance(value, bool)
            )
            if not ok:
                raise ValueError(f"{self.name}: {f}={value!r} is not {_type_name(kind)}")
        self.validate()

    def validate(self) -> None:
        """Raise ValueError naming the parameter that is out of range."""

    @property
    def ports(self) -> PortTree:
        raise NotImplementedError

    @property
    def latency(self) -> int:
        """Clock edges from an input to the outputs it changes (0: combinational)."""
        raise NotImplementedError

    def twin(self) -> Block:
        """A fresh golden twin with these parameters."""
        raise NotImplementedError

    # -- derived from the port tree --------------------------------------------------------------

    @cached_property
    def flat_ports(self) -> tuple[Port, ...]:
        return flatten(self.ports)

    def in_ports(self) -> tuple[Port, ...]:
        return tuple(p for p in self.flat_ports if p.direction == "in")

    def out_ports(self) -> tuple[Port, ...]:
        return tuple(p for p in self.flat_ports if p.direction == "out")

    def idle_inputs(self) -> Values:
        """Every input port at zero."""
        return {p.name: p.zero() for p in self.in_ports()}

    # -- the parameters as values --------------------------------------------------------------

    @classmethod
    def field_types(cls) -> dict[str, type]:
        hints = typing.get_type_hints(cls)
        return {f.name: hints[f.name] for f in fields(cls)}  # type: ignore[arg-type]

    @classmethod
    def help(cls) -> dict[str, str]:
        """Each parameter's help text."""
        return {f.name: f.metadata.get("help", "") for f in fields(cls)}  # type: ignore[arg-type]

    def values(self) -> dict[str, int | str]:
        """The parameters as the command line spells them (bool 0/1, an enum by its value):
        JSON-able, and :meth:`parse` reads them back."""
        out: dict[str, int | str] = {}
        for f in self.field_types():
            value = getattr(self, f)
            out[f] = value.value if isinstance(value, enum.Enum) else int(value)
        return out

    @classmethod
    def parse(cls, values: Mapping[str, object]) -> Self:
        """Parameters from ``values`` (strings as given on the command line, or the values of
        :meth:`values`); the others keep their defaults. ValueError names a bad one."""
        types = cls.field_types()
        kwargs = {}
        for key, raw in values.items():
            if key not in types:
                raise ValueError(
                    f"{cls.name}: no parameter {key!r}; parameters: {', '.join(types)}"
                )
            kwargs[key] = _convert(key, types[key], raw)
        return cls(**kwargs)

    def label(self) -> str:
        """A short name of the parameter set (test ids, build directories)."""
        return "-".join(f"{k}{v}" for k, v in self.values().items())

    def describe(self) -> str:
        return ", ".join(f"{k}={v}" for k, v in self.values().items())


def _type_name(kind: type) -> str:
    if issubclass(kind, enum.Enum):
        return "one of " + ", ".join(str(m.value) for m in kind)
    return {bool: "0 or 1", int: "an integer"}.get(kind, kind.__name__)


def _convert(key: str, kind: type, raw: object) -> object:
    """``raw`` (a string from the command line, or a value) as a ``kind`` parameter."""
    text = str(raw).strip().lower() if isinstance(raw, str) else None
    try:
        if issubclass(kind, enum.Enum):
            return raw if isinstance(raw, kind) else kind(text if text is not None else raw)
        if kind is bool:
            if isinstance(raw, bool):
                return raw
            value = {"0": 0, "1": 1, "false": 0, "true": 1}.get(text, -1) if text else raw
            if value not in (0, 1):
                raise ValueError
            return bool(value)
        return int(text, 0) if text is not None else int(raw)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        raise ValueError(f"{key}={raw!r} is not {_type_name(kind)}") from None


class Block(ABC):
    """Base class of the golden twins (the convention is in the module docstring): built from
    its :class:`BlockParams`, whose port tree gives :attr:`ports`."""

    def __init__(self, params: BlockParams) -> None:
        self.params = params

    @property
    def name(self) -> str:
        """Registry name shared with the HDL block (``reconverge verilog NAME``)."""
        return self.params.name

    @property
    def ports(self) -> tuple[Port, ...]:
        return self.params.flat_ports

    @property
    def latency(self) -> int:
        return self.params.latency

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
        return self.params.in_ports()

    def out_ports(self) -> tuple[Port, ...]:
        return self.params.out_ports()

    def idle_inputs(self) -> Values:
        """Every input port at zero."""
        return self.params.idle_inputs()

    def check_inputs(self, inputs: Mapping[str, PortValue]) -> None:
        """Raise ValueError unless ``inputs`` has exactly the input ports, each in range."""
        names = {p.name for p in self.in_ports()}
        if set(inputs) != names:
            raise ValueError(f"{self.name}: inputs {sorted(inputs)}, expected {sorted(names)}")
        for p in self.in_ports():
            p.pack(inputs[p.name])


class Pipelined(Block):
    """A block whose outputs are ``compute(inputs)`` delayed by :attr:`latency` clock edges
    (0 = combinational, the params' latency). Subclasses implement :meth:`compute`."""

    def __init__(self, params: BlockParams) -> None:
        super().__init__(params)
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
