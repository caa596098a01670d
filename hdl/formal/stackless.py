"""The stack-less control's properties (seed 000 Sec 3, 4.1-4.3, Table 2;
``hdl/blocks/stackless.py``), over free ``launch``, ``outcome``, ``release`` and ``coalesce``
inputs limited by the interface contract of ``golden.blocks.stackless.StacklessParams``:

* a launch comes alone (no outcome, no release) with a non-empty mask at an instruction's PC
  (aligned, and below the top of the PC space, where PC + 4 would wrap);
* an outcome is the split's while it may issue, from an instruction below the top of the PC
  space: its continuing, exited and waiting lanes are disjoint and together the split's
  threads, the continuing ones at aligned next PCs, every one at PC + 4 unless ``control``;
  the outcome does not write SP (``sp_we`` = 0: with a common SP the key SP:PC orders as the
  PC, the order the properties below state on the thread PCs the block shows);
* a release names the waiting lanes (the barrier completed for all of them), while the
  control is not busy (as an outcome comes only while the split shows).

Rules:

* ``active_is_the_minimum`` (Sec 3, 4.1, Table 2): the split is exactly the runnable threads
  (live, not waiting) at the lowest PC of the runnable threads, at that PC; with no runnable
  thread and the control not busy there is no split. Between arbitrations the local
  increment keeps it so;
* ``tree_is_the_lsus_when_free`` (Sec 4.3): the arbiter tree is the load/store unit's in every
  cycle but the one after an arbitrating update (a control instruction, exit, barrier or
  release: the control's tree clock), and when it is not, the LSU sees no line and no lanes.

* ``split_is_its_registers``: the registers behind the split: while the control is not busy
  the active threads are runnable and at the common PC and no runnable thread is below it;
  it is busy only in an arbitration's tree clock (no SP writes: never a comparison clock);
  every thread keeps the launch's SP, every PC is aligned.

The rules are asserted together (``check.JOINT``), the last one the strengthening the first
needs for k-induction.

Covers: a divergence (a split smaller than the runnable threads), a reconvergence after one
(every live thread in the split again), a release, an LSU cycle on the tree.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from amaranth.hdl import Assert, Assume, Cat, Cover, Module, Value

from reconverge.golden.blocks.stackless import StacklessParams
from reconverge.golden.isa import ILEN_BYTES
from reconverge.hdl.blocks.stackless import Stackless
from reconverge.hdl.formal.check import Claim, Harness, previous, real_pc
from reconverge.hdl.formal.check import harnesses as block_harnesses


@dataclass(frozen=True)
class Seen:
    """What a rule reads: the control, its parameters, and values of the cycle before."""

    dut: Stackless
    params: StacklessParams
    before: dict[str, Value]

    def runnable(self) -> Value:
        status = self.dut.status
        return status.live & ~status.waiting


def contract(m: Module, dut: Stackless, params: StacklessParams, claim: Claim = Assume) -> None:
    """The interface contract of ``golden.blocks.stackless`` (module docstring), each clause
    stated with ``claim``: ``Assume`` for the block's own proof, ``Assert`` where the SM drives
    the block (hdl/formal/sm.py)."""
    launch, out, lanes = dut.launch, dut.outcome, dut.release.lanes
    w = params.warp_size

    def real(pc: Value) -> Value:
        return real_pc(pc, params.pc_width)

    m.d.comb += claim(launch.valid + out.valid + lanes.any() <= 1)
    with m.If(launch.valid):
        m.d.comb += claim((launch.mask != 0) & real(launch.pc))
    m.d.comb += claim(out.sp_we == 0)
    with m.If(out.valid):
        split = dut.splits.mask[0]
        parts = [out.next_mask, out.exited, out.barrier]
        m.d.comb += claim(dut.splits.valid[0] & real(dut.splits.pc[0]))
        m.d.comb += claim((parts[0] | parts[1] | parts[2]) == split)
        m.d.comb += [claim((a & b) == 0) for i, a in enumerate(parts) for b in parts[i + 1 :]]
        after = dut.splits.pc[0] + ILEN_BYTES
        for i in range(w):
            with m.If(out.next_mask[i]):
                pc = out.next_pc[i]
                m.d.comb += claim((pc[:2] == 0) & (out.control | (pc == after)))
    with m.Else():
        m.d.comb += claim((out.exited == 0) & (out.barrier == 0) & (out.next_mask == 0))
    m.d.comb += claim((lanes == 0) | (lanes == dut.status.waiting) & ~dut.status.busy)


def active_is_the_minimum(m: Module, s: Seen) -> None:
    dut, w = s.dut, s.params.warp_size
    runnable = s.runnable()
    pcs = [dut.status.thread_pc[i] for i in range(w)]
    split_pc = dut.splits.pc[0]
    with m.If(dut.splits.valid[0]):
        at_min = Cat(runnable[i] & (pcs[i] == split_pc) for i in range(w))
        m.d.comb += Assert(dut.splits.mask[0] == at_min)
        for i in range(w):
            with m.If(runnable[i]):
                m.d.comb += Assert(split_pc <= pcs[i])
    with m.Elif(~dut.status.busy):
        m.d.comb += Assert(runnable == 0)


def split_is_its_registers(m: Module, s: Seen) -> None:
    dut, w = s.dut, s.params.warp_size
    runnable, settled = dut.live & ~dut.waiting, ~dut.tree_q
    m.d.comb += Assert(~dut.compare_q & (settled | dut.tree_all))
    m.d.comb += Assert(dut.status.busy == dut.tree_q)
    with m.If(settled):
        m.d.comb += Assert((dut.active & ~runnable) == 0)
    for i in range(w):
        m.d.comb += Assert(dut.sp[i] == dut.sp[0])  # no SP writes: the launch's SP
        with m.If(settled & dut.active[i]):
            m.d.comb += Assert((dut.pc[i] == dut.common_pc) & (dut.sp[i] == dut.common_sp))
        with m.If(settled & runnable[i] & (dut.active != 0)):
            m.d.comb += Assert(dut.common_pc <= dut.pc[i])
        m.d.comb += Assert(dut.pc[i][:2] == 0)


def tree_is_the_lsus_when_free(m: Module, s: Seen) -> None:
    co = s.dut.coalesce
    m.d.comb += Assert(co.granted == ~s.before["arbitrates"])
    with m.If(~co.granted):
        m.d.comb += Assert((co.min_key == 0) & (co.mask == 0))


PROPERTIES: dict[str, tuple[Callable[[Module, Seen], None], str]] = {
    "active_is_the_minimum": (active_is_the_minimum, "seed 000 Sec 3, 4.1, Table 2"),
    "tree_is_the_lsus_when_free": (tree_is_the_lsus_when_free, "seed 000 Sec 4.3"),
    "split_is_its_registers": (split_is_its_registers, "hdl/blocks/stackless.py"),
}


def covers(m: Module, s: Seen) -> None:
    dut, before = s.dut, s.before
    runnable = s.runnable()
    split = dut.splits.mask[0]
    m.d.comb += Cover(dut.splits.valid[0] & (split != runnable))
    m.d.comb += Cover((before["split"] != before["live"]) & (split == dut.status.live)
                      & (split != 0))  # fmt: skip
    m.d.comb += Cover((before["waiting"] != 0) & (dut.status.waiting == 0) & (split != 0))
    m.d.comb += Cover(dut.coalesce.granted & (dut.coalesce.mask != 0))


def observe(m: Module, dut: Stackless, params: StacklessParams) -> Seen:
    """What the rules read of the control ``dut``, with its split and threads the cycle
    before."""
    out = dut.outcome
    watched = {
        "arbitrates": dut.release.lanes.any()
        | (out.valid & (out.control | out.exited.any() | out.barrier.any())),
        "split": dut.splits.mask[0],
        "live": dut.status.live,
        "waiting": dut.status.waiting,
    }
    return Seen(dut, params, previous(m, watched))


def harnesses(
    params: StacklessParams, make: Callable[[StacklessParams], Stackless] = Stackless
) -> dict[str, Callable[[], Harness]]:
    """Per property, and for the covers, what builds its formal top; ``make`` builds the block
    (a broken variant, in the tests)."""

    def setup(m: Module) -> tuple[Seen, Sequence[Value]]:
        m.submodules.dut = dut = make(params)
        contract(m, dut, params)
        ports = [dut.port(p.name) for p in params.flat_ports]
        return observe(m, dut, params), ports

    rules = {name: rule for name, (rule, _) in PROPERTIES.items()}
    return block_harnesses(setup, rules, covers, joint=True)
