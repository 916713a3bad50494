"""One ``ask(rung, prompt, ctx)`` per provider; each returns an ``Answer`` or raises a
``SeatFailure`` (never an httpx error)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from leapgit.records.tribunal_config import Rung
from leapgit.tribunal.prompt import Prompt
from leapgit.tribunal.providers.base import Answer, SeatContext

Ask = Callable[[Rung, Prompt, SeatContext], Awaitable[Answer]]


def asker(provider: str) -> Ask:
    if provider == "ollama":
        from leapgit.tribunal.providers import ollama
        return ollama.ask
    if provider == "openai":
        from leapgit.tribunal.providers import openai
        return openai.ask
    if provider == "anthropic":
        from leapgit.tribunal.providers import anthropic
        return anthropic.ask
    from leapgit.tribunal.providers import command
    return command.ask
