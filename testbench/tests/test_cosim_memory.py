"""The testbench's memory behind the SM's data port, held to golden's memory semantics: a
coalesced line request (byte enables, AMO per funct5) leaves global memory as golden's per-lane
stores and AMOs leave it (:class:`reconverge.golden.memory.WarpMemory`), loads return the image,
the physical local lines are a sparse zeroed store, a broken request is an error, and the port
timing (block RAM, or back-pressure) answers every request once, in order, later than it came.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconverge.golden.image import Image, Segment
from reconverge.golden.isa import SPECS, Spec
from reconverge.golden.memmap import GLOBAL_BASE, MemoryMap
from reconverge.golden.memory import GlobalMemory, LocalMemory, SharedMemory, WarpMemory
from reconverge.testbench.memory_model import (
    Backpressure,
    MemoryModel,
    MemoryOp,
    MemoryPort,
    MemoryProtocolError,
    amo_function,
    local_span,
)

MEMMAP = MemoryMap(global_size=1 << 12, shared_size=1 << 10, local_size=1 << 8)
WIDTH = 8
AMOS = [spec for spec in SPECS if spec.amo_op is not None]
DATA = bytes(range(7, 7 + 200))
IMAGE = Image(GLOBAL_BASE, (Segment(GLOBAL_BASE + 64, DATA, 256, "rw"),))


def model(line_bytes: int) -> MemoryModel:
    return MemoryModel(IMAGE, MEMMAP, line_bytes, local_span(MEMMAP, WIDTH, warps=2))


def golden_warp() -> tuple[WarpMemory, GlobalMemory]:
    memory = GlobalMemory(MEMMAP)
    memory.load_image(IMAGE)
    warp = WarpMemory(
        memory, SharedMemory(MEMMAP), LocalMemory(WIDTH, MEMMAP), block=0, first_thread=0
    )
    return warp, memory


line_sizes = st.sampled_from([4, 16, 32, 64, 128])


@given(line_bytes=line_sizes, line=st.integers(0, 31))
def test_load_returns_the_image_line(line_bytes: int, line: int) -> None:
    """A load returns the line as the image placed it (zero-filled past the file data)."""
    m = model(line_bytes)
    addr = GLOBAL_BASE + line * line_bytes
    golden = GlobalMemory(MEMMAP)
    golden.load_image(IMAGE)
    expect = int.from_bytes(golden.read_bytes(addr, line_bytes), "little")
    assert m.access(MemoryOp.LOAD, addr) == expect


@st.composite
def lane_stores(draw: st.DrawFn) -> tuple[int, int, list[tuple[int, int]]]:
    """A store instruction's lanes within one line: (line bytes, size, [(offset, value)])."""
    line_bytes = draw(line_sizes)
    size = draw(st.sampled_from([s for s in (1, 2, 4) if s <= line_bytes]))
    lanes = draw(
        st.lists(
            st.tuples(st.integers(0, line_bytes // size - 1), st.integers(0, 0xFFFF_FFFF)),
            min_size=1,
            max_size=WIDTH,
        )
    )
    return line_bytes, size, [(slot * size, value) for slot, value in lanes]


@given(store=lane_stores(), line=st.integers(0, 31))
def test_store_with_byte_enables_is_golden_store(
    store: tuple[int, int, list[tuple[int, int]]], line: int
) -> None:
    """The lanes of a store coalesced into one line request (byte enables; where lanes
    overlap, the highest lane's bytes, as golden serialises them) leave global memory as
    golden's per-lane store does; the response carries the line before the store."""
    line_bytes, size, lanes = store
    base = GLOBAL_BASE + line * line_bytes
    be = wdata = 0
    for offset, value in lanes:  # lane order: later lanes overwrite
        bytes_mask = ((1 << size) - 1) << offset
        be |= bytes_mask
        data_mask = ((1 << 8 * size) - 1) << 8 * offset
        wdata = wdata & ~data_mask | (value & ((1 << 8 * size) - 1)) << 8 * offset
    m = model(line_bytes)
    before = m.read_line(base)
    assert m.access(MemoryOp.STORE, base, be=be, wdata=wdata) == before
    warp, golden = golden_warp()
    addrs = np.array([base + o for o, _ in lanes], np.uint32)
    values = np.array([v for _, v in lanes], np.uint32)
    warp.store(addrs, values, size, np.arange(len(lanes)))
    assert np.array_equal(m.global_memory.data, golden.data)


@settings(max_examples=60)
@given(
    spec=st.sampled_from(AMOS),
    line_bytes=st.sampled_from([4, 32, 128]),
    words=st.data(),
    line=st.integers(0, 31),
)
def test_amo_per_funct5_is_golden_amo(
    spec: Spec, line_bytes: int, words: st.DataObject, line: int
) -> None:
    """Every AMO of the ISA table, chosen by its funct5: each word with all four enables
    becomes ``op(old, operand)``, the others stay; the response is the old line. Oracle:
    golden's per-lane AMO of the lanes on those words."""
    count = line_bytes // 4
    chosen = words.draw(
        st.lists(st.integers(0, count - 1), min_size=1, max_size=count, unique=True)
    )
    operands = words.draw(
        st.lists(st.integers(0, 0xFFFF_FFFF), min_size=len(chosen), max_size=len(chosen))
    )
    base = GLOBAL_BASE + line * line_bytes
    be = sum(0xF << 4 * w for w in chosen)
    wdata = sum(v << 32 * w for w, v in zip(chosen, operands, strict=True))
    m = model(line_bytes)
    old_line = m.read_line(base)
    assert amo_function(spec.funct5)[0] == spec.name
    assert m.access(MemoryOp.AMO, base, amo=spec.funct5, be=be, wdata=wdata) == old_line
    warp, golden = golden_warp()
    addrs = np.array([base + 4 * w for w in chosen], np.uint32)
    olds = warp.amo(
        spec.amo_op,
        addrs,
        np.array(operands, np.uint32),
        np.arange(len(chosen)),
    )
    assert [old_line >> 32 * w & 0xFFFF_FFFF for w in chosen] == olds.tolist()
    assert np.array_equal(m.global_memory.data, golden.data)


def test_local_lines_are_a_sparse_zeroed_store() -> None:
    """The physical local lines below the global window start at zero, keep what is stored,
    and end at the span of every warp slot's interleaved local window."""
    m = model(32)
    span = local_span(MEMMAP, WIDTH, warps=2)
    assert span == 2 * MEMMAP.local_size * WIDTH
    assert m.access(MemoryOp.LOAD, span - 32) == 0
    m.access(MemoryOp.STORE, 64, be=0xF0, wdata=0xDEADBEEF << 32)
    assert m.access(MemoryOp.LOAD, 64) == 0xDEADBEEF << 32
    assert m.access(MemoryOp.AMO, 64, amo=0, be=0xF0, wdata=1 << 32) == 0xDEADBEEF << 32
    assert m.read_line(64) == 0xDEADBEF0 << 32
    _, golden = golden_warp()
    assert np.array_equal(m.global_memory.data, golden.data)  # global memory untouched


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        ({"op": MemoryOp.LOAD, "addr": GLOBAL_BASE + 4}, "not line-aligned"),
        ({"op": 3, "addr": GLOBAL_BASE}, "unknown request op 3"),
        ({"op": MemoryOp.AMO, "addr": GLOBAL_BASE, "amo": 0b00011, "be": 0xF}, "no AMO"),
        ({"op": MemoryOp.AMO, "addr": GLOBAL_BASE, "amo": 0, "be": 0x7}, "not all four"),
        ({"op": MemoryOp.LOAD, "addr": 0x4000_0000}, "neither global"),
        ({"op": MemoryOp.STORE, "addr": GLOBAL_BASE + MEMMAP.global_size}, "neither global"),
    ],
    ids=["misaligned", "op", "funct5", "partial-amo", "shared-window", "past-global"],
)
def test_broken_requests_are_errors(request_: dict[str, int], message: str) -> None:
    """A request that breaks the contract is a clear error, never a silent access."""
    m = model(32)
    op, addr = request_.pop("op"), request_.pop("addr")
    with pytest.raises(MemoryProtocolError, match=message):
        m.access(op, addr, **request_)


