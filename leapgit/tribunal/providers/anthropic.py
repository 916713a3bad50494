"""Anthropic's ``/v1/messages``: ``anthropic-version``, ``max_tokens``, a top-level system
prompt asking for JSON only. ``stop_reason`` ``refusal`` and ``max_tokens`` without usable
output fail the seat; ``model_context_window_exceeded`` is a capacity rejection (T6, T8)."""

from __future__ import annotations

from leapgit.records.tribunal_config import Rung
from leapgit.records.usage import counted
from leapgit.tribunal.errors import BadAnswer, BudgetSpent, CapacityRejected
from leapgit.tribunal.prompt import Prompt
from leapgit.tribunal.providers.base import (
    Answer,
    SeatContext,
    api_key,
    dig,
    post,
    reply_json,
)
from leapgit.tribunal.verdict import cut, shown, tail

API_VERSION = "2023-06-01"


async def ask(rung: Rung, prompt: Prompt, ctx: SeatContext) -> Answer:
    url = f"{rung.endpoint}/v1/messages"
    headers = {"anthropic-version": API_VERSION, "content-type": "application/json"}
    key = api_key(rung, ctx.env)
    if key:
        headers["x-api-key"] = key
    body = {
        "model": rung.model, "max_tokens": rung.max_output_tokens, "temperature": 0,
        "system": prompt.system, "messages": [{"role": "user", "content": prompt.user}],
    }
    status, data = await post(ctx, rung, url, body, headers)
    text = data.decode("utf-8", "replace")
    if status == 400 and "prompt is too long" in text:
        raise CapacityRejected("HTTP 400: prompt is too long (T6)", tail(text))
    return read_message(reply_json(status, data, url))


def read_message(reply: dict[str, object]) -> Answer:
    stop = reply.get("stop_reason")
    blocks = reply.get("content")
    texts = [b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"] \
        if isinstance(blocks, list) else []
    text = "".join(t for t in texts if isinstance(t, str))
    usage = counted(dig(reply, "usage", "input_tokens"), dig(reply, "usage", "output_tokens"))
    if stop == "model_context_window_exceeded":
        raise CapacityRejected("stop_reason model_context_window_exceeded (T6)", tail(text),
                               usage)
    if stop == "refusal":
        raise BadAnswer("stop_reason refusal", tail(text), usage)
    if not text.strip():
        if stop == "max_tokens":
            raise BudgetSpent("stop_reason 'max_tokens' with no output: the budget was spent, "
                              "failed seat (T8)", usage=usage)
        raise BadAnswer(f"no output (stop_reason {shown(stop)}): failed seat (T8)", usage=usage)
    said = f"stop_reason {cut(str(stop))}, usage {cut(str(reply.get('usage')), 400)}"
    return Answer(text, said, usage, exhausted=stop == "max_tokens")
