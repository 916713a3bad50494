"""Issue 17 item 1: `leap tribunal rungs --probe` against scripted servers of every provider
kind on 127.0.0.1 (healthy, prose, timing out, and an Ollama whose /api/show reports a 2048
context), the probe record on the ledger, the server's pre-receive accepting it, and the
next convening skipping the failed rungs with the probe's reason (T2, T8)."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from leapgit.ledger.store import Ledger
from leapgit.records.probe import ProbeRecord
from leapgit.tribunal import canary
from tests.support import git, leap
from tests.tribunal.conftest import Repo, command_rung, rung
from tests.tribunal.jurors import Call, JurorServer, Reply, detailed_pass, verdict

KINDS = ("ollama", "openai", "anthropic")
CAUGHT = {"severity": "blocker", "file": "src/last.py", "claim": "indexes one past the end",
          "evidence": canary.DEFECT}


def script(call: Call) -> Reply:
    model = str(call.body.get("model", ""))
    canary_call = "Tribunal run probe-" in json.dumps(call.body)
    if "prose" in model:
        return Reply("I read the files and they look fine to me.")
    if "slow" in model:
        return Reply(verdict(call.lens or "?"), delay=3)
    if "trunc" in model:  # a server that cut the prompt to its own context, num_ctx ignored
        return Reply(verdict(call.lens or "?", "refuse", [CAUGHT]), prompt_eval_count=50)
    if canary_call:
        return Reply(verdict(call.lens or "?", "refuse", [CAUGHT]))
    return detailed_pass(call)


def show(body: dict[str, Any]) -> dict[str, Any]:
    size = 2048 if "small" in str(body.get("model")) else 131072
    return {"parameters": "temperature 0", "model_info": {
        "general.architecture": "llama", "llama.context_length": size}}


ANSWERS = 20  # seconds a rung that answers is given, however loaded the machine


@contextmanager
def ladder(repo: Repo, tmp: Path) -> Iterator[dict[str, JurorServer]]:
    """Every provider kind: ``<kind>-ok``, ``<kind>-prose``, ``<kind>-slow`` (1 s timeout),
    ``ollama-small`` (the server holds 2048 tokens, the rung declares 100000) and
    ``ollama-trunc`` (the server evaluated far less of the prompt than was sent)."""
    with ExitStack() as stack:
        servers = {k: stack.enter_context(JurorServer(k, script, show=show)) for k in KINDS}
        # only the slow rungs wait 1 s: an answering rung that met a loaded machine (CI,
        # the whole suite on two cores) was taken for a slow one, and the test failed
        rungs = [rung(f"{k}-{m}", k, servers[k].url, timeout=1 if m == "slow" else ANSWERS)
                 for k in KINDS for m in ("ok", "prose", "slow")]
        rungs.append(rung("ollama-small", "ollama", servers["ollama"].url, timeout=ANSWERS))
        rungs.append(rung("ollama-trunc", "ollama", servers["ollama"].url, timeout=ANSWERS))
        rungs += [command_rung(tmp, mode, f"command-{name}",
                               timeout=1 if name == "slow" else ANSWERS)
                  for name, mode in (("ok", "refuse"), ("prose", "garbage"),
                                     ("slow", "sleep"))]
        repo.config(rungs)
        yield servers


def latest_probe(root: Path) -> ProbeRecord:
    with Ledger(root / ".git") as ledger:
        view = ledger.require()
        names = view.list("tribunal/probes")
        found = view.record(f"tribunal/probes/{names[-1]}", ProbeRecord)
    assert found is not None
    return found


def test_the_probe_records_what_each_rung_did(repo: Repo, tmp_path: Path) -> None:
    with ladder(repo, tmp_path):
        result = leap("tribunal", "rungs", "--probe", cwd=repo.root)
    assert result.code == 0, result  # every lens keeps a live rung
    by = {r.rung: r for r in latest_probe(repo.root).rungs}
    assert sorted(r for r, e in by.items() if e.live) == [
        "anthropic-ok", "command-ok", "ollama-ok", "openai-ok"]
    for kind in KINDS:
        ok, prose, slow = (by[f"{kind}-{m}"] for m in ("ok", "prose", "slow"))
        assert (ok.result, ok.json, ok.footer, ok.said, ok.caught) == (
            "answered", True, True, "refuse", True)
        assert ok.usage is not None and ok.usage.tokens_in > 0 and ok.seconds < ANSWERS
        assert (prose.result, prose.json, prose.footer, prose.live) == (
            "bad_answer", False, False, False)
        assert "not one bare JSON object" in prose.detail
        assert prose.raw_tail == "I read the files and they look fine to me."
        assert (slow.result, slow.live) == ("never_answered", False)
        # on a loaded machine the 1 s rung's /api/show may time out as well, and is said
        # after it ("; /api/show: ConnectTimeout", seen once in a full run)
        assert slow.detail.split("; /api/show: ")[0] == "no answer within 1 s", slow.detail
    cli = by["command-ok"]
    assert (cli.result, cli.json, cli.footer, cli.usage) == ("answered", True, True, None)
    assert cli.caught is False  # it refused, quoting what the canary never held
    assert by["command-prose"].result == "bad_answer"
    assert by["command-slow"].detail == "no answer within 1 s (killed)"
    small = by["ollama-small"]
    assert (small.result, small.live, small.server_context, small.json, small.footer) == (
        "capacity", False, 2048, True, True)
    assert small.detail == ("the server reports a context of 2048 tokens (/api/show), the "
                            "rung declares context_tokens 100000 (T8)")
    assert by["ollama-ok"].server_context == 131072 and by["ollama-ok"].num_ctx == 3072
    trunc = by["ollama-trunc"]  # num_ctx 3072 was sent; the server evaluated 50 tokens
    assert (trunc.result, trunc.live, trunc.num_ctx) == ("capacity", False, 3072)
    assert trunc.detail.startswith("truncated: prompt_eval_count 50 for a prompt of ")
    assert by["openai-ok"].server_context is None and by["openai-ok"].num_ctx is None
    assert "  ollama-small: FAILED capacity in " in result.out
    assert "every lens has a live rung" in result.out


def test_the_next_convening_skips_the_failed_rungs_with_the_probes_reason(
        repo: Repo, tmp_path: Path) -> None:
    with ladder(repo, tmp_path) as servers:
        assert leap("tribunal", "rungs", "--probe", cwd=repo.root).code == 0
        probe_id = latest_probe(repo.root).probe
        before = {k: len(s.chats()) for k, s in servers.items()}
        done = repo.convene()
        after = {k: len(s.chats()) for k, s in servers.items()}
    plan = done.routing.plan("defect").primary
    assert {r.id for r in plan.rungs} == {"ollama-ok", "openai-ok", "anthropic-ok",
                                          "command-ok"}
    skipped = {s.rung: s for s in plan.skipped}
    assert skipped["ollama-small"].kind == "probe"
    assert skipped["ollama-small"].reason == (
        f"failed its last probe {probe_id}: capacity: the server reports a context of 2048 "
        "tokens (/api/show), the rung declares context_tokens 100000 (T8)")
    assert skipped["openai-slow"].reason == (
        f"failed its last probe {probe_id}: never_answered: no answer within 1 s")
    assert skipped["anthropic-prose"].reason.startswith(
        f"failed its last probe {probe_id}: bad_answer: not one bare JSON object")
    assert any(f"skip ollama-small: failed its last probe {probe_id}" in line
               for line in repo.lines)  # the convening's routing table says so
    # the failed rungs were sent nothing: the first live rung (ollama-ok) sat every lens
    assert {k: after[k] - before[k] for k in KINDS} == {"ollama": 8, "openai": 0,
                                                        "anthropic": 0}
    assert {r.primary.rung.id for r in done.results if r.primary.rung} == {"ollama-ok"}
    assert done.decision.outcome == "pass"


def test_no_live_rung_for_a_lens_exits_3(repo: Repo) -> None:
    with JurorServer("openai", script) as server:
        repo.config([rung("openai-prose", "openai", server.url, timeout=1)])
        result = leap("tribunal", "rungs", "--probe", "--json", cwd=repo.root)
        again = leap("tribunal", "rungs", cwd=repo.root)
    assert result.code == 3, result
    data = json.loads(result.out)
    assert data["dead"] == [lens["lens"] for lens in data["lenses"]]
    assert data["probe"]["rungs"][0]["result"] == "bad_answer"
    assert again.code == 3  # without --probe, the last probe still stands
    assert "      skipped now: failed its last probe" in again.out
    assert "  defect (generalist)" in again.out and "(none: hold)   (skipped: openai-prose)" \
        in again.out


def test_the_matrix_without_a_probe_says_why_a_rung_would_be_skipped(repo: Repo) -> None:
    repo.config([
        rung("mine", "openai", "http://127.0.0.1:9", family="buildfam"),
        rung("keyed", "anthropic", "http://127.0.0.1:9", api_key_env="LEAP_TEST_NO_KEY"),
        rung("tiny", "ollama", "http://127.0.0.1:9", context_tokens=1000),
        rung("fine", "openai", "http://127.0.0.1:9", cost=0.5, tiers=["generalist"]),
    ])
    result = leap("tribunal", "rungs", "--builder", "model=m,family=buildfam,session=s",
                  cwd=repo.root, env={"LEAP_TEST_NO_KEY": ""})
    assert result.code == 3, result  # only the generalist lenses have a rung
    out = result.out
    assert "  defect (generalist)" in out and "fine" in out
    assert "      skipped now: family 'buildfam' is the builder's family (T4)" in out
    assert "      skipped now: $LEAP_TEST_NO_KEY is not set" in out
    assert "      skipped now: capacity: needs ~" in out and "holds 1000 (T6)" in out
    assert "fine   (skipped: mine, keyed, tiny)" in out
    assert "last probe: none (`leap tribunal rungs --probe`)" in out
    assert "no live rung for: operator_consequence, reversibility" in out


def test_the_server_accepts_a_probe_record(repo: Repo, tmp_path: Path) -> None:
    """The probe record is a ledger record like any other: the real pre-receive of a file
    remote with the server hooks takes it, at the path its content names."""
    bare = tmp_path / "origin.git"
    git("init", "-q", "--bare", "-b", "main", str(bare), cwd=tmp_path)
    assert leap("hooks", "install", "--server", cwd=bare).code == 0
    git("remote", "add", "origin", str(bare), cwd=repo.root)
    with JurorServer("openai", script) as server:
        repo.config([rung("openai-ok", "openai", server.url)])
        assert leap("tribunal", "rungs", "--probe", cwd=repo.root).code == 0
    pushed = subprocess.run(["git", "push", "--porcelain", "--no-verify", "origin", "main",
                             "leap/ledger"], cwd=repo.root, capture_output=True, text=True)
    assert pushed.returncode == 0, pushed.stderr
    probe_id = latest_probe(repo.root).probe
    shown = git("show", f"leap/ledger:tribunal/probes/{probe_id}.yaml", cwd=bare)
    assert 'kind: "probe"' in shown and 'rung: "openai-ok"' in shown


def test_measured_cost_is_the_probes_latency(repo: Repo) -> None:
    """T2: cheapest *measured* first. ``lazy`` declares cost 0 and ``quick`` 5; probed,
    ``lazy`` took 0.4 s and ``quick`` a few ms, so ``quick`` leads the ladder; a rung with
    declared costs keeps its place by them."""
    def timed(call: Call) -> Reply:
        delay = 0.4 if "lazy" in str(call.body.get("model")) else 0.0
        return Reply(verdict(call.lens or "?", "refuse", [CAUGHT]), delay=delay)

    with JurorServer("openai", timed) as server:
        repo.config([rung("lazy", "openai", server.url, cost=0, cost_source="measured"),
                     rung("quick", "openai", server.url, cost=5, cost_source="measured"),
                     rung("fixed", "openai", server.url, cost=0.3)])
        before = json.loads(leap("tribunal", "rungs", "--json", cwd=repo.root).out)
        after = json.loads(leap("tribunal", "rungs", "--probe", "--json", cwd=repo.root).out)
    assert before["lenses"][0]["ladder"] == ["lazy", "fixed", "quick"]
    probed = {r["rung"]: r for r in after["probe"]["rungs"]}
    costs = {r["id"]: r["cost"] for r in after["rungs"]}
    assert costs["fixed"] == 0.3
    for name in ("lazy", "quick"):
        spent = probed[name]["usage"]
        assert costs[name] == round(probed[name]["seconds"]
                                    + (spent["tokens_in"] + spent["tokens_out"]) / 1e6, 6)
    assert probed["lazy"]["seconds"] >= 0.4 > probed["quick"]["seconds"]
    assert after["lenses"][0]["ladder"][0] == "quick"
    assert after["lenses"][0]["ladder"][-1] == "lazy"


def test_a_probe_of_another_route_says_nothing_about_the_rung(repo: Repo) -> None:
    """A rung whose endpoint or model changed since its failed probe is a new juror: the
    old probe does not skip it."""
    with JurorServer("openai", script) as server:
        repo.config([rung("r", "openai", server.url, model="r-prose-model")])
        assert leap("tribunal", "rungs", "--probe", cwd=repo.root).code == 3
        repo.config([rung("r", "openai", server.url, model="r-ok-model")])
        again = leap("tribunal", "rungs", "--json", cwd=repo.root)
    assert again.code == 0, again
    data = json.loads(again.out)
    assert data["rungs"][0]["last_probe"] is None and data["dead"] == []


def test_no_rungs_is_bad_input_in_one_line(repo: Repo) -> None:
    repo.config([])
    result = leap("tribunal", "rungs", "--probe", cwd=repo.root)
    assert result.code == 2 and "Traceback" not in result.err
    assert result.err.startswith("leap: .leap/config.yaml: tribunal.rungs: no rungs are "
                                 "configured, so no juror can sit [T2]"), result.err
