"""Uploads streamed to disk in bounded memory (issue 23, finding 1).

Streamlit 1.67 serves `PUT /_stcore/upload_file/{session_id}/{file_id}` with a Starlette handler
(`streamlit.web.server.starlette.starlette_routes.create_upload_routes.<locals>._upload_put`) that
parses the multipart body into a temporary file and then reads the whole file into one `bytes`
(`await upload.read()`), which becomes the record of its in-memory upload store and the widget's
`UploadedFile` (a BytesIO over it): while a 300 MiB file arrives the server held it whole, peaking
604 MiB over its baseline (benchmarks/bench_upload_memory.py). Streamlit has no setting or hook for
this (its `st.App(middleware=...)` needs another entry point; reserved routes cannot be replaced).

`install()` (called by appkit.session.bind at every script run; it acts once per process) swaps
that route's endpoint, in the running server, for `_put` below, which reuses Streamlit's own XSRF
check, session check and response headers (taken from the original handler's closure) and:

- streams the multipart body (python-multipart's parser, as Starlette uses) straight into the
  session's workspace staging folder (`<workspace>/uploads/<uuid>.<ext>`, mode 0600), writing in
  chunks of at most 1 MiB: the server holds at most ~1 MiB of any upload at once;
- counts the file's bytes: more than appkit.data.MAX_UPLOAD_BYTES (500 MiB), or more than the
  workspace quota has left (re-measured every 32 MiB, so two uploads at once cannot pass it
  together by much), stops writing, deletes the part written, drains the rest of the body (bounded
  by Streamlit's own raw-body cap, maxUploadSize + 1 MB: 413 beyond) and records the refusal, which
  the page shows as one line;
- allows MAX_INFLIGHT_PER_SESSION uploads at once per session (429 beyond);
- puts an EMPTY record (same file id, name and type) into Streamlit's upload store, so the widget
  works as before but no bytes live in memory, and remembers (session, file id) -> staged path;
  the page takes it with `take()` (appkit.data.stage_upload);
- a thread removes the staged files of a session once it has been closed (a closed tab, a refresh:
  Streamlit drops the session from its active ones) for closed_grace_s() (60 s).

It fails loudly (RuntimeError on every page) if the Streamlit version is not the pinned one or the
route or its closure is not what this code was written against; under AppTest (no server, no
route) it does nothing and uploads arrive in memory as before (appkit.data.stage_upload saves them).
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

STREAMLIT_VERSION = "1.67.0"  # the version whose upload route this replaces (requirements.txt pin)
ROUTE_SUFFIX = "/_stcore/upload_file/{session_id}/{file_id}"
ROUTE_QUALNAME = "create_upload_routes.<locals>._upload_put"
CLOSURE_NEEDS = ("_check_xsrf", "_set_upload_headers", "runtime", "upload_mgr")
WRITE_CHUNK = 1 << 20  # bytes buffered before a write to disk
QUOTA_RECHECK = 32 << 20  # bytes written between two measurements of the workspace
MAX_INFLIGHT_PER_SESSION = 2
MAX_HEADER_BYTES = 64 << 10  # a part's headers
MAX_FIELD_BYTES = 64 << 10  # a non-file part (Streamlit's client sends none)


@dataclass
class Staged:
    """What arrived for one (session, file id): a staged file, or why it was refused."""
    path: Path | None
    size: int
    name: str
    error: str | None = None


_lock = threading.Lock()
_dirs: dict[str, Path] = {}  # session id -> its workspace directory (registered by every script run)
_staged: dict[tuple[str, str], Staged] = {}
_inflight: dict[str, int] = {}
_installed = {"done": False, "active": False}
_owner: dict[str, str] = {}  # staged path -> the session it arrived in
_gone_since: dict[str, float] = {}  # session id -> when a sweep first saw it closed


def closed_grace_s() -> float:
    """Seconds a closed session's staged uploads stay (a reconnect after a network blip keeps its
    session id and finds them): PLANNER_STAGED_GRACE_S, default 60."""
    return float(os.environ.get("PLANNER_STAGED_GRACE_S", "60"))


def own(path: Path, session_id: str) -> None:
    """The staged file belongs to this session: removed once the session is closed (sweep_closed)."""
    with _lock:
        _owner[str(path)] = str(session_id)


def sweep_closed(is_active, now: float | None = None, grace_s: float | None = None) -> list[Path]:
    """Remove the staged uploads of sessions closed (a closed tab, a refresh: the browser's
    connection gone) for more than grace_s; the removed paths. A file already gone (loaded,
    removed on the page) is forgotten."""
    import time

    now = time.time() if now is None else float(now)
    grace = closed_grace_s() if grace_s is None else float(grace_s)
    removed = []
    with _lock:
        owners = dict(_owner)
        known = set(owners.values()) | set(_dirs)
    for sid in known:
        if is_active(sid):
            _gone_since.pop(sid, None)
        else:
            _gone_since.setdefault(sid, now)
    for path, sid in owners.items():
        p = Path(path)
        if not p.exists():
            with _lock:
                _owner.pop(path, None)
        elif sid in _gone_since and now - _gone_since[sid] >= grace:
            p.unlink(missing_ok=True)
            removed.append(p)
            with _lock:
                _owner.pop(path, None)
    with _lock:  # a closed session's workspace entry goes too (a reconnect's script run registers it again)
        for sid in [s for s in _dirs if s in _gone_since and now - _gone_since[s] >= grace]:
            del _dirs[sid]
        live = set(_owner.values()) | set(_dirs)
        for sid in [s for s in _gone_since if s not in live]:
            _gone_since.pop(sid, None)
    return removed


def _sweeper(is_active) -> None:
    import time

    while True:
        time.sleep(max(1.0, min(20.0, closed_grace_s() / 2)))
        try:
            sweep_closed(is_active)
        except Exception:  # noqa: BLE001 - a sweep must never end the thread
            pass


def register_session(session_id: str, ws_dir: Path) -> None:
    """The session's workspace, where its uploads are staged (appkit.session.bind, every run)."""
    with _lock:
        _dirs[str(session_id)] = Path(ws_dir)


