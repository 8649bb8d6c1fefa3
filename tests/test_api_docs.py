"""The API reference (docs/api/) documents the public API, and only what exists.

The public API is every name in the ``__all__`` of a public module: a module
of ``vcpcr/`` no part of whose dotted name starts with ``_``. Both sides are
read at run time (the modules are imported, the pages parsed), so a name
added to an ``__all__`` later fails here until a page documents it.

A name is documented when a mkdocstrings directive ``::: target`` of a page
of docs/api/ names it: by its own path (``::: vcpcr.inference.multi_split``)
or by another public path to the same class or function (``vcpcr.ConvergenceWarning``
is ``::: vcpcr.exceptions.ConvergenceWarning``). A directive on a whole module
does not count for its members: what it renders is what griffe finds in the
source, which is not always ``__all__`` (the lazily created
``ConvergenceWarning`` was missing from the page that documented
``::: vcpcr.exceptions``). And each directive's object must have a docstring
where mkdocstrings reads it, in griffe's reading of the source.
"""

from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
API_DOCS = ROOT / "docs" / "api"

#: ``::: target`` at the start of a line, as mkdocstrings reads it.
DIRECTIVE = re.compile(r"^:::\s+(\S+)\s*$", re.MULTILINE)
#: A ``members:`` or ``inherited_members:`` list in a directive's options.
MEMBER_LIST = re.compile(r"^\s+(?:inherited_)?members:\s*\[([^\]]*)\]", re.MULTILINE)


