"""Every class of bad input a user can give the command line (:data:`CASES`: the arguments,
the exit status and a fragment of the line the user sees) and the files they name, and the
table of docs/testing.md ("Bad input") made by running them:
``python -m reconverge.golden.testing.bad_input docs/testing.md`` (``make docs``).
``golden/tests/test_bad_input.py`` asserts each case."""

from __future__ import annotations

import contextlib
import io
import re
import struct
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from reconverge.golden import cli
from reconverge.golden.asm import assemble
from reconverge.golden.elf import write_elf
from reconverge.golden.errors import UserError
from reconverge.golden.image import Image, Segment
from reconverge.golden.output import write_section

ROOT = Path(__file__).parents[2]
DEMO = str(ROOT / "kernels" / "divergent_demo.S")


@dataclass(frozen=True)
class Case:
    """One bad input: the arguments (``{tmp}`` is a scratch folder holding the files of
    :func:`files`), the exit status, and a fragment of the one-line message."""

    name: str
    argv: tuple[str, ...]
    status: int
    fragment: str


def elf_bytes(**patch: int) -> bytes:
    """A valid ELF of a one-instruction program, with header fields patched (offsets of the
    ELF32 header)."""
    image = assemble("_start:\n  li a7, 93\n  ecall\n", "ok.S")
    data = bytearray(write_elf(image))
    for offset, value in patch.items():
        index = int(offset.removeprefix("at"))
        data[index] = value
    return bytes(data)


def files(tmp: Path) -> None:
    """The bad files the cases name."""
    good = elf_bytes()
    (tmp / "empty.elf").write_bytes(b"")
    (tmp / "truncated.elf").write_bytes(good[:30])
    (tmp / "random.elf").write_bytes(bytes((i * 97 + 13) % 256 for i in range(300)))
    (tmp / "elf64.elf").write_bytes(elf_bytes(at4=2))  # EI_CLASS = ELFCLASS64
    (tmp / "bigendian.elf").write_bytes(elf_bytes(at5=2))  # EI_DATA = ELFDATA2MSB
    (tmp / "x86.elf").write_bytes(elf_bytes(at18=3, at19=0))  # e_machine = EM_386
    entry = bytearray(good)
    struct.pack_into("<I", entry, 24, 0x8000_1000)  # e_entry past the code
    (tmp / "entry.elf").write_bytes(bytes(entry))
    code = assemble("_start:\n  li a7, 93\n  ecall\n", "x.S").segments[0]
    overlap = Image(code.vaddr, (code, Segment(code.vaddr + 4, b"\0" * 8, 8, "rw")))
    (tmp / "overlap.elf").write_bytes(write_elf(overlap))
    low = Image(0x1000, (Segment(0x1000, code.data, len(code.data), "rx"),))
    (tmp / "low.elf").write_bytes(write_elf(low))
    (tmp / "folder").mkdir()
    (tmp / "syntax.S").write_text("_start:\n  addi a0, a0\n")
    (tmp / "binary.py").write_bytes(bytes(range(256)))  # not text: NUL bytes
    (tmp / "kernel.py").write_text(
        "from reconverge.golden.compiler import *\n\n\n@kernel\ndef k(out: Array):\n"
        "    out[tid()] = 1.5\n"
    )
    programs = {
        "illegal.S": "_start:\n  .word 0xffffffff\n",
        "unmapped.S": "_start:\n  li t0, 0x10\n  lw a0, 0(t0)\n  li a7, 93\n  ecall\n",
        # half the threads exit, the others wait at a barrier they can never pass
        "barrier.S": "_start:\n  csrr t0, tid\n  andi t0, t0, 1\n  beqz t0, 1f\n  li a7, 93\n"
        "  ecall\n1:\n  bar\n  li a7, 93\n  ecall\n",
        "loop.S": "_start:\n  j _start\n",
        # nested divergence three deep: more than a one-entry stack holds
        "deep.S": "_start:\n  csrr t0, tid\n  andi t1, t0, 1\n  beqz t1, 1f\n  andi t1, t0, 2\n"
        "  beqz t1, 1f\n  andi t1, t0, 4\n  beqz t1, 1f\n  nop\n1:\n  li a7, 93\n  ecall\n",
        "syscall.S": "_start:\n  li a7, 64\n  ecall\n",
        "pastend.S": "_start:\n  addi a0, a0, 1\n",  # no exit: runs into the zeros after it
        "bignum.S": f"_start:\n  li a0, {'9' * 100}\n",
        "hugenum.S": f"_start:\n  addi a0, a0, {'9' * 4400}\n",  # past int()'s 4300 digits
    }
    for name, text in programs.items():
        (tmp / name).write_text(text)


