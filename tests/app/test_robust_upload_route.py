"""Issue 23, finding 1: an upload goes to disk while it arrives, in bounded memory.

Streamlit 1.67's own upload route (built here by its create_upload_routes, as the server does) is
driven over ASGI with a real multipart body: it holds the whole file in memory (the finding,
reproduced); with appkit.upload_route's handler swapped in, the server holds at most ~1 MiB of it,
the file lands in the workspace's uploads/ and Streamlit's store keeps an empty record."""

from __future__ import annotations

import asyncio
import re
import tracemalloc
from pathlib import Path

import pytest
from streamlit.runtime.memory_uploaded_file_manager import MemoryUploadedFileManager
from streamlit.web.server.starlette.starlette_routes import create_upload_routes

from appkit import data, upload_route, workspace

MIB = 2**20
BOUNDARY = b"----planner-test"


class _Runtime:
    def is_active_session(self, session_id):
        return session_id == "s1"


def _put_route(swapped: bool):
    mgr = MemoryUploadedFileManager("/_stcore/upload_file")
    route = next(r for r in create_upload_routes(_Runtime(), mgr, None) if "PUT" in r.methods)
    if swapped:
        upload_route.swap(route)
    return route, mgr


def _body_chunks(name: str, n: int, chunk: int = 64 * 1024):
    """A multipart body of one file of n bytes, made chunk by chunk (never whole in memory)."""
    yield (b"--" + BOUNDARY + b'\r\nContent-Disposition: form-data; name="file"; filename="' + name.encode()
           + b'"\r\nContent-Type: application/octet-stream\r\n\r\n')
    line = b"1 0 5 3600 4 -1 -1 4 3600 -1 1 1 1 1 1 -1 -1 -1\n"
    block = (line * (chunk // len(line) + 1))[:chunk]
    left = n
    while left:
        k = min(chunk, left)
        yield block[:k]
        left -= k
    yield b"\r\n--" + BOUNDARY + b"--\r\n"


def _put(route, chunks, session="s1", file_id="f1", disconnect_after: int | None = None) -> int:
    """PUT the chunks through the route as a server would; the response status."""
    scope = {"type": "http", "method": "PUT", "path": f"/_stcore/upload_file/{session}/{file_id}",
             "path_params": {"session_id": session, "file_id": file_id}, "query_string": b"",
             "headers": [(b"content-type", b"multipart/form-data; boundary=" + BOUNDARY)],
             "app": None}
    it = iter(chunks)
    sent = {"n": 0, "status": None}

    async def receive():
        if disconnect_after is not None and sent["n"] >= disconnect_after:
            return {"type": "http.disconnect"}
        try:
            b = next(it)
        except StopIteration:
            return {"type": "http.request", "body": b"", "more_body": False}
        sent["n"] += 1
        return {"type": "http.request", "body": b, "more_body": True}

    async def send(msg):
        if msg["type"] == "http.response.start":
            sent["status"] = msg["status"]

    async def go():
        from starlette.exceptions import HTTPException

        try:
            await route.handle(scope, receive, send)
        except HTTPException as e:
            sent["status"] = e.status_code

    asyncio.run(go())
    return sent["status"]


@pytest.fixture
def ws(tmp_path, monkeypatch):
    from streamlit import config

    was = config.get_option("server.enableXsrfProtection")
    config.set_option("server.enableXsrfProtection", False)  # one test checks it on
    request_cleanup = lambda: config.set_option("server.enableXsrfProtection", was)  # noqa: E731
    monkeypatch.setattr(upload_route, "_owner", {})  # each test's own staged files only
    monkeypatch.setattr(upload_route, "_gone_since", {})
    monkeypatch.setattr(upload_route, "_dirs", {})
    d = tmp_path / "ws"
    d.mkdir()
    upload_route.register_session("s1", d)
    yield d
    upload_route.take("s1", "f1")
    request_cleanup()


def _peak(fn) -> tuple[object, int]:
    tracemalloc.start()
    try:
        out = fn()
        return out, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_streamlits_route_holds_the_whole_upload_ours_at_most_a_mib(ws):
    n = 6 * MIB
    route, mgr = _put_route(swapped=False)
    status, peak_theirs = _peak(lambda: _put(route, _body_chunks("big.swf", n)))
    assert status == 204
    assert len(mgr.get_files("s1", ["f1"])[0].data) == n  # the finding: the whole file in the store
    del mgr, route

    route, mgr = _put_route(swapped=True)
    status, peak_ours = _peak(lambda: _put(route, _body_chunks("big.swf", n)))
    assert status == 204
    print(f"Python allocations while a 6 MiB upload arrives: Streamlit's route {peak_theirs / MIB:.1f} MiB, "
          f"the streaming route {peak_ours / MIB:.1f} MiB")
    assert peak_theirs >= n
    assert peak_ours < 3 * MIB  # the 1 MiB write buffer and the parser's chunks
    rec = mgr.get_files("s1", ["f1"])[0]
    assert rec.data == b"" and rec.name == "big.swf"  # the widget works, no bytes in memory
    got = upload_route.take("s1", "f1")
    assert got.error is None and got.size == n and got.path.parent == ws / "uploads"
    assert got.path.stat().st_size == n and oct(got.path.stat().st_mode & 0o777) == "0o600"
    assert got.path.read_bytes()[:20] == b"1 0 5 3600 4 -1 -1 4"


def test_over_the_limit_or_the_quota_is_refused_and_nothing_stays(ws, monkeypatch):
    route, mgr = _put_route(swapped=True)
    monkeypatch.setattr(data, "MAX_UPLOAD_BYTES", 2 * MIB)
    assert _put(route, _body_chunks("over.swf", 2 * MIB + 1)) == 204
    got = upload_route.take("s1", "f1")
    assert got.path is None and "more than 2 MiB (the limit per upload)" in got.error
    assert list((ws / "uploads").iterdir()) == []
    assert _put(route, _body_chunks("exact.swf", 2 * MIB)) == 204  # exactly the limit passes
    assert upload_route.take("s1", "f1").size == 2 * MIB
    monkeypatch.setattr(data, "MAX_UPLOAD_BYTES", 500 * MIB)
    monkeypatch.setenv("PLANNER_WORKSPACE_QUOTA_MB", "3")
    assert workspace.quota_bytes() == 3 * MIB
    assert _put(route, _body_chunks("quota.swf", 2 * MIB)) == 204
    got = upload_route.take("s1", "f1")
    assert got.path is None and got.error.startswith("workspace quota reached")
    assert [p.stat().st_size for p in (ws / "uploads").iterdir()] == [2 * MIB]  # only the earlier one


def test_the_stored_name_is_the_servers_whatever_the_client_sends(ws):
    route, _ = _put_route(swapped=True)
    assert _put(route, _body_chunks("../../../etc/passwd.swf", 100)) == 204
    got = upload_route.take("s1", "f1")
    assert got.path.parent == ws / "uploads" and re.fullmatch(r"[0-9a-f]{32}\.swf", got.path.name)
    assert got.name == "../../../etc/passwd.swf"  # kept as the user's name (shown escaped), never a path
    assert sorted(p.name for p in ws.rglob("*") if p.is_file()) == [got.path.name]


def test_page_gets_the_refusal_as_one_line(ws, monkeypatch):
    class Up:
        file_id, name, size = "f1", "![x](http://e/x.png).swf", 0

    monkeypatch.setattr(upload_route, "_installed", {"done": True, "active": True})
    monkeypatch.setattr("streamlit.runtime.scriptrunner.get_script_run_ctx",
                        lambda: type("C", (), {"session_id": "s1"})())
    route, _ = _put_route(swapped=True)
    monkeypatch.setattr(data, "MAX_UPLOAD_BYTES", MIB)
    _put(route, _body_chunks("x.swf", MIB + 10))
    with pytest.raises(data.InputError, match="limit per upload") as e:
        data.stage_upload(Up(), ws)
    assert "\n" not in str(e.value)
    with pytest.raises(data.InputError, match="choose the file again"):  # taken already: not silent
        data.stage_upload(Up(), ws)
    monkeypatch.setattr(data, "MAX_UPLOAD_BYTES", 500 * MIB)
    _put(route, _body_chunks("ok.swf", 1000))
    p = data.stage_upload(Up(), ws)
    assert p.parent == ws / "uploads" and p.stat().st_size == 1000


def test_a_broken_upload_leaves_no_file_and_limits_hold(ws):
    route, _ = _put_route(swapped=True)
    from starlette.requests import ClientDisconnect

    with pytest.raises(ClientDisconnect):  # the client went away mid-body
        _put(route, _body_chunks("cut.swf", 4 * MIB), disconnect_after=20)
    assert not (ws / "uploads").exists() or list((ws / "uploads").iterdir()) == []
    assert upload_route.take("s1", "f1") is None
    assert _put(route, _body_chunks("x.swf", 10), session="s9") == 400  # not an active session
    upload_route._inflight["s1"] = upload_route.MAX_INFLIGHT_PER_SESSION
    try:
        assert _put(route, _body_chunks("x.swf", 10)) == 429  # uploads at once per session
    finally:
        upload_route._inflight.pop("s1", None)
    two = list(_body_chunks("a.swf", 10))[:-1] + [b"\r\n"] + list(_body_chunks("b.swf", 10))
    assert _put(route, two) == 400  # two files in one body
    assert list((ws / "uploads").iterdir()) == []
    assert _put(route, [b"not multipart at all"]) == 400
    from streamlit import config

    config.set_option("server.enableXsrfProtection", True)  # Streamlit's own XSRF check still runs first
    assert _put(route, _body_chunks("x.swf", 10)) == 403


def test_the_replaced_route_is_the_pinned_streamlits(monkeypatch):
    import streamlit

    pins = Path(__file__).resolve().parents[2].joinpath("requirements.txt").read_text()
    assert f"streamlit=={upload_route.STREAMLIT_VERSION}" in pins
    assert streamlit.__version__ == upload_route.STREAMLIT_VERSION
    route, _ = _put_route(swapped=False)
    route.endpoint = lambda request: None  # another Streamlit's handler: refused loudly
    route._planner_original = None
    with pytest.raises(RuntimeError, match="not Streamlit 1.67.0's"):
        upload_route.swap(route)


def test_staged_uploads_of_a_closed_session_go_after_the_grace(ws):
    """A closed tab or a refresh (Streamlit drops the session from its active ones): its staged
    files are removed after the grace; an open session's stay; a file gone already is forgotten."""
    route, _ = _put_route(swapped=True)
    assert _put(route, _body_chunks("a.swf", 1000)) == 204
    mine = upload_route.take("s1", "f1").path
    other = ws / "uploads" / "other.swf"
    other.write_bytes(b"x")
    upload_route.own(other, "s2")  # a session still open
    open_ = {"s2"}
    assert upload_route.sweep_closed(lambda s: s in open_, now=1000.0, grace_s=60) == []  # s1 just closed
    assert upload_route.sweep_closed(lambda s: s in open_, now=1059.0, grace_s=60) == []
    assert upload_route.sweep_closed(lambda s: s in open_, now=1061.0, grace_s=60) == [mine]
    assert not mine.exists() and other.exists()
    assert "s1" not in upload_route._dirs  # the closed session's workspace entry went with it
    other.unlink()
    assert upload_route.sweep_closed(lambda s: False, now=2000.0, grace_s=0) == []
    assert upload_route._owner == {} and upload_route._gone_since == {}
