"""The tests and the documentation cite only files the repository has.

A citation is a repository path (one that starts with a top-level directory
of the repository: ``benchmarks/profile_cv.py``, ``tests/reference/cox.R``,
``docs/api/``), a top-level file (``pyproject.toml``) or a project document
(an upper-case ``NAME.md``: ``README.md``, ``CHANGELOG.md``), found

- in tests/: in a string literal (docstrings included) or a comment;
- in docs/ and README.md: anywhere in the text (inline code, code blocks,
  prose), and as the target of a relative markdown link, resolved from the
  page as mkdocs resolves it.

Globs (``tests/reference/*.R``) must match a file and ``{a,b}`` lists
(``benchmarks/results/mixing_{null,signal}.csv``) are expanded. The
repository is what ``git ls-files`` lists, untracked files that are not
ignored included, so a generated file (a figure under ``vcpcr-output/``) is
not one and a file being added already is.
"""

from __future__ import annotations

import ast
import fnmatch
import io
import re
import subprocess
import tokenize
from pathlib import Path, PurePosixPath

import pytest

ROOT = Path(__file__).resolve().parents[1]
SELF = Path(__file__).resolve().relative_to(ROOT).as_posix()

#: One path segment: name characters, a glob ``*`` or a ``{a,b}`` list.
SEGMENT = r"(?:[\w.*-]|\{[\w.,-]*\})+"
#: An upper-case project document, e.g. ``STYLE.md``.
DOCUMENT = r"[A-Z][A-Z0-9_-]*\.md"
#: A relative markdown link ``[text](target)`` (images included).
LINK = re.compile(r"\]\(([^()\s]+)(?:\s+\"[^\"]*\")?\)")


def repository_files() -> set[str]:
    """The files of the repository, as POSIX paths relative to its root."""
    try:
        out = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the repository's files are unknown")
    return set(out.splitlines())


def citation_pattern(files: set[str]) -> re.Pattern[str]:
    """What a citation looks like, given the repository's top-level names."""
    tops = sorted({f.split("/")[0] for f in files if "/" in f})
    top_files = sorted(f for f in files if "/" not in f)
    alternatives = [
        rf"(?:{'|'.join(map(re.escape, tops))})/(?:{SEGMENT}/?)*",
        *map(re.escape, top_files),
        DOCUMENT,
    ]
    return re.compile(rf"(?<![\w./-])(?:{'|'.join(alternatives)})(?![\w/-])")


def expand(path: str) -> list[str]:
    """``a{b,c}d`` -> ``[abd, acd]`` (nested and repeated lists too)."""
    match = re.search(r"\{([^{}]*)\}", path)
    if match is None:
        return [path]
    head, tail = path[: match.start()], path[match.end() :]
    return [p for alt in match.group(1).split(",") for p in expand(head + alt + tail)]


def exists(path: str, files: set[str], here: str = "") -> bool:
    """Whether a cited path is a file or directory of the repository (a bare
    document may also sit in the citing file's directory ``here``)."""
    dirs = {
        str(PurePosixPath(f).parents[i]) for f in files for i in range(f.count("/"))
    }
    for candidate in expand(path.rstrip(".").rstrip("/")):
        options = [candidate]
        if re.fullmatch(DOCUMENT, candidate) and here:
            options.append(f"{here}/{candidate}")
        if not any(
            fnmatch.filter(files, option) or fnmatch.filter(dirs, option)
            if "*" in option
            else option in files or option in dirs
            for option in options
        ):
            return False
    return True


