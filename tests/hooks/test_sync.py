"""`leap sync`: two clones write 100 ledger records each and sync against the same remote
at the same time; every record lands once, on a linear ledger."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from leapgit.ledger import layout
from leapgit.ledger.store import Ledger
from leapgit.records import yamlio
from leapgit.records.abandon import AbandonRecord
from leapgit.records.types import ABSENT, BallRecord, SliceRecord, StampedScope
from tests.hooks.world import NOW, World
from tests.support import IDENTITY, git, hinted_leap, leap

REF = "refs/heads/leap/ledger"


def clone(w: World, name: str) -> Path:
    path = w.base_dir / name
    git("clone", "-q", w.url, str(path), cwd=w.base_dir)
    res = leap("sync", cwd=path)
    assert res.code == 0 and "up to date" in res.out, res
    return path


def cut(w: World, slice_id: str, balls: tuple[str, ...] = ("x", "y")) -> dict[str, bytes]:
    """A whole cut, as `leap slice cut` writes it (L1: the server takes nothing less): the
    slice record and a first spec of each ball, each scoped to a new file of its own."""
    rec = SliceRecord(slice=slice_id, spine="integrator", base=w.base, balls=balls,
                      waves=(balls,), cut_at=NOW)
    out = {layout.slice_path(slice_id): yamlio.dumps(rec.to_dict())}
    for ball in balls:
        spec = BallRecord(slice_id, ball, 1, "g", "s",
                          (StampedScope(f"gen/{slice_id}/{ball}.py", ABSENT),), "true",
                          "restore-scope", recorded_at=NOW)
        out[layout.ball_path(slice_id, ball)] = yamlio.dumps(spec.to_dict())
    return out


def write_slices(w: World, repo: Path, prefix: str, count: int) -> None:
    with Ledger(repo / ".git") as ledger:
        for i in range(count):
            ledger.append(cut(w, f"{prefix}-{i}"), f"cut slice {prefix}-{i}")


def test_two_clones_sync_200_records_concurrently(fresh_world: World) -> None:
    w = fresh_world
    start = git("rev-parse", "leap/ledger", cwd=w.bare)
    one, two = clone(w, "one"), clone(w, "two")
    write_slices(w, one, "one", 100)
    write_slices(w, two, "two", 100)
    env = {**os.environ, **IDENTITY}
    procs = [subprocess.Popen([sys.executable, "-m", "leapgit", "sync"], cwd=c, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for c in (one, two)]
    for proc in procs:
        out, err = proc.communicate(timeout=240)
        assert proc.returncode == 0, out + err
    added = git("rev-list", "--reverse", f"{start}..leap/ledger", cwd=w.bare).split()
    assert len(added) == 200
    assert git("rev-list", "--merges", "leap/ledger", cwd=w.bare) == ""
    files = git("ls-tree", "-r", "--name-only", "leap/ledger", "slices", cwd=w.bare).split()
    for prefix in ("one", "two"):  # each cut: a slice record and two first specs
        assert sum(f.startswith(f"slices/{prefix}-") for f in files) == 300
    res = leap("sync", cwd=one)
    assert res.code == 0, res
    assert git("rev-parse", "leap/ledger", cwd=one) == git("rev-parse", "leap/ledger", cwd=w.bare)


def _cut_twice(w: World) -> tuple[Path, Path]:
    """Two clones that each cut slice ``dup`` (other balls: other bytes); the first synced,
    the second not yet."""
    one, two = clone(w, "one"), clone(w, "two")
    with Ledger(one / ".git") as ledger:
        ledger.append(cut(w, "dup", ("x", "z")), "one's dup")
    with Ledger(two / ".git") as ledger:
        ledger.append(cut(w, "dup", ("y", "z")), "two's dup")
    assert leap("sync", cwd=one).code == 0
    return one, two


def test_same_path_with_different_bytes_is_refused_and_named(fresh_world: World) -> None:
    _, two = _cut_twice(fresh_world)
    res = leap("sync", cwd=two)
    assert res.code == 1
    assert "a true conflict: slices/dup/slice.yaml holds different bytes" in res.err


def test_a_true_conflict_leads_on_to_the_remote_s_records_and_keeps_this_clone_s(
        fresh_world: World) -> None:
    """A walk-away hunt (two machines): a clone whose record lost to the remote's (the same
    path, other bytes) had every sync, run and merge stop on "a true conflict" whose hint
    ("write your version under a new record") no command could follow. The hint names
    `leap sync origin --take-remote`; run as printed, the remote's records stand, this
    clone's other records still go up, and its ledger as it was is kept under a ref."""
    w = fresh_world
    _, two = _cut_twice(w)
    with Ledger(two / ".git") as ledger:
        ledger.append(cut(w, "own", ("p", "q")), "two's own slice, after")
        before = ledger.tip()
    stuck = leap("sync", cwd=two)
    assert stuck.code == 1, stuck
    [command] = hinted_leap(stuck.err)
    assert command == ["sync", "origin", "--take-remote"], stuck.err
    settled = leap(*command, cwd=two)
    assert settled.code == 0 and "pushed" in settled.out, settled
    assert "left out here: slices/dup/" in settled.out and "origin's records stand" in \
        settled.out, settled.out
    remote = git("rev-parse", "leap/ledger", cwd=w.bare)
    assert git("rev-parse", "leap/ledger", cwd=two) == remote
    ours = git("show", f"{remote}:{layout.slice_path('dup')}", cwd=w.bare)
    assert '"x"' in ours and '"y"' not in ours  # one's cut stands, as the server took it
    assert "slices/own" in git("ls-tree", "--name-only", remote, "slices/",
                               cwd=w.bare).split()  # two's other records went up
    assert git("rev-parse", f"refs/leap/kept/ledger/{before[:12]}", cwd=two) == before
    again = leap("sync", cwd=two)
    assert again.code == 0 and "up to date" in again.out, again


