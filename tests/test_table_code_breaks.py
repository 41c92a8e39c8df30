"""Code in a prose table breaks after ``_ . ( ,`` only (tools/book/a11y_fixes.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tools"))
from book.a11y_fixes import _break_table_code  # noqa: E402

CELL = '<td><code class="literal"><span class="pre">positional_encoding(n,</span></code></td>'


def test_code_in_a_table_breaks_after_punctuation_only():
    page = f'<p><span class="pre">keep_me</span></p><table>{CELL}</table>'
    once = _break_table_code(page)
    assert "positional_<wbr>encoding(<wbr>n,<wbr>" in once  # no break inside a word
    assert '<span class="pre">keep_me</span>' in once  # outside a table: untouched
    assert _break_table_code(once) == once  # applied twice, the same page
