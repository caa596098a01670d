"""ELF32 little-endian RISC-V executables: read one into an :class:`~reconverge.golden.image.Image`
(every ``PT_LOAD`` segment at its link address, entry at ``e_entry``, the symbol table for
labels) and write an image back out as an executable that GNU binutils and the loader accept.

Only what a loader needs is interpreted; anything that would make the program run wrongly (a
64-bit or big-endian file, another machine, compressed instructions, a truncated file) is an
:class:`ElfError` naming the file and the cause.
"""

from __future__ import annotations

import itertools
import struct
from collections.abc import Callable
from pathlib import Path

from reconverge.golden.errors import UserError
from reconverge.golden.image import Image, Segment

ELF_MAGIC = b"\x7fELF"
ELFCLASS32 = 1
ELFDATA2LSB = 1
EV_CURRENT = 1
ET_EXEC = 2
EM_RISCV = 243
EF_RISCV_RVC = 0x1
EF_RISCV_FLOAT_ABI_SOFT = 0x0

PT_LOAD = 1
SEGMENT_ALIGN = 16  # p_align of the segments write_elf makes
PF_X, PF_W, PF_R = 1, 2, 4

SHT_NULL, SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_NOBITS = 0, 1, 2, 3, 8
SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR = 1, 2, 4
STT_NOTYPE, STT_SECTION, STT_FILE = 0, 3, 4
STB_GLOBAL = 1
SHN_UNDEF, SHN_ABS = 0, 0xFFF1

_EHDR = struct.Struct("<16sHHIIIIIHHHHHH")
_PHDR = struct.Struct("<IIIIIIII")
_SHDR = struct.Struct("<IIIIIIIIII")
_SYM = struct.Struct("<IIIBBH")


class ElfError(UserError, ValueError):
    """The file is not an ELF32 RISC-V executable the SM can load."""


def _flags_text(p_flags: int) -> str:
    return "".join(c for bit, c in ((PF_R, "r"), (PF_W, "w"), (PF_X, "x")) if p_flags & bit)


def _flags_bits(flags: str) -> int:
    return (
        (PF_R if "r" in flags else 0)
        | (PF_W if "w" in flags else 0)
        | (PF_X if "x" in flags else 0)
    )


def _cstring(table: bytes, offset: int) -> str:
    end = table.find(b"\0", offset)
    return table[offset : end if end >= 0 else len(table)].decode(errors="replace")