def test_a_true_conflict_in_a_shallow_ledger_leads_on_too(fresh_world: World) -> None:
    """A boundary review: `--take-remote` walked a shallow ledger past its cut (the parents
    a shallow clone lacks) and crashed (exit 70). It walks the commits as this clone holds
    them, and the hint lands as in a whole ledger."""
    w = fresh_world
    one = clone(w, "one")
    write_slices(w, one, "hist", 5)
    assert leap("sync", cwd=one).code == 0
    two = w.base_dir / "two"
    git("clone", "-q", "--depth", "1", w.url, str(two), cwd=w.base_dir)
    git("fetch", "-q", "--depth", "2", "origin", f"+{REF}:{REF}", cwd=two)
    assert (two / ".git" / "shallow").exists()
    with Ledger(one / ".git") as ledger:
        ledger.append(cut(w, "dup", ("x", "z")), "one's dup")
    with Ledger(two / ".git") as ledger:
        ledger.append(cut(w, "dup", ("y", "z")), "two's dup")
    assert leap("sync", cwd=one).code == 0
    stuck = leap("sync", cwd=two)
    assert stuck.code == 1 and "a true conflict" in stuck.err, stuck
    [command] = hinted_leap(stuck.err)
    settled = leap(*command, cwd=two)  # the hint, exactly
    assert settled.code == 0 and "left out here: slices/dup/" in settled.out, settled
    assert git("rev-parse", REF, cwd=two) == git("rev-parse", REF, cwd=w.bare)


