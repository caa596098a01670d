"""The SM with its program and data in block RAM: what ``reconverge verilog sm`` generates for a
synthesis flow or a board (docs/sm-hardware.md).

After reset the system starts the launch it was built for: the instruction store holds the
program (word and RPC of every instruction, ``golden.sm.program.Program.store``), global memory
is a line-wide block RAM initialised from the image, local memory a second one. The memory
controller answers the SM's data port: a load or store in one cycle (the response the next
cycle), an AMO in two (read, then write the new words while the SM waits one cycle:
``req_ready`` low). Outputs: ``done``, ``fault`` and its ``code``, and ``passed`` — done, no
fault, and every thread exited with code 0 — for the LEDs of a board.
"""

from __future__ import annotations

from collections.abc import Sequence

from amaranth.hdl import Cat, Module, Mux, Signal
from amaranth.lib import memory, wiring
from amaranth.lib.wiring import Out

from reconverge.golden.faults import FaultCode
from reconverge.golden.image import Image
from reconverge.golden.memmap import GLOBAL_BASE
from reconverge.golden.params import ARG_REGS, SMParams
from reconverge.golden.sm.program import Program
from reconverge.hdl.sm.lsu import amo_word
from reconverge.hdl.sm.ports import OP_AMO, OP_STORE
from reconverge.hdl.sm.top import SM


def _lines(image: Image, base: int, size: int, line_bytes: int) -> list[int]:
    """The image's bytes in ``[base, base + size)`` as little-endian line words."""
    data = bytearray(size)
    for seg in image.segments:
        lo, hi = max(seg.vaddr, base), min(seg.vaddr + len(seg.data), base + size)
        if lo < hi:
            data[lo - base : hi - base] = seg.data[lo - seg.vaddr : hi - seg.vaddr]
    return [int.from_bytes(data[i : i + line_bytes], "little") for i in range(0, size, line_bytes)]


class SMSystem(wiring.Component):
    """``params``' SM running ``image`` over ``grid`` x ``block`` threads with ``args``."""

    def __init__(
        self,
        params: SMParams,
        image: Image,
        grid: int,
        block: int,
        args: Sequence[int] = (),
    ) -> None:
        if len(args) > ARG_REGS:
            raise ValueError(f"at most {ARG_REGS} arguments, not {len(args)}")
        self.params = params
        self.image = image
        self.grid, self.block, self.args = grid, block, tuple(args)
        super().__init__(
            {
                "done": Out(1),
                "fault": Out(1),
                "code": Out(range(len(FaultCode))),
                "passed": Out(1),
            }
        )

    def elaborate(self, platform: object) -> Module:
        m = Module()
        p = self.params
        line = p.config.line_bytes
        program = Program(self.image)
        m.submodules.sm = sm = SM(p, program.store(p.imem_words))
        # launch after reset
        started = Signal()
        m.d.sync += started.eq(1)
        gp = self.image.symbols.get("__global_pointer$", 0)
        m.d.comb += [
            sm.launch.start.eq(~started),
            sm.launch.grid.eq(self.grid),
            sm.launch.block.eq(self.block),
            sm.launch.entry.eq(self.image.entry),
            sm.launch.gp.eq(gp),
        ]
        for i, arg in enumerate(self.args):
            m.d.comb += sm.launch.args[i].eq(arg & 0xFFFF_FFFF)
        # global and local memory: line-wide block RAMs
        glob = memory.Memory(
            shape=8 * line,
            depth=p.memmap.global_size // line,
            init=_lines(self.image, GLOBAL_BASE, p.memmap.global_size, line),
        )
        local_bytes = p.geometry.warps * p.geometry.warp_size * p.memmap.local_size
        loc = memory.Memory(shape=8 * line, depth=max(local_bytes // line, 1), init=[])
        m.submodules.global_memory, m.submodules.local_memory = glob, loc
        self.global_memory = glob  # for tests and inspection
        self._controller(m, sm, glob, loc)
        # status
        nonzero = Signal()
        with m.If(sm.exit.valid):
            for t in range(p.geometry.warp_size):
                with m.If(sm.exit.mask[t] & (sm.exit.codes[t] != 0)):
                    m.d.sync += nonzero.eq(1)
        m.d.comb += [
            self.done.eq(sm.status.done),
            self.fault.eq(sm.status.fault),
            self.code.eq(sm.status.fault_code),
            self.passed.eq(sm.status.done & ~sm.status.fault & ~nonzero),
        ]
        return m

    def _controller(
        self, m: Module, sm: SM, glob: memory.Memory, loc: memory.Memory
    ) -> None:  # fmt: skip
        """Loads and stores in a cycle, AMOs in two (the write of the new words holds the port)."""
        p = self.params
        line = p.config.line_bytes
        req = sm.mem
        amo_write = Signal()  # second cycle of an AMO: the port is busy
        is_global = req.req_addr >= GLOBAL_BASE
        index = Signal(32)
        m.d.comb += index.eq(Mux(is_global, req.req_addr - GLOBAL_BASE, req.req_addr) // line)
        accept = Signal()
        m.d.comb += [req.req_ready.eq(~amo_write), accept.eq(req.req_valid & ~amo_write)]
        reads, writes = {}, {}
        for name, mem in (("global", glob), ("local", loc)):
            reads[name] = mem.read_port(domain="sync")
            writes[name] = mem.write_port(granularity=8)
        # the request of the previous cycle (responses come then)
        was = Signal(3)  # valid, global, amo
        last_index = Signal(32)
        last_wdata = Signal(8 * line)
        last_be = Signal(line)
        last_amo = Signal(5)
        m.d.sync += [
            was.eq(Cat(accept, is_global, accept & (req.req_op == OP_AMO))),
            last_index.eq(index),
            last_wdata.eq(req.req_wdata),
            last_be.eq(req.req_be),
            last_amo.eq(req.req_amo),
            amo_write.eq(accept & (req.req_op == OP_AMO)),
        ]
        old = Signal(8 * line)
        m.d.comb += old.eq(Mux(was[1], reads["global"].data, reads["local"].data))
        new = Signal(8 * line)
        for wd in range(line // 4):
            old_word, operand = old.word_select(wd, 32), last_wdata.word_select(wd, 32)
            m.d.comb += new.word_select(wd, 32).eq(amo_word(last_amo, old_word, operand))
        for name, flag in (("global", is_global), ("local", ~is_global)):
            rd, wr = reads[name], writes[name]
            m.d.comb += rd.addr.eq(index)
            store = accept & (req.req_op == OP_STORE) & flag
            amo_done = amo_write & (was[1] if name == "global" else ~was[1])
            m.d.comb += [
                wr.addr.eq(Mux(amo_write, last_index, index)),
                wr.data.eq(Mux(amo_write, new, req.req_wdata)),
                wr.en.eq(Mux(amo_write, Mux(amo_done, last_be, 0), Mux(store, req.req_be, 0))),
            ]
        m.d.comb += [req.resp_valid.eq(was[0]), req.resp_rdata.eq(old)]
