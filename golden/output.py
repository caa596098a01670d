"""Output files of the commands (``-o``, ``--trace``, ``--plot``, the generated docs): checked
before the work starts, and written all at once or not at all — into a temporary file beside
the target that replaces it only when complete, so an interrupted or failing run never leaves
a half-written file."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from reconverge.golden.errors import UserError


class OutputError(UserError):
    """An output path that cannot be written (no such folder, a folder, a bad suffix)."""


def check_output(path: str | Path, suffixes: tuple[str, ...] = ()) -> Path:
    """``path`` if a file can be created there (its folder, or through a symbolic link its
    target's, exists and is writable, it is not a folder, and its suffix is one of
    ``suffixes`` when given) or it is a writable FIFO or device; an :class:`OutputError`
    otherwise."""
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"{path} is a folder, not a file to write")
    if suffixes and path.suffix.lower() not in suffixes:
        raise OutputError(f"{path}: the file name must end in {' or '.join(suffixes)}")
    real = Path(os.path.realpath(path))
    if real.exists() and not real.is_file():  # a FIFO or a device: written in place
        if not os.access(real, os.W_OK):
            raise OutputError(f"cannot write {path}: permission denied")
        return path
    folder = real.parent if path.is_symlink() else path.parent
    if not folder.is_dir():
        raise OutputError(f"cannot write {path}: no folder {folder}")
    if not os.access(folder, os.W_OK):
        raise OutputError(f"cannot write {path}: the folder {folder} is not writable")
    try:  # root passes os.access everywhere: a file made and removed is the real test
        fd, probe = tempfile.mkstemp(prefix=".reconverge-probe.", dir=folder)
    except OSError as exc:
        why = exc.strerror or str(exc)
        raise OutputError(f"cannot write {path}: no file can be made in {folder} ({why})") from None
    os.close(fd)
    os.unlink(probe)
    return path


@contextmanager
def atomic_output(path: str | Path, suffixes: tuple[str, ...] = ()) -> Iterator[Path]:
    """A temporary path (same folder and suffix) to write; it becomes ``path`` when the block
    ends normally and is removed when it raises. A symbolic link is written through (the file
    it names is replaced, the link stays); a FIFO or a device is written in place, as asked.
    A write that fails (a read-only or full file system, a file size limit) is an
    :class:`OutputError`."""
    target = check_output(path, suffixes)
    real = Path(os.path.realpath(target))
    try:
        if real.exists() and not real.is_file():
            yield real
            return
        fd, tmp = tempfile.mkstemp(
            prefix=f".{real.name}.", suffix=f".tmp{real.suffix}", dir=real.parent
        )
        os.close(fd)
        os.chmod(tmp, 0o666 & ~_umask())  # as open() would create it, not mkstemp's 0600
        try:
            yield Path(tmp)
            os.replace(tmp, real)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_output(path: str | Path, data: str | bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_output(path) as tmp:
        if isinstance(data, bytes):
            tmp.write_bytes(data)
        else:
            tmp.write_text(data)


def write_section(doc: Path, begin: str, end: str, body: str) -> bool:
    """Replace what lies between the marker lines ``begin`` and ``end`` of the page ``doc``
    (a generated part of a hand-written page) with ``body``; return whether it changed. A
    page without the markers is a UserError."""
    text = doc.read_text()
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise UserError(f"{doc}: markers {begin!r} ... {end!r} not found")
    new = pattern.sub(lambda _: f"{begin}\n{body}\n{end}", text)
    if new != text:
        write_output(doc, new)
    return new != text
