"""Glue between a block's parameter dataclass and an Amaranth component: the component's nested
``wiring.Signature`` is built from :attr:`reconverge.golden.blocks.base.BlockParams.ports`,
the same port tree the golden twin flattens, so the HDL block and its twin share one port
vocabulary by construction (a group ``g`` with member ``m`` is ``self.g.m`` in Amaranth and
the Verilog port / twin port ``g__m``)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import reduce
from typing import Any

from amaranth.hdl import Module, Signal, Value, unsigned
from amaranth.lib import data, wiring

from reconverge.golden.blocks.base import SEP, BlockParams, Group, Port, PortTree, PortValue


def port_shape(port: Port) -> Any:
    """``unsigned(width)`` for a bit vector, an ``ArrayLayout`` for an array port."""
    if port.count is None:
        return unsigned(port.width)
    return data.ArrayLayout(unsigned(port.width), port.count)


def signature(tree: PortTree) -> wiring.Signature:
    """The nested signature of a port tree: a group is an ``Out`` member holding its own
    signature, whose members keep their directions."""
    members: dict[str, wiring.Member] = {}
    for item in tree:
        if isinstance(item, Group):
            members[item.name] = wiring.Out(signature(item.members))
        else:
            direction = wiring.In if item.direction == "in" else wiring.Out
            members[item.name] = direction(port_shape(item))
    return wiring.Signature(members)


class BlockComponent(wiring.Component):
    """An HDL block built from its parameter dataclass (``self.params``), whose port tree gives
    this component's signature."""

    def __init__(self, params: BlockParams) -> None:
        self.params = params
        super().__init__(signature(params.ports))

    def port(self, name: str) -> Value:
        """The port with the flat name ``name`` (``group__member``) as a value."""
        return Value.cast(reduce(getattr, name.split(SEP), self))


def drive_outputs(
    m: Module,
    block: BlockComponent,
    values: Mapping[str, Value],
    stages: int,
    init: Mapping[str, PortValue],
) -> None:
    """Drive every output port of ``block`` from ``values`` (by flat name) through ``stages``
    register stages, each initialised to ``init`` (the golden twin's idle outputs, so that
    reset agrees with the twin)."""
    for p in block.params.out_ports():
        value = values[p.name]
        for s in range(stages):
            reg = Signal(p.bits, init=p.pack(init[p.name]), name=f"{p.name}_q{s}")
            m.d.sync += reg.eq(value)
            value = reg
        m.d.comb += block.port(p.name).eq(value)
