"""Reading an input file (plain or gzip) as a bounded stream.

Every reader opens its file through `open_input`: the decompressed bytes are counted as they
are read and the read stops with a one-line InputError at `max_bytes` (limits.MAX_INPUT_BYTES
unless given), so a 27 MB gzip holding 4 GB of rows is refused while decompressing, not after.
`csv_chunks` parses such a stream in pandas chunks (bounded memory per chunk) and keeps the
count of rows before each chunk, so errors can still name the file line.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import zlib
from pathlib import Path

import pandas as pd

from planner.errors import InputError
from planner.logs import limits


def is_gzip(path) -> bool:
    with open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def _size_text(n: int) -> str:
    for unit, div in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= div:
            return f"{n / div:.3g} {unit}"
    return f"{n} bytes"


class BoundedInput(io.RawIOBase):
    """A read-only binary stream over a plain or gzip file that counts the decompressed bytes
    and raises InputError once more than max_bytes come out. Optionally hashes them."""

    def __init__(self, path, max_bytes: int | None = None, *, hash_content: bool = False,
                 newlines: bool = False):
        super().__init__()
        self.newlines = newlines  # translate CR LF and a lone CR to LF (CR-only and mixed line ends)
        self._cr = False  # a CR at the end of the last block, held back (its LF may follow)
        self.path = Path(path)
        self.max_bytes = limits.MAX_INPUT_BYTES if max_bytes is None else int(max_bytes)
        self.count = 0
        self.gz = is_gzip(self.path)
        self._raw = open(self.path, "rb")  # noqa: SIM115 (closed in close())
        self._f = gzip.GzipFile(fileobj=self._raw, mode="rb") if self.gz else self._raw
        self.sha = hashlib.sha256() if hash_content else None
        self.line_bytes = 0  # bytes since the last line end
        self.lines = 0

    def readable(self) -> bool:
        return True

    def _read_raw(self, size: int) -> bytes:
        want = min(size, self.max_bytes - self.count + 1)  # one byte over proves the excess
        try:
            data = self._f.read(max(want, 1))
        except (EOFError, zlib.error, gzip.BadGzipFile) as e:
            raise InputError(f"truncated or corrupt gzip ({e})", file=self.path.name) from None
        self.count += len(data)
        if self.count > self.max_bytes:
            what = "decompresses to" if self.gz else "holds"
            raise InputError(f"{what} more than {_size_text(self.max_bytes)} (the input size limit; "
                             "raise it with --max-bytes)", file=self.path.name)
        if self.sha is not None:
            self.sha.update(data)
        return data

    def _read_translated(self, size: int) -> bytes:
        """Up to size bytes with CR LF and lone CR as LF (b"" only at the end of the file)."""
        while True:
            raw = self._read_raw(max(size - 1, 1))  # room for a held-back CR
            data = b"\r" + raw if self._cr else raw
            self._cr = False
            if not data:
                return b""
            if raw and data.endswith(b"\r"):  # its LF may come with the next block
                self._cr, data = True, data[:-1]
            if b"\r" in data:
                data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            if data:
                return data

    def readinto(self, b) -> int:
        data = self._read_translated(len(b)) if self.newlines else self._read_raw(len(b))
        n = len(data)
        nl = data.rfind(b"\n")
        self.line_bytes = self.line_bytes + n if nl < 0 else n - 1 - nl
        if self.line_bytes > limits.MAX_LINE_BYTES:
            line = self.lines + data.count(b"\n") + 1
            raise InputError(f"a line longer than {_size_text(limits.MAX_LINE_BYTES)}: not a scheduler log",
                             file=self.path.name, line=line)
        self.lines += data.count(b"\n") if nl >= 0 else 0
        b[:n] = data
        return n

    def close(self) -> None:
        try:
            if self._f is not self._raw:
                self._f.close()
            self._raw.close()
        finally:
            super().close()


def open_input(path, max_bytes: int | None = None, *, hash_content: bool = False) -> io.BufferedReader:
    """The file's decompressed bytes as a buffered binary stream, bounded (see BoundedInput)."""
    raw = BoundedInput(path, max_bytes, hash_content=hash_content, newlines=True)
    return io.BufferedReader(raw, buffer_size=1 << 20)


