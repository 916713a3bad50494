"""A merge stopped during its push (a Ctrl-C, a dropped connection) reports what the remote
really holds (L8): when the remote took the planned tip the slice has landed, and it says
so, keeps the resumable state (``.git/leap-merging/``) and gives the lease back; `leap
merge` again records it. Only when the remote does not hold the tip did nothing land."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from leapgit.ledger import layout
from tests.scoring.test_merge_refusals import two_passed_copy
from tests.scoring.world import Project
from tests.support import Result, git, hinted_leap
from tests.templates import Served

# The remote dies (receive-pack killed) right after it committed the spine update: the
# refs moved, the client never hears back, and its push fails.
DIE_AFTER_ACCEPTING = """\
#!/bin/sh
[ "$1" = committed ] || exit 0
if grep -q " refs/heads/main$" && [ -f "$GIT_DIR/die-after-accepting" ]; then
    rm -f "$GIT_DIR/die-after-accepting"
    kill -9 $PPID
fi
exit 0
"""


@pytest.fixture
def scored(served: Served, scripted_url: str) -> Iterator[Project]:
    with two_passed_copy(served, scripted_url) as p:
        yield p


def intent(p: Project) -> Path:
    return p.work / ".git" / "leap-merging" / "left.yaml"


def leases_closed(p: Project, where: Path) -> bool:
    names = git("ls-tree", "-r", "--name-only", "leap/ledger", "spines/main/leases",
                cwd=where).splitlines()
    return sum(n.endswith("take.yaml") for n in names) == \
        sum(n.endswith("release.yaml") for n in names)


def release_reasons(p: Project) -> str:
    names = git("ls-tree", "-r", "--name-only", "leap/ledger", "spines/main/leases",
                cwd=p.work).splitlines()
    return "".join(git("show", f"leap/ledger:{n}", cwd=p.work) for n in names
                   if n.endswith("release.yaml"))


def assert_resumes(p: Project, landed: str) -> None:
    again = p.leap("merge", "left")
    assert again.code == 0, again
    assert p.tip("main") == landed and p.remote_tip("refs/heads/main") == landed
    assert landed in git("show", f"leap/ledger:{layout.merge_path('left')}", cwd=p.work)
    assert not intent(p).exists()
    assert leases_closed(p, p.work) and leases_closed(p, p.bare)
    audit = p.leap("audit")
    assert audit.code == 0, audit


def stopped_in_push(p: Project) -> tuple[str, Result]:
    """`leap merge left` whose push the remote takes and then dies on: the spine before it,
    and what the merge said."""
    hook = p.bare / "hooks" / "reference-transaction"
    hook.write_text(DIE_AFTER_ACCEPTING)
    hook.chmod(0o755)
    (p.bare / "die-after-accepting").touch()
    before = p.tip("main")
    return before, p.leap("merge", "left")


def test_a_push_the_remote_took_before_dying_reports_landed_and_resumes(
        scored: Project) -> None:
    p = scored
    before, res = stopped_in_push(p)
    landed = p.remote_tip("refs/heads/main")
    assert landed != before  # the remote took it...
    assert res.code == 3, res  # ...and the merge says so, not "nothing landed"
    assert "nothing landed" not in res.err + res.out
    assert f"landed on origin at {landed[:12]}" in res.err, res
    assert "`leap merge left` again records it" in res.err
    assert intent(p).is_file() and landed in intent(p).read_text()
    assert "nothing landed" not in release_reasons(p)
    assert leases_closed(p, p.work) and leases_closed(p, p.bare)
    assert layout.merge_path("left") not in git("ls-tree", "-r", "--name-only", "leap/ledger",
                                                "slices/left", cwd=p.work)
    # every hint leads on: `leap lease release` leaves the stopped merge to `leap merge`
    waiting = p.leap("lease", "release")
    assert waiting.code == 1 and "run `leap merge left` again to finish it" in waiting.err, \
        waiting
    assert_resumes(p, landed)  # exactly that command


def test_a_stopped_push_whose_remote_cannot_be_read_holds_and_its_hint_leads_on(
        scored: Project) -> None:
    """The push landed on origin and the merge was stopped before it heard so; then origin
    is out of reach: whether the merge landed is unknown, nothing is changed here, and the
    hold names `leap merge left` again once the remote answers. Run as printed once origin
    answers, it finds the landed tip and records it."""
    p = scored
    before, stopped = stopped_in_push(p)
    assert stopped.code == 3, stopped
    landed = p.remote_tip("refs/heads/main")
    assert landed is not None and landed != before and intent(p).is_file()
    away = p.bare.with_name(p.bare.name + ".away")
    p.bare.rename(away)
    try:
        held = p.leap("merge", "left")
    finally:
        away.rename(p.bare)
    assert held.code == 3 and "[L8]" in held.err, held
    assert "stopped during its push and origin cannot be read now: whether it landed is " \
           "unknown; nothing was changed" in held.err, held.err
    assert "`leap merge left` again once the remote answers" in held.err, held.err
    assert p.tip("main") == before and intent(p).is_file()  # nothing changed, kept
    assert hinted_leap(held.err) == [["merge", "left"]], held.err
    assert_resumes(p, landed)  # exactly that command, origin answering


def _interrupt(after: bool) -> Callable[..., None]:
    from leapgit.scoring import spine

    real = spine.push

    def push(*args: object, **kwargs: object) -> None:
        if after:
            real(*args, **kwargs)  # type: ignore[arg-type]
        raise KeyboardInterrupt

    return push


@pytest.mark.parametrize("when", ["after the remote accepted", "before the push"])
def test_a_ctrl_c_in_the_push_says_what_the_remote_holds(
        scored: Project, monkeypatch: pytest.MonkeyPatch, when: str) -> None:
    from leapgit.ledger.workspace import open_workspace
    from leapgit.scoring import merge as merging
    from leapgit.scoring import spine

    p = scored
    after = when.startswith("after")
    before = p.tip("main")
    said: list[str] = []
    monkeypatch.setattr(spine, "push", _interrupt(after))
    with pytest.raises(KeyboardInterrupt):
        merging.merge(open_workspace(p.work), "left", echo=said.append)
    monkeypatch.undo()
    remote = p.remote_tip("refs/heads/main")
    assert leases_closed(p, p.work) and leases_closed(p, p.bare)
    if not after:
        assert remote == before and p.tip("main") == before
        assert "nothing landed" in release_reasons(p)
        assert not intent(p).exists()
        return
    assert remote != before and p.tip("main") == before
    assert any(f"landed on origin at {remote[:12]}" in line for line in said), said
    assert "nothing landed" not in release_reasons(p) + "".join(said)
    assert intent(p).is_file()
    assert_resumes(p, remote)


def test_a_landed_merge_is_recorded_after_the_remote_moved_on(scored: Project) -> None:
    """The intent of a merge that landed is never thrown away because another integration
    went on top of it on the remote before `leap merge` ran again (final review, F2)."""
    p = scored
    hook = p.bare / "hooks" / "reference-transaction"
    hook.write_text(DIE_AFTER_ACCEPTING)
    hook.chmod(0o755)
    (p.bare / "die-after-accepting").touch()
    res = p.leap("merge", "left")
    assert res.code == 3, res
    landed = p.remote_tip("refs/heads/main")
    later = git("commit-tree", f"{landed}^{{tree}}", "-p", landed, "-m", "a later merge",
                cwd=p.bare)
    git("update-ref", "refs/heads/main", later, landed, cwd=p.bare)
    again = p.leap("merge", "left")
    assert again.code == 0, again
    assert p.tip("main") == landed
    assert landed in git("show", f"leap/ledger:{layout.merge_path('left')}", cwd=p.work)
    assert not intent(p).exists()


# The remote moves its spine elsewhere while it judges the push, then refuses it: another
# integration went first. (git forbids ref updates inside the push's quarantine; the hook
# steps out of it, as a second pusher's own receive-pack would be.)
MOVE_THEN_REFUSE = """\
#!/bin/sh
if grep -q " refs/heads/main$" && [ -f "$GIT_DIR/move-then-refuse" ]; then
    rm -f "$GIT_DIR/move-then-refuse"
    tip=$(git rev-parse refs/heads/main)
    other=$(git commit-tree "$tip^{tree}" -p "$tip" -m "another integration")
    env -u GIT_QUARANTINE_PATH git update-ref refs/heads/main "$other" "$tip"
    echo "refused: another integration went first"
    exit 1
