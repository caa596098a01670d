"""ELF32 reading and writing: write_elf -> read_elf round trips, GNU readelf and objdump accept
the files we write and see what we wrote, read_elf reads what GNU ld links, and every file the
SM cannot load is an ElfError with its exact message."""

from __future__ import annotations

import re
import struct
import subprocess
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reconverge.golden.asm import assemble
from reconverge.golden.elf import ElfError, load_elf, read_elf, write_elf
from reconverge.golden.image import Image, Segment
from reconverge.golden.memmap import GLOBAL_BASE
from reconverge.golden.testing import gnu

PROGRAM = """\
  .globl _start
_start:
  la   t0, table
  lw   a0, 4(t0)
  la   t1, counter
  sw   a0, 0(t1)
  li   a7, 93
  ecall
  .section .rodata
message: .asciz "read-only, 23 bytes"
  .data
table: .word 1, 2, 3
  .bss
counter: .space 8
end:
"""


@pytest.fixture(scope="module")
def image() -> Image:
    return assemble(PROGRAM, "program.S")


@pytest.fixture
def elf_file(image: Image, tmp_path: Path) -> Path:
    path = tmp_path / "program.elf"
    path.write_bytes(write_elf(image))
    return path


def test_round_trip_of_an_assembled_program(image: Image, elf_file: Path) -> None:
    back = load_elf(elf_file)
    assert back.entry == image.entry == GLOBAL_BASE
    assert back.segments == image.segments
    assert dict(back.symbols) == dict(image.symbols)
    assert back.source == str(elf_file)
    # The program as assembled: code + read-only data, then data with a zero-filled .bss tail.
    rx, rw = image.segments
    assert (rx.flags, rw.flags) == ("rx", "rw")
    assert len(rw.data) == 12 and rw.memsz == 12 + 8  # .bss right after .data
    assert image.symbols["end"] == rw.end


segment_strategy = st.builds(
    lambda gap, data, tail, flags: (gap, data, tail, flags),
    st.integers(0, 64).map(lambda k: 4 * k),
    st.binary(max_size=64),
    st.integers(0, 40),
    st.sampled_from(["rx", "r", "rw", "rwx"]),
)


@settings(max_examples=60, deadline=None)
@given(
    parts=st.lists(segment_strategy, min_size=1, max_size=4),
    names=st.lists(st.from_regex(r"[A-Za-z_][A-Za-z0-9_.$]{0,12}", fullmatch=True), max_size=8),
    data=st.data(),
)
def test_round_trip_of_any_image(
    parts: list[tuple[int, bytes, int, str]], names: list[str], data: st.DataObject
) -> None:
    """Segments at any word-aligned addresses, with or without bytes and zero-filled tails, and
    symbols anywhere (in a segment, at its end, outside every segment). The file offset of
    every segment is congruent to its address modulo its alignment."""
    segments, address = [], GLOBAL_BASE
    for gap, body, tail, flags in parts:
        address += gap
        segments.append(Segment(address, body, len(body) + tail, flags))
        address += len(body) + tail
        address += -address % 4
    symbols = {n: data.draw(st.integers(GLOBAL_BASE - 16, address + 16)) for n in names}
    image = Image(data.draw(st.sampled_from([s.vaddr for s in segments])), tuple(segments),
                  symbols)  # fmt: skip
    loadable = tuple(s for s in segments if s.memsz)  # an empty segment is not loaded
    if not loadable:
        with pytest.raises(ElfError, match="no loadable"):
            read_elf(write_elf(image))
        return
    if not any(s.vaddr == image.entry and s.data and "x" in s.flags for s in loadable):
        with pytest.raises(ElfError, match="lies in no executable segment"):
            read_elf(write_elf(image))
        return
    written = write_elf(image)
    back = read_elf(written)
    assert (back.entry, back.segments, dict(back.symbols)) == (image.entry, loadable, symbols)
    phoff, phnum = _EHDR.unpack_from(written)[5], _EHDR.unpack_from(written)[10]
    for i in range(phnum):  # the ELF rule for loadable segments: offset = vaddr mod p_align
        _, p_offset, p_vaddr, *_, p_align = _PHDR.unpack_from(written, phoff + i * _PHDR.size)
        assert p_offset % p_align == p_vaddr % p_align


# ----------------------------------------------------------------------------------------------
# GNU binutils on the files we write, and our reader on the files GNU ld writes.


