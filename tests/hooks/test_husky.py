"""A project whose git hooks husky runs (`core.hooksPath` into `.husky`): leapgit's hooks go
where git looks without it, and husky's own hook files call them with the line `leap hooks
install` prints. Before: the install named `--force`, which put leapgit's hooks into husky's
generated folder, where husky's dispatcher no longer found the project's own hooks (v9), or
which rewrote a tracked hook file (v8)."""

from __future__ import annotations

from pathlib import Path

from tests.hooks.test_post_commit import ball_worktree
from tests.hooks.world import World, round_message, run_git
from tests.support import git, leap, make_repo

# husky v9's layout, in our own words: `.husky/_/<hook>` sources the dispatcher `h`, which
# runs the project's `.husky/<hook>` named after the script that sourced it (its $0)
DISPATCHER = '''n=$(basename "$0")
s=$(dirname "$(dirname "$0")")/$n
[ ! -f "$s" ] && exit 0
sh -e "$s" "$@"
'''


def husky_v9(root: Path) -> Path:
    """husky v9 set up in ``root``'s checkout, each project hook logging that it ran."""
    generated = root / ".husky" / "_"
    generated.mkdir(parents=True, exist_ok=True)
    (generated / ".gitignore").write_text("*\n")
    (generated / "h").write_text(DISPATCHER)
    for hook in ("post-commit", "pre-push"):
        (generated / hook).write_text('#!/usr/bin/env sh\n. "$(dirname "$0")/h"\n')
        (generated / hook).chmod(0o755)
        (root / ".husky" / hook).write_text(
            f'echo {hook} >> "$(git rev-parse --git-common-dir)/husky-ran"\n')
    return generated


def printed_lines(out: str) -> dict[str, str]:
    """hook file name -> the line `leap hooks install` says to add to it."""
    found = {}
    for line in out.splitlines():
        path, sep, text = line.strip().partition(": ")
        if sep and path.startswith("/") and "/.husky/" in path:
            found[Path(path).name] = text
    return found


def test_husky_v9_keeps_its_hooks_and_calls_leapgits(fresh_world: World) -> None:
    w = fresh_world
    wt = ball_worktree(w, "a")
    generated = husky_v9(w.work)
    husky_v9(wt)  # husky's install runs in every checkout (the worktree's setup command)
    before = {p.name: p.read_bytes() for p in generated.iterdir()}
    git("config", "core.hooksPath", ".husky/_", cwd=w.work)
    for flags in ((), ("--force",)):
        res = leap("hooks", "install", *flags, cwd=w.work)
        assert res.code == 0, res
        assert "husky runs this repository's git hooks" in res.out, res.out
        assert "chmod +x" not in res.out  # v9's dispatcher runs the files with sh
        assert {p.name: p.read_bytes() for p in generated.iterdir()} == before
    assert b"leapgit-hook-id" in (w.work / ".git" / "hooks" / "post-commit").read_bytes()
    lines = printed_lines(res.out)
    assert set(lines) == {"post-commit", "pre-push"}, res.out
    assert f"{w.work / '.husky' / 'post-commit'}: " in res.out
    for root in (w.work, wt):  # as the hint says: husky's hook files call leapgit's
        for hook, line in lines.items():
            with open(root / ".husky" / hook, "a", encoding="utf-8") as fh:
                fh.write(line + "\n")

    (wt / "src" / "a.py").write_text("A = 10\n")
    git("add", "src/a.py", cwd=wt)
    done = run_git("commit", "-q", "-m", round_message("a: ten", 1, 1), cwd=wt)
    assert done.returncode == 0, done.stderr
    assert "recorded round 1 of s1/a" in done.stderr, done.stderr  # leapgit's post-commit
    ran = w.work / ".git" / "husky-ran"
    assert ran.read_text() == "post-commit\n"  # and the project's own, through husky

    (w.work / "README.md").write_text("straight onto the spine\n")
    git("commit", "-q", "-am", "straight onto the spine", cwd=w.work)
    pushed = run_git("push", "origin", "main", cwd=w.work)
    assert pushed.returncode != 0 and "leap pre-push" in pushed.stderr, pushed.stderr
    assert ran.read_text().splitlines() == ["post-commit", "post-commit", "pre-push"]


def test_husky_v8s_tracked_hooks_are_never_rewritten(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {
        ".husky/_/husky.sh": "# husky v8\n", ".husky/pre-push": "#!/bin/sh\nexit 0\n"})
    git("config", "core.hooksPath", ".husky", cwd=repo)
    res = leap("init", cwd=repo)
    assert res.code == 0, res
    assert "husky runs this repository's git hooks" in res.out, res.out
    assert "(a new file: `#!/usr/bin/env sh` as its first line, and `chmod +x` it)" in res.out
    assert f"{repo / '.husky' / 'pre-push'}: " in res.out
    assert git("status", "--porcelain", "--", ".husky", cwd=repo) == ""
    assert sorted(p.name for p in (repo / ".husky").iterdir()) == ["_", "pre-push"]
    assert b"leapgit-hook-id" in (repo / ".git" / "hooks" / "pre-push").read_bytes()
