from __future__ import annotations

import json
from pathlib import Path

import pytest

from leapgit.records import yamlio
from tests.slices.drafts import base_draft, write
from tests.support import git, hinted_leap, leap, leap_inproc, make_repo, ref


def test_init_writes_config_and_ledger_and_is_idempotent(repo: Path) -> None:
    first = leap("init", cwd=repo)
    assert first.code == 0, first
    assert "(written)" in first.out and "(started)" in first.out
    config = yamlio.load_file(repo / ".leap" / "config.yaml")
    assert config["spine"] == "main" and config["round_limit"] == 4
    assert config["ledger_ref"] == "refs/heads/leap/ledger"
    tip = ref(repo, "leap/ledger")
    text = (repo / ".leap" / "config.yaml").read_text()
    second = leap("init", cwd=repo)
    assert second.code == 0 and "(kept)" in second.out and "already there" in second.out
    assert ref(repo, "leap/ledger") == tip
    assert (repo / ".leap" / "config.yaml").read_text() == text
    assert git("status", "--porcelain", "--untracked-files=no", cwd=repo) == ""


def test_init_outside_a_repository_is_refused_clearly(tmp_path: Path) -> None:
    result = leap("init", cwd=tmp_path)
    assert result.code == 2
    assert "not inside a git repository" in result.err and "Traceback" not in result.err


def test_init_spine_option_and_conflict(repo: Path) -> None:
    assert leap_inproc("init", "--spine", "trunk", cwd=repo).code == 0
    assert yamlio.load_file(repo / ".leap" / "config.yaml")["spine"] == "trunk"
    clash = leap_inproc("init", "--spine", "other", cwd=repo)
    assert clash.code == 2 and "already names spine 'trunk'" in clash.err


def test_a_broken_config_is_named_with_its_field(repo: Path) -> None:
    assert leap_inproc("init", cwd=repo).code == 0
    cfg = repo / ".leap" / "config.yaml"
    cfg.write_text(cfg.read_text().replace("round_limit: 4", "round_limit: 5"))
    result = leap_inproc("status", cwd=repo)
    assert result.code == 2
    assert ".leap/config.yaml: round_limit:" in result.err and "[config]" in result.err


def test_status_shows_waves_and_json(repo: Path, tmp_path: Path) -> None:
    assert leap_inproc("init", cwd=repo).code == 0
    d = base_draft()
    assert leap_inproc("slice", "cut", str(write(tmp_path / "d.yaml", d)), cwd=repo).code == 0
    text = leap_inproc("status", cwd=repo)
    assert text.code == 0
    lines = text.out.splitlines()
    assert lines[0].startswith("slice s1  spine integrator")
    assert lines[1:] == ["  wave 0", "    a  ready       round 0/4",
                         "      ready to throw once its red is recorded (T7.1): its failing "
                         "test committed on its base (`leap ball base s1 a`), then `leap red "
                         "s1 a COMMIT`",
                         "  wave 1", "    b  waiting     round 0/4  after a",
                         "      waiting: dependency a has not passed (1) yet",
                         "signatures: 2 of 2 ledger commits are UNSIGNED; unsigned records: "
                         "LEDGER.yaml, slices/s1/balls/a/ball.yaml, slices/s1/balls/b/ball.yaml, "
                         "slices/s1/slice.yaml"]
    data = json.loads(leap_inproc("status", "s1", "--json", cwd=repo).out)
    assert [[b["ball"] for b in w] for w in data["slices"][0]["waves"]] == [["a"], ["b"]]
    assert data["slices"][0]["waves"][1][0]["depends_on"] == ["a"]
    unknown = leap_inproc("status", "nope", cwd=repo)
    assert unknown.code == 2 and "unknown slice 'nope'" in unknown.err