def read_elf(data: bytes, source: str = "<elf>") -> Image:
    """Parse an ELF32 RISC-V executable. Raises :class:`ElfError` with ``source`` in the text."""

    def fail(why: str) -> ElfError:
        return ElfError(f"{source}: {why}")

    if data[:4] != ELF_MAGIC:
        raise fail("not an ELF file (no \\x7fELF header)")
    if len(data) < _EHDR.size:
        raise fail(f"truncated: {len(data)} bytes, shorter than the ELF header ({_EHDR.size})")
    ident = data[:16]
    if ident[4] != ELFCLASS32:
        raise fail(
            "not a 32-bit ELF file (the SM runs RV32: build with -march=rv32ima_zicsr -mabi=ilp32)"
        )
    if ident[5] != ELFDATA2LSB:
        raise fail("not a little-endian ELF file")
    (_, e_type, e_machine, _, e_entry, e_phoff, e_shoff, e_flags, _, e_phentsize, e_phnum,
     e_shentsize, e_shnum, _) = _EHDR.unpack_from(data)  # fmt: skip
    if e_machine != EM_RISCV:
        raise fail(f"machine {e_machine} is not RISC-V ({EM_RISCV})")
    if e_type != ET_EXEC:
        raise fail(f"ELF type {e_type} is not an executable (ET_EXEC): link the program first")
    if e_flags & EF_RISCV_RVC:
        raise fail(
            "built with compressed instructions (EF_RISCV_RVC), which the SM does not run: "
            "rebuild with -march=rv32ima_zicsr"
        )
    if e_phnum and e_phentsize != _PHDR.size:
        raise fail(f"program header size {e_phentsize} is not {_PHDR.size}")
    if e_phoff + e_phnum * _PHDR.size > len(data):
        raise fail("truncated: program headers lie past the end of the file")

    segments = []
    for i in range(e_phnum):
        p_type, p_offset, p_vaddr, _, p_filesz, p_memsz, p_flags, _ = _PHDR.unpack_from(
            data, e_phoff + i * _PHDR.size
        )
        if p_type != PT_LOAD or p_memsz == 0:
            continue
        if p_offset + p_filesz > len(data):
            raise fail(f"truncated: segment {i} at {p_vaddr:#010x} lies past the end of the file")
        if p_memsz < p_filesz:
            raise fail(f"segment {i} at {p_vaddr:#010x} has p_memsz < p_filesz")
        body = data[p_offset : p_offset + p_filesz]
        segments.append(Segment(p_vaddr, body, p_memsz, _flags_text(p_flags)))
    if not segments:
        raise fail("no loadable (PT_LOAD) segment")

    symbols: dict[str, int] = {}
    spills: dict[int, str] = {}
    sections = e_shnum and e_shentsize == _SHDR.size and e_shoff + e_shnum * _SHDR.size <= len(data)
    if sections:
        symbols = _read_symbols(data, e_shoff, e_shnum)
        spills = _read_spills(data, e_shoff, e_shnum, fail)
        segments = _without_leading_headers(segments, _lowest_allocated(data, e_shoff, e_shnum))
    _check_layout(segments, e_entry, fail)
    return Image(e_entry, tuple(segments), symbols, source, spills)


def _lowest_allocated(data: bytes, e_shoff: int, e_shnum: int) -> int | None:
    """The lowest address of a section the program occupies in memory (SHF_ALLOC)."""
    headers = [_SHDR.unpack_from(data, e_shoff + i * _SHDR.size) for i in range(e_shnum)]
    addrs = [h[3] for h in headers if h[2] & SHF_ALLOC and h[5]]
    return min(addrs, default=None)


def _without_leading_headers(segments: list[Segment], lowest: int | None) -> list[Segment]:
    """GNU ld linking with ``-Ttext=0x80000000`` starts the first segment a page below, with
    the ELF and program headers: what lies below the program's lowest section is not part of
    the program, and is not loaded."""
    if lowest is None:
        return segments
    out = []
    for seg in segments:
        if seg.vaddr < lowest < seg.end:
            cut = lowest - seg.vaddr
            seg = Segment(lowest, seg.data[cut:], seg.memsz - cut, seg.flags)
        out.append(seg)
    return out


def _check_layout(segments: list[Segment], entry: int, fail: Callable[[str], ElfError]) -> None:
    """Segments may not overlap, and the entry point must lie in an executable one."""
    ordered = sorted(segments, key=lambda s: s.vaddr)
    for a, b in itertools.pairwise(ordered):
        if b.vaddr < a.end:
            raise fail(
                f"segments at {a.vaddr:#010x}-{a.end - 1:#010x} and {b.vaddr:#010x}-"
                f"{b.end - 1:#010x} overlap"
            )
    if not any(s.vaddr <= entry < s.vaddr + len(s.data) and "x" in s.flags for s in segments):
        raise fail(f"the entry point {entry:#010x} lies in no executable segment")


SPILL_SECTION = ".reconverge.spill"
SPILL_KINDS = ("load", "store")
_SPILL = struct.Struct("<II")