@settings(max_examples=40)
@given(
    pressure=st.none()
    | st.builds(Backpressure, st.floats(0.05, 1.0), st.integers(0, 5), st.integers(0, 99)),
    valid=st.lists(st.booleans(), min_size=1, max_size=80),
)
def test_port_answers_in_order_once_and_later(
    pressure: Backpressure | None, valid: list[bool]
) -> None:
    """Each cycle the SM may present a request (``valid``); accepted requests are answered
    once each, in order, at most one per cycle, no earlier than the next cycle; without
    back-pressure every request is accepted and answered exactly in the next cycle."""
    m = model(32)
    port = MemoryPort(m, pressure)
    accepted: list[tuple[int, int]] = []  # (cycle, line it loaded)
    answered: list[tuple[int, int]] = []
    cycle = 0
    while cycle < len(valid) or port.outstanding:
        ready, response = port.drive(cycle)
        if response is not None:
            answered.append((cycle, response))
        if pressure is None:
            assert ready
        if cycle < len(valid) and valid[cycle] and ready:
            line = len(accepted) % 32
            port.accept(cycle, MemoryOp.LOAD, GLOBAL_BASE + 32 * line, 0, 0, 0)
            accepted.append((cycle, m.read_line(GLOBAL_BASE + 32 * line)))
        cycle += 1
    assert [data for _, data in answered] == [data for _, data in accepted]
    assert all(a[0] < b[0] for a, b in itertools.pairwise(answered))
    assert all(r[0] > a[0] for a, r in zip(accepted, answered, strict=True))
    if pressure is None:
        assert [r[0] for r in answered] == [a[0] + 1 for a in accepted]


def test_backpressure_is_validated() -> None:
    with pytest.raises(ValueError, match="ready probability"):
        Backpressure(ready=0)
    with pytest.raises(ValueError, match="max_delay"):
        Backpressure(max_delay=-1)
