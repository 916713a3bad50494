"""Issue 14 item 11: the openai rung's ``response_format`` is configurable (``json_schema``,
the default and what was always sent; ``json_object``; ``none`` for servers that reject the
field), and a base URL ending in ``/v1`` is taken without its ``/v1`` (the provider adds it),
with a warning line, instead of calling ``/v1/v1/...``."""

from __future__ import annotations

import pytest

from leapgit.errors import InvalidRecord
from leapgit.records.config import parse_config
from leapgit.records.yamlio import dumps
from tests.tribunal.conftest import Repo, rung
from tests.tribunal.jurors import Call, JurorServer, Reply, detailed_pass


def refuse_response_format(call: Call) -> Reply:
    """A server that rejects the field outright, as some local servers do."""
    if "response_format" in call.body:
        return Reply(raw=b'{"error": "response_format is not supported"}', status=400)
    return detailed_pass(call)


def test_the_default_asks_for_the_strict_json_schema(repo: Repo) -> None:
    with JurorServer("openai") as server:
        repo.config([rung("r1", "openai", server.url)])
        repo.convene()
    sent = server.chats()[0].body["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["strict"] is True
    assert sent["json_schema"]["schema"]["additionalProperties"] is False


def test_json_object_asks_for_any_json_object(repo: Repo) -> None:
    with JurorServer("openai") as server:
        repo.config([rung("r1", "openai", server.url, response_format="json_object")])
        result = repo.convene()
    assert {c.body["response_format"]["type"] for c in server.chats()} == {"json_object"}
    assert all(r.outcome == "pass" for r in result.results)


def test_none_sends_no_response_format_to_a_server_that_rejects_it(repo: Repo) -> None:
    with JurorServer("openai", refuse_response_format) as server:
        repo.config([rung("r1", "openai", server.url)])
        refused = repo.convene()
        assert {r.outcome for r in refused.results} == {"hold"}  # HTTP 400 every seat
        repo.config([rung("r1", "openai", server.url, response_format="none")])
        result = repo.convene()
    assert not any("response_format" in c.body for c in server.chats()[8:])
    assert {r.outcome for r in result.results} == {"pass"}
    assert result.decision.outcome == "pass"


@pytest.mark.parametrize("provider,path", [("openai", "/v1/chat/completions"),
                                           ("anthropic", "/v1/messages")])
@pytest.mark.parametrize("suffix", ["/v1", "/v1/"])
def test_an_endpoint_ending_in_v1_is_normalised_with_a_warning(
        repo: Repo, provider: str, path: str, suffix: str) -> None:
    with JurorServer(provider) as server:
        repo.config([rung("r1", provider, server.url + suffix)])
        result = repo.convene()
    assert {c.path for c in server.chats()} == {path}  # never /v1/v1/...
    assert all(r.outcome == "pass" for r in result.results)
    warnings = [line for line in repo.lines if line.startswith("warning:")]
    assert warnings == [
        f"warning: .leap/config.yaml: tribunal.rungs[0].endpoint '{server.url}{suffix}' ends "
        f"in /v1, which the {provider} rung adds itself: using '{server.url}' (it would have "
        "called /v1/v1/...)"]


def test_an_endpoint_without_v1_is_used_as_given_and_warns_nothing(repo: Repo) -> None:
    with JurorServer("openai") as server:
        repo.config([rung("r1", "openai", server.url + "/")])
        repo.convene()
    assert {c.path for c in server.chats()} == {"/v1/chat/completions"}
    assert not [line for line in repo.lines if line.startswith("warning:")]


def _config(**rung_fields: object) -> bytes:
    one = {"id": "r1", "provider": "openai", "model": "m", "endpoint": "http://127.0.0.1:9",
           "family": "f", "tiers": ["generalist"], "context_tokens": 4096, "cost": 1,
           **rung_fields}
    return dumps({"version": 1, "spine": "main", "ledger_ref": "refs/heads/leap/ledger",
                  "tribunal": {"rungs": [one]}})


@pytest.mark.parametrize("field,value,why", [
    ("response_format", "json", "must be one of ['json_schema', 'json_object', 'none']"),
    ("usd_per_mtok_in", -1, "must be bigger than or equal to 0"),
    ("usd_per_mtok_out", "cheap", "must be number"),
])
def test_a_bad_rung_field_is_one_line_naming_file_field_and_rule(
        field: str, value: object, why: str) -> None:
    with pytest.raises(InvalidRecord) as caught:
        parse_config(_config(**{field: value}), ".leap/config.yaml")
    assert str(caught.value) == f".leap/config.yaml: tribunal.rungs[0].{field}: {why} [config]"


def test_response_format_on_another_provider_is_refused_naming_the_field() -> None:
    with pytest.raises(InvalidRecord, match=r"\.leap/config\.yaml: tribunal\.rungs\[0\]\."
                       r"response_format: response_format is read by the openai provider "
                       r"only, not by 'anthropic'"):
        parse_config(_config(provider="anthropic", response_format="none"),
                     ".leap/config.yaml")