def test_log_reads_the_ledger_history(repo: Path, tmp_path: Path) -> None:
    assert leap_inproc("init", cwd=repo).code == 0
    assert leap_inproc("slice", "cut", str(write(tmp_path / "d.yaml", base_draft())),
                       cwd=repo).code == 0
    out = leap_inproc("log", cwd=repo).out.splitlines()
    assert "cut slice s1: 2 balls in 2 waves" in out[0]
    assert "Leap-Slice: s1" in out[1]
    entries = json.loads(leap_inproc("log", "--json", "-n", "1", cwd=repo).out)
    assert len(entries) == 1
    assert {"key": "Leap-Slice", "value": "s1"} in entries[0]["trailers"]
    assert "cut slice s1" in leap_inproc("log", "--slice", "s1", cwd=repo).out
    # a blind review: an unknown slice printed nothing and exited 0
    unknown = leap_inproc("log", "--slice", "nope", cwd=repo)
    assert (unknown.code, unknown.out) == (2, ""), unknown
    assert unknown.err == ("leap: unknown slice 'nope' (known: s1); see `leap status` for "
                           "the slices the ledger holds\n"), unknown.err


def test_status_and_log_before_init(tmp_path: Path) -> None:
    root = make_repo(tmp_path / "r", {"a": "1"})
    for command in ("status", "log"):
        result = leap_inproc(command, cwd=root)
        assert result.code == 2 and "leap init" in result.err


def test_unexpected_errors_go_to_a_log_file_not_the_terminal(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    import click

    from leapgit.cli import run

    @click.command()
    def broken() -> None:
        raise RuntimeError("boom inside")

    with pytest.raises(SystemExit) as exited:
        run(broken, [])
    assert exited.value.code == 70
    err = capsys.readouterr().err
    assert "internal error: RuntimeError: boom inside" in err
    assert "Traceback" not in err
    log_path = Path(err.split("the traceback is in ")[1].split(";")[0])
    assert "Traceback" in log_path.read_text() and "boom inside" in log_path.read_text()


def test_init_says_which_spine_it_took_and_how_to_take_another(repo: Path, tmp_path: Path
                                                               ) -> None:
    """`leap init` in a linked worktree took its branch as the spine without a word; it
    says so now, and the way it names to protect another branch works."""
    linked = tmp_path / "feature-wt"
    git("worktree", "add", "-q", "-b", "feature", str(linked), cwd=repo)
    git("commit", "-q", "--allow-empty", "-m", "feature work", cwd=linked)
    first = leap("init", cwd=linked)
    assert first.code == 0, first
    assert ("spine   feature (the checked-out branch; to protect another, edit spine: in "
            ".leap/config.yaml before you commit it)") in first.out, first.out
    cfg = linked / ".leap" / "config.yaml"
    text = cfg.read_text()
    assert text.count("\nspine: ") == 1, text
    cfg.write_text("\n".join("spine: main" if line.startswith("spine: ") else line
                             for line in text.split("\n")))
    again = leap_inproc("init", cwd=linked)
    assert again.code == 0 and "spine   main\n" in again.out, again.out
    git("checkout", "-q", "--detach", cwd=repo)
    (repo / ".leap" / "config.yaml").unlink(missing_ok=True)
    detached = leap_inproc("init", cwd=repo)
    assert "spine   main (no branch is checked out: the repository's conventional branch;" \
        in detached.out, detached.out


@pytest.mark.parametrize("command", ["status", "log"])
def test_a_read_only_command_leaves_at_once_with_its_whole_report(repo: Path, tmp_path: Path,
                                                                 command: str) -> None:
    """`leap status` and `leap log` leave without the interpreter's teardown, as `leap
    audit` does: what they print still arrives whole (into a file, a pipe), and a reader
    that goes away early (`| head -1`) gets no traceback."""
    assert leap_inproc("init", cwd=repo).code == 0
    assert leap_inproc("slice", "cut", str(write(tmp_path / "d.yaml", base_draft())),
                       cwd=repo).code == 0
    whole = leap_inproc(command, cwd=repo).out
    assert whole.count("\n") >= 2, whole
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}  # buffered, as most
    proc = subprocess.run([sys.executable, "-m", "leapgit", command], cwd=repo, env=env,
                          capture_output=True, text=True)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, whole, "")
    into = tmp_path / "out.txt"
    with open(into, "wb") as fh:
        subprocess.run([sys.executable, "-m", "leapgit", command], cwd=repo, stdout=fh,
                       env=env, check=True)
    assert into.read_text() == whole
    piped = subprocess.run(f"{sys.executable} -m leapgit {command} | head -1", shell=True,
                           cwd=repo, env=env, capture_output=True, text=True)
    assert piped.stdout == whole.splitlines(keepends=True)[0] and piped.stderr == ""


