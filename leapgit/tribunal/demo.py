"""A scripted OpenAI-compatible juror server on 127.0.0.1 for `leap quickstart`: it shows the
protocol (envelope, routing, seats, verdicts, record set) without any model. Its "verdicts"
are canned: this is a demo of the protocol, never a review."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_LENS = re.compile(r"one lens: ([a-z_]+)\.")
# a file's fence line (the token is fresh per envelope, issue 18 F4) and its first line
_FIRST_LINE = re.compile(r"^===== \S+ BEGIN FILE (\S+) [^\n]*\n([^\n]+)", re.MULTILINE)


def canned(prompt: str) -> dict[str, Any]:
    lens = _LENS.search(prompt)
    first = _FIRST_LINE.search(prompt)
    finding = {"severity": "info", "file": first.group(1) if first else "",
               "claim": "scripted demo juror: no real review was done",
               "evidence": first.group(2) if first else ""}
    return {"verdict": "pass", "findings": [finding], "lens": lens.group(1) if lens else ""}


class _Server(ThreadingHTTPServer):
    # eight seats connect at once; socketserver's default backlog of 5 drops SYNs, and the
    # client's SYN retry costs a whole second
    request_queue_size = 128
    daemon_threads = True


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        prompt = "\n".join(m.get("content", "") for m in body.get("messages", []))
        content = json.dumps(canned(prompt))
        data = json.dumps({"choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant", "content": content}}]})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data.encode())


@contextmanager
def scripted_juror() -> Iterator[str]:
    """The base URL of a scripted juror server, for the life of the block."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