def test_tests_cite_existing_paths():
    """Every repository path in a string literal or comment of tests/ exists."""
    files = repository_files()
    pattern = citation_pattern(files)
    missing = []
    for name in sorted(
        f for f in files if f.startswith("tests/") and f.endswith(".py")
    ):
        if name == SELF:
            continue  # its tables cite missing files on purpose
        source = (ROOT / name).read_text()
        here = str(PurePosixPath(name).parent)
        texts = [
            (node.lineno, node.value)
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
        ] + [
            (token.start[0], token.string)
            for token in tokenize.generate_tokens(io.StringIO(source).readline)
            if token.type == tokenize.COMMENT
        ]
        missing.extend(
            f"{name}:{line}: {m.group()}"
            for line, text in texts
            for m in pattern.finditer(text)
            if not exists(m.group(), files, here)
        )
    assert not missing, "cited, not in the repository:\n" + "\n".join(missing)


def link_target(page: str, link: str) -> str | None:
    """The repository path a relative link of ``page`` points to (None for a
    URL or an anchor on the page itself; ``..`` past the root stays in it)."""
    target = link.split("#")[0]
    if not target or re.match(r"[a-z][a-z0-9+.-]*:", target):
        return None
    resolved = (ROOT / PurePosixPath(page).parent / target).resolve()
    return (
        resolved.relative_to(ROOT).as_posix() if resolved.is_relative_to(ROOT) else link
    )


def test_docs_cite_existing_paths():
    """Every repository path in docs/ and README.md, written out or linked
    to, exists."""
    files = repository_files()
    pattern = citation_pattern(files)
    pages = sorted(f for f in files if f.startswith("docs/") and f.endswith(".md"))
    missing = []
    for name in [*pages, "README.md"]:
        here = str(PurePosixPath(name).parent)
        for number, line in enumerate((ROOT / name).read_text().splitlines(), 1):
            cited = [m.group() for m in pattern.finditer(line)]
            linked = [link_target(name, link) for link in LINK.findall(line)]
            missing.extend(
                f"{name}:{number}: {path}"
                for path in cited
                if not exists(path, files, here)
            )
            missing.extend(
                f"{name}:{number}: link to {path}"
                for path in linked
                if path is not None and not exists(path, files)
            )
    assert not missing, "cited, not in the repository:\n" + "\n".join(missing)


FILES = {
    "benchmarks/profile_cv.py",
    "benchmarks/results/mixing_null.csv",
    "benchmarks/results/mixing_signal.csv",
    "tests/reference/cox.R",
    "tests/reference/README.md",
    "docs/api/model.md",
    "README.md",
    "pyproject.toml",
}


@pytest.mark.parametrize(
    ("text", "cited"),
    [
        ("see benchmarks/profile_cv.py.", ["benchmarks/profile_cv.py."]),
        ("`tests/reference/*.R`", ["tests/reference/*.R"]),
        ("(docs/api/), pyproject.toml", ["docs/api/", "pyproject.toml"]),
        ("STYLE.md §1 and README.md", ["STYLE.md", "README.md"]),
        ("https://x.org/docs/a.md", []),  # part of a URL
        ("vcpcr-output/cv.png, results.csv", []),  # not a repository path
        ("Style.md, tests_x/a.py", []),
    ],
    ids=["sentence", "glob", "directory", "documents", "url", "output", "near-miss"],
)
def test_citation_pattern(text, cited):
    assert citation_pattern(FILES).findall(text) == cited


@pytest.mark.parametrize(
    ("path", "here", "found"),
    [
        ("benchmarks/profile_cv.py.", "", True),  # the full stop of a sentence
        ("benchmarks/results/mixing_{null,signal}.csv", "", True),
        ("benchmarks/results/mixing_{null,paper}.csv", "", False),
        ("tests/reference/*.R", "", True),
        ("tests/reference/*.json", "", False),
        ("docs/api/", "", True),
        ("docs/api/cli.md", "", False),
        ("README.md", "tests/reference", True),
        ("STYLE.md", "tests", False),
    ],
    ids=[
        "stop",
        "list",
        "list-missing",
        "glob",
        "glob-missing",
        "dir",
        "missing",
        "document",
        "document-missing",
    ],
)
def test_exists(path, here, found):
    assert exists(path, FILES, here) is found
