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

from reconverge.golden.blocks.base import Pipelined, Port, PortValue, Values, ceil_log2

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


class Arbiter(Pipelined):
    """Cycle twin of ``reconverge.hdl.blocks.arbiter.Arbiter``.

    Ports: in ``valid`` (N bits), ``key`` (N x key_width); out ``out_valid``, ``min_key``,
    ``mask`` (N bits). Latency: number of register stages (0 when combinational).
    """

    name = "arbiter"

    def __init__(self, n: int, key_width: int, pipeline_every: int = 0) -> None:
        if not 1 <= n <= MAX_INPUTS:
            raise ValueError(f"the arbiter takes 1..{MAX_INPUTS} inputs, not n={n}")
        if not 1 <= key_width <= MAX_KEY_WIDTH:
            raise ValueError(f"key_width must be in 1..{MAX_KEY_WIDTH}, not {key_width}")
        self.n = n
        self.key_width = key_width
        self.pipeline_every = pipeline_every
        self.depth = ceil_log2(n)
        self.levels = register_levels(self.depth, pipeline_every)
        self.latency = len(self.levels)
        self._ports = (
            Port("valid", "in", n),
            Port("key", "in", key_width, n),
            Port("out_valid", "out", 1),
            Port("min_key", "out", key_width),
            Port("mask", "out", n),
        )
        super().__init__()

    @property
    def ports(self) -> tuple[Port, ...]:
        return self._ports

    def compute(self, inputs: Mapping[str, PortValue]) -> Values:
        key, mask, found = reduce(inputs["key"], inputs["valid"])  # type: ignore[arg-type]
        return {"out_valid": int(found), "min_key": key, "mask": mask}
