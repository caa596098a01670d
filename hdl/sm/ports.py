"""The SM's port groups (docs/sm-hardware.md, "Ports of SM"): launch, the line-wide data port,
the issue trace, thread exits and the status. Each is a ``wiring.Signature`` seen from the SM
(``Out`` = driven by the SM); the testbench and the board top flip them."""

from __future__ import annotations

from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from reconverge.golden.blocks.units import sm_unit
from reconverge.golden.faults import FaultCode
from reconverge.golden.params import ARG_REGS, COUNTER, PC_WIDTH, SMParams

#: Request kinds of the data port.
OP_LOAD, OP_STORE, OP_AMO = 0, 1, 2
#: Width of the trace's warp-in-block, and the passes field.
SMALL = 8


def launch_signature() -> wiring.Signature:
    """Launch inputs (as seen by the SM): held for the whole run, ``start`` pulsed once."""
    return wiring.Signature(
        {
            "start": In(1),
            "grid": In(32),
            "block": In(32),
            "entry": In(PC_WIDTH),
            "gp": In(32),
            "args": In(data.ArrayLayout(32, ARG_REGS)),
        }
    )


def memory_signature(params: SMParams) -> wiring.Signature:
    """The line-wide data port (the memory contract of docs/sm-hardware.md)."""
    line = params.config.line_bytes
    return wiring.Signature(
        {
            "req_valid": Out(1),
            "req_ready": In(1),
            "req_addr": Out(32),
            "req_op": Out(2),
            "req_amo": Out(5),
            "req_be": Out(line),
            "req_wdata": Out(8 * line),
            "resp_valid": In(1),
            "resp_rdata": In(8 * line),
        }
    )


def trace_signature(params: SMParams) -> wiring.Signature:
    """One issued warp instruction per cycle (agreement levels 3 and 4)."""
    return wiring.Signature(
        {
            "valid": Out(1),
            "cycle": Out(COUNTER),
            "slot": Out(params.warp_bits),
            "block": Out(32),
            "warp": Out(SMALL),
            "sid": Out(sm_unit(params).sid_bits),
            "pc": Out(PC_WIDTH),
            "mask": Out(params.geometry.warp_size),
            "passes": Out(SMALL),
        }
    )


def exit_signature(params: SMParams) -> wiring.Signature:
    """Threads that executed the exit ``ecall`` (a7 = 93) in this cycle, with their a0."""
    w = params.geometry.warp_size
    return wiring.Signature(
        {
            "valid": Out(1),
            "block": Out(32),
            "warp": Out(SMALL),
            "mask": Out(w),
            "codes": Out(data.ArrayLayout(32, w)),
        }
    )


def status_signature() -> wiring.Signature:
    """Progress, the fault that stopped the SM, and the counters of the run."""
    return wiring.Signature(
        {
            "running": Out(1),
            "done": Out(1),
            "fault": Out(1),
            "fault_code": Out(range(len(FaultCode))),
            "fault_pc": Out(PC_WIDTH),
            "fault_block": Out(32),
            "fault_thread": Out(32),
            "cycles": Out(COUNTER),
            "idle_cycles": Out(COUNTER),
            "transactions": Out(COUNTER),
            "shared_cycles": Out(COUNTER),
            "bank_conflicts": Out(COUNTER),
            "stalls": Out(COUNTER),
        }
    )
