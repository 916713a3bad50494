"""Any local CLI as a juror: the prompt on stdin, the verdict on stdout. It sits read-only in
a separate worktree of the candidate (T8), with a deadline; its process group is killed on
timeout. A dead or failing command never answered (T6); bytes changed under it annul it."""

from __future__ import annotations

import asyncio
import os
import signal

from leapgit.git import scrubbed_env
from leapgit.records.tribunal import Rung
from leapgit.tribunal import worktree
from leapgit.tribunal.errors import Annulled, BadAnswer, NeverAnswered
from leapgit.tribunal.prompt import Prompt
from leapgit.tribunal.providers.base import Answer, SeatContext
from leapgit.tribunal.verdict import tail

_STDERR_KEEP = 4000


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
                            tail(got[-2000:].decode("utf-8", "replace")))
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
    env = scrubbed_env({"LEAP_LENS": prompt.lens})
    try:
        proc = await asyncio.create_subprocess_exec(
            *rung.command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, cwd=cwd, env=env, start_new_session=True)
    except OSError as exc:
        raise NeverAnswered(f"cannot start {rung.command[0]!r}: {exc.strerror}") from None
    try:
        out, err = await asyncio.wait_for(
            _talk(proc, prompt.text.encode("utf-8"), ctx.max_answer_bytes), rung.timeout)
    except TimeoutError:
        raise NeverAnswered(f"no answer within {rung.timeout:g} s (killed)") from None
    finally:
        _kill(proc)
        await proc.wait()
    if cwd is not None and not await asyncio.to_thread(worktree.is_clean, cwd, ctx.candidate):
        raise Annulled("bytes changed under the seat in its worktree (T8)")
    if proc.returncode != 0:
        raise NeverAnswered(f"exit {proc.returncode}",
                            err[-_STDERR_KEEP:].decode("utf-8", "replace"))
    return Answer(out.decode("utf-8", "replace"), f"exit 0, {len(out)} bytes")