def test_a_stale_clone_s_cut_over_an_open_slice_s_file_is_refused_and_leads_on(
        fresh_world: World) -> None:
    """L4 (a walk-away hunt on two machines): a clone that had not fetched since another
    cut slice ``dup`` cut a slice over one of dup's files; its ledger knew no dup, so its
    cut's check passed, and the server took the cut: two open slices held one file. The
    server judges it as the cut does; the refusal names `leap sync origin --take-remote`,
    which leaves the refused cut out (kept under a ref) and puts the clone's other records
    up."""
    w = fresh_world
    one, two = clone(w, "one"), clone(w, "two")
    with Ledger(one / ".git") as ledger:
        ledger.append(cut(w, "dup", ("x", "z")), "one's dup")
    assert leap("sync", cwd=one).code == 0
    late = {path.replace("slices/own/", "slices/late/"): data.replace(b'"own"', b'"late"')
            .replace(b"gen/own/p.py", b"gen/dup/x.py")
            for path, data in cut(w, "own", ("p", "q")).items()}  # p takes dup/x's file
    with Ledger(two / ".git") as ledger:
        ledger.append(late, "two's late cut, over dup/x's file")
        ledger.append(cut(w, "fine", ("f", "g")), "two's other slice")
        # a record written on the late cut after it (a blind review: left behind when its
        # cut was left out, it went up alone, and every clone's status stopped on it)
        ledger.append({layout.abandon_path("late"): yamlio.dumps(
            AbandonRecord("late", "given up", NOW).to_dict())}, "two gives late up")
    refused = leap("sync", cwd=two)
    assert refused.code == 1, refused
    assert "[L4]" in refused.err and "belongs to ball 'x' of open slice 'dup'" in \
        refused.err, refused.err
    [command] = hinted_leap(refused.err)[-1:]
    assert command == ["sync", "origin", "--take-remote"], refused.err
    settled = leap(*command, cwd=two)
    assert settled.code == 0 and "pushed" in settled.out, settled
    assert "left out here: slices/late/" in settled.out, settled.out
    names = git("ls-tree", "--name-only", "leap/ledger", "slices/", cwd=w.bare).split()
    assert "slices/fine" in names and "slices/late" not in names, names
    assert leap("status", cwd=one).code == 0  # every clone reads the remote's ledger
    kept = git("for-each-ref", "--format=%(refname)", "refs/leap/kept/ledger/",
               cwd=two).split()
    assert [k for k in kept if subprocess.run(  # the cut, kept: not lost
        ["git", "cat-file", "-e", f"{k}:slices/late/slice.yaml"], cwd=two).returncode == 0], kept
    # the ref it names holds all it left out, over both rounds (a blind review: it named
    # the second round's, cut already by the first)
    [said] = re.findall(r"kept as (refs/leap/kept/ledger/\w+)", settled.out)
    for left in ("slices/late/slice.yaml", layout.abandon_path("late")):
        assert subprocess.run(["git", "cat-file", "-e", f"{said}:{left}"],
                              cwd=two).returncode == 0, (said, left)
    assert leap("sync", cwd=two).code == 0


def test_a_fresh_clone_is_sent_to_the_remote_s_ledger_not_to_a_second_one(
        fresh_world: World) -> None:
    """`git clone` brings the ledger only as origin's remote-tracking branch: the hint leads
    to `leap sync origin`, which takes it (`leap init` would start a root that can never
    join the remote's)."""
    w = fresh_world
    path = w.base_dir / "fresh"
    git("clone", "-q", w.url, str(path), cwd=w.base_dir)
    res = leap("status", cwd=path)
    assert res.code == 2 and "`leap sync origin` takes it" in res.err, res
    assert "leap init" not in res.err, res
    res = leap("sync", "origin", cwd=path)
    assert res.code == 0, res
    assert git("rev-parse", "leap/ledger", cwd=path) == git("rev-parse", "leap/ledger",
                                                              cwd=w.bare)
    assert leap("status", cwd=path).code == 0


def test_the_hint_names_a_remote_whose_name_has_a_slash(fresh_world: World) -> None:
    w = fresh_world
    path = w.base_dir / "slashed"
    git("clone", "-q", "--origin", "team/main", w.url, str(path), cwd=w.base_dir)
    res = leap("status", cwd=path)
    assert res.code == 2 and "`leap sync team/main` takes it" in res.err, res
    assert leap("sync", "team/main", cwd=path).code == 0
    assert leap("status", cwd=path).code == 0


def test_a_remote_given_as_a_url_or_an_unknown_name_is_bad_input_whose_hint_leads_on(
        fresh_world: World) -> None:
    """The tracking refs live under the remote's name, so `--remote` takes a remote's name
    (fuzzing review: a URL made an invalid refspec, and an unknown name got git's last line,
    "and the repository exists."). Either is refused as bad input, nothing written, and the
    hint's `git remote add` leads on."""
    w = fresh_world
    before = git("for-each-ref", cwd=w.work)
    for given in (w.url, "nonsense"):
        res = leap("sync", given, cwd=w.work)
        assert res.code == 2, res
        assert f"{given!r} is not a remote of this repository (its remotes: origin)" in \
            res.err, res
        assert len(res.err.strip().splitlines()) == 1, res
    assert f"add it (`git remote add NAME {w.url}`), then give NAME" in \
        leap("sync", w.url, cwd=w.work).err
    typo = leap("sync", "origni", cwd=w.work)  # a name mistyped is no URL to add
    assert "give one of its remotes" in typo.err and "git remote add" not in typo.err, typo
    for command in (("worker", "--remote", w.url, "--once"),
                    ("run", "s1", "--remote", w.url), ("throw", "s1", "--remote", w.url)):
        res = leap(*command, cwd=w.work)
        assert res.code == 2 and "is not a remote of this repository" in res.err, res
    assert git("for-each-ref", cwd=w.work) == before  # nothing written
    git("remote", "add", "shared", w.url, cwd=w.work)  # the hint, NAME chosen
    assert leap("sync", "shared", cwd=w.work).code == 0
    assert git("rev-parse", "refs/leap/remotes/shared/heads/leap/ledger", cwd=w.work) == \
        git("rev-parse", "leap/ledger", cwd=w.bare)
    git("remote", "rename", "origin", "upstream", cwd=w.work)  # no remote named origin
    git("remote", "remove", "upstream", cwd=w.work)  # and none at all
    git("remote", "remove", "shared", cwd=w.work)
    none = leap("sync", "origin", cwd=w.work)
    assert none.code == 2 and "add it by that name (`git remote add origin URL`)" in none.err, \
        none
    git("remote", "add", "origin", w.url, cwd=w.work)  # that hint, URL filled in
    assert leap("sync", "origin", cwd=w.work).code == 0


