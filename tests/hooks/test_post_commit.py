"""post-commit in a ball worktree: scope and round checked at once, the round recorded
through record_round; a breach is loud and recorded as -1; elsewhere it does nothing."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from leapgit.ledger import query
from tests.hooks.world import SLICE, World, round_message, run_git
from tests.support import IDENTITY, git, hook_round_imports, leap, write_files


def ball_worktree(w: World, ball: str) -> Path:
    path = w.base_dir / f"wt-{ball}"
    git("worktree", "add", "-q", "-b", f"leap/ball/{SLICE}/{ball}", str(path), w.base, cwd=w.work)
    return path


def hooked_commit(root: Path, files: dict[str, str], message: str) -> str:
    write_files(root, files)
    git("add", "-A", cwd=root)
    result = run_git("commit", "-q", "-m", message, cwd=root)
    assert result.returncode == 0, result.stderr
    return result.stderr


def receipts(w: World, ball: str) -> list:
    with w.ledger() as ledger:
        return query.receipts(ledger.view(), SLICE, ball, 1)


def test_round_is_recorded_as_a_claim(fresh_world: World) -> None:
    w = fresh_world
    wt = ball_worktree(w, "a")
    err = hooked_commit(wt, {"src/a.py": "A = 10\n"}, round_message("a: ten", 1, 1))
    assert "recorded round 1 of s1/a: outcome 1 (a claim)" in err
    [r] = receipts(w, "a")
    head = git("rev-parse", "HEAD", cwd=wt)
    assert (r.round, r.outcome, r.claim, r.commit) == (1, 1, True, head)
    assert r.candidate == git("rev-parse", "HEAD^{tree}", cwd=wt)
    assert r.recorded_by == "post-commit"


def test_scope_breach_is_loud_and_recorded_as_refuse(fresh_world: World) -> None:
    w = fresh_world
    wt = ball_worktree(w, "a")
    err = hooked_commit(wt, {"src/a.py": "A = 10\n", "src/b.py": "B = 0\n", "extra.txt": "x\n"},
                        round_message("a: too much", 1, 1))
    assert "SCOPE BREACH in ball s1/a" in err
    assert "[L4] src/b.py: outside the scope of ball s1/a" in err
    assert "[L4] extra.txt" in err
    assert "recorded round 1 as -1 (refuse)" in err
    [r] = receipts(w, "a")
    assert (r.outcome, r.claim) == (-1, False)
    assert "src/b.py" in r.evidence
    # issue 14 item 11: the refused commit left the ball branch (kept as evidence) and its
    # changes left the worktree, as `leap throw --run` leaves a refused round
    assert f"the ball branch is back at the round's start {w.base[:12]}" in err, err
    assert git("rev-parse", "HEAD", cwd=wt) == w.base
    assert (wt / "src/b.py").read_text() == "B = 2\n" and not (wt / "extra.txt").exists()
    assert (wt / "src/a.py").read_text() == "A = 1\n"  # the ball's rollback: restore-scope
    assert git("status", "--porcelain", "--untracked-files=all", cwd=wt) == ""
    assert "git rm -q --cached" not in err  # nothing is left to undo by hand
    # the hint for what it removed leads on
    evidence = f"refs/leap/evidence/{SLICE}/a/1-1"
    hint = f"`git restore --source={evidence} -- extra.txt` brings back what it removed"
    assert hint in err, err
    git("restore", f"--source={evidence}", "--", "extra.txt", cwd=wt)
    assert (wt / "extra.txt").read_text() == "x\n"


def test_a_breach_under_a_run_is_left_to_the_run(fresh_world: World) -> None:
    """Under `leap throw --run` (``FOLDING_ENV``) the hook records the -1 and keeps the
    evidence; the run moves the branch and the files back, with what it saw before the
    builder ran: the hook names the paths to undo and moves nothing."""
    from leapgit.worktrees.rounds import FOLDING_ENV

    w = fresh_world
    wt = ball_worktree(w, "a")
    write_files(wt, {"src/a.py": "A = 10\n", "src/b.py": "B = 0\n", "extra.txt": "x\n"})
    git("add", "-A", cwd=wt)
    done = run_git("commit", "-q", "-m", round_message("a: too much", 1, 1), cwd=wt,
                   env={FOLDING_ENV: "1"})
    assert done.returncode == 0, done.stderr
    err = done.stderr
    assert "SCOPE BREACH in ball s1/a" in err and "recorded round 1 as -1 (refuse)" in err
    assert f"git restore --source={w.base[:12]} --staged --worktree -- src/b.py" in err
    assert "git rm -q --cached -- extra.txt" in err
    head = git("rev-parse", "HEAD", cwd=wt)
    [r] = receipts(w, "a")
    assert (r.outcome, r.commit) == (-1, head) and head != w.base
    assert (wt / "extra.txt").exists()


def test_outside_a_ball_worktree_it_does_nothing(fresh_world: World) -> None:
    w = fresh_world
    before = git("rev-parse", "leap/ledger", cwd=w.work)
    err = hooked_commit(w.work, {"README.md": "# hi\n"}, "docs")
    assert err == ""
    assert git("rev-parse", "leap/ledger", cwd=w.work) == before


def test_no_fifth_round(fresh_world: World) -> None:
    w = fresh_world
    wt = ball_worktree(w, "b")
    for n in range(1, 5):
        hooked_commit(wt, {"src/b.py": f"B = {n}\n"}, round_message(f"b {n}", n, 0))
    err = hooked_commit(wt, {"src/b.py": "B = 5\n"}, round_message("b 5", 4, 0))
    assert "[L6]" in err and "round 4 cannot create round 5" in err
    assert "the round was not recorded" in err
    # one way on, not three that contradict it (review r7 F1): round four held, so resume
    assert "leap round" not in err and "do: " not in err, err
    assert "`leap throw s1 --ball b --resume` starts a new episode" in err, err
    # without trailers too: amending would not help, there is no further round (review r9 F3)
    err = hooked_commit(wt, {"src/b.py": "B = 6\n"}, "b 6, no trailers")
    assert "s1/b used its rounds" in err and "--resume` starts a new episode" in err, err
    assert "amend" not in err, err
    assert [r.round for r in receipts(w, "b")] == [1, 2, 3, 4]


def test_a_ledger_that_keeps_moving_is_busy_not_a_rule(fresh_world: World,
                                                         monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Writers that win every race leave a round unrecorded for now: no rule refused it, so
    the hook still names `leap round` (LedgerBusy, no rule id; review r9 F4, r10 F6)."""
    import pytest

    from leapgit.errors import LedgerBusy, LedgerConflict, RuleViolation
    from leapgit.worktrees import rounds

    w = fresh_world

    def always_taken(*args: object, **kwargs: object) -> None:
        raise LedgerConflict("another writer took round 1")

    monkeypatch.setattr(rounds, "_record", always_taken)
    with w.ledger() as ledger, pytest.raises(LedgerBusy) as caught:
        rounds.record_round(ledger, SLICE, "a", outcome=0, evidence="e", round_cap=4)
    assert not isinstance(caught.value, RuleViolation)
    assert all(p.rule is None for p in caught.value.problems)
    assert "the ledger kept changing under us" in caught.value.lines()[0]


