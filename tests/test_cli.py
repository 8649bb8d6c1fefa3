"""Tests of the `vcpcr` command."""

from __future__ import annotations

import pytest

from vcpcr.cli import main


@pytest.mark.slow
def test_demo_tunes_prints_summary_and_writes_figures(capsys, tmp_path):
    assert main(["demo", "--out", str(tmp_path), "--jobs", "2"]) == 0
    out = capsys.readouterr().out
    assert "VC-PCR Results" in out
    assert "Cluster composition" in out
    assert "131 mice x 2785" in out
    assert "chosen by 5-fold CV" in out
    for name in ("cv_curve.png", "cluster_heatmap.png"):
        assert f"wrote {tmp_path / name}" in out
        assert (tmp_path / name).stat().st_size > 10_000


def test_unknown_command():
    with pytest.raises(SystemExit):
        main(["frobnicate"])
