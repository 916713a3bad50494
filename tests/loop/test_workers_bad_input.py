"""`leap worker` given bad input says so once, before it claims anything, and exits 2: a
--name no claim record can hold (the server refused each take and the worker, reading the
refusal as a lost race, tried again every --poll, for ever), a --slice the remote's ledger
does not have (it stopped with exit 1, the code of a remote that refused it)."""

from __future__ import annotations

import pytest

from tests.loop import workers_world as ww
from tests.support import GitDaemon
from tests.tribunal.jurors import JurorServer


@pytest.mark.parametrize("name", ["a b", "a/../b", "-x", "x" * 201])
def test_a_name_no_claim_can_hold_is_bad_input(daemon: GitDaemon, jurors: JurorServer,
                                               name: str) -> None:
    w = ww.published(daemon, jurors, f"badname{len(name)}{name[0]}")
    clone = w.clone("c1")
    before = w.remote_ledger()
    res = w.leap("worker", "--remote", "origin", "--name", name, "--once", "--poll", "0.2",
                 cwd=clone, timeout=60)
    assert res.code == 2, res
    lines = res.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("leap: --name: "), res
    assert "[L9]" in lines[0] and "no claim was taken" in lines[0], res
    assert w.remote_ledger() == before  # no claim went up
    assert not ww.claim_files(w)


def test_a_slice_the_remote_does_not_have_is_bad_input(daemon: GitDaemon,
                                                       jurors: JurorServer) -> None:
    w = ww.published(daemon, jurors, "noslice")
    clone = w.clone("c1")
    before = w.remote_ledger()
    res = w.leap("worker", "--remote", "origin", "--slice", "nosuch", "--once", cwd=clone,
                 timeout=60)
    assert res.code == 2, res
    assert "unknown slice 'nosuch' (known: pkgs)" in res.out + res.err, res
    assert w.remote_ledger() == before
    assert not ww.claim_files(w)


def test_a_remote_out_of_reach_is_named_by_what_git_said(daemon: GitDaemon,
                                                          jurors: JurorServer) -> None:
    """Before: "gone is out of reach (no ledger on gone (and the repository exists.))",
    the last line of git's advice instead of its fatal: line."""
    import time

    from tests.support import git

    w = ww.published(daemon, jurors, "gone")
    clone = w.clone("c1")
    git("remote", "add", "gone", str(w.base_dir / "nowhere.git"), cwd=clone)
    log = w.base_dir / "gone.log"
    proc = w.popen("worker", "--remote", "gone", "--once", cwd=clone, log=log)
    try:
        deadline = time.monotonic() + 60
        while "out of reach" not in log.read_text():
            assert time.monotonic() < deadline and proc.poll() is None, log.read_text()
            time.sleep(0.1)
    finally:
        proc.kill()
        proc.wait()
    said = log.read_text()
    assert "gone is out of reach (no ledger on gone (fatal: " in said, said
    assert "does not appear to be a git repository" in said, said
    assert "and the repository exists." not in said, said
