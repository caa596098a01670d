"""Memories: image loading, host helpers, vectorised access, routing by window, isolation of
shared (per block) and local (per thread) memory, AMO serialisation, and memory faults."""

from __future__ import annotations

import numpy as np
import pytest

from reconverge.golden.faults import MemoryFault
from reconverge.golden.image import Image, Segment
from reconverge.golden.memmap import GLOBAL_BASE, LOCAL_TOP, SHARED_BASE, MemoryMap
from reconverge.golden.memory import (
    AddressError,
    GlobalMemory,
    LocalMemory,
    SharedMemory,
    WarpMemory,
)

MAP = MemoryMap(global_size=4096, shared_size=256, local_size=64)
W = 8
LANES = np.arange(W)
LOCAL_BASE = LOCAL_TOP - 64


def warp_memory(
    glob: GlobalMemory | None = None, shared: SharedMemory | None = None, *, block: int = 0
) -> WarpMemory:
    return WarpMemory(
        glob or GlobalMemory(MAP),
        shared or SharedMemory(MAP),
        LocalMemory(W, MAP),
        block=block,
        first_thread=8,
    )


def u32(*values: int) -> np.ndarray:
    return np.array([v & 0xFFFF_FFFF for v in values], np.uint32)


# ----------------------------------------------------------------------------------------------
# Global memory and images


def test_image_segments_are_placed_and_zero_filled() -> None:
    mem = GlobalMemory(MAP)
    mem.write_bytes(GLOBAL_BASE + 0x100, b"\xff" * 32)  # must be cleared by the bss part
    image = Image(
        GLOBAL_BASE,
        (
            Segment(GLOBAL_BASE, b"\x01\x02\x03\x04", 4),
            Segment(GLOBAL_BASE + 0xFC, b"\xaa\xbb\xcc\xdd", 20),
        ),
    )
    mem.load_image(image)
    assert mem.read_bytes(GLOBAL_BASE, 4) == b"\x01\x02\x03\x04"
    assert list(mem.read_words(GLOBAL_BASE + 0xFC, 5)) == [0xDDCCBBAA, 0, 0, 0, 0]
    assert mem.read_bytes(GLOBAL_BASE + 0x110, 4) == b"\xff" * 4  # past memsz: untouched


def test_segment_outside_global_memory_is_an_address_error() -> None:
    image = Image(GLOBAL_BASE, (Segment(GLOBAL_BASE + 4092, b"", 8),), source="prog.elf")
    with pytest.raises(AddressError) as info:
        GlobalMemory(MAP).load_image(image)
    assert str(info.value) == (
        "prog.elf: segment at 0x80000ffc: 8 bytes at 0x80000ffc lie outside global memory "
        "0x80000000-0x80000fff"
    )


def test_host_helpers_round_trip_and_check_bounds() -> None:
    mem = GlobalMemory(MAP)
    mem.write_bytes(GLOBAL_BASE + 6, bytes(range(1, 9)))
    assert mem.read_bytes(GLOBAL_BASE + 6, 8) == bytes(range(1, 9))
    assert mem.read_words(GLOBAL_BASE + 8, 1).tolist() == [0x06050403]
    with pytest.raises(AddressError):
        mem.read_bytes(GLOBAL_BASE - 1, 2)
    with pytest.raises(AddressError):
        mem.write_bytes(GLOBAL_BASE + 4095, b"ab")


def test_fetch_checks_alignment_and_range() -> None:
    mem = GlobalMemory(MAP)
    mem.write_bytes(GLOBAL_BASE + 8, (0x00000013).to_bytes(4, "little"))
    assert mem.fetch(GLOBAL_BASE + 8) == 0x13
    with pytest.raises(MemoryFault) as info:
        mem.fetch(GLOBAL_BASE + 2)
    assert str(info.value) == (
        "misaligned instruction address: pc 0x80000002 is not a multiple of 4"
    )
    with pytest.raises(MemoryFault) as info:
        mem.fetch(0x1000)
    assert str(info.value) == (
        "instruction fetch fault: pc 0x00001000 is outside global memory 0x80000000-0x80000fff"
    )