def test_records_for_a_remote_without_a_ledger_lead_on_to_the_sync_that_puts_one_there(
        fresh_world: World) -> None:
    """Every hint leads on: adding records to a remote that holds no ledger says to push
    one first with `leap sync REMOTE`; after exactly that, the records land."""
    from leapgit.errors import RuleViolation
    from leapgit.ledger.sync import push_records

    w = fresh_world
    empty = w.base_dir / "empty.git"
    git("init", "-q", "--bare", "-b", "main", str(empty), cwd=w.base_dir)
    git("remote", "add", "empty", str(empty), cwd=w.work)
    records = cut(w, "later")
    with pytest.raises(RuleViolation) as refused:
        push_records("empty", records, "cut later", start=w.work)
    said = " ".join(refused.value.lines())
    assert "empty holds no ledger [L8]; push one first (`leap sync empty`)" in said, said
    assert leap("sync", "empty", cwd=w.work).code == 0  # the hint, exactly
    tip = push_records("empty", records, "cut later", start=w.work)
    assert git("rev-parse", "leap/ledger", cwd=empty) == tip


def test_a_forced_ledger_push_that_is_no_fast_forward_leads_on_to_leap_sync(
        fresh_world: World) -> None:
    """Every hint leads on: a ledger pushed by hand over records it lacks (`git push
    --force`) is refused, naming `leap sync`; exactly that replays the records on the
    remote's ledger, and both clones' records are there."""
    w = fresh_world
    one, two = clone(w, "one"), clone(w, "two")
    write_slices(w, one, "one", 1)
    assert leap("sync", cwd=one).code == 0
    write_slices(w, two, "two", 1)
    forced = subprocess.run(["git", "push", "--force", "origin", "leap/ledger"], cwd=two,
                            capture_output=True, text=True)
    assert forced.returncode != 0, forced
    assert "[L8]" in forced.stderr and "not a fast-forward" in forced.stderr, forced.stderr
    assert "replay your records on it with `leap sync`" in forced.stderr, forced.stderr
    assert leap("sync", cwd=two).code == 0  # the hint, exactly
    files = git("ls-tree", "-r", "--name-only", "leap/ledger", "slices", cwd=w.bare).split()
    assert {f.split("/")[1] for f in files} >= {"one-0", "two-0"}, files


def test_a_push_of_an_object_this_clone_lacks_is_no_remote_out_of_reach(
        tmp_path: Path) -> None:
    """A blind review: git says "remote unpack failed" too when this clone cannot send an
    object the push needs (a corrupt or partial clone): the remote said nothing, waiting
    would never help, and its disk is not to blame."""
    from leapgit import git as gitcalls

    srv, c = tmp_path / "srv.git", tmp_path / "c"
    git("init", "-q", "--bare", str(srv), cwd=tmp_path)
    git("init", "-q", str(c), cwd=tmp_path)
    tree = subprocess.run(["git", "mktree", "--missing"], cwd=c, capture_output=True,
                          text=True, check=True, input="100644 blob "
                          "0000000000000000000000000000000000000001\tx\n").stdout.strip()
    commit = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--stdin"], cwd=c,
                            capture_output=True, text=True, check=True,
                            input=f"tree {tree}\nauthor A <a@b> 1 +0000\ncommitter C <c@d> 1 "
                            "+0000\n\nmsg\n").stdout.strip()
    proc = gitcalls.run(["push", "--porcelain", str(srv), f"{commit}:refs/heads/x"], c,
                        check=False)
    said = (proc.stdout + proc.stderr).decode(errors="replace")
    assert proc.returncode != 0 and "remote unpack failed" in said, said
    lines = [ln for ln in said.splitlines() if ln.startswith("remote:")]
    assert gitcalls.unavailable_push(str(srv), said, lines, c) is None, said


