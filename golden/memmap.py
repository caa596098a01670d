"""The SM's address map: one definition used by the loader, the golden model, the compiler and
the HDL load/store unit. See ``docs/isa.md`` (Memory map).

* **global** memory starts at :data:`GLOBAL_BASE` (0x8000_0000, where the public RISC-V test
  suites link) and holds code and data alike; every thread of every block sees the same bytes.
* **shared** memory is a window at :data:`SHARED_BASE`; each block has its own copy.
* **local** memory is a window that ends at :data:`LOCAL_TOP`; each thread has its own copy at
  the same addresses, so ``sp`` starts at :data:`LOCAL_TOP` in every thread and threads at the
  same call depth share one SP value (seed 000 Sec 4.1 orders threads by SP:PC).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

GLOBAL_BASE = 0x8000_0000
SHARED_BASE = 0x4000_0000
LOCAL_TOP = 0x7000_0000

#: Largest sizes each window may be configured to (the windows must not overlap).
GLOBAL_MAX = 0x4000_0000
SHARED_MAX = 0x0100_0000
LOCAL_MAX = 0x0100_0000


class Region(enum.Enum):
    GLOBAL = "global"
    SHARED = "shared"
    LOCAL = "local"


@dataclass(frozen=True)
class MemoryMap:
    """Sizes of the three windows; bases are fixed by the ISA."""

    global_size: int = 16 << 20
    shared_size: int = 16 << 10
    local_size: int = 4 << 10

    def __post_init__(self) -> None:
        for name, size, limit in (
            ("global_size", self.global_size, GLOBAL_MAX),
            ("shared_size", self.shared_size, SHARED_MAX),
            ("local_size", self.local_size, LOCAL_MAX),
        ):
            if not 0 < size <= limit or size % 4:
                raise ValueError(f"{name}={size:#x} must be a multiple of 4 in 4..{limit:#x}")

    @property
    def local_base(self) -> int:
        return LOCAL_TOP - self.local_size

    @property
    def initial_sp(self) -> int:
        return LOCAL_TOP

    def windows(self) -> tuple[tuple[Region, int, int], ...]:
        """(region, base, size) of every window."""
        return (
            (Region.GLOBAL, GLOBAL_BASE, self.global_size),
            (Region.SHARED, SHARED_BASE, self.shared_size),
            (Region.LOCAL, self.local_base, self.local_size),
        )

    def region_of(self, addr: int, size: int = 1) -> Region | None:
        """The window holding ``[addr, addr + size)`` entirely, or None when unmapped."""
        for region, base, length in self.windows():
            if base <= addr and addr + size <= base + length:
                return region
        return None