def test_a_warm_round_records_without_the_heavy_imports(
        fresh_world: World) -> None:
    """The hook's hot path (issue 3's < 0.6x pre-commit): once a ball's records are cached
    by blob id, a round reads and writes the ledger with none of the heavy imports."""
    w = fresh_world
    wt = ball_worktree(w, "a")
    hooked_commit(wt, {"src/a.py": "A = 10\n"}, round_message("a: ten", 1, 0))
    write_files(wt, {"src/a.py": "A = 11\n"})
    git("add", "-A", cwd=wt)
    git("-c", "core.hooksPath=/dev/null", "commit", "-q", "-m",
        round_message("a: eleven", 2, 0), cwd=wt)
    err, heavy = hook_round_imports(w.work / ".git" / "hooks" / "post-commit", wt)
    assert "recorded round 2 of s1/a: outcome 0" in err
    assert heavy == []
    [_, second] = receipts(w, "a")  # read back by the validating reader
    assert (second.round, second.evidence, second.recorded_by) == (2, "a: eleven",
                                                                    "post-commit")


def test_a_breach_by_a_file_name_that_is_not_utf8_is_recorded_readably(
        fresh_world: World) -> None:
    """The quick write never takes text it cannot read back (review r3, F1): the -1 names
    the file with its bytes escaped, and every reader, uncached, reads the receipt."""
    w = fresh_world
    wt = ball_worktree(w, "a")
    (wt / os.fsdecode(b"bad\xff.txt")).write_text("x\n")
    err = hooked_commit(wt, {"src/a.py": "A = 10\n"}, round_message("a: ten", 1, 1))
    assert "SCOPE BREACH in ball s1/a" in err
    assert "recorded round 1 as -1 (refuse)" in err
    [r] = receipts(w, "a")  # an uncached, validating read
    assert r.outcome == -1 and "bad\\xff.txt" in r.evidence


