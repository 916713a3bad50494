"""Ollama's native ``/api/chat`` (T2, T6). ``num_ctx`` is sized to the prompt (the server
default truncates silently); ``truncate: false`` asks newer servers to refuse instead; a
``prompt_eval_count`` below the prompt means the juror never saw it all: the seat failed as
truncated, never graded. Only the last seat holding the model unloads it."""

from __future__ import annotations

import httpx

from leapgit.records.tribunal_config import Rung
from leapgit.records.usage import Usage, counted
from leapgit.tribunal.envelope import estimate_tokens
from leapgit.tribunal.errors import BadAnswer, BudgetSpent, CapacityRejected
from leapgit.tribunal.prompt import Prompt, wire_schema
from leapgit.tribunal.providers.base import Answer, SeatContext, dig, post, reply_json
from leapgit.tribunal.verdict import cut, shown, tail

# Tokenizers pack ~3-4.5 chars a token for code and prose (the cautious estimate is 3): a
# prompt evaluated at fewer than chars/5 tokens (60% of that estimate) lost part of itself.
TRUNCATION_CHARS_PER_TOKEN = 5
_CTX_STEP = 1024


def num_ctx(rung: Rung, prompt: Prompt) -> int:
    need = estimate_tokens(prompt.text) + rung.max_output_tokens
    return min(rung.context_tokens, -(-need // _CTX_STEP) * _CTX_STEP)


def _capacity_error(status: int, text: str) -> bool:
    lowered = text.lower()
    return status == 400 and any(w in lowered for w in ("context", "truncat", "too long"))


def check_read_whole(evaluated: object, prompt: Prompt, ctx_size: int,
                     usage: Usage | None = None) -> None:
    floor = prompt.chars // TRUNCATION_CHARS_PER_TOKEN
    if not isinstance(evaluated, int):
        raise CapacityRejected("no prompt_eval_count: cannot prove the whole envelope was read")
    if evaluated < floor or evaluated >= ctx_size:
        raise CapacityRejected(
            f"truncated: prompt_eval_count {evaluated} for a prompt of {prompt.chars} chars "
            f"(expected {floor}..{ctx_size - 1}) (T2)", usage=usage)


async def ask(rung: Rung, prompt: Prompt, ctx: SeatContext) -> Answer:
    key = (rung.endpoint or "", rung.model or "")
    ctx.holders.take(key)
    try:
        return await _chat(rung, prompt, ctx)
    finally:
        if ctx.holders.give_back(key):
            await _unload(rung, ctx)


async def _chat(rung: Rung, prompt: Prompt, ctx: SeatContext) -> Answer:
    size = num_ctx(rung, prompt)
    url = f"{rung.endpoint}/api/chat"
    body = {
        "model": rung.model, "stream": False, "format": wire_schema(prompt.lens),
        "messages": [{"role": "system", "content": prompt.system},
                     {"role": "user", "content": prompt.user}],
        "options": {"num_ctx": size, "temperature": 0}, "truncate": False,
    }
    status, data = await post(ctx, rung, url, body)
    if _capacity_error(status, data.decode("utf-8", "replace")):
        raise CapacityRejected("HTTP 400: the server refused the prompt as too long (T6)",
                               tail(data.decode("utf-8", "replace")))
    reply = reply_json(status, data, url)
    # what the server charged: prompt tokens evaluated, tokens generated
    usage = counted(reply.get("prompt_eval_count"), reply.get("eval_count"))
    check_read_whole(reply.get("prompt_eval_count"), prompt, size, usage)
    text = dig(reply, "message", "content")
    reason = reply.get("done_reason")
    if not isinstance(text, str) or not text.strip():
        if reason == "length":
            raise BudgetSpent("done_reason 'length' with no answer text: the budget was spent, "
                              "failed seat (T8)", usage=usage)
        raise BadAnswer(f"no answer text (done_reason {shown(reason)}): failed seat (T8)",
                        usage=usage)
    said = f"num_ctx {size}, prompt_eval_count {cut(str(reply.get('prompt_eval_count')))}, " \
        f"done_reason {cut(str(reason))}"
    return Answer(text, said, usage, exhausted=reason == "length")


async def _unload(rung: Rung, ctx: SeatContext) -> None:
    body: dict[str, object] = {"model": rung.model, "messages": [], "keep_alive": 0}
    try:
        await ctx.client.post(f"{rung.endpoint}/api/chat", json=body, timeout=10)
    except (httpx.HTTPError, httpx.InvalidURL):
        pass  # best effort: the server unloads on its own keep_alive timer anyway
