"""Workers over `git http-backend` behind a real web server with HTTP basic authentication
(issue 16): the server's pre-receive sees each pusher as ``REMOTE_USER``, so a claim is
taken only in the pusher's own name and a published ball's rounds come only from the live
claim's holder (L9); the thrower's scoring and merge are accepted."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from leapgit.records import yamlio
from tests import webserver
from tests.loop import workers_world as ww
from tests.support import git
from tests.tribunal.jurors import JurorServer

# the thrower pushes as `integrator`, the holder `leap merge` takes its lease in (L9)
USERS = {"integrator": "integrator-pw", "alice": "alice-pw", "bob": "bob-pw"}

if not webserver.available():
    if os.environ.get("LEAP_REQUIRE_WEBSERVER"):
        raise RuntimeError("lighttpd is not installed: `apt-get install lighttpd`")
    pytest.skip("lighttpd is not installed (`apt-get install lighttpd`; .ci/run does)",
                allow_module_level=True)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[webserver.GitHttp]:
    with webserver.GitHttp(tmp_path_factory.mktemp("http-served"), USERS) as server:
        yield server


def test_claims_and_rounds_only_in_the_pusher_s_own_name(served: webserver.GitHttp) -> None:
    from leapgit.ledger import layout
    from leapgit.ledger.sync import push_records
    from leapgit.records.claims import ClaimRecord
    from leapgit.timeutil import iso_at, now_iso

    with JurorServer("openai", ww.jurors) as jurors:
        base = served.base / "http"
        base.mkdir()
        w = ww.build(base, lambda bare: served.url(bare, "integrator"), jurors.url, 2)
        alice = w.clone("alice", served.url(w.bare, "alice"))
        bob = w.clone("bob", served.url(w.bare, "bob"))
        git("fetch", "-q", "origin", "leap/ledger:leap/ledger", cwd=bob)
        (w.base_dir / "hang-b1").write_text("")
        orch = w.popen("run", ww.S, "--remote", "origin", "--poll", "0.2", "--heartbeat",
                       "0", cwd=w.work)
        worker = w.popen("worker", "--remote", "origin", "--name", "alice", "--poll", "0.2",
                         cwd=alice)
        claim = f"slices/{ww.S}/balls/b1/episodes/1/claims/1/take.yaml"
        deadline = time.monotonic() + 120
        while claim not in w.ledger_files("/claims/"):
            assert time.monotonic() < deadline and worker.poll() is None, \
                (w.base_dir / "alice.log").read_text()
            time.sleep(0.1)
        assert yamlio.loads(w.ledger_text(claim).encode(), claim)["holder"] == "alice"
        # bob cannot take a claim in alice's name: the transport names him
        fake = ClaimRecord(ww.S, "b1", 1, 2, "take", "alice", now_iso(),
                           claimed_until=iso_at(time.time() + 5))
        with pytest.raises(Exception) as named:
            push_records("origin", {layout.claim_path(ww.S, "b1", 1, 2, "take"):
                                    yamlio.dumps(fake.to_dict())}, "claim", start=bob)
        said = " ".join(named.value.lines())
        assert "[L9]" in said and "pushed by 'bob' (from REMOTE_USER)" in said, said
        # nor push a round on the ball alice holds
        git("fetch", "-q", "origin", "+refs/heads/leap/ball/pkgs/b1:refs/heads/leap/ball/pkgs/b1",
            cwd=bob)
        git("switch", "-q", "leap/ball/pkgs/b1", cwd=bob)
        (bob / "pkg" / "b1.py").write_text("def b1():\n    return 'b1'\n")
        git("add", "pkg/b1.py", cwd=bob)
        git("-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", "b1: bob's round",
            cwd=bob)
        push = subprocess.run(["git", "push", "--no-verify", "origin", "leap/ball/pkgs/b1"],
                              cwd=bob, capture_output=True, text=True)
        assert push.returncode != 0, push
        assert "[L9]" in push.stderr and "pushed by 'bob', but claim 1 is held by 'alice'" \
            in push.stderr, push.stderr
        (w.base_dir / "hang-b1").unlink()
        code = orch.wait(240)
        assert code == 0, (w.base_dir / "work.log").read_text()[-3000:]
        assert worker.wait(60) == 0, (w.base_dir / "alice.log").read_text()[-3000:]
    spine = git("log", "--first-parent", "--format=%s", "main", cwd=w.bare).splitlines()
    assert len([s for s in spine if s.startswith(f"leap: integrate {ww.S}/")]) == 2, spine
    workers = {yamlio.loads(w.ledger_text(p).encode(), p)["worker"]
               for p in w.ledger_files("/receipts/")}
    assert workers == {"alice"}, workers
    from tests.loop.workers_world import fsck

    fsck(w.bare)
    assert Path(w.bare).is_dir()
