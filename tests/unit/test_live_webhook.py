"""planner live's webhook queue (planner.live.runner.Poller.deliver) against a real local HTTP server:
a URL nobody answers costs one line per poll and keeps the recommendations (bounded, oldest dropped);
once the server answers, they arrive in order, once. (The e2e test does the same on the real cluster.)"""

from __future__ import annotations

import http.server
import json
import socket
import threading

from planner.live import runner


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_failed_post_is_one_line_kept_bounded_and_sent_later_in_order(monkeypatch, tmp_path):
    monkeypatch.setattr(runner, "WEBHOOK_QUEUE", 3)
    port = _port()
    said = []
    p = runner.Poller(tmp_path / "x.duckdb", "x", source=None, webhook=f"http://127.0.0.1:{port}/h", warn=said.append)
    p.deliver([{"job": "a", "n": 1}, {"job": "a", "n": 2}])
    p.deliver([{"job": "a", "n": 3}, {"job": "a", "n": 4}])  # the queue holds 3: n=1 is dropped
    assert len(said) == 2 and all("\n" not in s and s.startswith(f"webhook http://127.0.0.1:{port}/h:") for s in said)
    assert "3 recommendation(s) kept, retried at the next poll" in said[1]
    assert [r["n"] for r in p.webhook_pending] == [2, 3, 4] and p.stats["webhook_dropped"] == 1

    got = []

    class Hook(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 - the http.server name
            got.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.end_headers()

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Hook)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        p.deliver([{"job": "b", "n": 5}])
    finally:
        server.shutdown()
        server.server_close()
    assert [r["n"] for r in got] == [2, 3, 4, 5] and not p.webhook_pending and p.stats["webhook_sent"] == 4
    assert len(said) == 2  # nothing more said once it answered
