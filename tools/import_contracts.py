"""import-linter contract types for what the stock ones cannot state (pyproject.toml lists
them under [tool.importlinter] contract_types; `make lint` runs lint-imports).

- `nested_layers`: layers that may sit inside one another. The composition root
  (readerstudy.config) is a sub-package of readerstudy, as `startproject` makes it, yet it is
  the top layer while the rest of readerstudy is the domain near the bottom, and another
  sub-package (readerstudy.platform) the bottom layer under it. The stock `layers` contract
  refuses layers that share descendants, and ignoring the root's imports would hide any other
  import that matched the same patterns. Here a module belongs to the most specific layer that
  names it or a package above it, and no import may run from a lower layer to a higher one.
  `ignore_imports` works as in the stock contracts (counted in lint-imports' report; one that
  matches nothing is an error).
- `acyclic_modules`: no module of the given packages imports itself back through others
  (a circle makes the import order matter and leaves neither module understandable alone).

tools/check_url_layers.py reads the same layers (`layers_from_pyproject`, `layer_of`), so the
URL names a module may link follow the contract too.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import grimp
from importlinter import Contract, ContractCheck, fields, output
from importlinter.application import contract_utils
from importlinter.domain.contract import InvalidContractOptions

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"
LAYERS_CONTRACT_ID = "layers"


def layers_from_pyproject(
    path: Path = PYPROJECT, contract_id: str = LAYERS_CONTRACT_ID
) -> tuple[str, ...]:
    """The layers of the contract `contract_id`, top first, as pyproject.toml declares them."""
    with open(path, "rb") as handle:
        contracts = tomllib.load(handle)["tool"]["importlinter"]["contracts"]
    for contract in contracts:
        if contract.get("id") == contract_id:
            return tuple(contract["layers"])
    raise LookupError(f"{path} declares no import-linter contract with id {contract_id!r}")


def layer_of(module: str, layers: Sequence[str]) -> str | None:
    """The most specific layer holding `module` (None for a module of no layer)."""
    holding = [layer for layer in layers if module == layer or module.startswith(layer + ".")]
    return max(holding, key=len, default=None)


@dataclass(frozen=True, order=True)
class Upward:
    importer: str
    imported: str
    importer_layer: str
    imported_layer: str
    line_numbers: tuple[int, ...]


class NestedLayersContract(Contract):
    """Layers, top first; a layer may be a package inside another layer."""

    type_name = "nested_layers"

    layers = fields.ListField(subfield=fields.StringField())
    ignore_imports = fields.SetField(subfield=fields.ImportExpressionField(), required=False)

    def validate(self) -> None:
        if len(set(self.layers)) != len(self.layers):
            raise InvalidContractOptions({"layers": "A layer is listed twice."})

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        removal = contract_utils.remove_ignored_imports_and_report(
            graph=graph,
            ignore_imports=self.ignore_imports,
            unmatched_alerting=contract_utils.AlertLevel.ERROR,
        )
        missing = [layer for layer in self.layers if layer not in graph.modules]
        rank = {layer: index for index, layer in enumerate(self.layers)}
        upward = []
        for importer in sorted(graph.modules):
            importer_layer = layer_of(importer, self.layers)
            if importer_layer is None:
                continue
            for imported in sorted(graph.find_modules_directly_imported_by(importer)):
                imported_layer = layer_of(imported, self.layers)
                # Any chain from a lower layer to a higher one has a direct import that climbs:
                # checking direct imports checks every chain.
                if imported_layer is not None and rank[imported_layer] < rank[importer_layer]:
                    details = graph.get_import_details(importer=importer, imported=imported)
                    lines = tuple(detail["line_number"] for detail in details)
                    upward.append(Upward(importer, imported, importer_layer, imported_layer, lines))
        return ContractCheck(
            kept=not upward and not missing,
            metadata={"upward": upward, "missing": missing},
            warnings=list(removal.warnings),
            ignored_import_count=removal.ignored_import_count,
        )

    def render_broken_contract(self, check: ContractCheck) -> None:
        for layer in check.metadata["missing"]:
            output.print_error(f"The layer {layer} is no module of the project.", bold=True)
            output.new_line()
        for link in check.metadata["upward"]:
            lines = ", ".join(str(number) for number in link.line_numbers)
            output.print_error(
                f"{link.importer} (layer {link.importer_layer}) imports {link.imported} "
                f"(layer {link.imported_layer}, higher), line {lines}",
                bold=False,
            )
        output.new_line()


def import_cycles(graph: grimp.ImportGraph, modules: Iterable[str]) -> list[list[str]]:
    """The groups of `modules` that import one another round a circle (strongly connected
    components of two or more), each sorted, by Tarjan's algorithm without recursion."""
    inside = set(modules)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles = []
    for start in sorted(inside):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start) & inside)))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            module, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    imported = graph.find_modules_directly_imported_by(successor) & inside
                    work.append((successor, iter(sorted(imported))))
                    break
                if successor in on_stack:
                    low[module] = min(low[module], index[successor])
            else:
                work.pop()
                if work:
                    parent = work[-1][0]
                    low[parent] = min(low[parent], low[module])
                if low[module] == index[module]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == module:
                            break
                    if len(component) > 1:
                        cycles.append(sorted(component))
    return sorted(cycles)


class AcyclicModulesContract(Contract):
    """No import circle among the modules of `packages` (TYPE_CHECKING imports count: a type
    is a dependency too)."""

    type_name = "acyclic_modules"

    packages = fields.ListField(subfield=fields.StringField())

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        modules = {
            module
            for package in self.packages
            for module in {package, *graph.find_descendants(package)}
        }
        cycles = import_cycles(graph, modules)
        circles = [
            [
                (importer, imported)
                for importer in cycle
                for imported in sorted(graph.find_modules_directly_imported_by(importer))
                if imported in cycle
            ]
            for cycle in cycles
        ]
        return ContractCheck(kept=not cycles, metadata={"circles": circles})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for circle in check.metadata["circles"]:
            output.print_error("These modules import one another in a circle:", bold=True)
            for importer, imported in circle:
                output.print_error(f"  {importer} -> {imported}", bold=False)
            output.new_line()
