"""A loadable program image: what the assembler produces, what ELF files read into, and what the
golden model and the SM load. Segments are placed at their link addresses (PT_LOAD semantics:
``memsz`` beyond ``len(data)`` is zero-filled)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Segment:
    vaddr: int
    data: bytes
    memsz: int
    flags: str = "rwx"  # any of r, w, x

    def __post_init__(self) -> None:
        if self.memsz < len(self.data):
            raise ValueError(f"segment at {self.vaddr:#x}: memsz {self.memsz} < file size")

    @property
    def end(self) -> int:
        return self.vaddr + self.memsz


@dataclass(frozen=True)
class Image:
    entry: int
    segments: tuple[Segment, ...]
    symbols: Mapping[str, int] = field(default_factory=dict)
    source: str = "<image>"
    #: PCs of the compiler's spill code: "load" or "store" (the dynamic spill metrics; ELF files
    #: keep them in the non-loaded section ``.reconverge.spill``)
    spills: Mapping[int, str] = field(default_factory=dict)

    def symbol_at(self, addr: int) -> str | None:
        """A symbol whose value is exactly ``addr`` (the lexicographically first), if any."""
        names = sorted(n for n, v in self.symbols.items() if v == addr)
        return names[0] if names else None

    def read_word(self, addr: int) -> int | None:
        """The little-endian word at ``addr`` from the initialised data, if present."""
        for seg in self.segments:
            if seg.vaddr <= addr and addr + 4 <= seg.vaddr + len(seg.data):
                off = addr - seg.vaddr
                return int.from_bytes(seg.data[off : off + 4], "little")
        return None
