"""The SM's memories as NumPy byte arrays, with vectorised per-lane access.

Each address window of :mod:`reconverge.golden.memmap` is a :class:`Bank`: global memory (one
copy, code and data), a block's shared memory (one copy per block) and a warp's local memory
(one private copy per lane, all at the same addresses). :class:`WarpMemory` is what a warp's
instructions see: it routes each lane's address to its window (global, the warp's block's
shared memory, or the lane's own local memory) and reports misaligned or unmapped accesses as
:class:`~reconverge.golden.faults.MemoryFault` naming the first offending lane.
:class:`Reservations` are the launch's ``lr.w``/``sc.w`` reservations (docs/isa.md, "LR/SC").
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from reconverge.golden.errors import UserError
from reconverge.golden.faults import MemoryFault
from reconverge.golden.image import Image
from reconverge.golden.isa import ILEN_BYTES, MASK32, sext
from reconverge.golden.memmap import (
    GLOBAL_BASE,
    GLOBAL_MAX,
    LOCAL_MAX,
    LOCAL_TOP,
    SHARED_BASE,
    SHARED_MAX,
    MemoryMap,
    Region,
)

#: Element type of an access of (size, signed); little-endian like RISC-V.
_DTYPES: dict[tuple[int, bool], str] = {
    (1, False): "u1",
    (1, True): "i1",
    (2, False): "<u2",
    (2, True): "<i2",
    (4, False): "<u4",
    (4, True): "<i4",
}
_SHIFT = {1: 0, 2: 1, 4: 2}

#: Read-modify-write functions of the word AMOs (``Spec.amo_op`` of each): (old value,
#: operand) -> new value, all uint32.
AMO_OPS: dict[str, Callable[[int, int], int]] = {
    "swap": lambda old, v: v,
    "add": lambda old, v: (old + v) & MASK32,
    "xor": lambda old, v: old ^ v,
    "and": lambda old, v: old & v,
    "or": lambda old, v: old | v,
    "min": lambda old, v: old if sext(old, 32) <= sext(v, 32) else v,
    "max": lambda old, v: old if sext(old, 32) >= sext(v, 32) else v,
    "minu": lambda old, v: min(old, v),
    "maxu": lambda old, v: max(old, v),
}

#: The largest extent each window can have, to name the window an unmapped address is near.
_EXTENTS = (
    (Region.GLOBAL, GLOBAL_BASE, GLOBAL_BASE + GLOBAL_MAX),
    (Region.SHARED, SHARED_BASE, SHARED_BASE + SHARED_MAX),
    (Region.LOCAL, LOCAL_TOP - LOCAL_MAX, LOCAL_TOP),
)


class AddressError(UserError, ValueError):
    """A host-side access (image loading, inspection) outside global memory: for a program
    that does not fit, the user's error."""


class Bank:
    """One address window: ``rows`` copies of ``size`` bytes at ``base``. Shared windows
    (global, a block's shared memory) have one row; a private window (local memory) has one row
    per lane, selected by the lane index. Offsets passed in are already checked and aligned."""

    def __init__(self, region: Region, base: int, size: int, rows: int = 1) -> None:
        self.region = region
        self.base = base
        self.size = size
        self.private = region is Region.LOCAL
        self.data = np.zeros((rows, size), np.uint8)
        self._views = {key: self.data.view(dtype) for key, dtype in _DTYPES.items()}

    @property
    def end(self) -> int:
        return self.base + self.size

    def _rows(self, lanes: np.ndarray) -> np.ndarray | int:
        return lanes if self.private else 0

    def read(self, offsets: np.ndarray, size: int, signed: bool, lanes: np.ndarray) -> np.ndarray:
        """Values (zero- or sign-extended to uint32) of ``size``-byte elements."""
        values = self._views[size, signed][self._rows(lanes), offsets >> _SHIFT[size]]
        return values.astype(np.int32).view(np.uint32) if signed else values.astype(np.uint32)

    def write(self, offsets: np.ndarray, values: np.ndarray, size: int, lanes: np.ndarray) -> None:
        """Store the low ``size`` bytes of each value; on equal addresses the last lane wins."""
        self._views[size, False][self._rows(lanes), offsets >> _SHIFT[size]] = values

    def atomic(
        self,
        op: Callable[[int, int], int],
        offsets: np.ndarray,
        values: np.ndarray,
        lanes: np.ndarray,
    ) -> np.ndarray:
        """Word read-modify-write, one lane after another in the given order; old values."""
        words = self._views[4, False]
        rows = np.broadcast_to(self._rows(lanes), offsets.shape).tolist()
        old = np.empty(len(offsets), np.uint32)
        for i, (row, index, value) in enumerate(
            zip(rows, (offsets >> 2).tolist(), values.tolist(), strict=True)
        ):
            old[i] = previous = int(words[row, index])
            words[row, index] = op(previous, value)
        return old