def _read_spills(
    data: bytes, e_shoff: int, e_shnum: int, fail: Callable[[str], ElfError]
) -> dict[int, str]:
    """The spill-code PCs of the ``.reconverge.spill`` section: (pc, kind) word pairs."""
    headers = [_SHDR.unpack_from(data, e_shoff + i * _SHDR.size) for i in range(e_shnum)]
    names_header = headers[_EHDR.unpack_from(data)[13]] if headers else None
    if names_header is None:
        return {}
    names = data[names_header[4] : names_header[4] + names_header[5]]
    for sh_name, _, _, _, sh_offset, sh_size, *_ in headers:
        if _cstring(names, sh_name) != SPILL_SECTION:
            continue
        if sh_size % _SPILL.size or sh_offset + sh_size > len(data):
            raise fail(f"malformed {SPILL_SECTION} section")
        spills = {}
        for off in range(sh_offset, sh_offset + sh_size, _SPILL.size):
            pc, kind = _SPILL.unpack_from(data, off)
            if kind >= len(SPILL_KINDS):
                raise fail(f"{SPILL_SECTION}: unknown spill kind {kind} at pc {pc:#010x}")
            spills[pc] = SPILL_KINDS[kind]
        return spills
    return {}


def _read_symbols(data: bytes, e_shoff: int, e_shnum: int) -> dict[str, int]:
    """Named, defined symbols of the first SHT_SYMTAB; file and section symbols and the RISC-V
    mapping symbols (``$x``, ``$d``, ``$x<isa>``, which GNU as emits) left out."""
    headers = [_SHDR.unpack_from(data, e_shoff + i * _SHDR.size) for i in range(e_shnum)]
    for _, sh_type, _, _, sh_offset, sh_size, sh_link, _, _, sh_entsize in headers:
        if sh_type != SHT_SYMTAB or sh_entsize != _SYM.size or sh_link >= e_shnum:
            continue
        strtab = headers[sh_link]
        names = data[strtab[4] : strtab[4] + strtab[5]]
        symbols: dict[str, int] = {}
        for off in range(sh_offset, min(sh_offset + sh_size, len(data)) - _SYM.size + 1, _SYM.size):
            st_name, st_value, _, st_info, _, st_shndx = _SYM.unpack_from(data, off)
            name = _cstring(names, st_name)
            if (
                name
                and not name.startswith(("$x", "$d"))
                and st_info & 0xF not in (STT_SECTION, STT_FILE)
                and st_shndx != SHN_UNDEF
            ):
                symbols.setdefault(name, st_value)
        return symbols
    return {}