fi
exit 0
"""


def test_a_refused_push_says_nothing_landed_though_the_remote_moved_on(
        scored: Project) -> None:
    """The remote answered with a refusal: nothing of this merge landed, whatever its spine
    holds by then (it moved for another integration). Not "it may have landed"."""
    p = scored
    hook = p.bare / "hooks" / "pre-receive.leap-legacy"
    hook.write_text(MOVE_THEN_REFUSE)
    hook.chmod(0o755)
    (p.bare / "move-then-refuse").touch()
    try:
        res = p.leap("merge", "left")
    finally:
        hook.unlink()
    said = res.out + res.err
    assert res.code == 1, res
    assert "nothing landed" in said and "may have landed" not in said, said
    assert not intent(p).exists()
    assert "nothing landed" in release_reasons(p)


def test_only_gits_own_status_lines_say_a_push_was_refused() -> None:
    """Final review, reversibility F1: a server hook's text ("remote: ... [rejected]") or a
    push some refs of which were taken is no refusal; then the remote is asked."""
    from leapgit.scoring.spine import refused_by_status

    refused = ("To git://127.0.0.1/origin.git\n"
               "!\t1a2b:refs/heads/leap/ledger\t[remote rejected] (atomic push failed)\n"
               "!\t3c4d:refs/heads/main\t[remote rejected] (pre-receive hook declined)\nDone\n")
    taken = ("To git://127.0.0.1/origin.git\n*\t1a2b:refs/heads/leap/ledger\t[new branch]\n"
             " \t3c4d:refs/heads/main\t5e6f..3c4d\nDone\n")
    assert refused_by_status(refused)
    assert not refused_by_status(taken)
    assert not refused_by_status(taken.replace("Done\n", "!\tx:refs/heads/y\t[rejected]\n"))
    assert not refused_by_status("")  # no answer at all: the remote is asked
    assert not refused_by_status("remote: ci: build 41 [rejected]\n")