def test_init_in_a_ball_worktree_is_refused_and_the_hint_leads_to_the_main_checkout(
        repo: Path, tmp_path: Path) -> None:
    """A blind review: `leap init` in a ball's worktree (the config untracked, so not there)
    wrote a config naming the ball's branch as the spine, and the ball's next round was a
    scope breach over it. It is refused, writing nothing, and names the main checkout."""
    wt = tmp_path / "wt-a"
    git("worktree", "add", "-q", "-b", "leap/ball/s1/a", str(wt), cwd=repo)
    r = leap_inproc("init", cwd=wt)
    assert r.code == 2, r
    assert r.err == (f"leap: this is the worktree of ball branch leap/ball/s1/a: a config "
                     f"written here would be a change outside the ball's scope [L4]; run "
                     f"`leap init` in the repository's main checkout, {repo}\n"), r.err
    assert not (wt / ".leap").exists() and ref(repo, "leap/ledger") is None
    detached = repo.parent / "repo.leap-worktrees" / "s1" / "b"  # a rebase detaches HEAD
    git("worktree", "add", "-q", "--detach", str(detached), cwd=repo)
    r = leap_inproc("init", cwd=detached)
    assert r.code == 2 and r.err.startswith("leap: this is a ball's worktree: a config "), r
    assert not (detached / ".leap").exists()
    followed = leap_inproc("init", cwd=repo)
    assert followed.code == 0 and "spine   main" in followed.out, followed
    cfg = repo / ".leap" / "config.yaml"
    cfg.write_text("\n".join("spine: leap/ball/s1/a" if line.startswith("spine: ") else line
                             for line in cfg.read_text().split("\n")))
    bad = leap_inproc("status", cwd=repo)
    assert bad.code == 2 and "the spine 'leap/ball/s1/a' is under the ball branches' prefix" \
        in bad.err and "[config]" in bad.err, bad


def test_init_on_a_branch_under_the_ball_prefix_names_no_file_and_its_hint_inits(
        tmp_path: Path) -> None:
    """A blind review: `leap init` on a checked-out branch under the ball prefix refused
    naming .leap/config.yaml, a file it never wrote, with no command to run. It says which
    branch it took and names the `--spine` that inits."""
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    git("checkout", "-q", "-b", "leap/ball/s1/a", cwd=repo)
    r = leap_inproc("init", cwd=repo)
    assert (r.code, r.out) == (2, ""), r
    assert r.err == ("leap: spine: the spine 'leap/ball/s1/a' (the checked-out branch) is under "
                     "the ball branches' prefix leap/ball/: it would be taken for a ball's "
                     "branch [config]; name the spine: `leap init --spine main`\n"), r.err
    assert not (repo / ".leap").exists() and ref(repo, "leap/ledger") is None
    hint = r.err.split("`")[1].split()
    followed = leap_inproc(*hint[1:], cwd=repo)
    assert followed.code == 0 and "spine   main" in followed.out, followed
    assert leap_inproc("status", cwd=repo).code == 0