# ----------------------------------------------------------------------------------------------
# Vectorised access


def test_loads_extend_by_size_and_sign() -> None:
    mem = warp_memory()
    mem.global_memory.write_bytes(GLOBAL_BASE, bytes([0x80, 0x7F, 0xFE, 0xFF]))
    addr = u32(GLOBAL_BASE)
    lane = LANES[:1]
    assert mem.load(addr, 1, True, lane).tolist() == [0xFFFF_FF80]
    assert mem.load(addr, 1, False, lane).tolist() == [0x80]
    assert mem.load(addr + 2, 2, True, lane).tolist() == [0xFFFF_FFFE]
    assert mem.load(addr + 2, 2, False, lane).tolist() == [0xFFFE]
    assert mem.load(addr, 4, False, lane).tolist() == [0xFFFE_7F80]


def test_stores_write_only_their_low_bytes_little_endian() -> None:
    mem = warp_memory()
    base = GLOBAL_BASE + 16
    mem.store(u32(base, base + 4), u32(0x11223344, 0x55667788), 4, LANES[:2])
    mem.store(u32(base + 1), u32(0xAABBCCDD), 1, LANES[:1])
    mem.store(u32(base + 6), u32(0xEEFF0102), 2, LANES[:1])
    assert mem.global_memory.read_bytes(base, 8) == bytes.fromhex("44dd2211 88770201")


def test_stores_to_one_address_highest_lane_wins() -> None:
    mem = warp_memory()
    addrs = np.full(W, SHARED_BASE, np.uint32)
    mem.store(addrs, np.arange(10, 10 + W, dtype=np.uint32), 4, LANES)
    assert mem.load(addrs[:1], 4, False, LANES[:1]).tolist() == [10 + W - 1]


def test_one_access_routes_each_lane_to_its_window() -> None:
    glob, shared = GlobalMemory(MAP), SharedMemory(MAP)
    mem = warp_memory(glob, shared)
    addrs = u32(GLOBAL_BASE, GLOBAL_BASE + 4, SHARED_BASE, SHARED_BASE + 4, LOCAL_BASE, LOCAL_BASE)
    lanes = np.array([0, 1, 2, 3, 4, 7])
    mem.store(addrs, u32(1, 2, 3, 4, 5, 6), 4, lanes)
    assert mem.load(addrs, 4, False, lanes).tolist() == [1, 2, 3, 4, 5, 6]
    assert glob.read_words(GLOBAL_BASE, 2).tolist() == [1, 2]
    assert shared.data[0, :8].view("<u4").tolist() == [3, 4]


def test_shared_memory_is_per_block() -> None:
    glob = GlobalMemory(MAP)
    block0, block1 = warp_memory(glob, block=0), warp_memory(glob, block=1)
    addr = u32(SHARED_BASE + 8)
    block0.store(addr, u32(1234), 4, LANES[:1])
    block1.store(addr, u32(5678), 4, LANES[:1])
    assert block0.load(addr, 4, False, LANES[:1]).tolist() == [1234]
    assert block1.load(addr, 4, False, LANES[:1]).tolist() == [5678]


def test_shared_memory_is_common_to_the_warps_of_a_block() -> None:
    glob, shared = GlobalMemory(MAP), SharedMemory(MAP)
    warp0, warp1 = warp_memory(glob, shared), warp_memory(glob, shared)
    warp0.store(u32(SHARED_BASE), u32(99), 4, LANES[:1])
    assert warp1.load(u32(SHARED_BASE), 4, False, LANES[5:6]).tolist() == [99]


def test_local_memory_is_private_to_each_thread() -> None:
    mem = warp_memory()
    addrs = np.full(W, LOCAL_TOP - 4, np.uint32)
    mem.store(addrs, np.arange(W, dtype=np.uint32) * 3, 4, LANES)
    assert mem.load(addrs, 4, False, LANES).tolist() == [3 * lane for lane in range(W)]
    assert mem.load(addrs[:2], 4, False, np.array([2, 6])).tolist() == [6, 18]