#: A thread of the launch: (block index, thread index in the block).
ThreadKey = tuple[int, int]
#: A physical word: the bank, its row (a lane's copy of local memory, else 0), the word index.
WordKey = tuple[Bank, int, int]


class Reservations:
    """The ``lr.w``/``sc.w`` reservations of one launch (RV32A; docs/isa.md, "LR/SC").

    A thread holds at most one reservation, on one physical word: ``lr.w`` sets it (replacing
    the thread's previous one), ``sc.w`` ends it whether it succeeds or not, and any write to
    the word — a store, an AMO or a successful ``sc.w``, by any thread — breaks every
    reservation on it."""

    def __init__(self) -> None:
        self._word_of: dict[ThreadKey, WordKey] = {}
        self._holders: dict[WordKey, set[ThreadKey]] = {}

    def __len__(self) -> int:
        return len(self._word_of)

    def reserve(self, thread: ThreadKey, word: WordKey) -> None:
        self.release(thread)
        self._word_of[thread] = word
        self._holders.setdefault(word, set()).add(thread)

    def release(self, thread: ThreadKey) -> WordKey | None:
        """End ``thread``'s reservation; the word it was on, if any."""
        word = self._word_of.pop(thread, None)
        if word is not None:
            holders = self._holders[word]
            holders.discard(thread)
            if not holders:
                del self._holders[word]
        return word

    def written(self, bank: Bank, rows: np.ndarray | int, indices: np.ndarray) -> None:
        """Words ``indices`` (of ``rows``) of ``bank`` were written: break their reservations."""
        row_list = np.broadcast_to(rows, indices.shape).tolist()
        for word in set(zip(row_list, indices.tolist(), strict=True)):
            for thread in self._holders.pop((bank, *word), ()):
                del self._word_of[thread]


class GlobalMemory(Bank):
    """Global memory: code and data, seen alike by every thread of every block. It also holds
    the launch's LR/SC :class:`Reservations`, which span every window."""

    def __init__(self, memmap: MemoryMap | None = None) -> None:
        memmap = memmap or MemoryMap()
        super().__init__(Region.GLOBAL, GLOBAL_BASE, memmap.global_size)
        self.reservations = Reservations()

    def _offset(self, addr: int, n: int) -> int:
        if not (self.base <= addr and addr + n <= self.end):
            raise AddressError(
                f"{n} bytes at {addr:#010x} lie outside global memory "
                f"{self.base:#010x}-{self.end - 1:#010x}"
            )
        return addr - self.base

    def load_image(self, image: Image) -> None:
        """Place every segment at its link address, zero-filling up to its ``memsz``."""
        for seg in image.segments:
            try:
                offset = self._offset(seg.vaddr, seg.memsz)
            except AddressError as exc:
                raise AddressError(f"{image.source}: segment at {seg.vaddr:#010x}: {exc}") from None
            self.data[0, offset : offset + seg.memsz] = 0
            self.write_bytes(seg.vaddr, seg.data)

    def read_bytes(self, addr: int, n: int) -> bytes:
        offset = self._offset(addr, n)
        return self.data[0, offset : offset + n].tobytes()

    def read_words(self, addr: int, n: int) -> np.ndarray:
        """``n`` little-endian 32-bit words starting at ``addr`` (a copy, dtype uint32)."""
        return np.frombuffer(self.read_bytes(addr, 4 * n), "<u4").astype(np.uint32)

    def write_bytes(self, addr: int, data: bytes) -> None:
        offset = self._offset(addr, len(data))
        self.data[0, offset : offset + len(data)] = np.frombuffer(data, np.uint8)

    def fetch(self, pc: int) -> int:
        """The instruction word at ``pc``; a :class:`MemoryFault` outside global memory."""
        if pc % ILEN_BYTES:
            raise MemoryFault(
                f"pc {pc:#010x} is not a multiple of {ILEN_BYTES}",
                kind="misaligned instruction address",
            )
        if not self.base <= pc < self.end:
            raise MemoryFault(
                f"pc {pc:#010x} is outside global memory {self.base:#010x}-{self.end - 1:#010x}",
                kind="instruction fetch fault",
            )
        return int(self._views[4, False][0, (pc - self.base) >> 2])