@pytest.mark.parametrize("default", ["master", "trunk", "develop"])
def test_init_under_the_ball_prefix_names_the_spine_branch_the_repository_has(
        tmp_path: Path, default: str) -> None:
    """A blind review: the hint named main in a repository whose protected branch is
    master, and followed, it pinned a spine that does not exist."""
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    git("branch", "-m", default, cwd=repo)
    git("checkout", "-q", "-b", "leap/ball/s1/a", cwd=repo)
    r = leap_inproc("init", cwd=repo)
    assert r.code == 2 and r.err.endswith(f"`leap init --spine {default}`\n"), r
    followed = leap_inproc(*r.err.split("`")[1].split()[1:], cwd=repo)
    assert followed.code == 0 and f"spine   {default}" in followed.out, followed


def test_init_says_where_a_refused_default_spine_came_from_and_takes_no_tag_for_one(
        tmp_path: Path) -> None:
    """A review: a checked-out branch refused by a rule whose words do not name it (the
    ledger's own branch) lost "(the checked-out branch)"; a HEAD pointing at a tag was
    pinned as the spine refs/tags/v1."""
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"}, branch="leap/ledger")
    r = leap_inproc("init", cwd=repo)
    assert r.code == 2 and "(the spine 'leap/ledger' (the checked-out branch))" in r.err, r
    assert not (repo / ".leap").exists()
    other = make_repo(tmp_path / "other", {"a.txt": "a\n"})
    git("tag", "v1", cwd=other)
    git("symbolic-ref", "HEAD", "refs/tags/v1", cwd=other)
    tagged = leap_inproc("init", cwd=other)
    assert tagged.code == 0 and "spine   main (no branch is checked out" in tagged.out, tagged


def test_init_takes_the_checked_out_branch_whole_beside_a_tag_of_its_name(
        tmp_path: Path) -> None:
    """A blind review: `git symbolic-ref --short` says heads/main where a tag main exists,
    and `leap init` pinned the spine heads/main, a branch no one has."""
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    git("tag", "main", cwd=repo)
    r = leap_inproc("init", cwd=repo)
    assert r.code == 0 and "spine   main (the checked-out branch" in r.out, r
    assert 'spine: "main"' in (repo / ".leap" / "config.yaml").read_text()
    git("checkout", "-q", "-b", "leap/ball/s1/a", cwd=repo)
    git("tag", "leap/ball/s1/a", cwd=repo)
    (repo / ".leap" / "config.yaml").unlink()
    bypass = leap_inproc("init", cwd=repo)  # the prefix rule sees the branch's whole name
    assert bypass.code == 2 and "'leap/ball/s1/a' (the checked-out branch)" in bypass.err, \
        bypass


def test_init_in_a_ball_worktree_of_a_bare_repository_names_no_bare_folder(tmp_path: Path
                                                                           ) -> None:
    """A blind review: with a bare repository and linked worktrees, the refusal named the
    bare repository as the main checkout, where `leap init` is refused."""
    src = make_repo(tmp_path / "src", {"a.txt": "a\n"})
    bare = tmp_path / "repo.git"
    git("clone", "-q", "--bare", str(src), str(bare), cwd=tmp_path)
    main = tmp_path / "mainwt"
    git("worktree", "add", "-q", str(main), "main", cwd=bare)
    ball = tmp_path / "ballwt"
    git("worktree", "add", "-q", "-b", "leap/ball/s1/a", str(ball), "main", cwd=bare)
    r = leap_inproc("init", cwd=ball)
    assert r.code == 2 and str(bare) not in r.err, r
    assert "run `leap init` in a checkout of the spine that is no ball's worktree" in r.err
    assert leap_inproc("init", cwd=main).code == 0


def test_status_before_any_slice_names_the_cut_and_the_cut_it_names_gives_a_slice(
        repo: Path, tmp_path: Path) -> None:
    """Every hint leads on: `leap status` right after `leap init` names `leap slice cut
    FILE`; run as printed, with FILE a draft, status shows the slice."""
    assert leap_inproc("init", cwd=repo).code == 0
    empty = leap_inproc("status", cwd=repo)
    assert empty.code == 0 and empty.out.startswith("no slices yet"), empty
    [cut] = hinted_leap(empty.out)
    assert cut == ["slice", "cut", "FILE"], empty.out
    draft = write(tmp_path / "d.yaml", base_draft())
    assert leap_inproc(*cut[:-1], str(draft), cwd=repo).code == 0
    assert leap_inproc("status", cwd=repo).out.startswith("slice s1  spine integrator")


