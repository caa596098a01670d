"""Unified PC/memory arbiter: a min-reduction tree over N (valid, key) inputs (seed 000
Sec 4.1-4.3, Fig 4b).

Outputs the minimum key over the valid inputs, the OR of the valid bits, and the mask of the
valid inputs whose key equals the minimum. The same tree serves two modes:

- PC mode (Sec 4.1): input *i* is thread *i*, valid = thread enabled, key = SP:PC
  (:func:`pc_key`); the minimum is the common PC and the mask is the new active mask.
- memory mode (Sec 4.2): input *i* is a lane, valid = the lane requests memory, key = the
  cache-line number of its address (:func:`line_key`); the mask is the set of lanes served in
  this pass, the others replay (:func:`coalesce` runs the passes).

When no input is valid the key output is 0 and the mask is empty. The HDL carries each
subtree's mask up the tree and may put a register stage after every ``pipeline_every``
levels (:func:`register_levels`); the golden twin only needs the resulting latency.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from reconverge.golden.blocks.base import (
    BlockParams,
    Pipelined,
    Port,
    PortTree,
    PortValue,
    Values,
    check_range,
    param,
)
from reconverge.golden.geometry import Geometry, ceil_log2

MAX_INPUTS = 1024
MAX_KEY_WIDTH = 128


def reduce(keys: Sequence[int], valid: int) -> tuple[int, int, bool]:
    """(minimum key over the valid inputs, mask of the valid inputs holding it, any valid).

    ``valid`` and the returned mask are bit masks: bit *i* is input *i*. With no valid input
    the result is ``(0, 0, False)``.
    """
    best = -1
    for i, key in enumerate(keys):
        if valid >> i & 1 and (best < 0 or key < best):
            best = key
    if best < 0:
        return 0, 0, False
    mask = 0
    for i, key in enumerate(keys):
        if key == best and valid >> i & 1:
            mask |= 1 << i
    return best, mask, True


def pc_key(sp: int, pc: int, pc_width: int) -> int:
    """The PC-mode key SP:PC (seed 000 Sec 3: deepest call level first, then lowest PC)."""
    if not 0 <= pc < 1 << pc_width:
        raise ValueError(f"PC {pc:#x} does not fit {pc_width} bits")
    return sp << pc_width | pc


def line_key(address: int, line_bytes: int) -> int:
    """The memory-mode key: the cache-line number of a byte address."""
    if line_bytes < 1 or line_bytes & (line_bytes - 1):
        raise ValueError(f"cache line of {line_bytes} bytes is not a power of two")
    return address // line_bytes


def coalesce(keys: Sequence[int], valid: int) -> list[tuple[int, int]]:
    """Memory mode run to completion: one (line, served lanes) per pass, lowest line first;
    the lanes not served replay on the next pass (seed 000 Sec 4.2)."""
    passes = []
    pending = valid
    while pending:
        line, served, _ = reduce(keys, pending)
        passes.append((line, served))
        pending &= ~served
    return passes


def register_levels(depth: int, every: int) -> tuple[int, ...]:
    """Tree levels followed by a register stage: after every ``every`` levels and always at the
    output (level ``depth``); none when ``every`` is 0. A single-input tree (depth 0) with
    pipelining registers its output once."""
    if not 0 <= every <= 64:
        raise ValueError(f"pipeline_every must be 0 (combinational) or in 1..64, not {every}")
    if every == 0:
        return ()
    if depth == 0:
        return (0,)
    return tuple(sorted({min(m * every, depth) for m in range(1, -(-depth // every) + 1)}))


@dataclass(frozen=True)
class ArbiterParams(BlockParams):
    """Parameters of the arbiter tree (seed 000 Fig 4b). Ports: in ``valid`` (N bits), ``key``
    (N x key_width); out ``out_valid``, ``min_key``, ``mask`` (N bits)."""

    name = "arbiter"

    n: int = param(32, "inputs (threads in PC mode, lanes in memory mode)")
    key_width: int = param(32, "key bits (SP:PC, or line address)")
    pipeline_every: int = param(0, "register stage every k tree levels (0 = none)")

    @classmethod
    def of(cls, geometry: Geometry, key_width: int, pipeline_every: int = 0) -> ArbiterParams:
        """The tree over the W threads (PC mode) or lanes' addresses (memory mode) of an SM
        of ``geometry``."""
        return cls(geometry.warp_size, key_width, pipeline_every)

    def validate(self) -> None:
        check_range("n", self.n, 1, MAX_INPUTS, " inputs")
        check_range("key_width", self.key_width, 1, MAX_KEY_WIDTH)
        check_range("pipeline_every", self.pipeline_every, 0, 64, " (0 = combinational)")

    @property
    def depth(self) -> int:
        """Tree levels: ceil(log2 N)."""
        return ceil_log2(self.n)

    @property
    def levels(self) -> tuple[int, ...]:
        """Levels followed by a register stage (:func:`register_levels`)."""
        return register_levels(self.depth, self.pipeline_every)

    @property
    def latency(self) -> int:
        return len(self.levels)

    @property
    def ports(self) -> PortTree:
        n, kw = self.n, self.key_width
        return (
            Port("valid", "in", n),
            Port("key", "in", kw, n),
            Port("out_valid", "out", 1),
            Port("min_key", "out", kw),
            Port("mask", "out", n),
        )

    def twin(self) -> Arbiter:
        return Arbiter(self)


class Arbiter(Pipelined):
    """Cycle twin of ``reconverge.hdl.blocks.arbiter.Arbiter`` (ports: :class:`ArbiterParams`);
    latency: the number of register stages (0 when combinational)."""

    params: ArbiterParams

    def compute(self, inputs: Mapping[str, PortValue]) -> Values:
        key, mask, found = reduce(inputs["key"], inputs["valid"])  # type: ignore[arg-type]
        return {"out_valid": int(found), "min_key": key, "mask": mask}
