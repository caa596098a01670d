"""The compiler is deterministic: the same kernel and options give the same bytes in every
process, whatever the hash seed, the working directory or what the process compiled before.
(The linear allocator once numbered the local slots of values live across a call in the
iteration order of a set of virtual registers, which follows id(): memcached, nqueens,
raytrace and hashLookup then compiled differently from one process to the next.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

#: Kernels whose images once differed between processes (they call device functions).
KERNELS = ["memcached", "nqueens", "raytrace", "hashLookup"]

#: Compiles the kernels named on the command line in that order, with and without hints, and
#: prints the sha256 of each image's segments and symbols.
SCRIPT = """\
import hashlib, json, sys
from reconverge.golden.compiler import compile_kernel
from reconverge.kernels import suite

kernels, out = suite(), {}
for name in sys.argv[1:]:
    for hints in (True, False):
        image = compile_kernel(kernels[name].kernel, "linear", 16, hints=hints).image
        h = hashlib.sha256(json.dumps(sorted(image.symbols.items())).encode())
        for seg in image.segments:
            h.update(seg.vaddr.to_bytes(4, "little") + bytes(seg.data))
        out[f"{name} hints={hints}"] = h.hexdigest()
print(json.dumps(out))
"""


def digests(seed: str, cwd: Path, names: list[str]) -> dict[str, str]:
    cwd.mkdir()
    env = dict(os.environ, PYTHONHASHSEED=seed)
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, *names],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_images_are_identical_across_processes(tmp_path: Path) -> None:
    first = digests("0", tmp_path / "a", KERNELS)
    second = digests("1", tmp_path / "second-working-directory", KERNELS[::-1])
    assert first == second