def test_status_names_audit_signatures_for_the_unsigned_records_it_does_not_list(
        repo: Path, tmp_path: Path) -> None:
    """`leap status` lists five unsigned records and names `leap audit-signatures --json`
    for the rest; run as printed, it names each of them (it named one record a commit)."""
    assert leap_inproc("init", cwd=repo).code == 0
    d = base_draft()
    d["balls"] += [{**d["balls"][0], "id": f"x{i}", "scope": [f"src/x{i}.py"]}
                   for i in range(4)]
    assert leap_inproc("slice", "cut", str(write(tmp_path / "d.yaml", d)), cwd=repo).code == 0
    status = leap_inproc("status", cwd=repo)
    [line] = [ln for ln in status.out.splitlines() if ln.startswith("signatures:")]
    assert "more (`leap audit-signatures --json` lists them)" in line, line
    [command] = hinted_leap(line)
    listed = leap_inproc(*command, cwd=repo)
    assert listed.code == 0, listed  # unsigned is a note unless signatures are required
    named = {path for f in json.loads(listed.out)["findings"] if f["kind"] == "unsigned"
             for path in f["paths"]}
    records = git("ls-tree", "-r", "--name-only", "leap/ledger", cwd=repo).splitlines()
    assert len(records) > 5
    assert named == set(records), listed.out  # the ones status left out too


@pytest.mark.parametrize("first", ["init", "status", "throw"])
def test_a_bare_repository_with_no_ledger_names_the_clone_and_the_server_install_which_work(
        tmp_path: Path, first: str) -> None:
    """In a bare repository (a server) with no ledger, `leap init` is refused and names a
    clone; `leap status` and a write named `leap init` (refused there): a circle (a
    bad-input hunt). Each names the clone's `leap init` and `leap sync REMOTE` instead,
    which bring the ledger, and `leap status` in the bare repository then reads it."""
    src = make_repo(tmp_path / "src", {"a.txt": "a\n"})
    bare = tmp_path / "repo.git"
    git("clone", "-q", "--bare", str(src), str(bare), cwd=tmp_path)
    r = leap_inproc(*{"init": ["init"], "status": ["status"], "throw": ["throw", "s1"]}[first],
                    cwd=bare)
    assert r.code == 2 and "is a bare repository" in r.err, r
    named = hinted_leap(r.err)
    assert named[:2] == [["init"], ["sync", "REMOTE"]], r.err
    assert named[2:] == ([["hooks", "install", "--server"]] if first == "init" else []), r.err
    assert ref(bare, "leap/ledger") is None  # nothing written
    if first == "init":
        assert leap_inproc(*named[2], cwd=bare).code == 0
        assert (bare / "hooks" / "pre-receive").is_file()
    clone = tmp_path / "clone"
    git("clone", "-q", str(bare), str(clone), cwd=tmp_path)
    assert leap_inproc(*named[0], cwd=clone).code == 0
    assert ref(clone, "leap/ledger") is not None
    synced = leap_inproc(named[1][0], "origin", cwd=clone)  # REMOTE: the clone's remote
    assert synced.code == 0, synced
    assert ref(bare, "leap/ledger") == ref(clone, "leap/ledger")
    status = leap_inproc("status", cwd=bare)
    assert status.code == 0, status