class SharedMemory(Bank):
    """One block's shared memory."""

    def __init__(self, memmap: MemoryMap | None = None) -> None:
        memmap = memmap or MemoryMap()
        super().__init__(Region.SHARED, SHARED_BASE, memmap.shared_size)


class LocalMemory(Bank):
    """One warp's local memory: a private copy of the local window for each of its lanes."""

    def __init__(self, warp_size: int, memmap: MemoryMap | None = None) -> None:
        memmap = memmap or MemoryMap()
        super().__init__(Region.LOCAL, memmap.local_base, memmap.local_size, rows=warp_size)


def describe_unmapped(addr: int, banks: tuple[Bank, ...]) -> str:
    """Why ``addr`` is unmapped: past or below the window it is near, or in no window."""

    def span(bank: Bank) -> str:
        return f"{bank.region.value} window {bank.base:#010x}-{bank.end - 1:#010x}"

    by_region = {bank.region: bank for bank in banks}
    for region, lo, hi in _EXTENTS:
        if lo <= addr < hi and region in by_region:
            bank = by_region[region]
            side = "below" if addr < bank.base else "beyond"
            return f"address {addr:#010x} is {side} the {span(bank)}"
    windows = ", ".join(span(bank) for bank in banks)
    return f"address {addr:#010x} is in no memory window ({windows})"


