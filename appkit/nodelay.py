"""TCP_NODELAY on every connection the app's server accepts (issue 25, speed).

Streamlit 1.67 binds its listening socket itself (`socket.socket(family=...)`, protocol number 0),
and asyncio sets TCP_NODELAY on an accepted connection only when its socket's protocol number is
IPPROTO_TCP (asyncio.base_events._set_nodelay): every browser connection kept Nagle's algorithm.
A response written in two parts (its headers, then its body) on a kept-alive connection then waited
for the browser's delayed ACK, ~40 ms: each of the ~50 element chunks a page such as Idle or the
Planner fetches after its first message cost ~45 ms on one of Chromium's 6 connections, and those
pages were drawn ~0.3 s later than their script and chunks allowed (measured: a kept-alive static
file 43 ms, 0.8 ms with this; docs/benchmarks.md). Installed at the first run of app.py: the
connections accepted before it (the server's very first page load) keep Nagle's algorithm."""

from __future__ import annotations

import socket
from asyncio import base_events

_done = {"installed": False}
ASYNCIO_SET_NODELAY = base_events._set_nodelay  # asyncio's own (kept for the test)


def _set_nodelay(sock) -> None:
    if sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type == socket.SOCK_STREAM:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def install() -> None:
    """asyncio's accepted TCP connections get TCP_NODELAY whatever their socket's protocol number
    (once per process)."""
    if not _done["installed"]:
        base_events._set_nodelay = _set_nodelay  # selector_events calls base_events._set_nodelay
        _done["installed"] = True