def test_a_branch_name_that_is_not_utf8_is_no_traceback(fresh_world: World) -> None:
    w = fresh_world
    branch = os.fsdecode(b"feat/\xff")
    run_git("checkout", "-q", "-b", branch, cwd=w.work)
    err = hooked_commit(w.work, {"README.md": "# x\n"}, "docs")
    assert err == ""


def test_a_prefix_set_after_64_kib_of_config_is_still_found(fresh_world: World) -> None:
    """The stdlib fast path reads the config's head only; a longer file takes the full
    parse rather than the default prefix (final review, F3)."""
    from leapgit.hookimpl import post_commit

    w = fresh_world
    config = w.work / ".leap" / "config.yaml"
    config.write_text(config.read_text() + "#" + " " * 70_000 + "\n"
                      + "ball_branch_prefix: work/balls\n")
    old = os.getcwd()
    os.chdir(w.work)
    try:
        assert post_commit.ball_prefix() is None  # None: only a full parse can tell
    finally:
        os.chdir(old)


HOLD_LOCK = ("import sys, time\nsys.path.insert(0, {root!r})\n"
             "from leapgit.ledger.lock import WriterLock\n"
             "with WriterLock({path!r}, 5):\n"
             "    print('held', flush=True)\n    time.sleep(2.5)\n")


