"""Refresh the printed output pasted in a docs page after a numeric change.

For each ``python`` block followed by a ``text`` block (the pairs the tests
check with ``conftest.doc_examples``), run the code in a fresh interpreter
and replace every pasted line that it no longer prints by the printed line
closest to it (``difflib``); lines still printed are kept, so a block that
shows part of the output keeps showing that part. Review the diff.

Run: python scripts/refresh_doc_output.py docs/inference.md [...]
"""

from __future__ import annotations

import difflib
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from conftest import doc_examples, printed_lines  # the pairs the tests check


def refresh(path: Path) -> int:
    """Refresh the pasted output of ``path``; return the lines replaced."""
    text = path.read_text()
    changed = 0
    for code, shown in doc_examples(text):
        try:
            lines = printed_lines(code)
        except subprocess.CalledProcessError:  # a fragment, not a whole example
            print(f"{path}: skipped a block that does not run alone")
            continue
        new = []
        for line in shown.splitlines():
            if line.rstrip() in lines or not line.strip():
                new.append(line)
                continue
            close = difflib.get_close_matches(line.rstrip(), lines, n=1, cutoff=0.6)
            new.append(close[0] if close else line)
            changed += bool(close)
        text = text.replace(shown, "\n".join(new) + "\n", 1)
    path.write_text(text)
    return changed


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print(name, refresh(Path(name)), "lines refreshed")
