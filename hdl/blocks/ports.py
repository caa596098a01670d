"""Glue between a golden twin's port list and an Amaranth component: the component's
``wiring.Signature`` is derived from :attr:`reconverge.golden.blocks.Block.ports`, so the HDL
block and its golden twin share one port vocabulary by construction."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from amaranth.hdl import Module, Signal, Value, unsigned
from amaranth.lib import data, wiring

from reconverge.golden.blocks.base import Block, Pipelined, Port


def port_shape(port: Port) -> Any:
    """``unsigned(width)`` for a bit vector, an ``ArrayLayout`` for an array port."""
    if port.count is None:
        return unsigned(port.width)
    return data.ArrayLayout(unsigned(port.width), port.count)


def signature(ports: Iterable[Port]) -> wiring.Signature:
    return wiring.Signature(
        {p.name: (wiring.In if p.direction == "in" else wiring.Out)(port_shape(p)) for p in ports}
    )


class BlockComponent(wiring.Component):
    """An HDL block described by its golden twin: ``twin()`` builds a fresh golden model with
    the same parameters, whose ports give this component's signature."""

    def __init__(self, twin: Callable[[], Block]) -> None:
        self.twin = twin
        self.model = twin()
        super().__init__(signature(self.model.ports))


def drive_outputs(m: Module, block: BlockComponent, values: dict[str, Value], stages: int) -> None:
    """Drive every output port of ``block`` from ``values`` through ``stages`` register stages,
    each initialised to the golden twin's idle outputs (so reset agrees with the twin)."""
    model = block.model
    idle = model.idle_outputs() if isinstance(model, Pipelined) else {}
    for p in model.out_ports():
        value = values[p.name]
        for s in range(stages):
            reg = Signal(p.bits, init=p.pack(idle[p.name]), name=f"{p.name}_q{s}")
            m.d.sync += reg.eq(value)
            value = reg
        m.d.comb += Value.cast(getattr(block, p.name)).eq(value)