@pytest.mark.gnu
def test_readelf_accepts_what_we_write(image: Image, elf_file: Path) -> None:
    done = gnu.run("readelf", "-h", "-l", "-s", "-S", "-W", str(elf_file))
    header = dict(re.findall(r"^\s+([A-Z][\w ()/-]+):\s+(.+?)\s*$", done, re.M))
    assert header["Class"] == "ELF32"
    assert header["Data"] == "2's complement, little endian"
    assert header["Type"] == "EXEC (Executable file)"
    assert header["Machine"] == "RISC-V"
    assert int(header["Entry point address"], 16) == image.entry
    loads = re.findall(
        r"^\s+LOAD\s+\S+\s+(\S+)\s+\S+\s+(\S+)\s+(\S+)\s+([RWE ]+?)\s+0x", done, re.M
    )
    seen = [
        (int(a, 16), int(f, 16), int(m, 16), flags.replace(" ", "")) for a, f, m, flags in loads
    ]
    wanted = [(s.vaddr, len(s.data), s.memsz, s.flags.upper().replace("X", "E"))
              for s in image.segments]  # fmt: skip
    assert seen == wanted
    symbols = {f[7]: int(f[1], 16) for f in (line.split() for line in done.splitlines())
               if len(f) == 8 and f[0].endswith(":") and f[4] == "GLOBAL"}  # fmt: skip
    assert symbols == dict(image.symbols)