def head_lines(path, want: int = 5, scan_bytes: int | None = None) -> list[str]:
    """Non-blank lines for format detection, BOM dropped, in file order: the `;` comment lines
    among the first `want`, then lines up to the `want`-th other line (a header of any length is
    skipped over). At most limits.HEAD_SCAN_BYTES decompressed bytes are read, blank lines
    included: a file of blank lines costs one bounded block scan, not a line-by-line crawl."""
    limit = limits.HEAD_SCAN_BYTES if scan_bytes is None else int(scan_bytes)
    out: list[str] = []
    others = comments = 0
    pending = b""  # an incomplete line carried to the next block
    with open_input(path, max_bytes=1 << 62) as f:
        raw = f.raw
        while others < want:
            block = f.read(1 << 20)
            eof = not block
            data = pending + block
            if not eof and raw.count <= limit:
                cut = data.rfind(b"\n") + 1
                data, pending = data[:cut], data[cut:]
            pos = 0
            while others < want:
                # blank runs are skipped in C (lstrip), not one line at a time
                start = len(data) - len(data[pos:].lstrip())
                if start >= len(data):
                    break
                end = data.find(b"\n", start)
                end = len(data) if end < 0 else end
                text = data[start:end].decode("utf-8", "replace").rstrip()
                pos = end + 1
                if not out:
                    text = text.lstrip("\ufeff")
                    if not text.strip():
                        continue
                if text.lstrip().startswith(";"):
                    comments += 1
                    if comments <= want:
                        out.append(text[:4096])
                else:
                    out.append(text[:limits.HEAD_BYTES])
                    others += 1
            if eof or raw.count > limit:
                break
    return out


def read_head(path, nbytes: int = limits.HEAD_BYTES) -> bytes:
    """The first bytes of the (decompressed) file, for format detection and headers."""
    path = Path(path)
    try:
        with open_input(path, max_bytes=1 << 62) as f:
            return f.read(nbytes)
    except OSError as e:
        raise InputError(f"cannot read ({e})", file=path.name) from None


def content_sha256(path, max_bytes: int | None = None) -> tuple[str, int]:
    """(sha256 hex of the decompressed content, its size in bytes), streamed and bounded: the
    same log plain or gzipped has the same content hash."""
    raw = BoundedInput(path, max_bytes, hash_content=True)
    buf = bytearray(limits.CHUNK_BYTES // 4)
    with raw:
        while raw.readinto(buf):
            pass
        return raw.sha.hexdigest(), raw.count


def iter_lines(path, max_bytes: int | None = None):
    """The file's decompressed lines (bytes, without line ends), streamed and bounded."""
    with open_input(path, max_bytes) as f:
        for line in f:
            yield line.rstrip(b"\r\n")


def csv_chunks(path, *, max_bytes: int | None = None, chunk_rows: int | None = None, **read_csv_kwargs):
    """Yield (row_offset, DataFrame) chunks of pandas.read_csv over the bounded stream: memory
    stays one chunk's worth whatever the file size. The text is read as UTF-8 (a BOM is
    dropped); a non-UTF-8 byte raises UnicodeDecodeError."""
    rows = chunk_rows or _chunk_rows(read_csv_kwargs)
    with open_input(path, max_bytes) as raw:
        text = io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")
        reader = pd.read_csv(text, chunksize=rows, **read_csv_kwargs)
        offset = 0
        with reader:
            for df in reader:
                yield offset, df
                offset += len(df)


def _chunk_rows(kwargs) -> int:
    return 1_000_000 if kwargs.get("dtype") is not str else 250_000
