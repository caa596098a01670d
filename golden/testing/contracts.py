"""The project's own import-linter contracts (``make lint`` runs ``lint-imports``; pyproject.toml
registers them under ``contract_types``):

* ``public_names``: no module takes a private name (one starting with ``_``) from another
  module, by ``from M import _x`` or as ``M._x`` of an imported module: what crosses modules is
  public, documented API (issue 29).
* ``layered``: every module of the root packages lies in exactly one layer of the layers
  contract named by ``layers_contract``, so a new module cannot escape the layering unnoticed.

Tests are not in import-linter's graph, so neither contract looks at them.
"""

from __future__ import annotations

import ast
import importlib.util
import tomllib
from dataclasses import dataclass
from pathlib import Path

import grimp
from importlinter import Contract, ContractCheck, fields, output


@dataclass(frozen=True)
class Violation:
    module: str
    line: int
    text: str


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _source(module: str) -> Path | None:
    spec = importlib.util.find_spec(module)
    return Path(spec.origin) if spec is not None and spec.origin else None


def private_uses(module: str, tree: ast.Module, modules: set[str]) -> list[Violation]:
    """Where ``module`` (parsed as ``tree``) uses a private name of another module of
    ``modules``."""
    found: list[Violation] = []
    aliases: dict[str, str] = {}  # local name -> the project module it is bound to
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in modules and node.module != module:
            for alias in node.names:
                if _private(alias.name):
                    text = f"from {node.module} import {alias.name}"
                    found.append(Violation(module, node.lineno, text))
                elif f"{node.module}.{alias.name}" in modules:
                    aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in modules and alias.asname:
                    aliases[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and _private(node.attr)
            and isinstance(node.value, ast.Name)
            and aliases.get(node.value.id, module) != module
        ):
            text = f"{node.value.id}.{node.attr} ({aliases[node.value.id]})"
            found.append(Violation(module, node.lineno, text))
    return found


class PublicNamesContract(Contract):
    """No module imports another module's private names."""

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        modules = set(graph.modules)
        violations = []
        for module in sorted(modules):
            path = _source(module)
            if path is not None:
                tree = ast.parse(path.read_text(), str(path))
                violations += private_uses(module, tree, modules)
        return ContractCheck(kept=not violations, metadata={"violations": violations})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for v in check.metadata["violations"]:
            output.print_error(f"{v.module}:{v.line}: {v.text}", bold=False)
            output.new_line()


class LayeredContract(Contract):
    """Every module lies in exactly one layer of the layers contract ``layers_contract`` of
    ``config`` (a pyproject.toml)."""

    layers_contract = fields.StringField()
    config = fields.StringField()

    def layers(self) -> list[str]:
        data = tomllib.loads(Path(str(self.config)).read_text())
        contracts = data["tool"]["importlinter"]["contracts"]
        layers = next(c for c in contracts if c.get("id") == self.layers_contract)["layers"]
        return [m.strip() for layer in layers for m in layer.replace("|", ":").split(":")]

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        roots = set(self.session_options.get("root_packages", []))
        tops = self.layers()
        stray, doubled = [], []
        for module in sorted(graph.modules):
            if module in roots:
                continue
            homes = [t for t in tops if module == t or module.startswith(t + ".")]
            if not homes:
                stray.append(module)
            elif len(homes) > 1:
                doubled.append(f"{module} ({', '.join(homes)})")
        return ContractCheck(kept=not (stray or doubled),
                             metadata={"stray": stray, "doubled": doubled})  # fmt: skip

    def render_broken_contract(self, check: ContractCheck) -> None:
        for module in check.metadata["stray"]:
            output.print_error(f"{module}: in no layer of '{self.layers_contract}'", bold=False)
            output.new_line()
        for text in check.metadata["doubled"]:
            output.print_error(f"{text}: in more than one layer", bold=False)
            output.new_line()
