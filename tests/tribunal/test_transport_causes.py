"""Issue 14 item 11: a juror that never answered (T6: a hold) prints its cause on the
terminal, each rung it tried: connection refused, a timeout after N s, the HTTP status. Real
HTTP servers on 127.0.0.1 (and a port nobody listens on), the real CLI process."""

from __future__ import annotations

from tests.support import free_port, leap
from tests.tribunal.conftest import BUILDER, Repo, rung
from tests.tribunal.jurors import JurorServer, Reply


def _convene(repo: Repo):  # type: ignore[no-untyped-def]
    return leap("tribunal", "convene", "--base", repo.base, "--head", repo.head,
                "--intent", "add integer division", "--criteria", "div divides",
                "--builder", BUILDER, "--out", str(repo.root.parent / "cli-out"),
                cwd=repo.root)


def _lens_line(out: str, lens: str) -> str:
    return next(line for line in out.splitlines() if line.split()[1:2] == [lens])


def test_connection_refused_is_named_on_the_terminal(repo: Repo) -> None:
    url = f"http://127.0.0.1:{free_port()}"  # nobody listens there
    repo.config([rung("r1", "openai", url)])
    result = _convene(repo)
    assert result.code == 3, result
    line = _lens_line(result.out, "defect")
    assert line.startswith("  hold   defect"), line
    assert "r1 never answered: ConnectError: " in line, line
    assert "refused" in line.lower() or "connection attempts failed" in line.lower(), line
    assert f"(endpoint {url})" in line, line  # where it could not connect


def test_an_http_status_and_a_timeout_are_named_on_the_terminal(repo: Repo) -> None:
    with JurorServer("openai", lambda c: Reply(raw=b"bad request", status=400)) as bad, \
            JurorServer("openai", lambda c: Reply(raw=b"{}", delay=5)) as slow:
        repo.config([rung("r1", "openai", bad.url), rung("r2", "openai", slow.url, timeout=1,
                                                           cost=2)])
        result = _convene(repo)
    assert result.code == 3, result
    line = _lens_line(result.out, "proportion")
    assert f"r1 never answered: HTTP 400 from {bad.url}" in line, line
    assert "r2 never answered: no answer within 1 s" in line, line
