"""Repository hygiene: import order, lint, documentation build."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_solver_imports_only_numpy_and_scipy():
    """STYLE.md: the functional core never imports pandas, statsmodels,
    lifelines or scikit-learn."""
    code = (
        "import sys, vcpcr._sos_nmf, vcpcr._validation, vcpcr.exceptions;"
        "print(sorted(m for m in ('pandas', 'statsmodels', 'lifelines', 'sklearn')"
        " if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "[]"


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
    """STYLE.md: every signature is typed (mypy --disallow-untyped-defs on vcpcr/)."""
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
    use = text[text.index("## Use") :]
    code = use[use.index("```python\n") + 10 :]
    code = code[: code.index("```")]
    shown = use[use.index("```text\n") + 8 :]
    shown = shown[: shown.index("```")]
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    printed = [line.rstrip() for line in out.splitlines()]
    for line in shown.splitlines():
        assert line.rstrip() in printed, line
