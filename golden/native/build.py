"""Compile ``block.c`` into a shared library, once per source and compiler, cached under
``$RECONVERGE_CACHE`` (default ``~/.cache/reconverge``) and loaded with :mod:`ctypes`.

The operation numbers the C code switches on are generated here from
:data:`reconverge.golden.isa.SPECS` (``ops.h``), so the ISA has one definition: an instruction
the C code does not name is executed by the Python reference."""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

from reconverge.golden.errors import UserError
from reconverge.golden.isa import SPECS

SOURCE = Path(__file__).with_name("block.c")
FLAGS = ("-O2", "-std=c11", "-shared", "-fPIC", "-Wall")

#: The operation number of each instruction (its index in SPECS), and two more: a legal read
#: of a SIMT CSR (decoded further than its spec), and a word only the reference executes.
OPS: dict[str, int] = {spec.name: i for i, spec in enumerate(SPECS)}
OP_CSR_READ = len(SPECS)
OP_PYTHON = len(SPECS) + 1
#: Why ``run_block`` returns: the budget is spent, no warp can issue, a pc has no valid decoded
#: entry (Python decodes it), the next instruction is the reference's.
STOPS: dict[str, int] = {"BUDGET": 0, "IDLE": 1, "MISS": 2, "PYTHON": 3}


class NativeUnavailable(UserError):
    """The compiled inner loop cannot be built (no C compiler, or it failed)."""


def ops_header() -> str:
    """``ops.h``: ``#define OP_<NAME> <number>`` for every operation, ``STOP_<WHY>`` for
    :data:`STOPS`."""
    names = {f"OP_{name.upper().replace('.', '_')}": op for name, op in OPS.items()}
    names |= {"OP_CSR_READ": OP_CSR_READ, "OP_PYTHON": OP_PYTHON}
    names |= {f"STOP_{why}": code for why, code in STOPS.items()}
    return "".join(f"#define {name} {value}\n" for name, value in names.items())


def cache_dir() -> Path:
    root = os.environ.get("RECONVERGE_CACHE") or Path.home() / ".cache" / "reconverge"
    return Path(root) / "native"


def compiler() -> list[str]:
    return shlex.split(os.environ.get("CC", "cc"))


def build() -> Path:
    """The shared library of the current source, compiled if it is not cached yet (written
    under a temporary name and renamed, so concurrent builds never load a partial file)."""
    header = ops_header()
    cc = compiler()
    digest = hashlib.sha256(
        "\0".join([SOURCE.read_text(), header, *cc, *FLAGS]).encode()
    ).hexdigest()[:16]
    library = cache_dir() / f"block-{digest}.so"
    if library.exists():
        return library
    try:
        library.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=library.parent) as tmp:
            (Path(tmp) / "ops.h").write_text(header)
            out = Path(tmp) / library.name
            _compile([*cc, *FLAGS, f"-I{tmp}", str(SOURCE), "-o", str(out)])
            os.replace(out, library)
    except OSError as exc:
        raise NativeUnavailable(f"cannot build in {library.parent}: {exc}") from None
    return library


def _compile(command: list[str]) -> None:
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise NativeUnavailable(f"cannot run the C compiler {command[0]!r}: {exc}") from None
    if done.returncode:
        raise NativeUnavailable(
            f"compiling {SOURCE.name} failed ({shlex.join(command)}):\n{done.stderr}"
        )


@functools.cache
def load() -> ctypes.CDLL:
    """The compiled library (built on first use); :class:`NativeUnavailable` if it cannot be."""
    library = ctypes.CDLL(str(build()))
    library.run_block.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    library.run_block.restype = None
    return library


@functools.cache
def available() -> bool:
    """Whether the compiled inner loop can be used on this machine."""
    try:
        load()
    except NativeUnavailable:
        return False
    return True


def main() -> int:
    """Build the library now (``make setup``) rather than at the first functional run."""
    try:
        print(f"compiled inner loop: {build()}")
    except NativeUnavailable as exc:
        print(f"compiled inner loop unavailable: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
