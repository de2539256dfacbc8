"""Issue 23, finding 3: blank lines must not make format detection crawl (the head scan's byte
limit counts every byte read, blank lines included), and line ends of any kind are lines."""

from __future__ import annotations

import gzip
import time

import pytest

from planner import logs
from planner.errors import InputError
from planner.logs import limits, stream

SWF_ROW = "1 0 10 100 4 -1 -1 4 100 -1 1 1 1 -1 1 1 -1 -1\n"


def _gz_newlines(path, n_bytes: int, tail: str = "") -> None:
    block = b"\n" * (1 << 20)
    with gzip.open(path, "wb", compresslevel=1) as fh:
        for _ in range(n_bytes // len(block)):
            fh.write(block)
        fh.write(tail.encode())


def test_blank_lines_count_against_the_scan_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "HEAD_SCAN_BYTES", 1 << 20)
    p = tmp_path / "blanks.swf.gz"
    _gz_newlines(p, 8 << 20, SWF_ROW)  # the only line with text is past the scan limit
    assert stream.head_lines(p) == []
    with pytest.raises(InputError, match="empty file|blank"):
        logs.detect_format(p)


def test_blank_lines_before_the_limit_are_skipped(tmp_path):
    p = tmp_path / "some_blanks.swf"
    p.write_text("\n \n\t\n" * 1000 + SWF_ROW * 3)
    assert logs.detect_format(p) == "swf"
    assert stream.head_lines(p) == [SWF_ROW.strip()] * 3


@pytest.mark.parametrize("eol", ["\r", "\r\n", "\n"])
def test_line_ends_of_any_kind_split_the_head(tmp_path, eol):
    p = tmp_path / "x.swf"
    p.write_bytes(("; MaxNodes: 64" + eol + "; MaxProcs: 64" + eol + SWF_ROW.strip() + eol).encode() * 1)
    assert stream.head_lines(p) == ["; MaxNodes: 64", "; MaxProcs: 64", SWF_ROW.strip()]


@pytest.mark.slow
def test_half_a_gib_of_newlines_is_refused_quickly(tmp_path):
    """The issue's case: 512 MiB of newlines (a ~0.5 MB gzip) took 74 s to detect; 1 GiB never ended."""
    p = tmp_path / "newlines.gz"
    _gz_newlines(p, 1 << 30)
    assert p.stat().st_size < 8 << 20
    t0 = time.perf_counter()
    with pytest.raises(InputError, match="empty file|blank"):
        logs.detect_format(p)
    print(f"1 GiB of newlines refused in {time.perf_counter() - t0:.2f} s")
