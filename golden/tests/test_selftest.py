"""The RV32IMA self-test program (programs/rv32ima_selftest.S) on the project's assembler, GNU
binutils and the golden functional model.

The program is a riscv-tests style sequence of numbered test cases covering every instruction
that is legal at run time; a thread exits with the number of the first failing test, or 0.
Here it must (a) assemble to exactly the bytes GNU as + ld produce, (b) pass in every thread
for several geometries, leaving the expected words in global memory, and (c) fail with the
right test number when one expected constant is made wrong.
"""

from __future__ import annotations

import functools
import operator
import re
from pathlib import Path

import numpy as np
import pytest

from reconverge.golden.asm import assemble
from reconverge.golden.functional import LaunchConfig, RunResult, run
from reconverge.golden.geometry import Geometry
from reconverge.golden.image import Image
from reconverge.golden.isa import MASK32 as M32
from reconverge.golden.isa import SPECS, decode, sext
from reconverge.golden.memmap import GLOBAL_BASE
from reconverge.golden.testing import gnu

PROGRAM = Path(__file__).parent / "programs" / "rv32ima_selftest.S"

#: Instructions the program does not execute because they are faults at run time: csrrw and
#: csrrwi always write a CSR (the SIMT CSRs are read-only), ebreak is an unsupported trap.
NOT_RUNNABLE = frozenset({"csrrw", "csrrwi", "ebreak"})


def flat_bytes(image: Image) -> bytes:
    """The image's memory from its lowest to its highest segment address, gaps and the
    zero-filled tails of segments as zeros."""
    start = min(seg.vaddr for seg in image.segments)
    buf = bytearray(max(seg.end for seg in image.segments) - start)
    for seg in image.segments:
        buf[seg.vaddr - start : seg.vaddr - start + len(seg.data)] = seg.data
    return bytes(buf)


def first_difference(ours: bytes, gnu: bytes) -> str:
    """Where two memory images from 0x80000000 first differ, as a readable message."""
    if len(ours) != len(gnu):
        return f"sizes differ: ours {len(ours):#x} bytes, GNU {len(gnu):#x} bytes"
    offset = next(i for i, (a, b) in enumerate(zip(ours, gnu, strict=True)) if a != b) & ~3
    ours_word, gnu_word = (int.from_bytes(b[offset : offset + 4], "little") for b in (ours, gnu))
    return (
        f"first difference at {GLOBAL_BASE + offset:#010x}: "
        f"ours {ours_word:#010x}, GNU {gnu_word:#010x}"
    )


@pytest.fixture(scope="module")
def source() -> str:
    return PROGRAM.read_text()


@pytest.fixture(scope="module")
def image(source: str) -> Image:
    return assemble(source, str(PROGRAM))


@pytest.mark.gnu
def test_assembles_identically_with_gnu_as(source: str, image: Image, tmp_path: Path) -> None:
    assert image.entry == image.symbols["_start"] == GLOBAL_BASE
    assert min(seg.vaddr for seg in image.segments) == GLOBAL_BASE
    ours = flat_bytes(image)
    theirs = gnu.build(gnu.gnu_spelling(source), image.symbols["counter"], tmp_path).memory
    assert ours == theirs, first_difference(ours, theirs)


def test_covers_every_runnable_instruction(image: Image) -> None:
    """Every instruction of isa.SPECS that is legal at run time occurs in the program text
    (everything from 0x80000000 up to .data; zero words are alignment padding)."""
    text = flat_bytes(image)[: image.symbols["counter"] - GLOBAL_BASE]
    words = np.frombuffer(text, "<u4").tolist()
    used = {decode(word).name for word in words if word}
    assert used == {spec.name for spec in SPECS} - NOT_RUNNABLE


def launch(image: Image, grid: int, block: int, warp_size: int) -> RunResult:
    """Run the self-test; its arguments are the launch's warp, block and grid sizes."""
    geometry = Geometry(warp_size=warp_size, simd_width=min(8, warp_size))
    config = LaunchConfig(grid=grid, block=block, geometry=geometry, args=(warp_size, block, grid))
    return run(image, config)


@pytest.mark.parametrize("grid", [1, 2])
@pytest.mark.parametrize("block", [1, 12, 64])
@pytest.mark.parametrize("warp_size", [1, 8, 32])
def test_every_thread_passes(image: Image, grid: int, block: int, warp_size: int) -> None:
    result = launch(image, grid, block, warp_size)
    assert result.fault is None, str(result.fault)
    assert result.exit_codes.tolist() == [[0] * block] * grid

    total = grid * block
    words = {
        name: int(result.memory.read_words(image.symbols[name], 1)[0])
        for name in ("counter", "gmax", "gmin", "gswap", "gor", "gand", "gxor", "gminu", "gmaxu",
                     "lrsc")
    }  # fmt: skip
    assert words["counter"] == total  # every thread amoadded 1
    assert words["gmax"] == total - 1
    assert words["gmin"] == 0
    bits = functools.reduce(operator.or_, (1 << (gid % 32) for gid in range(total)))
    assert words["gor"] == bits
    assert words["gand"] == M32 & ~bits
    assert words["gxor"] == functools.reduce(operator.xor, range(total))
    assert words["gminu"] == 0
    assert words["gmaxu"] == 0x8000_0000 | (total - 1)
    assert words["lrsc"] == total  # every thread's lr.w / sc.w loop added 1 exactly once

    results = result.memory.read_words(image.symbols["results"], 4 * total).reshape(total, 4)
    threads = [(c, t) for c in range(grid) for t in range(block)]  # in global id order
    identity = [c << 24 | (t // warp_size) << 16 | (t % warp_size) << 8 | t for c, t in threads]
    assert results[:, 0].tolist() == identity
    # amoadd.w old values: each of 0 .. total-1 exactly once.
    assert sorted(results[:, 1].tolist()) == list(range(total))
    # amoswap.w old values and the final word: the initial -1 and every global id once.
    swapped = [sext(old, 32) for old in results[:, 2].tolist()] + [sext(words["gswap"], 32)]
    assert sorted(swapped) == [-1, *range(total)]
    # After the barriers: the word thread (tid - 1) mod block of the same block stored.
    neighbour = [0x8000_0000 | c << 16 | (t - 1) % block for c, t in threads]
    assert results[:, 3].tolist() == neighbour


@pytest.mark.parametrize(
    ("comment", "original", "mutated"),
    [
        ("div overflow: -2^31 / -1 = -2^31", "li   t2, 0x80000000", "li   t2, 0x7fffffff"),
        ("rem by zero gives the dividend: -5 % 0 = -5", "li   t2, -5", "li   t2, 5"),
    ],
)
def test_wrong_expected_value_reports_its_test_number(
    source: str, comment: str, original: str, mutated: str
) -> None:
    """Proof that the self-test can fail: with one expected constant changed, every thread
    exits with that test's number (and stops before the global AMOs)."""
    case = re.search(
        rf"li\s+s11, (\d+)\s+# {re.escape(comment)}\n.*?jal\s+check", source, re.DOTALL
    )
    assert case is not None, f"test case {comment!r} not found in {PROGRAM.name}"
    assert case[0].count(original) == 1
    bad_source = source[: case.start()] + case[0].replace(original, mutated) + source[case.end() :]
    bad_image = assemble(bad_source, "mutated_selftest.S")

    result = launch(bad_image, grid=2, block=12, warp_size=8)
    assert result.fault is None, str(result.fault)
    assert result.exit_codes.tolist() == [[int(case[1])] * 12] * 2
    assert int(result.memory.read_words(bad_image.symbols["counter"], 1)[0]) == 0
