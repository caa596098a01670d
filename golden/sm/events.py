"""The events of a cycle-level run that cost energy (issue 11; docs/energy.md): what the energy
model (:mod:`reconverge.golden.cost.energy`) prices, counted by the SM as it issues.

The issue counters of :class:`~reconverge.golden.sm.metrics.Counters` (warp instructions,
issue passes, memory transactions, shared-memory bank cycles) are events too; this class holds
the ones no metric needs: per thread, the register-file reads and writes and the operation
class of the lanes; per warp instruction, the divergence unit's updates by a control outcome
(a stack push or pop, a split/reconvergence table search and update), the stack-less arbiter
tree's evaluations for a control, the squeezer's, the scoreboard's reservations.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

from reconverge.golden.isa import Instr

#: The lanes' operation classes (each priced per active thread).
OpClass = Literal["alu", "mul", "div", "mem"]

#: The multiplier's and the divider's instructions (their latency classes, docs/architecture.md).
MUL_OPS = frozenset({"mul", "mulh", "mulhsu", "mulhu"})
DIV_OPS = frozenset({"div", "divu", "rem", "remu"})


@dataclass(frozen=True, slots=True)
class Profile:
    """What one thread of an instruction does: registers read, a register written, the lane's
    operation class."""

    reads: int
    writes: int
    op: OpClass


def profile(ins: Instr) -> Profile:
    """The per-thread events of ``ins`` (``ecall`` reads a7 and a0, writes nothing)."""
    spec = ins.spec
    if ins.name == "ecall":
        return Profile(2, 0, "alu")
    reads = (spec.reads_rs1 and ins.rs1 != 0) + (spec.reads_rs2 and ins.rs2 != 0)
    writes = int(spec.writes_rd and ins.rd != 0)
    if spec.is_load or spec.is_store or spec.is_amo:
        op: OpClass = "mem"
    elif ins.name in MUL_OPS:
        op = "mul"
    elif ins.name in DIV_OPS:
        op = "div"
    else:
        op = "alu"
    return Profile(int(reads), writes, op)


@dataclass
class Events:
    """Event counts of one run (the whole SM)."""

    regfile_reads: int = 0  # per thread: source registers read (x0 is no read)
    regfile_writes: int = 0  # per thread: a destination register written
    alu_ops: int = 0  # per thread: integer, branch and CSR operations
    mul_ops: int = 0
    div_ops: int = 0
    lsu_accesses: int = 0  # per thread: addresses through the coalescer
    unit_updates: int = 0  # per warp instruction: a control outcome into the divergence unit
    arbitrations: int = 0  # stack-less: the arbiter tree evaluates min(SP:PC) for a control
    squeezes: int = 0  # hws: an active mask through the squeezer
    reservations: int = 0  # scoreboard entries reserved (a destination register)

    def issue(self, p: Profile, active: int, *, update: bool, squeeze: bool) -> None:
        """Count one warp instruction with the per-thread events ``p`` (:func:`profile`)
        issued with ``active`` threads; ``update``: its outcome changes the divergence unit's
        state (a control, an exit, a barrier)."""
        self.regfile_reads += p.reads * active
        self.regfile_writes += p.writes * active
        if p.op == "alu":
            self.alu_ops += active
        elif p.op == "mul":
            self.mul_ops += active
        elif p.op == "div":
            self.div_ops += active
        else:
            self.lsu_accesses += active
        self.unit_updates += update
        self.squeezes += squeeze
        self.reservations += p.writes

    def to_json(self) -> dict[str, int]:
        return asdict(self)
