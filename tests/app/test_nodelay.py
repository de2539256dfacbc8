"""appkit.nodelay: a connection accepted on a listening socket bound as Streamlit 1.67 binds its own
(socket.socket(family=AF_INET): protocol number 0) gets TCP_NODELAY, which asyncio alone skips."""

import asyncio
import socket

from appkit import nodelay


def _accepted_nodelay() -> int:
    """TCP_NODELAY of the server side of one connection accepted by asyncio on such a socket."""
    async def main() -> int:
        lsock = socket.socket(family=socket.AF_INET)  # as streamlit's starlette_server._bind_socket
        lsock.bind(("127.0.0.1", 0))
        lsock.listen(8)
        lsock.setblocking(False)
        got: asyncio.Future = asyncio.get_running_loop().create_future()

        async def handle(reader, writer):
            got.set_result(writer.get_extra_info("socket").getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        server = await asyncio.start_server(handle, sock=lsock)
        async with server:
            _, w = await asyncio.open_connection(*lsock.getsockname())
            value = await asyncio.wait_for(got, 10)
            w.close()
        return value

    return asyncio.run(main())


def test_accepted_connections_get_nodelay(monkeypatch):
    from asyncio import base_events

    monkeypatch.setattr(base_events, "_set_nodelay", nodelay.ASYNCIO_SET_NODELAY)
    assert _accepted_nodelay() == 0  # asyncio alone: Nagle's algorithm stays on (the cause)
    monkeypatch.setattr(nodelay, "_done", {"installed": False})
    nodelay.install()
    assert _accepted_nodelay() == 1
