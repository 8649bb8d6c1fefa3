"""Tests of the `vcpcr` command."""

from __future__ import annotations

import os
import re
import subprocess
import sys

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


def test_unknown_command(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["frobnicate"])
    assert exc.value.code == 2
    assert "invalid choice: 'frobnicate'" in capsys.readouterr().err


@pytest.mark.parametrize("command", ["demo", "benchmark"])
def test_an_unknown_option_shows_the_commands_usage(command, capsys):
    """It showed the top-level usage ("vcpcr [-h] [--version] COMMAND ...")."""
    with pytest.raises(SystemExit) as exc:
        main([command, "--bogus"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert f"usage: vcpcr {command}" in err
    assert "unrecognized arguments: --bogus" in err


def test_report_needs_its_columns_and_rejects_unknown_options(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["report", "cohort.csv"])
    assert exc.value.code == 2
    assert "the following arguments are required: --time, --event" in (
        capsys.readouterr().err
    )
    with pytest.raises(SystemExit) as exc:
        main(["report", "c.csv", "--time", "t", "--event", "e", "--bogus"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "usage: vcpcr report" in err
    assert "unrecognized arguments: --bogus" in err


BAD_ARGS = {
    "negative n": (["benchmark", "--n", "-5"], "--n: must be >= 1"),
    "nan rho": (["benchmark", "--rho", "nan"], "--rho: must be in [0, 1); got nan"),
    "rho one": (["benchmark", "--rho", "1"], "--rho: must be in [0, 1)"),
    "negative replicates": (
        ["benchmark", "--replicates", "-1"],
        "--replicates: must be >= 1",
    ),
    "config 4": (["benchmark", "--config", "4"], "--config: invalid choice: 4"),
    "zero jobs": (["demo", "--jobs", "0"], "--jobs: must be >= 1, or -1"),
    "text seed": (["demo", "--seed", "x"], "--seed: must be an integer"),
    "negative seed": (["benchmark", "--seed", "-3"], "--seed: must be >= 0"),
    "lam ratio above 1": (
        ["report", "c.csv", "--time", "t", "--event", "e", "--lam-ratio", "2"],
        "--lam-ratio: must be in (0, 1]",
    ),
}


@pytest.mark.parametrize(("argv", "message"), BAD_ARGS.values(), ids=BAD_ARGS)
def test_bad_arguments_exit_2_before_any_work(capsys, argv, message):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize("command", ["demo", "benchmark"])
def test_out_under_a_file_is_rejected_up_front(capsys, tmp_path, command):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    for out, message in (
        (blocker / "sub", "is a file, not a directory"),
        (blocker, "exists and is not a directory"),
    ):
        with pytest.raises(SystemExit) as exc:
            main([command, "--out", str(out)])
        assert exc.value.code == 2
        assert message in capsys.readouterr().err


@pytest.mark.skipif(not os.path.isdir("/proc"), reason="needs Linux's /proc")
@pytest.mark.parametrize("command", ["demo", "benchmark"])
def test_out_where_nothing_can_be_written_is_rejected_up_front(capsys, command):
    """/proc: os.access says writable to root, mkdir fails. Before, the demo
    ran its whole CV and then lost its output in a FileNotFoundError."""
    with pytest.raises(SystemExit) as exc:
        main([command, "--out", "/proc/vcpcr-test"])
    assert exc.value.code == 2
    assert "cannot create /proc/vcpcr-test: cannot write to /proc" in (
        capsys.readouterr().err
    )


def test_unknown_method_writes_nothing(capsys, tmp_path):
    out = tmp_path / "study"
    argv = ["benchmark", "--methods", "bogus", "--out", str(out), "--no-progress"]
    assert main(argv) == 2
    assert "Unknown method 'bogus'" in capsys.readouterr().err
    assert not out.exists()


def test_version_and_python_m(capsys):
    import vcpcr

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"vcpcr {vcpcr.__version__}"
    run = subprocess.run(
        [sys.executable, "-m", "vcpcr", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "usage: vcpcr" in run.stdout


@pytest.mark.parametrize("command", ["demo", "benchmark", "report"])
def test_every_option_has_help(capsys, command):
    with pytest.raises(SystemExit) as exc:
        main([command, "--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    head, options = text.split("options:\n")
    assert len(head.split("\n\n")) >= 3, "the command has no description"
    lines = options.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("  -"):
            same_line = re.search(r"\S\s{2,}\S", line.strip())
            next_line = i + 1 < len(lines) and lines[i + 1].startswith(" " * 20)
            assert same_line or next_line, f"no help for {line.strip()!r}"


def test_demo_refuses_to_overwrite_figures_unless_force(capsys, tmp_path, monkeypatch):
    """#46: the demo overwrote the figures of an earlier run without a word."""
    figure = tmp_path / "cv_curve.png"
    figure.write_bytes(b"earlier run")
    ran = []
    monkeypatch.setattr("vcpcr.cli.demo", lambda *a: ran.append(a) or "report")
    assert main(["demo", "--out", str(tmp_path)]) == 2
    assert "--force" in capsys.readouterr().err
    assert not ran
    assert figure.read_bytes() == b"earlier run"
    assert main(["demo", "--out", str(tmp_path), "--force"]) == 0
    assert ran


def test_out_of_memory_is_one_line_with_the_fix(capsys, tmp_path, monkeypatch):
    """#46: a huge --n/--replicates ended in a MemoryError traceback."""

    def exhausted(args):
        raise MemoryError

    monkeypatch.setattr("vcpcr.cli.benchmark", exhausted)
    assert main(["benchmark", "--out", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "out of memory" in err
    assert "--n" in err
