"""What every provider shares: the seat's context, a bounded HTTP exchange, and the
mapping of transport trouble onto seat failures (T6: never answered is a hold)."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx

from leapgit.records.tribunal_config import Rung
from leapgit.records.usage import Usage
from leapgit.tribunal.errors import BadAnswer, NeverAnswered
from leapgit.tribunal.verdict import RAW_TAIL, tail

if TYPE_CHECKING:
    import ssl


def client(timeout: float) -> httpx.AsyncClient:
    """The HTTP client of one convening or probe, with the process's one TLS context."""
    return httpx.AsyncClient(timeout=httpx.Timeout(timeout), verify=_tls())


@cache
def _tls() -> ssl.SSLContext:
    """httpx's default verification (certifi's roots, or SSL_CERT_FILE / SSL_CERT_DIR), built
    once a process: loading the roots costs ~20 ms, which every convening of `leap run`
    paid again."""
    return httpx.create_ssl_context()


@dataclass(frozen=True)
class Answer:
    text: str
    detail: str = ""  # what the provider told us about the call (tokens, stop reason)
    usage: Usage | None = None  # the tokens it reported; None when it reported none
    exhausted: bool = False  # T8: it stopped at its output budget (its text may be cut)


@dataclass
class Holders:
    """T6: which seats still hold a local model, so only the last one unloads it."""

    counts: dict[tuple[str, str], int] = field(default_factory=dict)

    def take(self, key: tuple[str, str]) -> None:
        self.counts[key] = self.counts.get(key, 0) + 1

    def give_back(self, key: tuple[str, str]) -> bool:
        """True when the caller was the last holder."""
        self.counts[key] -= 1
        return self.counts[key] == 0


@dataclass
class SeatContext:
    client: httpx.AsyncClient
    max_answer_bytes: int
    holders: Holders = field(default_factory=Holders)
    juror_tree: Path | None = None  # T5, T8: the read-only export command jurors sit in
    juror_digest: str = ""  # worktree.digest(juror_tree) before any seat sat
    env: Mapping[str, str] = field(default_factory=lambda: dict(os.environ))


def api_key(rung: Rung, env: Mapping[str, str]) -> str | None:
    return env.get(rung.api_key_env) if rung.api_key_env else None


async def _exchange(ctx: SeatContext, url: str, body: dict[str, Any],
                    headers: Mapping[str, str]) -> tuple[int, bytes]:
    got = bytearray()
    async with ctx.client.stream("POST", url, json=body, headers=dict(headers)) as response:
        async for chunk in response.aiter_bytes():
            got += chunk
            if len(got) > ctx.max_answer_bytes:
                # an endless or oversized answer is cut at the bound and fails the seat
                raise BadAnswer(f"answer larger than {ctx.max_answer_bytes} bytes: cut, "
                                "seat failed", tail(got[-RAW_TAIL:].decode("utf-8", "replace")))
        return response.status_code, bytes(got)


async def post(ctx: SeatContext, rung: Rung, url: str, body: dict[str, Any],
               headers: Mapping[str, str] | None = None) -> tuple[int, bytes]:
    """(status, body) of one POST, within the rung's whole-call deadline (a slow trickle
    never outlives it); transport trouble and 5xx are NeverAnswered (T6)."""
    try:
        status, data = await asyncio.wait_for(_exchange(ctx, url, body, headers or {}),
                                              rung.timeout)
    except (TimeoutError, httpx.TimeoutException):
        raise NeverAnswered(f"no answer within {rung.timeout:g} s") from None
    except httpx.HTTPError as exc:
        raise NeverAnswered(f"{type(exc).__name__}: {exc or 'transport error'}") from None
    except httpx.InvalidURL as exc:  # a host the config's check took and httpx does not
        raise NeverAnswered(f"the rung's endpoint is no URL httpx calls: {exc}") from None
    if status >= 500:
        raise NeverAnswered(f"HTTP {status} from {url}", tail(data.decode("utf-8", "replace")))
    return status, data


def reply_json(status: int, data: bytes, url: str) -> dict[str, Any]:
    """The provider's own reply object; a 4xx the caller did not handle is NeverAnswered."""
    text = data.decode("utf-8", "replace")
    if status >= 400:
        raise NeverAnswered(f"HTTP {status} from {url}", tail(text))
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):  # nesting past the decoder's depth is garbage too
        raise BadAnswer("the server's reply is not JSON", tail(text)) from None
    if not isinstance(value, dict):
        raise BadAnswer("the server's reply is not a JSON object", tail(text))
    return value


def dig(value: Any, *path: str | int) -> Any:
    """``value[path...]`` or None when any step is missing."""
    for step in path:
        try:
            value = value[step]
        except (KeyError, IndexError, TypeError):
            return None
    return value
