"""Every module of the package imports: a name taken from another module that no longer
exists (after a move or a rename) fails here, not in the user's hands (``make results`` once
did, unnoticed, because no test imported its module)."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

PACKAGES = ("golden", "hdl", "testbench", "kernels")
MODULES = sorted(
    m.name
    for package in PACKAGES
    for m in pkgutil.walk_packages(
        importlib.import_module(f"reconverge.{package}").__path__, f"reconverge.{package}."
    )
    if ".tests" not in m.name and not m.name.endswith(".__main__")  # __main__ runs the CLI
)


def test_every_package_has_modules() -> None:
    for package in PACKAGES:
        assert sum(m.startswith(f"reconverge.{package}.") for m in MODULES) >= 3


@pytest.mark.parametrize("name", MODULES)
def test_module_imports(name: str) -> None:
    importlib.import_module(name)
