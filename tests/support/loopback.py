"""What the tests' small HTTP servers share: a threaded server on 127.0.0.1 that lets peers hang
up quietly, started on a daemon thread, and one way to write an answer."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, handler: type[BaseHTTPRequestHandler]):
        super().__init__(("127.0.0.1", 0), handler)

    @property
    def port(self) -> int:
        return self.server_address[1]

    def handle_error(self, request, client_address):  # a peer that hung up (stalled, a fork ended)
        pass

    def start(self, name: str | None = None, poll_interval: float = 0.5) -> threading.Thread:
        thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": poll_interval}, name=name, daemon=True
        )
        thread.start()
        return thread

    def stop(self, thread: threading.Thread | None = None) -> None:
        self.shutdown()
        self.server_close()
        if thread is not None:
            thread.join(timeout=10)


def reply(handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: dict | None = None) -> None:
    """One answer: its status, its headers (JSON unless told), and its body with its length."""
    handler.send_response(status)
    for key, value in (headers or {"Content-Type": "application/json"}).items():
        handler.send_header(key, value)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)