def public_modules() -> list[str]:
    """Every public module of vcpcr/, from the files (``vcpcr.cli``,
    ``vcpcr.inference``, ...; not ``vcpcr._model``, ``vcpcr.__main__``)."""
    names = []
    for path in sorted((ROOT / "vcpcr").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        if not any(part.startswith("_") for part in parts):
            names.append(".".join(parts))
    return names


def public_names() -> dict[str, Any]:
    """``"module.name"`` -> object, for every name of every public ``__all__``."""
    names = {}
    for module_name in public_modules():
        module = importlib.import_module(module_name)
        assert hasattr(module, "__all__"), f"public module {module_name} has no __all__"
        for name in module.__all__:
            names[f"{module_name}.{name}"] = getattr(module, name)
    return names


def directives() -> list[tuple[str, str, list[str]]]:
    """(page, target, listed members) of every ``::: target`` in docs/api/."""
    found = []
    for page in sorted(API_DOCS.glob("*.md")):
        text = page.read_text()
        starts = [m.start() for m in DIRECTIVE.finditer(text)] + [len(text)]
        for match, end in zip(DIRECTIVE.finditer(text), starts[1:], strict=True):
            block = text[match.end() : end]
            members = [
                item.strip().strip("'\"")
                for listed in MEMBER_LIST.findall(block)
                for item in listed.split(",")
                if item.strip()
            ]
            found.append((page.name, match.group(1), members))
    return found


def resolve(target: str) -> Any:
    """The object a dotted path names: attributes first (a module's lazy
    ``__getattr__`` included), then submodules. Raises ``AttributeError``."""
    first, *rest = target.split(".")
    obj: Any = importlib.import_module(first)
    path = first
    for part in rest:
        path = f"{path}.{part}"
        if hasattr(obj, part):
            obj = getattr(obj, part)
        elif isinstance(obj, ModuleType):
            try:
                obj = importlib.import_module(path)
            except ModuleNotFoundError as exc:
                if exc.name != path:
                    raise  # the module exists; a dependency of it is missing
                raise AttributeError(f"{target}: no {path}") from exc
        else:
            raise AttributeError(f"{target}: {path} does not exist")
    return obj


def _by_identity(obj: Any) -> bool:
    """Whether an object is the same API under any name (a class, a function,
    a module); a constant is only documented by its own path."""
    return inspect.isclass(obj) or inspect.isroutine(obj) or inspect.ismodule(obj)


def test_public_modules_are_found():
    """The walk finds the public namespaces and no private module."""
    modules = public_modules()
    assert {"vcpcr", "vcpcr.inference", "vcpcr.calibration", "vcpcr.cli"} <= set(
        modules
    )
    assert not [m for m in modules if "._" in m]


def test_every_directive_resolves_to_a_public_object():
    """Each ``::: target`` of docs/api/ names an object vcpcr has, by a
    public path, and the members its options list exist on it: the reference
    cannot cite what the code lacks."""
    problems = []
    for page, target, members in directives():
        if target.split(".")[0] != "vcpcr":
            problems.append(f"{page}: {target} is not vcpcr's")
        if any(p.startswith("_") and not p.startswith("__") for p in target.split(".")):
            problems.append(f"{page}: {target} is a private path")
        try:
            obj = resolve(target)
        except AttributeError as exc:
            problems.append(f"{page}: {exc}")
            continue
        problems.extend(
            f"{page}: {target} has no member {member!r}"
            for member in members
            if not hasattr(obj, member)
        )
    assert not problems, "\n".join(problems)


def test_every_directive_renders_a_docstring():
    """What mkdocstrings renders comes from griffe's reading of the source,
    not from the imported object: each target has a docstring there (the
    lazily created ``ConvergenceWarning`` rendered as a bare annotation, and
    ``#:`` comments are not docstrings)."""
    griffe = pytest.importorskip("griffe")
    package = griffe.load("vcpcr", search_paths=[str(ROOT)], resolve_aliases=True)
    undocumented = []
    for page, target, _ in directives():
        path = target.partition(".")[2]  # the part below "vcpcr"
        try:
            obj = package[path] if path else package
        except (KeyError, griffe.AliasResolutionError):
            undocumented.append(f"{page}: {target} (griffe does not find it)")
            continue
        if not obj.docstring or not obj.docstring.value.strip():
            undocumented.append(f"{page}: {target}")
    assert not undocumented, "rendered without a docstring:\n" + "\n".join(undocumented)


def test_every_public_name_is_documented():
    """Every name of a public ``__all__`` has a directive in docs/api/."""
    paths: set[str] = set()
    objects: set[int] = set()
    for _, target, _ in directives():
        try:
            obj = resolve(target)
        except AttributeError:
            continue  # test_every_directive_resolves_to_a_public_object
        paths.add(target)
        if _by_identity(obj):
            objects.add(id(obj))
    names = public_names()
    missing = sorted(
        name
        for name, obj in names.items()
        if name not in paths and not (_by_identity(obj) and id(obj) in objects)
    )
    assert not missing, (
        f"{len(names) - len(missing)} of {len(names)} public names are documented;"
        " docs/api/ lacks:\n" + "\n".join(missing)
    )


def test_each_object_is_rendered_once():
    """One entry per object, on one page of docs/api/ (a second rendering is a
    second anchor for the same name, and cross-references become ambiguous);
    other pages link to it."""
    rendered: dict[int, list[str]] = {}
    for page, target, _ in directives():
        try:
            obj = resolve(target)
        except AttributeError:
            continue  # test_every_directive_resolves_to_a_public_object
        if _by_identity(obj) and not inspect.ismodule(obj):
            rendered.setdefault(id(obj), []).append(f"{page}: {target}")
    twice = [" and ".join(where) for where in rendered.values() if len(where) > 1]
    assert not twice, "rendered more than once:\n" + "\n".join(twice)
    elsewhere = [
        f"{page.relative_to(ROOT)}: {target}"
        for page in sorted((ROOT / "docs").rglob("*.md"))
        if page.parent != API_DOCS
        for target in DIRECTIVE.findall(page.read_text())
    ]
    assert not elsewhere, "directives outside docs/api/:\n" + "\n".join(elsewhere)


def test_every_api_page_is_in_the_nav():
    """mkdocs builds a page missing from the nav without a warning (even under
    ``--strict``), so the test looks: each docs/api/ page is in mkdocs.yml."""
    nav = (ROOT / "mkdocs.yml").read_text()
    listed = set(re.findall(r"\bapi/[\w-]+\.md\b", nav))
    pages = {f"api/{page.name}" for page in API_DOCS.glob("*.md")}
    assert pages <= listed, f"not in mkdocs.yml's nav: {sorted(pages - listed)}"
    assert listed <= pages, f"in the nav, not in docs/api/: {sorted(listed - pages)}"


@pytest.mark.parametrize(
    ("target", "missing"),
    [
        ("vcpcr.VCPCR", None),  # lazy attribute of the package
        ("vcpcr.inference.multi_split", None),  # attribute of a submodule
        ("vcpcr.exceptions.ConvergenceWarning", None),  # PEP 562 __getattr__
        ("vcpcr.nonexistent", "vcpcr.nonexistent"),
        ("vcpcr.plotting.plot_nothing", "vcpcr.plotting.plot_nothing"),
        ("vcpcr.VCPCR.fit.nothing", "vcpcr.VCPCR.fit.nothing"),
    ],
    ids=["lazy", "submodule", "module-getattr", "missing", "missing-member", "deep"],
)
def test_resolve(target, missing):
    if missing is None:
        assert resolve(target) is not None
    else:
        with pytest.raises(AttributeError, match=re.escape(missing)):
            resolve(target)