@pytest.mark.parametrize("remote", ["origin", "upstream"])
def test_a_ledger_that_kept_moving_leads_on_to_leap_sync_again(fresh_world: World,
                                                               remote: str) -> None:
    """Every hint leads on: a sync whose every push lost its race (here none is allowed)
    holds with nothing lost and names `leap sync` of that remote again; exactly that lands
    the records (a hint hunt: it named no remote, and `leap sync` alone looked for origin)."""
    from leapgit.errors import LedgerBusy
    from leapgit.ledger.sync import sync

    w = fresh_world
    if remote != "origin":
        git("remote", "rename", "origin", remote, cwd=w.work)
    write_slices(w, w.work, "busy", 1)
    with pytest.raises(LedgerBusy) as held:
        sync(remote, start=w.work, max_rounds=0)
    said = " ".join(held.value.lines())
    assert "kept moving" in said and f"nothing is lost: run `leap sync {remote}` again" in said
    [cmd] = hinted_leap(said)
    assert leap(*cmd, cwd=w.work).code == 0  # the hint, exactly
    files = git("ls-tree", "-r", "--name-only", "leap/ledger", "slices", cwd=w.bare).split()
    assert any(f.startswith("slices/busy-0/") for f in files), files


def test_a_remote_that_cannot_store_a_push_is_a_hold_and_the_sync_again_lands(
        fresh_world: World) -> None:
    """A remote that takes the connection but cannot store the objects (its disk full, its
    repository moved away mid-push, a size limit) moved no ref and judged nothing: a hold
    (exit 3) a loop waits out, never "the remote refused" (a full-suite run ended a `leap
    run --remote` on it). Once the remote stores again, `leap sync` lands the records."""
    w = fresh_world
    one = clone(w, "one")
    git("remote", "add", "onpath", str(w.bare), cwd=one)  # receive-pack runs here, locally
    write_slices(w, one, "full", 1)
    git("config", "receive.maxInputSize", "1", cwd=w.bare)
    held = leap("sync", "onpath", cwd=one)
    assert held.code == 3, held
    assert "onpath could not store the push (" in held.err and "refused" not in held.err, held
    git("config", "--unset", "receive.maxInputSize", cwd=w.bare)
    assert leap("sync", "onpath", cwd=one).code == 0
    files = git("ls-tree", "-r", "--name-only", "leap/ledger", "slices", cwd=w.bare).split()
    assert any(f.startswith("slices/full-0/") for f in files), files


def test_a_remote_whose_fsck_finds_a_malformed_object_refuses_the_push(
        fresh_world: World) -> None:
    """The same unpack path with the remote's own fsck refusing an object is a refusal:
    pushing it again would never help."""
    from leapgit import git as gitcalls

    w = fresh_world
    git("config", "receive.fsckObjects", "true", cwd=w.bare)
    tree = git("rev-parse", "HEAD^{tree}", cwd=w.work)
    bad = subprocess.run(["git", "hash-object", "-t", "commit", "-w", "--literally", "--stdin"],
                         cwd=w.work, input=f"tree {tree}\nauthor a <a> 1 +99999\n"
                         f"committer a <a> 1 +0000\n\nbad zone\n", capture_output=True,
                         text=True, check=True).stdout.strip()
    proc = gitcalls.run(["push", "--porcelain", str(w.bare), f"{bad}:refs/heads/bad"], w.work,
                        check=False)
    said = (proc.stdout + proc.stderr).decode(errors="replace")
    assert proc.returncode != 0 and "fsck" in said, said
    lines = [ln for ln in said.splitlines() if ln.startswith("remote:")]
    assert gitcalls.unavailable_push("origin", said, lines, w.work) is None, said