def test_a_hook_that_waits_for_the_ledger_lock_says_so_and_then_records(
        fresh_world: World) -> None:
    """Another leapgit process writing the ledger: the commit's hook says it is waiting
    (never a silent pause of up to a minute), then records the round once the lock is free."""
    import subprocess
    import sys

    w = fresh_world
    wt = ball_worktree(w, "a")
    root = str(Path(__file__).resolve().parents[2])
    lock = w.work / ".git" / "leap-ledger.lock"
    holder = subprocess.Popen([sys.executable, "-c", HOLD_LOCK.format(root=root, path=str(lock))],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        err = hooked_commit(wt, {"src/a.py": "A = 10\n"}, round_message("a: ten", 1, 0))
    finally:
        holder.kill()
        holder.wait()
    assert f"leap: waiting for the ledger lock ({lock})" in err
    assert "giving up after 60 s" in err
    assert err.index("waiting for the ledger lock") < err.index("recorded round 1 of s1/a")
    assert [r.round for r in receipts(w, "a")] == [1]


def test_a_commit_past_a_last_claim_that_made_no_commit_is_told_to_drop_it(
        fresh_world: World) -> None:
    """Round four claimed with no commit of its own (nothing changed): a fifth commit is told
    to put the branch back where round three's commit left it, by that commit's id, not a
    relative HEAD~1 an amend would mislead, and with --keep, which keeps uncommitted work
    (review r9 F2, final review r10 reversibility F1/F2)."""
    from leapgit.worktrees.rounds import record_round

    w = fresh_world
    wt = ball_worktree(w, "b")
    for n in range(1, 4):
        hooked_commit(wt, {"src/b.py": f"B = {n}\n"}, round_message(f"b {n}", n, 0))
    third = git("rev-parse", "HEAD", cwd=wt)
    with w.ledger() as ledger:
        done = record_round(ledger, SLICE, "b", outcome=1, evidence="nothing new",
                            round_cap=4, recorded_by="test")
    assert (done.receipt.round, done.receipt.commit) == (4, None)
    err = hooked_commit(wt, {"src/b.py": "B = 5\n"}, round_message("b 5", 5, 0))
    fifth = git("rev-parse", "HEAD", cwd=wt)
    assert f"reset --keep {third[:12]}` keeps the commit past round 4 at refs/leap/kept/s1/b/" \
        f"{fifth[:12]} and puts the branch back where round 4 left it, then `leap score s1 b` " \
        "grades round 4's claim" in err, err
    assert f"git -C {wt} switch -q leap/ball/s1/b && git -C {wt} update-ref" in err, err
    assert [r.round for r in receipts(w, "b")] == [1, 2, 3, 4]


def test_a_commit_past_a_refused_last_round_is_sent_to_respec(fresh_world: World) -> None:
    """A refused episode cannot be resumed: past its last round the hook names the respec,
    with or without trailers (final review r10, telemetry F1 and F2)."""
    w = fresh_world
    wt = ball_worktree(w, "b")
    for n in range(1, 5):
        hooked_commit(wt, {"src/b.py": f"B = {n}\n"},
                      round_message(f"b {n}", n, -1 if n == 4 else 0))
    for message in ("b 5, no trailers", round_message("b 5", 5, 0)):
        err = hooked_commit(wt, {"src/b.py": f"B = {len(message)}\n"}, message)
        assert "(`leap ball respec s1 b FILE`) and throw it again" in err, err
        assert "--resume" not in err, err
    assert [r.outcome for r in receipts(w, "b")] == [0, 0, 0, -1]


def test_a_breach_the_busy_ledger_cannot_record_is_still_shown(
        fresh_world: World, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """A scope breach whose -1 loses every race for the ledger still gets its banner and
    rollback paths (final review r10, reversibility F3 and defect F2)."""
    from leapgit.errors import LedgerConflict
    from leapgit.hookimpl.ballround import on_commit
    from leapgit.worktrees import rounds

    w = fresh_world
    wt = ball_worktree(w, "a")
    write_files(wt, {"README.md": "not a's file\n"})
    git("add", "-A", cwd=wt)
    git("-c", "core.hooksPath=/dev/null", "commit", "-q", "-m", round_message("a 1", 1, 0),
        cwd=wt)

    def always_taken(*args: object, **kwargs: object) -> None:
        raise LedgerConflict("another writer took round 1")

    monkeypatch.setattr(rounds, "_record", always_taken)
    monkeypatch.chdir(wt)
    on_commit(f"leap/ball/{SLICE}/a")
    err = capsys.readouterr().err
    assert "SCOPE BREACH in ball s1/a" in err and "README.md" in err, err
    assert "not recorded: could not record a round for s1/a" in err, err
    assert receipts(w, "a") == []


def test_a_round_whose_message_holds_a_divider_is_not_recorded(fresh_world: World) -> None:
    """Blind review r2: the server refuses a round whose message holds a `---` line (its
    trailers read two ways, ``rules.commits.check_message``); post-commit recorded it all
    the same, so the receipt named a commit that can never reach the server, and the
    amended commit counted as one more round. It records nothing and says to amend; the
    amend it names is recorded as round 1."""
    w = fresh_world
    wt = ball_worktree(w, "a")
    err = hooked_commit(wt, {"src/a.py": "A = 10\n"},
                        round_message("a: ten", 1, 1) + "\n---\nLeap-Round: 4\n")
    assert "[L6]" in err and "`---` divider line" in err, err
    assert "the round was not recorded" in err and "git commit --amend" in err, err
    assert receipts(w, "a") == []
    amended = run_git("commit", "-q", "--amend", "-m", round_message("a: ten", 1, 1), cwd=wt)
    assert amended.returncode == 0, amended.stderr
    assert "recorded round 1 of s1/a: outcome 1 (a claim)" in amended.stderr, amended.stderr
    [r] = receipts(w, "a")
    assert r.commit == git("rev-parse", "HEAD", cwd=wt)


def _site_as_the_hook_loads_it(libraries: tuple[tuple[str, ...], ...] | None,
                               python: str | None = None) -> dict:
    """``post_commit.load_site`` in an interpreter started as the hook starts it (-I -S):
    whether ``site.main()`` ran (it alone defines the ``exit`` builtin) and where leapgit and
    dulwich were found. ``libraries``: the ones it looks for instead of its own."""
    import json
    import subprocess
    import sys

    import leapgit.hookimpl.post_commit as program

    code = ("import builtins, json, runpy, sys\n"
            f"load = runpy.run_path({program.__file__!r}, run_name='hook')['load_site']\n"
            f"if {libraries!r} is not None: load.__globals__['LIBRARIES'] = {libraries!r}\n"
            "load()\n"
            "import dulwich, leapgit.ledger.store\n"
            "print(json.dumps({'site': hasattr(builtins, 'exit'), 'leapgit': leapgit.__file__,"
            " 'dulwich': dulwich.__file__}))\n")
    proc = subprocess.run([python or sys.executable, "-I", "-S", "-c", code],
                          capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_a_recording_hook_finds_leapgit_and_dulwich_without_running_pth_files() -> None:
    """``site.main()`` runs every ``.pth`` file (an editable install's finder among them,
    ~1.5-2 ms a round); the hook puts site-packages and its own install root on the path
    instead, and finds the very leapgit and dulwich this interpreter has."""
    import dulwich

    import leapgit

    found = _site_as_the_hook_loads_it(None)
    assert found == {"site": False, "leapgit": leapgit.__file__, "dulwich": dulwich.__file__}


def test_a_library_that_is_not_in_site_packages_sends_the_hook_through_site_after_all(
        ) -> None:
    """A library only a ``.pth`` file (or another prefix) can place: ``site.main()`` runs."""
    found = _site_as_the_hook_loads_it((("dulwich",), ("no_such_library_here",)))
    assert found["site"] is True


def test_a_venv_of_debians_python_is_found_without_site_too(tmp_path: Path) -> None:
    """A blind review: Debian's getsitepackages() names a venv's site-packages only once
    sys.prefix is the venv's, which site.main() sets; the hook asked before that and always
    fell back to site.main(). A venv of the system's Python, its libraries linked in."""
    import subprocess
    import sys
    import sysconfig

    import dulwich

    system = Path("/usr/bin/python3")
    probe = [str(system), "-c", "import sys; print(sys.version_info[:2])"]
    if not system.exists() or subprocess.run(probe, capture_output=True, text=True
                                             ).stdout.strip() != str(sys.version_info[:2]):
        pytest.skip("no system Python of this version to make a venv of")
    venv = tmp_path / "venv"
    subprocess.run([str(system), "-m", "venv", "--without-pip", str(venv)], check=True)
    ours = Path(sysconfig.get_paths()["purelib"])
    theirs = venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    for entry in ours.iterdir():  # the libraries, not the .pth files (the editable finder)
        if not entry.name.endswith(".pth"):
            (theirs / entry.name).symlink_to(entry)
    found = _site_as_the_hook_loads_it(None, str(venv / "bin" / "python"))
    assert found["site"] is False, found
    assert found["dulwich"] == str(theirs / "dulwich" / Path(dulwich.__file__).name), found


def test_a_second_push_reads_the_config_without_a_yaml_parser(tmp_path: Path) -> None:
    """Issue 13 (7), as post-commit: pre-push reads `.leap/config.yaml` through the record
    cache, so a push after the first loads no YAML parser for a config it found valid
    (before, every push paid for ruamel's import and parse, ~10 ms)."""
    from tests.benchmarks.bench_lazy import pre_push_world, run_pre_push

    world = pre_push_world(tmp_path)
    run_pre_push(*world)  # the first push parses the config and keeps it
    again = run_pre_push(*world)
    assert "dulwich.object_store" in again  # the listing is real
    assert not [m for m in again if m.split(".")[0] in ("ruamel", "_ruamel_yaml")], again


@pytest.mark.parametrize(("message", "fixes"), [
    ("a: ten", ["--trailer 'Leap-Round: 1'", "--trailer 'Leap-Outcome: OUTCOME'"]),
    ("a: ten\n\nLeap-Round: 1", ["--trailer 'Leap-Outcome: OUTCOME'"]),
    # the round it names is wrong (review: the amend kept it, and was refused, L6)
    ("a: ten\n\nLeap-Round: 3", ["--trailer 'Leap-Round: 1'",
                                  "--trailer 'Leap-Outcome: OUTCOME'"]),
    # only the round is unreadable: no OUTCOME to fill in, and none is explained
    ("a: ten\n\nLeap-Round: one\nLeap-Outcome: 1", ["--trailer 'Leap-Round: 1'"]),
])
def test_a_round_without_its_trailers_is_told_the_amend_that_records_it(
        fresh_world: World, message: str, fixes: list[str]) -> None:
    """A hint-coverage hunt: a builder's commit in a ball worktree without its round
    trailers was told "amend the commit with its trailers (`git commit --amend`)", which
    as printed opens an editor and adds nothing. The hint is the whole command, each
    trailer missing or wrong in it (replacing the one there); run exactly (OUTCOME filled
    in), the amend is recorded as the round."""
    import shlex
    import subprocess

    w = fresh_world
    wt = ball_worktree(w, "a")
    err = hooked_commit(wt, {"src/a.py": "A = 10\n"}, message)
    assert "the round was not recorded: amend the commit with its trailers" in err, err
    assert receipts(w, "a") == []
    [command] = re.findall(r"\(`(git -c trailer.ifExists=replace commit --amend [^`]+)`",
                           err)
    assert command == " ".join(["git -c trailer.ifExists=replace commit --amend --no-edit",
                                *fixes]), command
    assert ("OUTCOME one of -1, 0, 1" in err) == ("OUTCOME" in command), err
    amended = subprocess.run(shlex.split(command.replace("OUTCOME", "1")), cwd=wt,
                             capture_output=True, text=True, env={**os.environ, **IDENTITY})
    assert amended.returncode == 0, amended.stderr
    assert "recorded round 1 of s1/a: outcome 1 (a claim)" in amended.stderr, amended.stderr
    [r] = receipts(w, "a")
    assert r.commit == git("rev-parse", "HEAD", cwd=wt)


def test_a_round_the_hook_could_not_record_is_recorded_by_the_leap_round_it_names(
        fresh_world: World) -> None:
    """A hint-coverage hunt: when recording fails with no rule broken (here a lock file a
    killed git left on the ledger ref), the hook names `leap round S B --outcome N
    --evidence TEXT`; run exactly (N and TEXT filled in) once the lock is gone, it records
    the commit already made as the round."""
    import shlex

    w = fresh_world
    wt = ball_worktree(w, "a")
    lock = w.work / ".git" / "refs" / "heads" / "leap" / "ledger.lock"
    lock.write_text("")
    err = hooked_commit(wt, {"src/a.py": "A = 10\n"}, round_message("a: ten", 1, 1))
    assert receipts(w, "a") == []
    [command] = re.findall(r"the round was not recorded; record it with `(leap round [^`]+)`",
                           err)
    assert command == "leap round s1 a --outcome N --evidence TEXT", err
    lock.unlink()
    args = shlex.split(command.replace(" N ", " 1 ").replace("TEXT", "'the tests pass'"))
    done = leap(*args[1:], cwd=wt)
    assert done.code == 0, done
    [r] = receipts(w, "a")
    assert (r.round, r.outcome, r.commit) == (1, 1, git("rev-parse", "HEAD", cwd=wt))


def test_a_breach_of_thousands_of_files_is_recorded_and_bounded(fresh_world: World) -> None:
    """Red team round 2: the breach receipt named every path, so a round adding 6,000
    files with long names outside the scope wrote a receipt past the ledger's 1 MiB cap:
    "not recorded", the -1 never reached the ledger (and the episode went on), and the
    report ran to thousands of lines. It names the first paths and counts the rest; the
    round leaves the worktree in seconds (`git reset START -- PATHS` matched every path
    against every index entry: 10^5 files took minutes)."""
    w = fresh_world
    wt = ball_worktree(w, "a")
    names = [f"gen/{'x' * 180}_{n:05d}.py" for n in range(6000)]
    err = hooked_commit(wt, dict.fromkeys(names, "X = 1\n"), round_message("a: flood", 1, 1))
    assert "recorded round 1 as -1 (refuse)" in err, err[-2000:]
    [r] = receipts(w, "a")
    assert (r.outcome, r.claim) == (-1, False) and "and 5950 more" in r.evidence
    assert "... and 5950 more (6000 in all)" in err
    assert len(err.splitlines()) < 80 and len(err) < 64_000, len(err)
    assert git("rev-parse", "HEAD", cwd=wt) == w.base
    assert git("status", "--porcelain", "--untracked-files=all", cwd=wt) == ""