@pytest.mark.gnu
def test_readelf_has_no_complaints(elf_file: Path) -> None:
    cmd = [gnu.tool("readelf"), "-a", "-W", str(elf_file)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    assert done.returncode == 0 and done.stderr == "", done.stderr


@pytest.mark.gnu
def test_objdump_decodes_the_words_we_write(image: Image, elf_file: Path) -> None:
    rx = image.segments[0]
    listing = gnu.objdump(elf_file, "-M", "no-aliases")
    code_end = image.symbols["message"]
    assert [(line.address, line.word) for line in listing if line.address < code_end] == [
        (rx.vaddr + i, int.from_bytes(rx.data[i : i + 4], "little"))
        for i in range(0, code_end - rx.vaddr, 4)
    ]
    assert listing[0].mnemonic == "auipc" and listing[-1].address >= code_end - 4


def memory_from(image: Image, base: int, size: int) -> bytes:
    """``size`` bytes of the image's initialised memory from ``base`` (zeros elsewhere)."""
    buf = bytearray(size)
    for seg in image.segments:
        lo, hi = max(seg.vaddr, base), min(seg.vaddr + len(seg.data), base + size)
        if lo < hi:
            buf[lo - base : hi - base] = seg.data[lo - seg.vaddr : hi - seg.vaddr]
    return bytes(buf)


@pytest.mark.gnu
def test_reads_what_gnu_ld_links(image: Image, tmp_path: Path) -> None:
    """The same program built by GNU as + ld: the same bytes at the same addresses, the entry,
    the labels (and none of GNU's mapping symbols $x/$d)."""
    build = gnu.build(PROGRAM, image.symbols["table"], tmp_path)
    gnu_image = load_elf(build.elf)
    assert gnu_image.entry == image.entry
    size = len(build.memory)
    assert memory_from(gnu_image, GLOBAL_BASE, size) == build.memory
    assert memory_from(image, GLOBAL_BASE, size) == build.memory
    for name in ("_start", "message", "table", "counter", "end"):
        assert gnu_image.symbols[name] == image.symbols[name] == build.symbols[name], name
    assert [name for name in gnu_image.symbols if name.startswith("$")] == []
    assert "$x" in gnu.run("readelf", "-s", str(build.elf))  # GNU did write mapping symbols


# ----------------------------------------------------------------------------------------------
# Errors.

_EHDR = struct.Struct("<16sHHIIIIIHHHHHH")
_PHDR = struct.Struct("<IIIIIIII")


def patched(data: bytes, offset: int, fmt: str, value: int) -> bytes:
    out = bytearray(data)
    struct.pack_into(fmt, out, offset, value)
    return bytes(out)


def first_phdr(data: bytes) -> tuple[int, tuple[int, ...]]:
    phoff = _EHDR.unpack_from(data)[5]
    return phoff, _PHDR.unpack_from(data, phoff)


def broken_files(good: bytes) -> list[tuple[str, bytes, str]]:
    """(what, bytes, message after "name: ") for every way read_elf refuses a file."""
    phoff, phdr = first_phdr(good)
    p_offset, p_filesz = phdr[1], phdr[4]
    rvc_msg = ("built with compressed instructions (EF_RISCV_RVC), which the SM does not run: "
               "rebuild with -march=rv32ima_zicsr")  # fmt: skip
    return [
        ("not ELF", b"#!/bin/sh\necho hello\n" * 4, "not an ELF file (no \\x7fELF header)"),
        ("empty", b"", "not an ELF file (no \\x7fELF header)"),
        ("truncated header", good[:40], "truncated: 40 bytes, shorter than the ELF header (52)"),
        ("64-bit", patched(good, 4, "B", 2),
         "not a 32-bit ELF file (the SM runs RV32: build with -march=rv32ima_zicsr -mabi=ilp32)"),
        ("big-endian", patched(good, 5, "B", 2), "not a little-endian ELF file"),
        ("x86-64", patched(good, 18, "<H", 62), "machine 62 is not RISC-V (243)"),
        ("relocatable", patched(good, 16, "<H", 1),
         "ELF type 1 is not an executable (ET_EXEC): link the program first"),
        ("shared object", patched(good, 16, "<H", 3),
         "ELF type 3 is not an executable (ET_EXEC): link the program first"),
        ("RVC", patched(good, 36, "<I", 0x5), rvc_msg),
        ("phentsize", patched(good, 42, "<H", 56), "program header size 56 is not 32"),
        ("truncated program headers", good[: phoff + 40],
         "truncated: program headers lie past the end of the file"),
        ("truncated segment", good[: p_offset + p_filesz - 1],
         "truncated: segment 0 at 0x80000000 lies past the end of the file"),
        ("memsz < filesz", patched(good, phoff + 20, "<I", p_filesz - 1),
         "segment 0 at 0x80000000 has p_memsz < p_filesz"),
        ("no PT_LOAD", patched(patched(good, phoff, "<I", 6), phoff + 32, "<I", 4),
         "no loadable (PT_LOAD) segment"),
        ("no program headers", patched(good, 44, "<H", 0), "no loadable (PT_LOAD) segment"),
    ]  # fmt: skip


def test_every_elf_error_names_the_file_and_cause(image: Image) -> None:
    good = write_elf(image)
    assert len(image.segments) == 2 and first_phdr(good)[1][2] == GLOBAL_BASE
    for what, data, message in broken_files(good):
        with pytest.raises(ElfError) as info:
            read_elf(data, "bad.elf")
        assert str(info.value) == f"bad.elf: {message}", what


def test_missing_and_unreadable_files(tmp_path: Path) -> None:
    missing = tmp_path / "nope.elf"
    with pytest.raises(ElfError) as info:
        load_elf(missing)
    assert str(info.value) == f"{missing}: No such file or directory"
    with pytest.raises(ElfError) as info:
        load_elf(tmp_path)
    assert str(info.value) == f"{tmp_path}: Is a directory"


@pytest.mark.gnu
def test_files_gnu_tools_make_that_the_sm_cannot_run(tmp_path: Path) -> None:
    """Real GNU output: an object file (not linked), a 64-bit object, an RVC executable."""
    src = tmp_path / "t.S"
    src.write_text("  .globl _start\n_start:\n  addi a0, a0, 1\n  li a7, 93\n  ecall\n")
    cases = {
        "rv32.o": (["-march=rv32i", "-mabi=ilp32"], "ELF type 1 is not an executable"),
        "rv64.o": (["-march=rv64i", "-mabi=lp64"], "not a 32-bit ELF file"),
        "rvc.o": (["-march=rv32ic", "-mabi=ilp32"], None),
    }
    for name, (flags, message) in cases.items():
        gnu.run("as", *flags, "-o", str(tmp_path / name), str(src))
        if message is not None:
            with pytest.raises(ElfError, match=re.escape(message)):
                load_elf(tmp_path / name)
    rvc = tmp_path / "rvc.elf"
    gnu.run(
        "ld", *gnu.LD_FLAGS, f"-Ttext={GLOBAL_BASE:#x}", "-o", str(rvc), str(tmp_path / "rvc.o")
    )
    with pytest.raises(ElfError, match=r"EF_RISCV_RVC"):
        load_elf(rvc)
