"""Repository hygiene: import order, lint, documentation build."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import doc_examples, printed_lines

ROOT = Path(__file__).resolve().parents[1]


#: The kernels of vcpcr/_solvers/ that import numpy and scipy only; the
#: weight paths (ridge, enet, cox, glmnet) reach scikit-learn through
#: ConvergenceWarning's base class (docs/architecture.md).
NUMPY_ONLY_KERNELS = (
    "sos_nmf",
    "partial_likelihood",
    "distributions",
    "step2_fits",
    "batch_scores",
    "pooled",
)


def test_solver_imports_only_numpy_and_scipy():
    """The functional core (the SOS-NMF engine and its public API, the
    numpy-only kernels, the foundations: docs/architecture.md, "Import
    direction") never imports pandas, statsmodels, lifelines or scikit-learn."""
    kernels = ", ".join(f"vcpcr._solvers.{name}" for name in NUMPY_ONLY_KERNELS)
    code = (
        f"import sys, vcpcr._sos_nmf, {kernels};"
        "import vcpcr._checks, vcpcr._scaling, vcpcr.exceptions;"
        "print(sorted(m for m in ('pandas', 'statsmodels', 'lifelines', 'sklearn')"
        " if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


def test_kernels_import_no_estimator_family_or_dataframe():
    """vcpcr/_solvers/ is a level: its modules import each other, the
    foundations and third-party numerics, never a module above them."""
    allowed = {"vcpcr._checks", "vcpcr.exceptions"}
    graph = vcpcr_import_graph()
    for module, targets in graph.items():
        if module.startswith("vcpcr._solvers"):
            above = {t for t in targets if not t.startswith("vcpcr._solvers")}
            assert above <= allowed, f"{module} imports {sorted(above - allowed)}"
    for path in (ROOT / "vcpcr" / "_solvers").glob("*.py"):
        for node in _runtime_imports(ast.parse(path.read_text())):
            names = (
                [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
            )
            for name in names:
                top = name.split(".")[0]
                assert top not in {"pandas", "statsmodels", "lifelines"}, path.name


def test_ruff_clean():
    dirs = [
        d
        for d in ("vcpcr", "tests", "benchmarks", "examples", "scripts")
        if (ROOT / d).is_dir()
    ]
    for args in (["check"], ["format", "--check"]):
        res = subprocess.run(
            ["ruff", *args, *dirs],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.slow
def test_docs_build_strict(tmp_path):
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--site-dir",
            str(tmp_path),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.slow
def test_mypy_clean(tmp_path):
    """Every signature is typed (pyproject.toml's [tool.mypy]: disallow_untyped_defs
    on vcpcr/)."""
    res = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stdout + res.stderr


@pytest.mark.slow
def test_readme_use_example_prints_what_the_readme_shows():
    """The README's "Use" snippet, run, prints the summary pasted under it."""
    text = (ROOT / "README.md").read_text()
    code, shown = doc_examples(text[text.index("## Use") :])[0]
    printed = printed_lines(code)
    for line in shown.splitlines():
        assert line.rstrip() in printed, line


@pytest.mark.slow
def test_classification_page_prints_what_it_shows():
    """docs/classification.md's Liver example prints the summary it pastes
    (it had gone stale when the paired gate changed)."""
    text = (ROOT / "docs" / "classification.md").read_text()
    code, shown = doc_examples(text)[0]
    printed = printed_lines(code)
    for line in shown.splitlines():
        assert line.rstrip() in printed, line


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _lazy_names() -> dict[str, str]:
    """``vcpcr/__init__.py``'s ``_LAZY``: public name -> module it comes from."""
    tree = ast.parse((ROOT / "vcpcr" / "__init__.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "_LAZY" for t in node.targets
        ):
            return ast.literal_eval(node.value)
    raise AssertionError("vcpcr/__init__.py defines no _LAZY")


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_imports(tree: ast.AST):
    """Every import statement that can run: module level and inside functions,
    but not under ``if TYPE_CHECKING:`` (never executed)."""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and _is_type_checking(node):
            stack.extend(node.orelse)
            continue
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        stack.extend(ast.iter_child_nodes(node))


def vcpcr_import_graph() -> dict[str, set[str]]:
    """Module -> the ``vcpcr`` modules it imports (at any depth of the code)."""
    files = {_module_name(p): p for p in (ROOT / "vcpcr").rglob("*.py")}
    lazy = _lazy_names()
    graph: dict[str, set[str]] = {}
    for name, path in files.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: set[str] = set()
        for node in _runtime_imports(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                edges.update(a.name for a in node.names if a.name in files)
                continue
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0]
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in files:
                    edges.add(sub)
                elif base == "vcpcr" and alias.name in lazy:
                    edges.add(lazy[alias.name])
                elif base in files:
                    edges.add(base)
        edges.discard(name)
        graph[name] = edges
    return graph


def _shortest_paths(graph: dict[str, set[str]], start: str) -> dict[str, list[str]]:
    """Breadth-first: each module reachable from ``start`` -> a shortest path."""
    paths = {start: [start]}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph.get(v, ())):
            if w not in paths:
                paths[w] = [*paths[v], w]
                queue.append(w)
    return paths


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One shortest cycle per group of modules that import each other."""
    cycles: list[list[str]] = []
    seen: set[str] = set()
    for start in sorted(graph):
        if start in seen:
            continue
        paths = _shortest_paths(graph, start)
        back = [v for v in paths if start in graph.get(v, ())]
        if not back:
            continue
        last = min(back, key=lambda v: (len(paths[v]), v))
        cycles.append([*paths[last], start])
        seen.update(v for v in paths if start in _shortest_paths(graph, v))
    return cycles


def test_find_cycles_reports_a_cycle_through_three_modules():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycles(graph) == [["a", "b", "c", "a"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_import_graph_sees_function_local_and_lazy_imports():
    graph = vcpcr_import_graph()
    # _cv imports plotting only inside VCPCRCV.plot; cli's "from vcpcr import
    # VCPCRCV" (inside a function) goes through vcpcr/__init__.py's _LAZY;
    # "from vcpcr._solvers import batch_scores" names a submodule; __version__ is
    # defined in vcpcr/__init__.py itself
    assert "vcpcr.plotting" in graph["vcpcr._cv"]
    assert "vcpcr._cv" in graph["vcpcr.cli"]
    assert "vcpcr._solvers.batch_scores" in graph["vcpcr._family_scoring"]
    assert "vcpcr" in graph["vcpcr.cli"]
    # names under "if TYPE_CHECKING:" never run: no edge
    assert "vcpcr._families" not in graph["vcpcr._summary"]


def test_no_import_cycle_in_vcpcr():
    """docs/architecture.md, "Import direction": no import cycle anywhere in
    vcpcr/, not even through a function-local import."""
    cycles = find_cycles(vcpcr_import_graph())
    assert not cycles, "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


def architecture_layers() -> list[tuple[str, list[str]]]:
    """docs/architecture.md's layer table, top first: (layer, modules)."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text.split("### Import direction", 1)[1].split("\n#", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")][2:]
    layers = []
    for row in rows:
        name, modules = (cell.strip() for cell in row.strip("|").split("|")[:2])
        layers.append((name, re.findall(r"`([\w.]+)`", modules)))
    return layers


#: The imports that point up a layer, each deferred into a method (the
#: architecture page names them).
DEFERRED_UPWARD = {("vcpcr._cv", "vcpcr.plotting")}


def test_imports_point_down_the_architecture_layers():
    """docs/architecture.md's layer table lists every module of vcpcr/ once,
    and every import goes to the same layer or a lower one."""
    layer_of: dict[str, int] = {}
    for rank, (_, modules) in enumerate(architecture_layers()):
        for module in modules:
            name = "vcpcr" if module == "vcpcr" else f"vcpcr.{module}"
            assert name not in layer_of, f"{module} is listed twice"
            layer_of[name] = rank
    graph = vcpcr_import_graph()

    def rank(module: str) -> int:
        # the module itself (vcpcr._solvers.sos_nmf) or the package it is
        # part of, when the table lists that package whole (vcpcr.baselines._cen)
        name = module
        while name != "vcpcr" and name not in layer_of:
            name = name.rpartition(".")[0]
        if name in layer_of and (name != "vcpcr" or module == "vcpcr"):
            return layer_of[name]
        raise AssertionError(f"{module} is missing from the layer table")

    for module in graph:
        rank(module)
    stale = {name for name in layer_of if name not in graph}
    assert not stale, f"the layer table lists modules not in vcpcr/: {sorted(stale)}"

    upward = {
        (a, b)
        for a, targets in graph.items()
        for b in targets
        if rank(b) < rank(a) and (a, b) not in DEFERRED_UPWARD
    }
    assert all(b in graph[a] for a, b in DEFERRED_UPWARD)  # none is stale
    assert not upward, "imports that point up: " + ", ".join(
        f"{a} -> {b}" for a, b in sorted(upward)
    )


def architecture_map() -> set[str]:
    """The modules docs/architecture.md's "Map of the package" lists: the
    backquoted names of each table row's first cell."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text.split("## Map of the package", 1)[1].split("\n## ", 1)[0]
    names: set[str] = set()
    for line in section.splitlines():
        if line.startswith("| `"):
            names.update(re.findall(r"`([\w.]+)`", line.split("|")[1]))
    return names


def test_architecture_map_matches_the_tree():
    """The module map of docs/architecture.md and the files of vcpcr/ agree,
    both ways and into the sub-packages: every listed module exists, and every
    module is listed, by its own row or by its package's when the map
    describes that package whole (``baselines``: none of its modules listed)."""
    tree = {
        _module_name(p).removeprefix("vcpcr").removeprefix(".") or "vcpcr"
        for p in (ROOT / "vcpcr").rglob("*.py")
    }
    listed = architecture_map()
    assert not listed - tree, f"listed, not in vcpcr/: {sorted(listed - tree)}"

    def covered(module: str) -> bool:
        if module in listed:
            return True
        package = module.rpartition(".")[0]
        return (
            bool(package)
            and package in listed
            and not any(m.startswith(f"{package}.") for m in listed)
        )

    missing = sorted(m for m in tree if not covered(m))
    assert not missing, f"modules of vcpcr/ the map does not list: {missing}"


def test_no_private_module_shadows_a_public_one():
    """A private module is not named as a public module with a leading
    underscore (``_validation`` beside ``validation``, ``_solvers/metrics``
    beside ``metrics``): a reader takes one for the other."""
    import vcpcr

    package = Path(vcpcr.__file__).parent
    paths = [p.relative_to(package) for p in package.rglob("*.py")]
    parts = [
        p.parts[:-1] if p.name == "__init__.py" else p.with_suffix("").parts
        for p in paths
    ]
    parts = [q for q in parts if q]

    def hidden(q):
        return any(x.startswith("_") for x in q)

    public = {q[-1] for q in parts if not hidden(q)}
    private = {q[-1].lstrip("_") for q in parts if hidden(q)}
    assert not public & private, sorted(public & private)
