"""Scripted jurors for the tribunal tests: real HTTP servers on 127.0.0.1 that speak the
Ollama, OpenAI-compatible and Anthropic wire formats, and a real command-line juror.

A script maps each call (with the lens read from the prompt) to a ``Reply``; the server
wraps the reply text in its provider's wire format unless the reply supplies raw bytes.
"""

from __future__ import annotations

import json
import re
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def load(path: Path) -> Any:
    """A YAML file the tribunal wrote, as data."""
    from leapgit.records import yamlio

    return yamlio.load_file(path)


_LENS = re.compile(r"one lens: ([a-z_]+)\.")


@dataclass
class Reply:
    text: str | None = None
    status: int = 200
    delay: float = 0.0
    raw: bytes | None = None
    endless: bool = False
    trickle: float = 0.0  # seconds between bytes
    prompt_eval_count: int | None | str = "auto"
    finish: str | None = None  # finish_reason / stop_reason / done_reason
    refusal: str | None = None
    # the (in, out) token counts the reply reports in its provider's fields; None: none
    usage: tuple[int, int] | None | str = "auto"


@dataclass
class Call:
    path: str
    body: dict[str, Any]
    headers: dict[str, str]
    lens: str | None


def verdict(lens: str, said: str = "pass", findings: list[dict[str, str]] | None = None,
            **extra: Any) -> str:
    return json.dumps({"verdict": said, "findings": findings or [], "lens": lens, **extra})


def finding(severity: str, claim: str = "division by zero is not handled",
            evidence: str = "return a / b") -> dict[str, str]:
    return {"severity": severity, "file": "src/calc.py", "claim": claim, "evidence": evidence}


def detailed_pass(call: Call) -> Reply:
    return Reply(verdict(call.lens or "?", "pass", [finding("info", "looks proportionate")]))


def prompt_chars(body: dict[str, Any]) -> int:
    text = json.dumps(body.get("messages", [])) + str(body.get("system", ""))
    return len(text)


def _counts(call: Call, reply: Reply) -> tuple[int, int] | None:
    if reply.usage != "auto":
        return reply.usage  # type: ignore[return-value]
    return prompt_chars(call.body) // 4, len(reply.text or "") // 4 + 1


def _wrap(provider: str, call: Call, reply: Reply, counts: tuple[int, int] | None) -> bytes:
    text = reply.text or ""
    if provider == "ollama":
        count = reply.prompt_eval_count
        if count == "auto":
            count = counts[0] if counts else prompt_chars(call.body) // 4
        out: dict[str, Any] = {"model": call.body.get("model"), "done": True,
                               "message": {"role": "assistant", "content": text},
                               "done_reason": reply.finish or "stop"}
        if count is not None:
            out["prompt_eval_count"] = count
        if counts is not None:
            out["eval_count"] = counts[1]
        return json.dumps(out).encode()
    if provider == "openai":
        message = {"role": "assistant", "content": text or None, "refusal": reply.refusal}
        usage = ({"prompt_tokens": counts[0], "completion_tokens": counts[1],
                  "total_tokens": sum(counts)} if counts else None)
        return json.dumps({"id": "x", "object": "chat.completion", "choices": [
            {"index": 0, "message": message, "finish_reason": reply.finish or "stop"}],
            **({"usage": usage} if usage else {})}).encode()
    content = [{"type": "text", "text": text}] if text else []
    usage = {"input_tokens": counts[0], "output_tokens": counts[1]} if counts else {}
    return json.dumps({"id": "msg", "type": "message", "role": "assistant", "content": content,
                       "stop_reason": reply.finish or "end_turn", "usage": usage}).encode()


def reported(provider: str, call: Call, reply: Reply) -> tuple[int, int] | None:
    """The (in, out) counts the wrapped reply reports, as leapgit should read them."""
    counts = _counts(call, reply)
    if provider == "ollama" and counts is not None and reply.prompt_eval_count != "auto":
        count = reply.prompt_eval_count
        return (count, counts[1]) if isinstance(count, int) else None
    return counts