def load_elf(path: str | Path) -> Image:
    """Read and parse the ELF file at ``path``."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ElfError(f"{path}: {exc.strerror or exc}") from None
    return read_elf(data, str(path))


class _Strings:
    """An ELF string table under construction."""

    def __init__(self) -> None:
        self.data = bytearray(b"\0")

    def add(self, name: str) -> int:
        offset = len(self.data)
        self.data += name.encode() + b"\0"
        return offset


def _sections_of(seg: Segment, file_offset: int) -> list[tuple[str, int, int, int, int, int]]:
    """(name, type, flags, address, file offset, size) of the sections covering ``seg``: its file
    bytes (``.text`` or ``.data``) and its zero-filled tail (``.bss``)."""
    flags = SHF_ALLOC | (SHF_EXECINSTR if "x" in seg.flags else 0)
    flags |= SHF_WRITE if "w" in seg.flags else 0
    out = []
    if seg.data:
        name = ".text" if "x" in seg.flags else ".data"
        out.append((name, SHT_PROGBITS, flags, seg.vaddr, file_offset, len(seg.data)))
    if seg.memsz > len(seg.data):
        tail = seg.vaddr + len(seg.data)
        out.append((".bss", SHT_NOBITS, flags, tail, file_offset + len(seg.data),
                    seg.memsz - len(seg.data)))  # fmt: skip
    return out


def write_elf(image: Image) -> bytes:
    """An ELF32 executable of ``image``: one PT_LOAD segment per image segment (file offset
    congruent to its address modulo :data:`SEGMENT_ALIGN`), its sections (``.text``/``.data``
    for the file bytes, ``.bss`` for a zero-filled tail), a symbol table of the image's symbols
    (all global) and the section name table."""
    ordered = sorted(image.segments, key=lambda s: s.vaddr)
    body = bytearray()
    start = _EHDR.size + len(ordered) * _PHDR.size  # file offset of body

    def append(data: bytes, align: int, address: int = 0) -> int:
        """Add ``data`` to the body at a file offset congruent to ``address`` mod ``align``."""
        body.extend(bytes((address - start - len(body)) % align))
        offset = start + len(body)
        body.extend(data)
        return offset

    phdrs, sections = [], []
    for seg in ordered:
        offset = append(seg.data, SEGMENT_ALIGN, seg.vaddr)
        phdrs.append(_PHDR.pack(PT_LOAD, offset, seg.vaddr, seg.vaddr, len(seg.data),
                                seg.memsz, _flags_bits(seg.flags), SEGMENT_ALIGN))  # fmt: skip
        sections += _sections_of(seg, offset)

    def section_of(value: int) -> int:
        """The index of the section holding ``value`` (or ending at it), else SHN_ABS."""
        for inclusive in (False, True):
            for index, (_, _, _, addr, _, size) in enumerate(sections, start=1):
                if addr <= value < addr + size + inclusive:
                    return index
        return SHN_ABS

    strtab, shstr = _Strings(), _Strings()
    symtab = _SYM.pack(0, 0, 0, 0, 0, 0) + b"".join(
        _SYM.pack(strtab.add(name), value & 0xFFFF_FFFF, 0, STB_GLOBAL << 4 | STT_NOTYPE, 0,
                  section_of(value))
        for name, value in sorted(image.symbols.items(), key=lambda kv: (kv[1], kv[0]))
    )  # fmt: skip
    shdrs = [_SHDR.pack(*([0] * 10))]
    for name, sh_type, flags, addr, offset, size in sections:
        shdrs.append(_SHDR.pack(shstr.add(name), sh_type, flags, addr, offset, size, 0, 0, 4, 0))
    symtab_index = len(shdrs)  # .symtab, then its .strtab, then .shstrtab
    shdrs.append(_SHDR.pack(shstr.add(".symtab"), SHT_SYMTAB, 0, 0, append(symtab, 4),
                            len(symtab), symtab_index + 1, 1, 4, _SYM.size))  # fmt: skip
    shdrs.append(_SHDR.pack(shstr.add(".strtab"), SHT_STRTAB, 0, 0,
                            append(bytes(strtab.data), 1), len(strtab.data), 0, 0, 1,
                            0))  # fmt: skip
    if image.spills:
        table = b"".join(
            _SPILL.pack(pc, SPILL_KINDS.index(kind)) for pc, kind in sorted(image.spills.items())
        )
        shdrs.append(_SHDR.pack(shstr.add(SPILL_SECTION), SHT_PROGBITS, 0, 0,
                                append(table, 4), len(table), 0, 0, 4, _SPILL.size))  # fmt: skip
    name = shstr.add(".shstrtab")
    shdrs.append(_SHDR.pack(name, SHT_STRTAB, 0, 0, append(bytes(shstr.data), 1),
                            len(shstr.data), 0, 0, 1, 0))  # fmt: skip
    shoff = append(b"".join(shdrs), 4)
    ident = ELF_MAGIC + bytes([ELFCLASS32, ELFDATA2LSB, EV_CURRENT]) + bytes(9)
    header = _EHDR.pack(ident, ET_EXEC, EM_RISCV, EV_CURRENT, image.entry, _EHDR.size, shoff,
                        EF_RISCV_FLOAT_ABI_SOFT, _EHDR.size, _PHDR.size, len(phdrs), _SHDR.size,
                        len(shdrs), len(shdrs) - 1)  # fmt: skip
    return header + b"".join(phdrs) + bytes(body)
