"""`leap tribunal rungs --probe` (issue 17; T2, T8): one canary convening per rung, through
the real provider code, all rungs at once. Per rung: did it answer (and why not), was the
answer one bare JSON object, did its footer name the lens literally, how long it took, the
context the server reports where it can (Ollama ``/api/show``), the ``num_ctx`` sent (a
truncated prompt fails the seat in the provider itself) and the tokens it reported. A rung
is live when it gave a valid verdict on the canary and its server holds the context the rung
declares. Written as one probe record through the ledger store; routing reads the latest."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import stat
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

import httpx

from leapgit.ledger import layout
from leapgit.ledger.store import Ledger, LedgerView
from leapgit.records import schema, yamlio
from leapgit.records.probe import ProbeRecord, RungProbe
from leapgit.records.tribunal_config import Rung, TribunalConfig
from leapgit.timeutil import now_iso
from leapgit.tribunal import canary, routing, verdict, worktree
from leapgit.tribunal.envelope import Envelope
from leapgit.tribunal.errors import BadAnswer, OffLens, SeatFailure
from leapgit.tribunal.prompt import Prompt
from leapgit.tribunal.providers import asker
from leapgit.tribunal.providers.base import Answer, SeatContext, dig
from leapgit.tribunal.providers.base import client as http_client
from leapgit.tribunal.providers.ollama import num_ctx

_LATEST_READ = 64  # probe records read back at most: older ones are history, not routing


_last_id: list[str] = [""]


def new_probe_id() -> str:
    """The probe's UTC second, then its microsecond in hex: names sort in the order the
    probes were made, within one second too (routing takes the latest by name, T2)."""
    now = datetime.now(UTC)
    made = f"{now.strftime('%Y%m%dT%H%M%SZ')}-{now.microsecond:06x}"
    if made <= _last_id[0]:  # the same microsecond in this process: the next one
        stamp, tick = _last_id[0].split("-")
        made = f"{stamp}-{int(tick, 16) + 1:06x}"
    _last_id[0] = made
    return made


def route_key(rung: Rung) -> str:
    """Who answers, as the probe record names it: a probe of another route (a changed
    endpoint, model or command) says nothing about this rung."""
    return " ".join(routing.route(rung))


def _shape(text: str) -> tuple[bool, bool]:
    """(one bare JSON object, its footer names the canary's lens and comes last, T8)."""
    stripped = text.strip()
    try:
        data = json.loads(stripped) if stripped.startswith("{") else None
    except (ValueError, RecursionError):
        data = None
    if not isinstance(data, dict):
        return False, False
    return True, data.get("lens") == canary.LENS and next(reversed(data), None) == "lens"


async def server_context(rung: Rung, ctx: SeatContext) -> tuple[int | None, str]:
    """The context length an Ollama server reports for the rung's model (``/api/show``:
    ``model_info["<arch>.context_length"]``), or None with why it is unknown."""
    if rung.provider != "ollama":
        return None, ""

    try:
        response = await ctx.client.post(f"{rung.endpoint}/api/show",
                                         json={"model": rung.model}, timeout=rung.timeout)
        info = dig(response.json(), "model_info")
    except (httpx.HTTPError, httpx.InvalidURL, ValueError) as exc:
        return None, f"/api/show: {type(exc).__name__}"
    found = [v for k, v in (info.items() if isinstance(info, dict) else ())
             if k.endswith(".context_length") and isinstance(v, int) and v > 0]
    return (found[0], "") if found else (None, "/api/show reports no context_length")


def _capacity(rung: Rung, reported: int | None) -> str | None:
    # T8: route depth is measured capacity; a declared context the server cannot hold
    # would send envelopes the model truncates
    if reported is None or reported >= rung.context_tokens:
        return None
    return (f"the server reports a context of {reported} tokens (/api/show), the rung "
            f"declares context_tokens {rung.context_tokens} (T8)")


async def probe_rung(rung: Rung, prompt: Prompt, env: Envelope, ctx: SeatContext) -> RungProbe:
    reported, unknown = await server_context(rung, ctx)
    base = RungProbe(rung.id, rung.provider, rung.family, route_key(rung), False, "", "", 0.0,
                     server_context=reported,
                     num_ctx=num_ctx(rung, prompt) if rung.provider == "ollama" else None)
    started = time.monotonic()
    answer: Answer | None = None
    try:
        answer = await asker(rung.provider)(rung, prompt, ctx)
        found = verdict.parse(answer.text, canary.LENS, env)
    except SeatFailure as exc:
        shaped = (True, False) if isinstance(exc, OffLens) else \
            _shape(answer.text) if answer else (False, False)
        # T8: an answer cut at its output budget with no usable verdict is a failed seat
        spent = isinstance(exc, BadAnswer) and getattr(answer, "exhausted", False)
        return base._replace(result="exhausted" if spent else exc.kind,
                             seconds=round(time.monotonic() - started, 3),
                             detail="; ".join(x for x in (exc.detail, unknown) if x),
                             json=shaped[0], footer=shaped[1],
                             usage=(answer.usage if answer else None) or exc.usage,
                             raw_tail=exc.raw_tail or None)
    seconds = round(time.monotonic() - started, 3)
    caught = found.outcome == "refuse" and any(
        f.supported and canary.DEFECT in f.evidence for f in found.findings)
    small = _capacity(rung, reported)
    detail = f"{found.said}: {found.reason}" + (f"; {unknown}" if unknown else "")
    return base._replace(live=small is None, result="capacity" if small else "answered",
                         detail=small or detail, seconds=seconds, json=True, footer=True,
                         said=found.said, caught=caught, usage=answer.usage)


@contextmanager
def canary_tree(env: Envelope) -> Iterator[Path]:
    """T5, T8: the canary's files, read-only, for command jurors to sit in."""
    parent = Path(tempfile.mkdtemp(prefix="leap-canary-"))
    tree = parent / "tree"
    try:
        for f in env.files:
            path = tree / f.path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f.text or "", "utf-8")
        for folder, _dirs, files in os.walk(tree, topdown=False):
            for name in files:
                os.chmod(os.path.join(folder, name), stat.S_IRUSR)
            os.chmod(folder, stat.S_IRUSR | stat.S_IXUSR)
        yield tree
    finally:
        for folder, _dirs, _files in os.walk(parent):
            os.chmod(folder, stat.S_IRWXU)
        shutil.rmtree(parent, ignore_errors=True)


