"""The architecture's own import contracts (tools/import_contracts.py): nested layers with
the composition root inside the bottom layer's package, and import circles."""

import grimp
import pytest

from tools.import_contracts import AcyclicModulesContract, NestedLayersContract

LAYERS = ["project.config", "high", "low", "project"]


def graph_of(*imports: str) -> grimp.ImportGraph:
    graph = grimp.ImportGraph()
    for package in ("project", "project.config", "high", "low"):
        graph.add_module(package)
    for line, text in enumerate(imports, start=1):
        importer, imported = text.split(" -> ")
        graph.add_import(importer=importer, imported=imported, line_number=line, line_contents=text)
    return graph


def layers_check(graph: grimp.ImportGraph, **options):
    contract = NestedLayersContract(
        name="layers", session_options={}, contract_options={"layers": LAYERS, **options}
    )
    return contract.check(graph, verbose=False)


def test_the_composition_root_inside_the_bottom_package_may_import_every_layer():
    graph = graph_of(
        "project.config.urls -> high.views",
        "project.config.urls -> low.views",
        "project.config.settings -> project.env",
        "high.views -> low.models",
        "low.models -> project.models",
        "project.config -> project.config.urls",
    )
    check = layers_check(graph)
    assert check.kept, check.metadata


def test_an_import_climbing_a_layer_breaks_the_contract():
    graph = graph_of(
        "project.models -> low.models",  # the domain reaching up
        "low.views -> project.config.urls",  # anything reaching the composition root
        "high.views -> low.models",
    )
    check = layers_check(graph)
    assert not check.kept
    assert {(link.importer, link.imported) for link in check.metadata["upward"]} == {
        ("project.models", "low.models"),
        ("low.views", "project.config.urls"),
    }


def test_an_ignored_import_must_exist():
    graph = graph_of("project.models -> low.models")
    assert layers_check(graph, ignore_imports=["project.models -> low.models"]).kept
    with pytest.raises(Exception, match="No matches"):
        layers_check(graph_of("high.views -> low.models"), ignore_imports=["project.a -> low.b"])


def test_a_layer_missing_from_the_project_breaks_the_contract():
    graph = grimp.ImportGraph()
    for module in ("project", "high"):
        graph.add_module(module)
    check = layers_check(graph)
    assert not check.kept
    assert check.metadata["missing"] == ["project.config", "low"]


def test_circles_are_found_however_long():
    graph = graph_of(
        "project.jobs -> project.tasks",
        "project.tasks -> project.jobs",
        "low.a -> low.b",
        "low.b -> low.c",
        "low.c -> low.a",
        "low.c -> low.d",  # leaves the circle, does not come back
        "high.x -> low.a",
    )
    contract = AcyclicModulesContract(
        name="acyclic", session_options={}, contract_options={"packages": ["project", "low"]}
    )
    check = contract.check(graph, verbose=False)
    assert not check.kept
    assert [sorted({a for a, _ in circle}) for circle in check.metadata["circles"]] == [
        ["low.a", "low.b", "low.c"],
        ["project.jobs", "project.tasks"],
    ]
    graph.remove_import(importer="low.c", imported="low.a")
    graph.remove_import(importer="project.tasks", imported="project.jobs")
    assert contract.check(graph, verbose=False).kept
