"""Every script in examples/ runs (they use real, packaged data)."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.py"))


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::vcpcr.exceptions.SeparationWarning")
@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_runs(path, capsys):
    if path.stem.startswith("survival"):  # needs the survival and examples extras
        pytest.importorskip("lifelines")
        pytest.importorskip("sksurv")
    runpy.run_path(str(path), run_name="__main__")
    assert "VC-PCR Results" in capsys.readouterr().out


def test_there_are_examples():
    assert len(EXAMPLES) >= 3