def probeable(rung: Rung, env: Mapping[str, str]) -> str | None:
    """Why a rung is not probed (no call could succeed), or None."""
    if rung.api_key_env and not env.get(rung.api_key_env):
        return f"${rung.api_key_env} is not set"
    return None


async def _probe_all(rungs: tuple[Rung, ...], cfg: TribunalConfig, probe_id: str,
                     env: Mapping[str, str]) -> list[RungProbe]:
    envelope = canary.envelope()
    prompt = canary.prompt(probe_id, envelope)
    longest = max([r.timeout for r in rungs] + [cfg.timeout])
    with canary_tree(envelope) as tree:
        async with http_client(longest) as client:
            ctx = SeatContext(client, cfg.max_answer_bytes, juror_tree=tree,
                              juror_digest=worktree.digest(tree), env=dict(env))
            return list(await asyncio.gather(*(probe_rung(r, prompt, envelope, ctx)
                                               for r in rungs)))


def run(cfg: TribunalConfig, env: Mapping[str, str]) -> tuple[ProbeRecord, dict[str, str]]:
    """The probe record of every probeable rung, and the rungs not probed with why."""
    probe_id = new_probe_id()
    skipped = {r.id: why for r in cfg.rungs if (why := probeable(r, env))}
    rungs = tuple(r for r in cfg.rungs if r.id not in skipped)
    results = asyncio.run(_probe_all(rungs, cfg, probe_id, env)) if rungs else []
    return ProbeRecord(probe_id, now_iso(), canary.LENS, tuple(results)), skipped


def write(ledger: Ledger, record: ProbeRecord) -> str:
    """The record through the ledger store (the only writer); its commit."""
    raw = record.to_dict()
    path = layout.path_for(raw)
    schema.validate_record(raw, path)  # what we write, pre-receive will read
    live = sum(r.live for r in record.rungs)
    subject = f"tribunal probe {record.probe}: {live} of {len(record.rungs)} rung(s) live"
    return ledger.append({path: yamlio.dumps(raw)}, subject).commit


def latest(view: LedgerView, rungs: tuple[Rung, ...]) -> dict[str, tuple[str, RungProbe]]:
    """Per rung id, the latest probe of its current route: (probe id, what it found)."""
    wanted = {r.id: route_key(r) for r in rungs}
    out: dict[str, tuple[str, RungProbe]] = {}
    names = [n for n in view.list(layout.PROBES_DIR) if n.endswith(".yaml")]
    for name in sorted(names, reverse=True)[:_LATEST_READ]:
        found = view.record(f"{layout.PROBES_DIR}/{name}", ProbeRecord)
        if found is None:
            continue
        for entry in found.rungs:
            if entry.rung not in out and wanted.get(entry.rung) == entry.route:
                out[entry.rung] = (found.probe, entry)
        if len(out) == len(wanted):
            break
    return out
