"""Issue 23, findings 1 and 7 (uploads): saved in bounded memory (no whole copy), the limit is
exactly the documented 500 MiB, and user-given names are inert Markdown everywhere."""

from __future__ import annotations

import io
import re
import tracemalloc

import pytest

from appkit import data, uploads
from appkit.jobs import _clean
from planner.errors import InputError

EVIL = "![x](https://attacker.example/pixel.png)<img src=x>$x$.swf"


class _Upload(io.RawIOBase):
    """A file-like upload of n zero bytes made on the fly (no n-byte buffer anywhere); getvalue()
    fails, as the server must never ask for the whole file."""

    def __init__(self, n: int):
        self.n, self.pos, self.size = n, 0, n

    def readable(self):
        return True

    def read(self, k=-1):
        k = self.n - self.pos if k is None or k < 0 else min(k, self.n - self.pos)
        self.pos += k
        return bytes(k)

    def seek(self, pos, whence=0):
        self.pos = pos
        return pos

    def getvalue(self):
        raise AssertionError("getvalue() copies the whole upload into the server's memory")


def test_the_upload_limit_is_exactly_500_mib():
    assert data.MAX_UPLOAD_BYTES == 500 * 2**20 == 524_288_000
    assert data.streamlit_upload_cap() >= data.MAX_UPLOAD_BYTES


def test_an_upload_is_streamed_to_disk_in_bounded_memory(tmp_path):
    n = 64 * 2**20
    tracemalloc.start()
    try:
        p = data.save_upload(_Upload(n), "big.swf", tmp_path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert p.stat().st_size == n
    assert peak < 8 * 2**20, f"peak {peak / 2**20:.1f} MiB while saving 64 MiB"


def test_one_byte_over_the_limit_is_refused_and_nothing_kept(tmp_path):
    up = _Upload(1001)
    up.size = None  # a reader that does not announce its size: counted while copying
    with pytest.raises(InputError, match="limit per upload"):
        data.save_upload(up, "big.swf", tmp_path, max_bytes=1000)
    assert list(tmp_path.iterdir()) == []
    assert data.save_upload(_Upload(1000), "ok.swf", tmp_path, max_bytes=1000).stat().st_size == 1000


@pytest.mark.slow
def test_exactly_500_mib_is_accepted_and_one_more_byte_refused(tmp_path):
    p = data.save_upload(_Upload(data.MAX_UPLOAD_BYTES), "max.swf", tmp_path / "a")
    assert p.stat().st_size == 524_288_000
    p.unlink()
    with pytest.raises(InputError, match="limit per upload is 500 MiB"):
        data.save_upload(_Upload(data.MAX_UPLOAD_BYTES + 1), "over.swf", tmp_path / "b")


def test_user_names_are_inert_markdown_in_messages():
    for text in (uploads.form_error(f"{EVIL}, line 3: not a time"), _clean(f"{EVIL}: bad", {}),
                 uploads.md(EVIL)):
        assert re.search(r"(?<!\\)[\[\]<>$!`]", text) is None, text  # every one escaped
        assert "\\!\\[x\\]" in text and "\\<img" in text and "\\$x\\$" in text
    view = uploads.report_view({"log": "l", "rows": 1, "nodes": 1, "notes": [f"node {EVIL} shared"]})
    assert all(re.search(r"(?<!\\)[\[\]<>$!`]", w) is None for w in view["warnings"])


def test_the_preview_caption_escapes_the_file_name():
    src = open(data.paths.ROOT / "app_pages" / "logs.py").read()
    assert "First lines of {md(staged['name'])}" in src and "getvalue()" not in src
