"""Program files: an ELF executable, or RISC-V assembly (``.s``, ``.S``, ``.asm``) assembled on
the fly, as one loadable :class:`~reconverge.golden.image.Image`."""

from __future__ import annotations

from pathlib import Path

from reconverge.golden.asm import assemble
from reconverge.golden.elf import load_elf
from reconverge.golden.errors import UserError
from reconverge.golden.image import Image

#: The suffixes of assembly sources.
ASSEMBLY_SUFFIXES = (".s", ".S", ".asm")


def load_program(path: str | Path) -> Image:
    """An ELF file, or an assembly source assembled on the fly; a file that cannot be read or
    parsed is a :class:`~reconverge.golden.errors.UserError` naming it."""
    path = Path(path)
    if path.suffix not in ASSEMBLY_SUFFIXES:
        return load_elf(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UserError(f"{path}: {exc.strerror or exc}") from None
    return assemble(data.decode(errors="replace"), str(path))