class LoopbackServer(ThreadingHTTPServer):
    # eight seats connect at once; socketserver's default backlog of 5 drops SYNs, and the
    # client's SYN retry costs a whole second
    request_queue_size = 128
    daemon_threads = True

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.errors: list[str] = []

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Kept, not printed: a client that gave up mid-reply (a seat's timeout) is no
        fault, and socketserver's print lands on the stderr of whatever in-process `leap`
        call a later test is capturing."""
        self.errors.append(traceback.format_exc())


class JurorServer:
    def __init__(self, provider: str, script: Callable[[Call], Reply] = detailed_pass,
                 show: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None,
                 ) -> None:
        self.provider = provider
        self.script = script
        self.show = show  # what Ollama's /api/show answers for a request body; None: 404
        self.calls: list[Call] = []
        self.sent: list[tuple[int, int]] = []  # the usage each wrapped reply reported
        self._lock = threading.Lock()
        self._server = LoopbackServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def spent(self) -> tuple[int, int]:
        """The tokens in and out every reply so far reported, summed."""
        return sum(n for n, _ in self.sent), sum(n for _, n in self.sent)

    def chats(self) -> list[Call]:
        return [c for c in self.calls if c.body.get("messages")]

    def __enter__(self) -> JurorServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(5)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(size) or b"{}")
                text = json.dumps(body.get("messages", [])) + str(body.get("system", ""))
                found = _LENS.search(text)
                call = Call(self.path, body, dict(self.headers), found.group(1) if found else None)
                with owner._lock:
                    owner.calls.append(call)
                if owner.provider == "ollama" and self.path == "/api/show":
                    shown = owner.show(body) if owner.show else None
                    return self._send(200 if shown else 404, json.dumps(
                        shown or {"error": "model not found"}).encode())
                if owner.provider == "ollama" and not body.get("messages"):
                    return self._send(200, b'{"done": true, "done_reason": "unload"}')
                reply = owner.script(call)
                time.sleep(reply.delay)
                if reply.endless or reply.trickle:
                    return self._stream(reply)
                if reply.raw is not None:
                    return self._send(reply.status, reply.raw)
                counts = reported(owner.provider, call, reply)
                if counts is not None and reply.status < 400:
                    with owner._lock:
                        owner.sent.append(counts)
                self._send(reply.status, _wrap(owner.provider, call, reply,
                                               _counts(call, reply)))

            def _send(self, status: int, data: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, reply: Reply) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Connection", "close")
                self.end_headers()
                chunk = b"x" * 65536 if reply.endless else b" "
                try:
                    for _ in range(100000):
                        self.wfile.write(chunk)
                        self.wfile.flush()
                        if reply.trickle:
                            time.sleep(reply.trickle)
                except OSError:
                    pass
                self.close_connection = True

        return Handler


COMMAND_JUROR = r'''
import json, os, re, sys, time
mode = sys.argv[1]
prompt = sys.stdin.read()
lens = re.search(r"one lens: ([a-z_]+)\.", prompt).group(1)
if mode == "pass":
    print(json.dumps({"verdict": "pass", "findings": [{"severity": "info", "file": "src/calc.py",
          "claim": "fine", "evidence": "return a / b"}], "lens": lens}))
elif mode == "refuse":
    print(json.dumps({"verdict": "refuse", "findings": [{"severity": "major",
          "file": "src/calc.py", "claim": "division by zero", "evidence": "return a / b"}],
          "lens": lens}))
elif mode == "garbage":
    print("I think it looks fine overall!")
elif mode == "sleep":
    time.sleep(30)
elif mode == "fail":
    sys.stderr.write("juror crashed\n"); sys.exit(4)
elif mode == "fail-loud":
    sys.stderr.write("Traceback (most recent call last):\n" + "  frame\n" * 1000); sys.exit(4)
elif mode == "write":
    try:
        open("src/calc.py", "a").write("# juror was here\n")
    except OSError:
        os.chmod("src", 0o755); os.chmod("src/calc.py", 0o644)
        open("src/calc.py", "a").write("# juror was here\n")
    print(json.dumps({"verdict": "pass", "findings": [], "lens": lens}))
elif mode == "snoop":
    import subprocess
    log = subprocess.run(["git", "log", "-1", "--format=%an %ae"], capture_output=True, text=True)
    seen = {"git": os.path.exists(".git"), "log": log.stdout.strip(), "env": sorted(os.environ),
            "has_file": os.path.isfile("src/calc.py"),
            "writable": any(os.stat(p).st_mode & 0o222 for p in (".", "src", "src/calc.py"))}
    print(json.dumps({"verdict": "refuse", "findings": [{"severity": "info", "file": "",
          "claim": json.dumps(seen), "evidence": ""}], "lens": lens}))
elif mode == "pwd":
    print(json.dumps({"verdict": "refuse", "findings": [{"severity": "info", "file": "",
          "claim": os.getcwd(), "evidence": ""}], "lens": lens}))
'''