USAGE, FAILED = cli.EXIT_USAGE, cli.EXIT_FAILED
CASES = [
    # files
    Case("missing file", ("exec", "{tmp}/none.elf"), USAGE, "none.elf: No such file"),
    Case("a folder", ("exec", "{tmp}/folder"), USAGE, "Is a directory"),
    Case("empty file", ("exec", "{tmp}/empty.elf"), USAGE, "not an ELF file"),
    Case("truncated ELF", ("exec", "{tmp}/truncated.elf"), USAGE, "truncated"),
    Case("random bytes", ("run", "{tmp}/random.elf"), USAGE, "not an ELF file"),
    Case("64-bit ELF", ("exec", "{tmp}/elf64.elf"), USAGE, "not a 32-bit ELF file"),
    Case("big-endian ELF", ("exec", "{tmp}/bigendian.elf"), USAGE, "not a little-endian"),
    Case("another machine", ("disasm", "{tmp}/x86.elf"), USAGE, "is not RISC-V"),
    Case("entry outside", ("exec", "{tmp}/entry.elf"), USAGE, "lies in no executable segment"),
    Case("overlapping segments", ("exec", "{tmp}/overlap.elf"), USAGE, "overlap"),
    Case(
        "segment below global memory", ("exec", "{tmp}/low.elf"), USAGE, "lie outside global memory"
    ),
    Case("assembly error", ("asm", "{tmp}/syntax.S", "-o", "{tmp}/x.elf"), USAGE, "syntax.S:2"),
    Case(
        "literal past 64 bits",
        ("asm", "{tmp}/bignum.S", "-o", "{tmp}/x.elf"),
        USAGE,
        "bignum.S:2: number 999999999999...999999 (100 characters) does not fit in 64 bits",
    ),
    Case(
        "literal of 4400 digits",
        ("disasm", "{tmp}/hugenum.S"),
        USAGE,
        "hugenum.S:2: number 999999999999...999999 (4400 characters) does not fit",
    ),
    Case(
        "kernel-language error",
        ("compile", "{tmp}/kernel.py", "--emit", "asm"),
        USAGE,
        "kernel.py:6:18: a float value is not in the language",
    ),
    Case("unknown kernel", ("run", "nosuchkernel"), USAGE, "nor a suite kernel"),
    Case(
        "kernel options with a program",
        ("run", DEMO, "--size", "4", "--seed", "1"),
        USAGE,
        "--size, --seed are for suite kernels",
    ),
    *(
        Case(
            f"{kernel} at a size its inputs cannot have",
            ("run", kernel, "--size", "1"),
            USAGE,
            f"--size 1: {kernel}: ",
        )
        for kernel in ("lud", "mummer", "pathfinder")
    ),
    Case("negative seed", ("demo", "nested", "--seed", "-1"), USAGE, "--seed: must be from 0"),
    Case(
        "shared spill slots under dynamic warps",
        ("run", "mummer", "--allocator", "affine", "--regs", "5", "--warp-formation", "dwf"),
        USAGE,
        "dynamic warp formation breaks",
    ),
    # options and geometries
    Case("step limit 0", ("exec", DEMO, "--step-limit", "0"), USAGE, "--step-limit: must be"),
    Case("grid 0", ("exec", DEMO, "--grid", "0"), USAGE, "--grid: must be from 1"),
    Case("grid past 32 bits", ("exec", DEMO, "--grid", "4294967297"), USAGE, "--grid: must be"),
    Case(
        "argument past 32 bits",
        ("exec", DEMO, "--arg", "4294967296"),
        USAGE,
        "does not fit a 32-bit register",
    ),
    Case("not a number", ("exec", DEMO, "--block", "many"), USAGE, "not an integer: 'many'"),
    Case("negative size", ("run", "avgSquare", "--size", "-1"), USAGE, "--size: must be"),
    Case(
        "a size past memory (before generating inputs)",
        ("demo", "nested", "--size", "2147483647"),
        USAGE,
        "would not fit the 0x1000000 bytes of global memory",
    ),
    Case("eval jobs past the machine", ("eval", "--jobs", "99999"), USAGE, "--jobs must be from"),
    Case(
        "a size without threads",
        ("run", "laplace3d", "--size", "1"),
        USAGE,
        "--size 1: the kernel has no thread at this size",
    ),
    Case(
        "kernel file not text",
        ("compile", "{tmp}/binary.py", "--emit", "ir"),
        USAGE,
        "binary.py: source code string cannot contain null bytes",
    ),
    Case("launch larger than memory", ("exec", DEMO, "--block", "100000000"), USAGE, "needs about"),
    Case(
        "block larger than the SM",
        ("run", DEMO, "--block", "100", "--warps", "2"),
        USAGE,
        "more than the 2 warp slots",
    ),
    Case(
        "warp size not a power of two",
        ("exec", DEMO, "--warp-size", "3"),
        USAGE,
        "must be a power of two",
    ),
    Case(
        "more lanes than threads",
        ("run", DEMO, "--warp-size", "8", "--simd-width", "16"),
        USAGE,
        "no larger than W=8",
    ),
    Case(
        "an SM the hardware cannot build",
        ("verilog", "sm", "--config", "eval", "--policy", "mp-orec"),
        USAGE,
        "lookups must be in 1..128",
    ),
    Case("unknown policy", ("run", DEMO, "--policy", "fast"), USAGE, "invalid choice: 'fast'"),
    Case(
        "the SM cosim cannot build",
        ("cosim", "nested", "--config", "eval", "--policy", "mp-orec"),
        USAGE,
        "cannot be built: lookups must be in 1..128",
    ),
    Case("bad latency", ("run", DEMO, "--latency", "cache=3"), USAGE, "--latency takes"),
    Case(
        "latency past 31 bits",
        ("area", "sm", "--latency", "global=99999999999"),
        USAGE,
        "--latency global=99999999999: at most 2147483647 cycles",
    ),
    Case(
        "latency longer than the hardware's delay lines",
        ("verilog", "sm", "--latency", "global=5000"),
        USAGE,
        "--latency global=5000: the hardware SM takes at most 1024 cycles",
    ),
    *(
        Case(
            f"cosim timeout {t}",
            ("cosim", DEMO, f"--timeout={t}"),
            USAGE,
            f"--timeout: must be a finite number of seconds above 0, not {t}",
        )
        for t in ("0", "-1", "nan", "inf")
    ),
    Case("empty stack", ("run", DEMO, "--stack-depth", "0"), USAGE, "stack_depth must be"),
    Case(
        "too few registers",
        ("compile", "avgSquare", "--regs", "1", "--emit", "asm"),
        USAGE,
        "the budget is 3 to 28 registers",
    ),
    Case("unknown command", ("frobnicate",), USAGE, "invalid choice: 'frobnicate'"),
    # outputs
    Case("trace into no folder", ("run", DEMO, "--trace", "{tmp}/no/t.jsonl"), USAGE, "no folder"),
    Case(
        "plot of another format",
        ("run", DEMO, "--plot", "{tmp}/p.txt"),
        USAGE,
        "must end in .png or .svg or .pdf",
    ),
    Case("assemble into no folder", ("asm", DEMO, "-o", "{tmp}/no/x.elf"), USAGE, "no folder"),
    Case("assemble onto a folder", ("asm", DEMO, "-o", "{tmp}/folder"), USAGE, "is a folder"),
    Case(
        "verilog into no folder", ("verilog", "arbiter", "-o", "{tmp}/no/a.v"), USAGE, "no folder"
    ),
    Case(
        "trace onto a file of /proc",
        ("run", DEMO, "--trace", "/proc/version"),
        USAGE,
        "cannot write /proc/version",
    ),
    Case(
        "verilog into /proc", ("verilog", "arbiter", "-o", "/proc/a.v"), USAGE, "cannot write /proc"
    ),
    Case(
        "evaluation page into /proc (before any run or figure)",
        ("eval", "--output", "/proc/e.md"),
        USAGE,
        "no file can be made in /proc",
    ),
    Case(
        "trace onto a full device",
        ("run", DEMO, "--trace", "/dev/full"),
        USAGE,
        "cannot write /dev/full: No space left on device",
    ),
    Case(
        "trace and plot to one file",
        ("run", DEMO, "--trace", "{tmp}/p.png", "--plot", "{tmp}/p.png"),
        USAGE,
        "--trace and --plot name the same file",
    ),
    Case(
        "keep into a file",
        ("synth", "arbiter", "--keep", "{tmp}/loop.S"),
        USAGE,
        "loop.S is a file, not a folder",
    ),
    Case(
        "figures into a file",
        ("eval", "--figures", "{tmp}/loop.S"),
        USAGE,
        "loop.S is a file, not a folder",
    ),
    Case(
        "cache in a file",
        ("eval", "--cache", "{tmp}/loop.S"),
        USAGE,
        "loop.S is a file, not a folder",
    ),
    # programs that fail at run time
    Case("illegal instruction", ("exec", "{tmp}/illegal.S"), FAILED, "illegal instruction"),
    Case("unmapped load", ("run", "{tmp}/unmapped.S"), FAILED, "unmapped load"),
    Case(
        "barrier never reached",
        ("run", "{tmp}/barrier.S", "--block", "4"),
        FAILED,
        "barrier deadlock",
    ),
    Case(
        "table overflow",
        ("run", "{tmp}/deep.S", "--stack-depth", "1", "--block", "8"),
        FAILED,
        "table overflow",
    ),
    Case(
        "livelock",
        ("exec", "{tmp}/loop.S", "--step-limit", "5000"),
        FAILED,
        "give a larger --step-limit",
    ),
    Case("watchdog", ("run", "{tmp}/loop.S", "--max-cycles", "500"), FAILED, "watchdog"),
    Case("unknown system call", ("exec", "{tmp}/syscall.S"), FAILED, "only a7 = 93"),
    Case("past the end of the code", ("run", "{tmp}/pastend.S"), FAILED, "run past its end"),
]