def test_before_init_the_config_hints_lead_to_leap_init_and_it_leads_on(
        repo: Path) -> None:
    """The dogfooding review: before `leap init`, `leap run` said "set builder.command" in a
    file that did not exist, and a config written with that key alone refused every command,
    `leap init` too, with no hint. The first names `leap init`; the second says to move the
    file aside and run it; followed as printed, init writes a whole config."""
    told = leap_inproc("run", "s1", cwd=repo)
    assert told.code == 2 and "builder.command" in told.err, told
    assert hinted_leap(told.err)[0] == ["init"], told.err
    (repo / ".leap").mkdir()
    (repo / ".leap" / "config.yaml").write_text("builder:\n  command: echo\n")
    refused = leap_inproc("init", cwd=repo)
    assert refused.code == 2 and "missing required field(s): version, spine, ledger_ref" \
        in refused.err, refused
    assert "move the file aside and run `leap init`" in refused.err, refused.err
    (repo / ".leap" / "config.yaml").rename(repo / ".leap" / "config.yaml.mine")
    [init] = hinted_leap(refused.err)
    assert leap_inproc(*init, cwd=repo).code == 0
    assert yamlio.load_file(repo / ".leap" / "config.yaml")["spine"] == "main"


def test_an_abandoned_slice_reads_as_abandoned_and_takes_no_red(repo: Path,
                                                                tmp_path: Path) -> None:
    """The dogfooding review: after `leap slice abandon`, status still said "ready to throw
    once its red is recorded ... `leap red s1 a COMMIT`", and that red was recorded; the
    throw after it refused the slice as abandoned. Status says abandoned, the red is
    refused (L3) with the throw's hint, and that hint's prune runs as printed."""
    assert leap_inproc("init", cwd=repo).code == 0
    assert leap_inproc("slice", "cut", str(write(tmp_path / "d.yaml", base_draft())),
                       cwd=repo).code == 0
    assert leap_inproc("slice", "abandon", "s1", "--reason", "wrong cut", cwd=repo).code == 0
    status = leap_inproc("status", cwd=repo)
    assert "ready to throw" not in status.out and "leap red" not in status.out, status.out
    assert "    a  abandoned" in status.out, status.out
    data = json.loads(leap_inproc("status", "s1", "--json", cwd=repo).out)
    assert {b["readiness"] for w in data["slices"][0]["waves"] for b in w} == {"abandoned"}
    base = git("rev-parse", "HEAD", cwd=repo)
    (repo / "tests").mkdir(exist_ok=True)
    (repo / "tests" / "test_a.py").write_text("def test_a():\n    assert False\n")
    git("add", "tests/test_a.py", cwd=repo)
    git("commit", "-qm", "red", cwd=repo)
    red = leap_inproc("red", "s1", "a", "HEAD", cwd=repo)
    assert red.code == 1 and "slice s1 was abandoned" in red.err and "[L3]" in red.err, red
    assert "take no red" in red.err, red
    prune = [w for w in hinted_leap(red.err) if w[:2] == ["worktree", "prune"]]
    assert prune == [["worktree", "prune", "s1"]], red.err
    assert leap_inproc(*prune[0], cwd=repo).code == 0
    assert git("rev-parse", "HEAD~1", cwd=repo) == base


@pytest.mark.parametrize("branches,spine", [(["trunk"], "trunk"), (["main", "dev"], "main"),
                                            (["dev", "feature"], None)],
                         ids=["only-branch", "conventional", "none-conventional"])
def test_init_in_a_detached_checkout_names_a_branch_the_repository_has(
        tmp_path: Path, branches: list[str], spine: str | None) -> None:
    """No branch checked out: init took `main` whatever the repository had, and every cut
    then refused it, or worse (a bad-input hunt). It takes a conventional branch or the
    only one; among others it asks, and the `leap init --spine` it names inits."""
    root = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    first = git("branch", "--show-current", cwd=root)
    for name in branches:
        if name != first:
            git("branch", name, cwd=root)
    if first not in branches:
        git("checkout", "-q", "--detach", cwd=root)
        git("branch", "-D", first, cwd=root)
    git("checkout", "-q", "--detach", cwd=root)
    r = leap_inproc("init", cwd=root)
    if spine is not None:
        assert r.code == 0, r
        assert yamlio.loads((root / ".leap/config.yaml").read_bytes(), "c")["spine"] == spine
        return
    assert r.code == 2 and "--spine" in r.err and "[L8]" in r.err, r
    assert not (root / ".leap").exists() and ref(root, "leap/ledger") is None
    [named] = hinted_leap(r.err)
    assert named == ["init", "--spine", "dev"], r.err
    assert leap_inproc(*named, cwd=root).code == 0
    assert yamlio.loads((root / ".leap/config.yaml").read_bytes(), "c")["spine"] == "dev"