def take(session_id: str, file_id: str) -> Staged | None:
    """The staged upload of a file id (removed from the table: the page owns it now), or None
    when the upload did not come through this route (AppTest) or was taken before."""
    with _lock:
        return _staged.pop((str(session_id), str(file_id)), None)


def active() -> bool:
    """Whether the streaming route serves this process's uploads."""
    return _installed["active"]


def _find_route():
    import gc

    from starlette.routing import Route

    found = [o for o in gc.get_objects() if isinstance(o, Route) and str(o.path).endswith(ROUTE_SUFFIX)
             and "PUT" in (o.methods or ())]
    return found


def install() -> bool:
    """Replace Streamlit's upload PUT handler in this server (once); False when there is no server
    (AppTest, bare mode). RuntimeError when Streamlit is not the version this was written for."""
    if _installed["done"]:
        return _installed["active"]
    with _lock:
        if _installed["done"]:
            return _installed["active"]
        import streamlit
        from streamlit.runtime import Runtime

        if not Runtime.exists() or not _server_running():  # AppTest, bare mode: no web server
            _installed["done"] = True
            return False
        if streamlit.__version__ != STREAMLIT_VERSION:
            raise RuntimeError(f"appkit.upload_route replaces Streamlit {STREAMLIT_VERSION}'s upload route, but "
                               f"Streamlit {streamlit.__version__} runs: check its upload handler "
                               "(streamlit/web/server/starlette/starlette_routes.py) and update appkit/upload_route.py")
        routes = _find_route()
        if not routes:
            raise RuntimeError("appkit.upload_route: Streamlit's upload route was not found in the running server")
        runtime = None
        for route in routes:
            runtime = swap(route)
        threading.Thread(target=_sweeper, args=(runtime.is_active_session,), name="staged-upload-sweeper",
                         daemon=True).start()
        _installed.update(done=True, active=True)
        return True


def swap(route):
    """Give one of Streamlit's upload PUT routes the streaming handler (install(); the tests call
    it on routes built by Streamlit's own create_upload_routes); returns Streamlit's runtime."""
    from starlette.routing import request_response

    orig = getattr(route, "_planner_original", None) or route.endpoint
    if getattr(orig, "__qualname__", "") != ROUTE_QUALNAME or orig.__closure__ is None:
        raise RuntimeError(f"appkit.upload_route: the upload route's handler is {orig!r}, not "
                           f"Streamlit {STREAMLIT_VERSION}'s {ROUTE_QUALNAME}")
    cells = dict(zip(orig.__code__.co_freevars, (c.cell_contents for c in orig.__closure__)))
    missing = [n for n in CLOSURE_NEEDS if n not in cells]
    if missing:
        raise RuntimeError(f"appkit.upload_route: Streamlit's upload handler no longer has {missing}")
    handler = _make_put(cells)
    route._planner_original = orig
    route.endpoint = handler
    route.app = request_response(handler)
    return cells["runtime"]


