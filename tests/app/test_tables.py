"""appkit.tables: the small tables pages draw as Markdown (issue 25, speed) read back whole."""

from __future__ import annotations

import pandas as pd

from appkit.tables import log_rows, md_table, md_table_rows


def test_a_markdown_table_reads_back_as_its_rows_whatever_the_cells_hold():
    rows = [{"claim | note": "p*k*0.8^log2(k) \\| x", "n": "1,234"},
            {"claim | note": "![x](https://example.org/a.png) <b>_c_ #1 $5~", "n": "-3.5"}]
    text = md_table(rows)
    assert text.split("\n")[1] == "|---|---:|"  # numbers right-aligned
    assert md_table_rows(text) == rows
    assert "![x](" not in text and "<b>" not in text  # nothing a browser would fetch or render
    assert md_table_rows("a paragraph") is None


def test_log_rows_read_as_the_tables_labels_with_separators_and_unknowns():
    logs = pd.DataFrame([{"name": "summit-2021", "nodes": 4734, "rows": 851590, "skipped": None,
                          "span_h": 8719.709, "start": "2021-02-10T00:08:52Z"}])
    (row,) = log_rows(logs, ["name", "nodes", "rows", "skipped", "span_h", "start"])
    assert row == {"name": "summit-2021", "machine size": "4,734", "records": "851,590", "records skipped": "-",
                   "span (h)": "8,719.7", "start (UTC)": "2021-02-10T00:08:52Z"}


def test_code_spans_of_our_own_text_stay_code_and_read_back():
    """code_spans (the Papers page's own text): `dp` drawn as a code span (its ticks not escaped), the text
    around it inert; unpaired ticks, or without code_spans, every tick escaped; either way it reads back."""
    rows = [{"policy": "greedy on `dp*` [x]", "n": "1"}, {"policy": "one ` tick", "n": "2"}]
    text = md_table(rows, code_spans=True)
    assert "| greedy on `dp*` \\[x\\] |" in text and "| one \\` tick |" in text
    assert md_table_rows(text) == rows
    assert "`dp*`" not in md_table(rows) and md_table_rows(md_table(rows)) == rows
