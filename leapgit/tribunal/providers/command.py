"""Any local CLI as a juror: the prompt on stdin, the verdict on stdout. It sits in a plain
read-only export of the candidate with no ``.git`` and an allow-listed environment (T5, T8),
with a deadline; its process group is killed on timeout. A dead or failing command never
answered (T6); bytes changed under it annul it."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Mapping
from pathlib import Path

from leapgit import procs
from leapgit.records.tribunal_config import Rung
from leapgit.records.usage import Usage, counted
from leapgit.tribunal import worktree
from leapgit.tribunal.errors import Annulled, BadAnswer, NeverAnswered
from leapgit.tribunal.prompt import Prompt
from leapgit.tribunal.providers.base import Answer, SeatContext, dig
from leapgit.tribunal.verdict import RAW_TAIL, shown, tail

_ENV_KEEP = frozenset({"PATH", "HOME", "LANG", "TMPDIR"})


def juror_env(rung: Rung, lens: str, env: Mapping[str, str],
              tree: Path | None) -> dict[str, str]:
    """T5: what a command juror inherits: the basics a CLI needs, its own API key and its
    lens; never other keys, the builder's session variables or git's location."""
    out = {k: v for k, v in env.items() if k in _ENV_KEEP or k.startswith("LC_")}
    if rung.api_key_env and rung.api_key_env in env:
        out[rung.api_key_env] = env[rung.api_key_env]
    if tree is not None:  # git finds no repository above the export either
        out["GIT_CEILING_DIRECTORIES"] = str(tree.parent)
    out.update(rung.env)  # its preset's switches (issue 17): no keys, nothing identifying
    out["LEAP_LENS"] = lens
    return out


async def _feed(proc: asyncio.subprocess.Process, data: bytes) -> None:
    assert proc.stdin is not None
    try:
        proc.stdin.write(data)
        await proc.stdin.drain()
        proc.stdin.close()
    except (BrokenPipeError, ConnectionResetError):
        pass  # a juror may answer without reading everything; its answer still counts


async def _read(stream: asyncio.StreamReader, bound: int) -> bytes:
    got = bytearray()
    while chunk := await stream.read(65536):
        got += chunk
        if len(got) > bound:
            raise BadAnswer(f"answer larger than {bound} bytes: cut, seat failed",
                            tail(got[-RAW_TAIL:].decode("utf-8", "replace")))
    return bytes(got)


async def _talk(proc: asyncio.subprocess.Process, data: bytes, bound: int) -> tuple[bytes, bytes]:
    assert proc.stdout is not None and proc.stderr is not None
    feeding = asyncio.ensure_future(_feed(proc, data))
    out, err = await asyncio.gather(_read(proc.stdout, bound), _read(proc.stderr, bound))
    await feeding
    await proc.wait()
    return out, err


def _kill(proc: asyncio.subprocess.Process) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


async def ask(rung: Rung, prompt: Prompt, ctx: SeatContext) -> Answer:
    cwd = ctx.juror_tree
    env = juror_env(rung, prompt.lens, ctx.env, cwd)
    with procs.spawning():  # a run that walks away from the seat ends it too
        try:
            proc = await asyncio.create_subprocess_exec(
                *rung.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, cwd=cwd, env=env, start_new_session=True)
        except OSError as exc:
            raise NeverAnswered(f"cannot start {rung.command[0]!r}: {exc.strerror}") from None
        procs.hold(proc.pid)
    try:
        out, err = await asyncio.wait_for(
            _talk(proc, prompt.text.encode("utf-8"), ctx.max_answer_bytes), rung.timeout)
    except TimeoutError:
        raise NeverAnswered(f"no answer within {rung.timeout:g} s (killed)") from None
    finally:
        _kill(proc)
        await proc.wait()
        procs.release(proc.pid)
    if cwd is not None and await asyncio.to_thread(worktree.digest, cwd) != ctx.juror_digest:
        raise Annulled("bytes changed under the seat in its export of the candidate (T8)")
    if proc.returncode != 0:
        raise NeverAnswered(f"exit {proc.returncode}",
                            tail(err[-RAW_TAIL:].decode("utf-8", "replace")))
    text = out.decode("utf-8", "replace")
    if rung.reply == "claude-json":
        return _claude_result(text)
    return Answer(text, f"exit 0, {len(out)} bytes")


def _claude_result(text: str) -> Answer:
    """Claude Code's ``--output-format json`` result object: the verdict is its
    ``structured_output`` (``--json-schema``), else its ``result`` text, which the verdict
    rules then judge as any answer. An object that says ``is_error`` never answered (T6:
    re-seated); stdout that is no such object answered badly."""
    try:
        envelope = json.loads(text)
    except ValueError:
        envelope = None
    if not isinstance(envelope, dict) or envelope.get("type") != "result":
        raise BadAnswer("not Claude Code's JSON result object (--output-format json)",
                        tail(text))
    usage = _claude_usage(envelope)
    if envelope.get("is_error") is not False:
        raise NeverAnswered(f"claude reported an error ({shown(envelope.get('subtype'))})",
                            tail(str(envelope.get("result", ""))), usage)
    verdict = envelope.get("structured_output")
    answer = json.dumps(_footer_last(verdict)) if isinstance(verdict, dict) \
        else envelope.get("result")
    if not isinstance(answer, str):
        raise BadAnswer("Claude Code's result object holds neither structured_output nor "
                        "a result text", tail(text))
    return Answer(answer, f"exit 0, subtype {shown(envelope.get('subtype'))}", usage)


def _footer_last(verdict: dict[str, object]) -> dict[str, object]:
    """A structured verdict is data, not text: its keys come in whatever order Claude Code
    serialised them, which ``--json-schema`` does not fix. Written out as a verdict, its
    ``lens`` footer goes last (T8 judges the footer's literal value; its place is the
    text's, and here leapgit writes the text)."""
    out = {k: v for k, v in verdict.items() if k != "lens"}
    if "lens" in verdict:
        out["lens"] = verdict["lens"]
    return out


def _claude_usage(envelope: dict[str, object]) -> Usage | None:
    """Every input token the call read: Claude Code reports most of a prompt as cache
    creation and cache reads beside ``input_tokens`` (the uncached rest, often a handful).
    All are counted at the rung's input price, which can only overstate a cache's cost, so
    ``run.max_usd`` is never undercut."""
    tokens_in = dig(envelope, "usage", "input_tokens")
    cached = [dig(envelope, "usage", k) or 0
              for k in ("cache_creation_input_tokens", "cache_read_input_tokens")]
    if isinstance(tokens_in, int) and all(isinstance(n, int) for n in cached):
        tokens_in += sum(cached)
    return counted(tokens_in, dig(envelope, "usage", "output_tokens"))