def _server_running() -> bool:
    import gc

    try:
        from streamlit.web.server.starlette.starlette_server import UvicornServer
    except ImportError:  # pragma: no cover
        return False
    return any(isinstance(o, UvicornServer) for o in gc.get_objects())


def _decode(b: bytes) -> str:
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return b.decode("latin-1")


def _make_put(cells: dict):
    from python_multipart.multipart import MultipartParser, parse_options_header
    from starlette.exceptions import HTTPException
    from starlette.responses import Response
    from streamlit import config
    from streamlit.runtime.uploaded_file_manager import UploadedFileRec

    check_xsrf, set_headers = cells["_check_xsrf"], cells["_set_upload_headers"]
    runtime, upload_mgr = cells["runtime"], cells["upload_mgr"]

    async def _put(request):
        import anyio

        from appkit import data, workspace

        check_xsrf(request)
        session_id = request.path_params["session_id"]
        file_id = request.path_params["file_id"]
        if not runtime.is_active_session(session_id):
            raise HTTPException(status_code=400, detail="Invalid session_id.")
        with _lock:
            ws = _dirs.get(session_id)
            if ws is None:
                raise HTTPException(status_code=400, detail="This session has no workspace yet.")
            if _inflight.get(session_id, 0) >= MAX_INFLIGHT_PER_SESSION:
                raise HTTPException(status_code=429, detail="Too many uploads at once from this session.")
            _inflight[session_id] = _inflight.get(session_id, 0) + 1
        try:
            return await _receive(request, session_id, file_id, ws, anyio, data, workspace)
        finally:
            with _lock:
                _inflight[session_id] -= 1
                if not _inflight[session_id]:
                    del _inflight[session_id]

    async def _receive(request, session_id, file_id, ws, anyio, data, workspace):
        max_body = int(config.get_option("server.maxUploadSize")) * 1024 * 1024 + 1024 * 1024
        cl = request.headers.get("content-length")
        if cl:
            try:
                if int(cl) > max_body:
                    raise HTTPException(status_code=413, detail="File too large")
            except ValueError:
                raise HTTPException(status_code=400, detail="Invalid Content-Length header") from None
        ctype, params = parse_options_header(request.headers.get("content-type", ""))
        if ctype != b"multipart/form-data" or not params.get(b"boundary"):
            raise HTTPException(status_code=400, detail="Expected a multipart/form-data body")

        up_dir = await anyio.to_thread.run_sync(workspace.private_dir, Path(ws) / "uploads")
        cap = data.MAX_UPLOAD_BYTES
        st = {"hname": b"", "hval": b"", "headers": {}, "hbytes": 0, "file": None, "path": None, "name": None,
              "type": None, "size": 0, "files": 0, "field": 0, "buf": bytearray(), "error": None,
              "left": await anyio.to_thread.run_sync(workspace.quota_left_bytes, ws), "since_check": 0}

        def bad(msg):
            raise HTTPException(status_code=400, detail=msg)

        def on_part_begin():
            st.update(headers={}, hbytes=0, field=0)

        def on_header_field(d, a, b):
            st["hname"] += d[a:b]
            st["hbytes"] += b - a
            if st["hbytes"] > MAX_HEADER_BYTES:
                bad("Part headers too large")

        def on_header_value(d, a, b):
            st["hval"] += d[a:b]
            st["hbytes"] += b - a
            if st["hbytes"] > MAX_HEADER_BYTES:
                bad("Part headers too large")

        def on_header_end():
            st["headers"][st["hname"].lower()] = st["hval"]
            st["hname"], st["hval"] = b"", b""

        def on_headers_finished():
            _, opts = parse_options_header(st["headers"].get(b"content-disposition", b""))
            if b"filename" not in opts:  # a plain form field (Streamlit's client sends none)
                st["in_file"] = False
                return
            st["files"] += 1
            if st["files"] > 1:
                bad("Expected 1 file")
            st["in_file"] = True
            st["name"] = _decode(opts[b"filename"])
            st["type"] = _decode(st["headers"].get(b"content-type", b"application/octet-stream"))
            st["path"] = up_dir / data.server_filename(st["name"])
            fd = os.open(st["path"], os.O_WRONLY | os.O_CREAT | os.O_EXCL, workspace.FILE_MODE)
            st["file"] = os.fdopen(fd, "wb")

        def on_part_data(d, a, b):
            if not st.get("in_file"):
                st["field"] += b - a
                if st["field"] > MAX_FIELD_BYTES:
                    bad("Form field too large")
                return
            if st["error"] is not None:
                return  # refused: the rest is drained, not kept
            st["size"] += b - a
            if st["size"] > cap:
                st["error"] = (f"the file has more than {cap / 2**20:,.0f} MiB (the limit per upload)")
                return
            if st["size"] > st["left"]:
                st["error"] = (f"workspace quota reached: the upload passed the {max(st['left'], 0) / 2**20:,.1f} MiB "
                               "the workspace has left (logs, runs and staged uploads count); remove a log or the "
                               "staged uploads on the Logs page, or start a new workspace")
                return
            st["buf"] += d[a:b]

        def on_part_end():
            st["in_file"] = False

        parser = MultipartParser(params[b"boundary"], {
            "on_part_begin": on_part_begin, "on_part_data": on_part_data, "on_part_end": on_part_end,
            "on_header_field": on_header_field, "on_header_value": on_header_value,
            "on_header_end": on_header_end, "on_headers_finished": on_headers_finished})

        async def flush(force=False):
            if st["file"] is None:
                st["buf"].clear()
                return
            if st["error"] is not None:
                st["buf"].clear()
                f, st["file"] = st["file"], None
                await anyio.to_thread.run_sync(f.close)
                st["path"].unlink(missing_ok=True)
                return
            if st["buf"] and (force or len(st["buf"]) >= WRITE_CHUNK):
                n = len(st["buf"])  # written as it is (no copy): only this coroutine fills it
                await anyio.to_thread.run_sync(st["file"].write, st["buf"])
                st["buf"].clear()
                st["since_check"] += n
                if st["since_check"] >= QUOTA_RECHECK:  # other uploads of the workspace count too
                    st["since_check"] = 0
                    used = await anyio.to_thread.run_sync(workspace.usage_bytes, ws)
                    st["left"] = min(st["left"], workspace.quota_bytes() - used + st["size"])

        received = 0
        ok = False
        try:
            async for chunk in request.stream():
                received += len(chunk)
                if received > max_body:
                    raise HTTPException(status_code=413, detail="File too large")
                try:
                    parser.write(chunk)
                except (HTTPException, OSError):  # OSError: the staged file could not be made
                    raise
                except Exception as e:  # python-multipart's parse errors
                    raise HTTPException(status_code=400, detail=f"Malformed multipart body: {e}") from None
                await flush()
            try:
                parser.finalize()
            except Exception as e:  # noqa: BLE001
                raise HTTPException(status_code=400, detail=f"Malformed multipart body: {e}") from None
            if st["files"] != 1:
                raise HTTPException(status_code=400, detail=f"Expected 1 file, but got {st['files']}")
            await flush(force=True)
            if st["file"] is not None:
                f, st["file"] = st["file"], None
                await anyio.to_thread.run_sync(f.close)
            ok = True
        finally:
            if st["file"] is not None:  # an error or a disconnect mid-body: nothing stays
                st["file"].close()
                st["file"] = None
            if not ok and st["path"] is not None:
                st["path"].unlink(missing_ok=True)
        staged = Staged(path=None if st["error"] else st["path"], size=st["size"], name=st["name"] or "",
                        error=st["error"])
        with _lock:
            old = _staged.pop((session_id, file_id), None)
            _staged[(session_id, file_id)] = staged
        if old is not None and old.path is not None and old.path != staged.path:
            old.path.unlink(missing_ok=True)
        if staged.path is not None:
            own(staged.path, session_id)
        upload_mgr.add_file(session_id=session_id, file=UploadedFileRec(
            file_id=file_id, name=st["name"] or "", type=st["type"] or "application/octet-stream", data=b""))
        response = Response(status_code=204)
        await set_headers(request, response)
        return response

    _put.__qualname__ = "appkit.upload_route._put"
    return _put
