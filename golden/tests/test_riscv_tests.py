"""The public RISC-V ISA tests (riscv-tests rv32ui, rv32um, rv32ua; see ``riscv_tests.py``) on
the golden models: every test passes on the functional model (one thread; the RV32I and RV32M
ones in every thread of a warp too) with the per-thread instruction count qemu-riscv32
executes, and under every divergence policy of the cycle-level SM (hws off; on for RV32A).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from reconverge.golden.config import SMConfig
from reconverge.golden.elf import load_elf
from reconverge.golden.functional import LaunchConfig, run
from reconverge.golden.geometry import Geometry
from reconverge.golden.policies import HARDWARE, Mechanism
from reconverge.golden.sm.run import run_sm
from reconverge.golden.testing import qemu, riscv_tests

pytestmark = pytest.mark.gnu

NAMES = riscv_tests.names() or ["riscv-tests-missing"]
RV32A = [n for n in NAMES if n.startswith("rv32ua-")]
VARIANTS = [Mechanism(v) for v in HARDWARE]
WARP = Geometry(warp_size=8, simd_width=4)


@pytest.fixture(scope="module")
def out_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("riscv-tests")


def test_the_suites_are_there(out_dir: Path) -> None:
    """The package's copy holds the whole of the three suites (39 + 8 + 10 tests)."""
    riscv_tests.build("rv32ui-simple", out_dir)  # fails saying how to install the package
    counts = {s: sum(n.startswith(f"{s}-") for n in NAMES) for s in riscv_tests.SUITES}
    assert counts == {"rv32ui": 39, "rv32um": 8, "rv32ua": 10}


@pytest.mark.qemu
@pytest.mark.parametrize("name", NAMES)
def test_passes_on_the_functional_model_as_qemu_counts(name: str, out_dir: Path) -> None:
    elf = riscv_tests.build(name, out_dir)
    image = load_elf(elf)
    result = run(image, LaunchConfig(1, 1, WARP))
    assert result.fault is None, str(result.fault)
    assert result.exit_codes.tolist() == [[0]], f"{name}: case {result.exit_codes[0][0]} failed"
    status, count = qemu.run(elf, out_dir / f"{name}.qemu.log")
    assert status == 0, f"{name} failed under qemu-riscv32 (exit status {status})"
    assert result.thread_instructions.tolist() == [[count]]
    if name not in RV32A:  # a test of RV32A checks old values that other threads' AMOs change
        warp = run(image, LaunchConfig(1, WARP.warp_size, WARP))
        assert warp.fault is None and warp.exit_codes.tolist() == [[0] * WARP.warp_size]
        assert warp.thread_instructions.tolist() == [[count] * WARP.warp_size]


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.label for v in VARIANTS])
@pytest.mark.parametrize("name", NAMES)
def test_passes_under_every_policy(name: str, variant: Mechanism, out_dir: Path) -> None:
    check_sm(name, variant, out_dir)


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.label for v in VARIANTS])
@pytest.mark.parametrize("name", RV32A)
def test_rv32a_passes_under_every_policy_with_hws(
    name: str, variant: Mechanism, out_dir: Path
) -> None:
    check_sm(name, Mechanism(variant.variant, hws=True), out_dir)


def check_sm(name: str, variant: Mechanism, out_dir: Path) -> None:
    image = load_elf(riscv_tests.build(name, out_dir))
    config = SMConfig().with_mechanism(variant)
    result = run_sm(image, LaunchConfig(1, 1, WARP), config)
    assert result.fault is None, str(result.fault)
    assert result.exit_codes.tolist() == [[0]], f"{name}: case {result.exit_codes[0][0]} failed"
