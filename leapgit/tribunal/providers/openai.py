"""Any OpenAI-compatible server's ``/v1/chat/completions``. The rung's ``response_format``
asks for a strict JSON schema (the default), any JSON object, or nothing (servers that
reject the field; the prompt still asks for JSON and the verdict rules still judge it). A
refusal, or ``finish_reason: length`` with no usable output, is a failed seat recorded as
such (T8)."""

from __future__ import annotations

from typing import Any

from leapgit.records.tribunal_config import Rung
from leapgit.records.usage import counted
from leapgit.tribunal.errors import BadAnswer, BudgetSpent, CapacityRejected
from leapgit.tribunal.prompt import Prompt, wire_schema
from leapgit.tribunal.providers.base import Answer, SeatContext, api_key, dig, post, reply_json
from leapgit.tribunal.verdict import cut, shown, tail


def response_format(rung: Rung, lens: str) -> dict[str, Any] | None:
    if rung.response_format == "none":
        return None
    if rung.response_format == "json_object":
        return {"type": "json_object"}
    return {"type": "json_schema", "json_schema": {
        "name": "verdict", "strict": True, "schema": wire_schema(lens)}}


async def ask(rung: Rung, prompt: Prompt, ctx: SeatContext) -> Answer:
    url = f"{rung.endpoint}/v1/chat/completions"
    headers = {}
    key = api_key(rung, ctx.env)
    if key:
        headers["Authorization"] = f"Bearer {key}"
    body: dict[str, Any] = {
        "model": rung.model, "temperature": 0, "max_tokens": rung.max_output_tokens,
        "messages": [{"role": "system", "content": prompt.system},
                     {"role": "user", "content": prompt.user}],
    }
    wanted = response_format(rung, prompt.lens)
    if wanted is not None:
        body["response_format"] = wanted
    status, data = await post(ctx, rung, url, body, headers)
    text = data.decode("utf-8", "replace")
    if status == 400 and "context_length_exceeded" in text:
        raise CapacityRejected("HTTP 400 context_length_exceeded (T6)", tail(text))
    reply = reply_json(status, data, url)
    return read_choice(reply)


def read_choice(reply: dict[str, object]) -> Answer:
    message = dig(reply, "choices", 0, "message")
    finish = dig(reply, "choices", 0, "finish_reason")
    usage = counted(dig(reply, "usage", "prompt_tokens"), dig(reply, "usage",
                                                              "completion_tokens"))
    if not isinstance(message, dict):
        raise BadAnswer("no choices[0].message in the reply", tail(str(reply)), usage)
    refusal = message.get("refusal")
    if refusal:
        raise BadAnswer(f"refusal: {str(refusal)[:200]}", tail(str(refusal)), usage)
    content = message.get("content")
    if not isinstance(content, str) or not content.strip():
        if finish == "length":
            raise BudgetSpent("finish_reason 'length' with no output: the budget was spent, "
                              "failed seat (T8)", usage=usage)
        raise BadAnswer(f"no output (finish_reason {shown(finish)}): failed seat (T8)", usage=usage)
    said = f"finish_reason {cut(str(finish))}, usage {cut(str(reply.get('usage')), 400)}"
    return Answer(content, said, usage, exhausted=finish == "length")
