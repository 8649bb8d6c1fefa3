"""Tests of the `vcpcr` command."""

from __future__ import annotations

import pytest

from vcpcr.cli import main


def test_demo_prints_summary(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "VC-PCR Results" in out
    assert "Cluster composition" in out
    assert "131 mice x 2785" in out
    assert "cross-validated R-squared" in out


def test_unknown_command():
    with pytest.raises(SystemExit):
        main(["frobnicate"])