def test_a_spine_that_does_not_exist_is_refused_at_the_cut_and_said_at_the_throw(
        tmp_path: Path) -> None:
    """L8: a cut against a spine branch the repository does not have was recorded, then
    every later step said "does not exist" with no rule and no way on (a bad-input hunt)."""
    root = make_repo(tmp_path / "repo", {"src/a.py": "a\n", "src/b.py": "b\n"})
    assert leap_inproc("init", cwd=root).code == 0
    draft = base_draft()
    for ball in draft["balls"]:
        ball["scope"] = [ball["scope"][0]]
    path = write(tmp_path / "slice.yaml", draft)
    spine = yamlio.loads((root / ".leap/config.yaml").read_bytes(), "c")["spine"]
    git("branch", "-m", spine, "elsewhere", cwd=root)
    ledger = ref(root, "leap/ledger")
    for command in ("check", "cut"):
        r = leap_inproc("slice", command, str(path), cwd=root)
        assert r.code == 2, r
        assert f".leap/config.yaml: spine: spine branch {spine!r} does not exist [L8]" in r.err
    assert ref(root, "leap/ledger") == ledger  # nothing recorded
    git("branch", "-m", "elsewhere", spine, cwd=root)
    assert leap_inproc("slice", "cut", str(path), cwd=root).code == 0
    git("branch", "-m", spine, "elsewhere", cwd=root)
    for args in (["throw", "s1"], ["ball", "base", "s1", "a"]):
        r = leap_inproc(*args, cwd=root)
        assert r.code == 2, (args, r)
        assert f"spine: spine branch {spine!r} does not exist [L8]" in r.err, (args, r.err)
        assert f"`git branch {spine} COMMIT`" in r.err, r.err


def test_a_draft_is_checked_before_init_whatever_the_branch(tmp_path: Path) -> None:
    """A blind review: with the L8 check at `leap slice check`, a repository of `trunk`
    with no config yet was refused for the default spine `main`, and the hint planted a
    `main` the project does not use. Before `leap init` no spine is named: the draft is
    checked as before; the cut needs the ledger `leap init` makes."""
    root = make_repo(tmp_path / "repo", {"src/a.py": "a\n", "src/b.py": "b\n"})
    git("branch", "-m", git("branch", "--show-current", cwd=root), "trunk", cwd=root)
    draft = base_draft()
    for ball in draft["balls"]:
        ball["scope"] = [ball["scope"][0]]
    path = write(tmp_path / "slice.yaml", draft)
    r = leap_inproc("slice", "check", str(path), cwd=root)
    assert r.code == 0, r
    assert not (root / ".leap").exists() and git("branch", "--list", "main", cwd=root) == ""


def test_init_in_a_detached_checkout_never_offers_the_ledger_or_a_ball_branch(
        tmp_path: Path) -> None:
    """A blind review: the ledger's branch was offered as the spine (`leap init --spine
    leap/ledger`, which init refuses), and taken as "the only branch". Only branches the
    rules take are offered."""
    root = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    git("branch", "-m", git("branch", "--show-current", cwd=root), "release", cwd=root)
    assert leap_inproc("init", cwd=root).code == 0
    git("branch", "leap/ball/s1/a", cwd=root)
    git("checkout", "-q", "--detach", cwd=root)
    (root / ".leap" / "config.yaml").unlink()
    r = leap_inproc("init", cwd=root)
    assert r.code == 0, r
    assert yamlio.loads((root / ".leap/config.yaml").read_bytes(), "c")["spine"] == "release"