BEGIN = "<!-- BEGIN BAD INPUT (generated by `make docs`) -->"
END = "<!-- END BAD INPUT -->"


def what_the_user_sees(case: Case, tmp: Path) -> str:
    """The one line of a user error, or the fault line of a failed run's report."""
    argv = [a.replace("{tmp}", str(tmp)) for a in case.argv]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = cli.main(argv)
    assert status == case.status, case
    text = err.getvalue() if status == USAGE else out.getvalue()
    lines = [line for line in text.splitlines() if status == USAGE or line.startswith("fault")]
    return lines[0] if lines else "-"


def render_table() -> str:
    rows = ["| input | command | exit | what the user sees |", "|---|---|---:|---|"]
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        files(tmp)

        def shown(text: str) -> str:
            text = text.replace(f"{tmp}/", "").replace(str(ROOT) + "/", "")
            text = re.sub(r"\d+(\.\d+)? GiB available", "N GiB available", text)
            return text.replace("|", "\\|")

        for case in CASES:
            command = "reconverge " + " ".join(a.replace("{tmp}/", "") for a in case.argv)
            line = what_the_user_sees(case, tmp)
            rows.append(f"| {case.name} | `{shown(command)}` | {case.status} | `{shown(line)}` |")
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    doc = Path(argv[0] if argv else "docs/testing.md")
    try:
        changed = write_section(doc, BEGIN, END, render_table())
    except UserError as exc:
        raise SystemExit(f"error: {exc}") from None
    print(f"{doc}: {'updated' if changed else 'unchanged'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