# ----------------------------------------------------------------------------------------------
# AMOs


@pytest.mark.parametrize("window", [GLOBAL_BASE, SHARED_BASE, LOCAL_BASE])
def test_amoadd_of_all_lanes_to_one_address_is_serialised_in_lane_order(window: int) -> None:
    mem = warp_memory()
    addrs = np.full(W, window, np.uint32)
    mem.store(addrs[:1], u32(100), 4, LANES[:1])
    old = mem.amo("add", addrs, np.ones(W, np.uint32), LANES)
    if window == LOCAL_BASE:  # one private word per lane: no interference
        assert old.tolist() == [100] + [0] * (W - 1)
    else:
        assert old.tolist() == list(range(100, 100 + W))
        assert mem.load(addrs[:1], 4, False, LANES[:1]).tolist() == [100 + W]


def test_amoswap_chain_passes_each_lane_the_previous_lanes_value() -> None:
    mem = warp_memory()
    addrs = np.full(4, GLOBAL_BASE, np.uint32)
    old = mem.amo("swap", addrs, u32(10, 11, 12, 13), LANES[:4])
    assert old.tolist() == [0, 10, 11, 12]
    assert mem.global_memory.read_words(GLOBAL_BASE, 1).tolist() == [13]


def test_amomin_amomax_compare_signed() -> None:
    mem = warp_memory()
    addrs = np.full(3, GLOBAL_BASE, np.uint32)
    old = mem.amo("min", addrs, u32(5, -3, 7), LANES[:3])
    assert old.tolist() == [0, 0, u32(-3)[0]]
    assert mem.global_memory.read_words(GLOBAL_BASE, 1).tolist() == [u32(-3)[0]]
    old = mem.amo("max", addrs, u32(-7, 2, 1), LANES[:3])
    assert old.tolist() == [u32(-3)[0], u32(-3)[0], 2]
    assert mem.global_memory.read_words(GLOBAL_BASE, 1).tolist() == [2]


# ----------------------------------------------------------------------------------------------
# Faults


def test_misaligned_access_names_the_first_offending_lane() -> None:
    mem = warp_memory(block=3)
    addrs = u32(GLOBAL_BASE, GLOBAL_BASE + 6, GLOBAL_BASE + 2)
    with pytest.raises(MemoryFault) as info:
        mem.load(addrs, 4, False, np.array([1, 4, 5]))
    assert str(info.value) == (
        "misaligned load (block 3, thread 12): address 0x80000006 is not a multiple of 4"
    )


@pytest.mark.parametrize(
    ("addr", "detail"),
    [
        (SHARED_BASE + 256, "address 0x40000100 is beyond the shared window 0x40000000-0x400000ff"),
        (LOCAL_BASE - 4, "address 0x6fffffbc is below the local window 0x6fffffc0-0x6fffffff"),
        (
            GLOBAL_BASE + 4096,
            "address 0x80001000 is beyond the global window 0x80000000-0x80000fff",
        ),
        (
            0x10,
            "address 0x00000010 is in no memory window (global window 0x80000000-0x80000fff, "
            "shared window 0x40000000-0x400000ff, local window 0x6fffffc0-0x6fffffff)",
        ),
    ],
)
def test_unmapped_access_names_address_and_window(addr: int, detail: str) -> None:
    mem = warp_memory()
    with pytest.raises(MemoryFault) as info:
        mem.store(u32(GLOBAL_BASE, addr), u32(0, 0), 4, np.array([0, 2]))
    assert str(info.value) == f"unmapped store (block 0, thread 10): {detail}"


def test_misaligned_amo() -> None:
    with pytest.raises(MemoryFault, match=r"^misaligned amo \(block 0, thread 8\)"):
        warp_memory().amo("add", u32(SHARED_BASE + 2), u32(1), LANES[:1])