class WarpMemory:
    """The memory one warp's lanes see: loads, stores and AMOs routed by address window.

    ``addrs``/``values`` hold one entry per executing lane and ``lanes`` the lane indices (in
    increasing order); results come back in the same order. ``block`` and ``first_thread`` (the
    thread index of lane 0) only serve to name the offending thread in a fault."""

    def __init__(
        self,
        global_memory: GlobalMemory,
        shared: SharedMemory,
        local: LocalMemory,
        *,
        block: int,
        first_thread: int,
    ) -> None:
        self.global_memory = global_memory
        self.reservations = global_memory.reservations
        self.banks: tuple[Bank, ...] = (global_memory, shared, local)
        self.block = block
        self.first_thread = first_thread

    def _fault(self, kind: str, bad: np.ndarray, lanes: np.ndarray, detail: str) -> MemoryFault:
        lane = int(lanes[int(np.argmax(bad))])
        return MemoryFault(detail, kind=kind, block=self.block, thread=self.first_thread + lane)

    def _route(
        self, addrs: np.ndarray, size: int, lanes: np.ndarray, access: str
    ) -> list[tuple[Bank, np.ndarray | slice, np.ndarray]]:
        """(bank, selection of lanes, their offsets in the bank) for every bank touched."""
        misaligned = (addrs & np.uint32(size - 1)) != 0
        if misaligned.any():
            addr = int(addrs[int(np.argmax(misaligned))])
            detail = f"address {addr:#010x} is not a multiple of {size}"
            raise self._fault(f"misaligned {access}", misaligned, lanes, detail)
        parts: list[tuple[Bank, np.ndarray | slice, np.ndarray]] = []
        mapped = np.zeros(len(addrs), bool)
        for bank in self.banks:
            offsets = addrs - np.uint32(bank.base)
            hit = offsets < bank.size
            if hit.all():
                return [(bank, slice(None), offsets)]
            if hit.any():
                parts.append((bank, hit, offsets[hit]))
                mapped |= hit
        if not mapped.all():
            addr = int(addrs[int(np.argmax(~mapped))])
            detail = describe_unmapped(addr, self.banks)
            raise self._fault(f"unmapped {access}", ~mapped, lanes, detail)
        return parts

    def load(self, addrs: np.ndarray, size: int, signed: bool, lanes: np.ndarray) -> np.ndarray:
        """Per-lane loads of ``size`` bytes, sign- or zero-extended to uint32."""
        out = np.empty(len(addrs), np.uint32)
        for bank, sel, offsets in self._route(addrs, size, lanes, "load"):
            out[sel] = bank.read(offsets, size, signed, lanes[sel])
        return out

    def store(self, addrs: np.ndarray, values: np.ndarray, size: int, lanes: np.ndarray) -> None:
        """Per-lane stores of the low ``size`` bytes of ``values`` (the highest lane wins when
        lanes store to one address, as if serialised in lane order)."""
        for bank, sel, offsets in self._route(addrs, size, lanes, "store"):
            bank.write(offsets, values[sel], size, lanes[sel])
            if self.reservations:
                self.reservations.written(bank, bank._rows(lanes[sel]), offsets >> 2)

    def amo(self, op: str, addrs: np.ndarray, values: np.ndarray, lanes: np.ndarray) -> np.ndarray:
        """Word AMOs (``op`` a key of :data:`AMO_OPS`), serialised in increasing lane order so
        that lanes hitting one address compose; returns each lane's old value."""
        out = np.empty(len(addrs), np.uint32)
        for bank, sel, offsets in self._route(addrs, 4, lanes, "amo"):
            out[sel] = bank.atomic(AMO_OPS[op], offsets, values[sel], lanes[sel])
            if self.reservations:
                self.reservations.written(bank, bank._rows(lanes[sel]), offsets >> 2)
        return out

    def _thread(self, lane: int) -> ThreadKey:
        return self.block, self.first_thread + lane

    def load_reserved(self, addrs: np.ndarray, lanes: np.ndarray) -> np.ndarray:
        """``lr.w``: each lane loads its word and reserves it (an A-extension access: its
        faults are AMO faults)."""
        out = np.empty(len(addrs), np.uint32)
        for bank, sel, offsets in self._route(addrs, 4, lanes, "amo"):
            sel_lanes = lanes[sel]
            out[sel] = bank.read(offsets, 4, False, sel_lanes)
            rows = np.broadcast_to(bank._rows(sel_lanes), offsets.shape).tolist()
            for lane, row, index in zip(
                sel_lanes.tolist(), rows, (offsets >> 2).tolist(), strict=True
            ):
                self.reservations.reserve(self._thread(lane), (bank, row, index))
        return out

    def store_conditional(
        self, addrs: np.ndarray, values: np.ndarray, lanes: np.ndarray
    ) -> np.ndarray:
        """``sc.w``, lane after lane in increasing order: a lane whose reservation is on its
        word stores (breaking every reservation on the word, so a later lane's ``sc.w`` to
        it fails) and gets 0, the others store nothing and get 1; every lane's reservation
        ends."""
        out = np.empty(len(addrs), np.uint32)
        for bank, sel, offsets in self._route(addrs, 4, lanes, "amo"):
            sel_lanes = lanes[sel]
            rows = np.broadcast_to(bank._rows(sel_lanes), offsets.shape).tolist()
            words = bank._views[4, False]
            results = []
            for lane, row, index, value in zip(
                sel_lanes.tolist(), rows, (offsets >> 2).tolist(), values[sel].tolist(),
                strict=True,
            ):  # fmt: skip
                word = (bank, row, index)
                held = self.reservations.release(self._thread(lane)) == word
                if held:
                    words[row, index] = value
                    self.reservations.written(bank, row, np.array([index]))
                results.append(0 if held else 1)
            out[sel] = results
        return out