def test_a_worker_on_a_remote_without_a_ledger_leads_on_once_the_thrower_syncs(
        fresh_world: World) -> None:
    """Every hint leads on: a worker's clone of a remote that holds no ledger yet is told
    the thrower pushes it with `leap sync REMOTE`; once the thrower ran exactly that, the
    worker takes the ledger and looks."""
    w = fresh_world
    empty = w.base_dir / "empty.git"
    git("init", "-q", "--bare", "-b", "main", str(empty), cwd=w.base_dir)
    git("push", "-q", str(empty), "main", cwd=w.work)
    worker = w.base_dir / "worker"
    git("clone", "-q", str(empty), str(worker), cwd=w.base_dir)
    cfg = worker / ".leap" / "config.yaml"  # a worker builds: a builder that can start
    cfg.write_bytes(yamlio.dumps({**yamlio.loads(cfg.read_bytes(), str(cfg)),
                                  "builder": {"command": "true"}}))
    waiting = leap("worker", "--remote", "origin", "--once", cwd=worker)
    assert waiting.code != 0 and "no ledger on origin" in waiting.out + waiting.err, waiting
    assert "the thrower pushes it (`leap sync origin`)" in waiting.out + waiting.err, waiting
    git("remote", "add", "empty", str(empty), cwd=w.work)
    assert leap("sync", "empty", cwd=w.work).code == 0  # the hint, in the thrower's clone
    # the worker now takes the ledger and waits on its thrown balls (none is published)
    looking = subprocess.Popen([sys.executable, "-m", "leapgit", "worker", "--remote",
                                "origin", "--once"], cwd=worker, env={**os.environ, **IDENTITY},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while git("rev-parse", "--verify", "-q", "leap/ledger", cwd=worker, check=False) != \
                git("rev-parse", "leap/ledger", cwd=empty):
            assert looking.poll() is None and time.monotonic() < deadline, \
                looking.communicate(timeout=5)
            time.sleep(0.05)
    finally:
        looking.send_signal(signal.SIGINT)
        looking.communicate(timeout=30)


def test_a_clone_of_one_branch_is_asked_to_take_the_remote_s_ledger_before_starting_one(
        fresh_world: World) -> None:
    """`git clone --depth 1` (CI's checkout) fetches one branch: no copy of the ledger here
    to see, though origin has one. The hint names `leap sync origin` first (before: only
    `leap init`, which starts a second root), and running it takes the ledger."""
    w = fresh_world
    path = w.base_dir / "ci"
    git("clone", "-q", "--depth", "1", f"file://{w.bare}", str(path), cwd=w.base_dir)
    res = leap("status", cwd=path)
    assert res.code == 2, res
    assert "if origin has one, `leap sync origin` takes it" in res.err, res
    sync = re.search(r"`(leap sync [^`]*)`", res.err)
    assert sync is not None
    assert leap(*sync.group(1).split()[1:], cwd=path).code == 0
    assert git("rev-parse", "leap/ledger", cwd=path) == git("rev-parse", "leap/ledger",
                                                              cwd=w.bare)
    assert leap("status", cwd=path).code == 0


def test_a_sync_of_commits_already_on_the_remote_s_tip_keeps_them_as_they_are(
        fresh_world: World) -> None:
    """Helper report (hint tests, f3c7138): `leap sync` rebuilt every unpushed ledger
    commit even when it stood on the remote's tip already, so a second ticking on the way
    gave the same records new commit ids (a push of the ids saved before the sync was then
    no fast-forward). Commits that need no replay are kept: the sync only pushes them."""
    w = fresh_world
    one = clone(w, "one")
    write_slices(w, one, "one", 3)
    mine = git("rev-list", "--reverse", "origin/leap/ledger..leap/ledger", cwd=one).split()
    assert len(mine) == 3
    time.sleep(1.1)  # a rebuild now would write other commit ids
    res = leap("sync", cwd=one)
    assert res.code == 0, res
    assert git("rev-list", "--reverse", f"{mine[0]}^..leap/ledger", cwd=one).split() == mine
    assert git("rev-parse", "leap/ledger", cwd=w.bare) == mine[-1]


def test_a_sync_signs_the_records_written_before_a_key_was_set_up(fresh_world: World,
                                                                  tmp_path: Path) -> None:
    """Kept as they are only when a replay would write them alike: a commit on the
    remote's tip written unsigned, before this clone's key was set up, is written again
    signed, as a sync always did (a server that wants signatures takes it)."""
    from tests.signing.world import make_key

    w = fresh_world
    one = clone(w, "one")
    write_slices(w, one, "one", 1)
    unsigned = git("rev-parse", "leap/ledger", cwd=one)
    key = make_key(tmp_path, "ulla")
    git("config", "leap.signingKey", str(key), cwd=one)
    assert leap("sync", cwd=one).code == 0
    pushed = git("rev-parse", "leap/ledger", cwd=w.bare)
    assert pushed != unsigned
    assert "gpgsig" in git("cat-file", "commit", pushed, cwd=w.bare)
