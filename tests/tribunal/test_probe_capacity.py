"""Blind review (issue 17, lens correctness; T2, T8): routing reads the context a probe
measured against the rung's context as configured *now*. A rung that failed its probe only
because it declared more than its server holds sits once it declares what the server holds
(the README's own remedy); a rung that passed its probe but now declares more than the
measured server context is skipped before any dispatch, never sent envelopes the server
truncates."""

from __future__ import annotations

import json
from typing import Any

from tests.support import leap
from tests.tribunal.conftest import Repo, rung
from tests.tribunal.jurors import JurorServer
from tests.tribunal.test_probe import script

SERVER_CONTEXT = 8192


def show(body: dict[str, Any]) -> dict[str, Any]:
    return {"model_info": {"general.architecture": "llama",
                           "llama.context_length": SERVER_CONTEXT}}


def _ladder(repo: Repo) -> dict[str, Any]:
    out = leap("tribunal", "rungs", "--json", cwd=repo.root)
    return json.loads(out.out)["lenses"][0]


def test_a_rung_that_now_declares_what_its_server_holds_sits(repo: Repo) -> None:
    with JurorServer("ollama", script, show=show) as server:
        repo.config([rung("local", "ollama", server.url, context_tokens=100000)])
        assert leap("tribunal", "rungs", "--probe", cwd=repo.root).code == 3
        repo.config([rung("local", "ollama", server.url, context_tokens=SERVER_CONTEXT)])
        lens = _ladder(repo)
        done = repo.convene()
    assert lens["ladder"] == ["local"], lens
    assert done.routing.plan("defect").primary.rungs[0].id == "local"
    assert done.decision.outcome == "pass"


def test_a_rung_that_now_declares_more_than_its_server_holds_is_skipped(repo: Repo) -> None:
    with JurorServer("ollama", script, show=show) as server:
        repo.config([rung("local", "ollama", server.url, context_tokens=SERVER_CONTEXT)])
        assert leap("tribunal", "rungs", "--probe", cwd=repo.root).code == 0
        repo.config([rung("local", "ollama", server.url, context_tokens=100000)])
        lens = _ladder(repo)
        chats = len(server.chats())
        done = repo.convene()
        sent = len(server.chats()) - chats
    assert lens["ladder"] == [], lens
    [skip] = lens["skipped"]
    assert skip["kind"] == "probe"
    assert f"reports a context of {SERVER_CONTEXT} tokens" in skip["reason"]
    assert "declares context_tokens 100000" in skip["reason"]
    assert sent == 0 and done.decision.exit_code == 3
