"""Blind review r2 of issue 18: a symbolic ref on the server. `git symbolic-ref
refs/heads/trunk refs/heads/main` (an admin's alias, or a forge's default-branch rename)
makes receive-pack move main when trunk is pushed; the hook sees only the name trunk. A push
through a symbolic ref to a protected ref is refused, the remote's refs unchanged; an alias
of an ordinary branch keeps working."""

from __future__ import annotations

import pytest

from tests.hooks.world import SLICE, World, commit, remote_refs
from tests.support import git, leap


def aliased(w: World, alias: str, target: str) -> None:
    git("symbolic-ref", alias, target, cwd=w.bare)


@pytest.mark.parametrize(("target", "rule"), [
    ("refs/heads/main", "L8"),
    ("refs/heads/leap/ledger", "L8"),
    (f"refs/heads/leap/ball/{SLICE}/a", "L4"),
    ("refs/tags/main", "L8"),  # it would create the tag that shadows the spine
])
def test_a_push_through_a_symref_to_a_protected_ref_is_refused(fresh_world: World,
                                                              target: str, rule: str) -> None:
    w = fresh_world
    if target.startswith("refs/heads/leap/ball/"):
        git("update-ref", target, w.base, cwd=w.bare)
    aliased(w, "refs/heads/trunk", target)
    tip = git("rev-parse", "refs/heads/trunk", cwd=w.bare) \
        if git("rev-parse", "-q", "--verify", "refs/heads/trunk", cwd=w.bare, check=False) \
        else w.base
    git("checkout", "-q", "--detach", tip, cwd=w.work)
    unjudged = commit(w.work, {"README.md": "# no rule judged this\n"}, "straight onto it")
    before = remote_refs(w.bare)
    result = w.push(f"{unjudged}:refs/heads/trunk")
    assert result.returncode != 0, result.stderr
    assert f"[{rule}] refs/heads/trunk" in result.stderr, result.stderr
    assert f"a symbolic ref to {target} on this server" in result.stderr, result.stderr
    assert remote_refs(w.bare) == before
    assert git("symbolic-ref", "refs/heads/trunk", cwd=w.bare) == target


def test_deleting_a_symref_to_the_spine_is_refused(fresh_world: World) -> None:
    w = fresh_world
    aliased(w, "refs/heads/trunk", "refs/heads/main")
    before = remote_refs(w.bare)
    result = w.push(":refs/heads/trunk")
    assert result.returncode != 0, result.stderr
    assert remote_refs(w.bare) == before
    assert git("rev-parse", "refs/heads/main", cwd=w.bare) == before["refs/heads/main"]


def test_a_chain_of_symrefs_is_followed(fresh_world: World) -> None:
    w = fresh_world
    aliased(w, "refs/heads/alias", "refs/heads/main")
    aliased(w, "refs/heads/trunk", "refs/heads/alias")
    git("checkout", "-q", "--detach", w.base, cwd=w.work)
    unjudged = commit(w.work, {"README.md": "# twice removed\n"}, "straight onto it")
    before = remote_refs(w.bare)
    result = w.push(f"{unjudged}:refs/heads/trunk")
    assert "[L8] refs/heads/trunk" in result.stderr, result.stderr
    assert "a symbolic ref to refs/heads/main" in result.stderr, result.stderr
    assert remote_refs(w.bare) == before


def test_an_alias_of_an_ordinary_branch_is_accepted(fresh_world: World) -> None:
    w = fresh_world
    assert w.push(f"{w.base}:refs/heads/feature").returncode == 0
    aliased(w, "refs/heads/feat", "refs/heads/feature")
    git("checkout", "-q", "--detach", w.base, cwd=w.work)
    moved = commit(w.work, {"README.md": "# a feature\n"}, "feature work")
    result = w.push(f"{moved}:refs/heads/feat")
    assert result.returncode == 0, result.stderr
    assert git("rev-parse", "refs/heads/feature", cwd=w.bare) == moved


def test_a_local_symref_is_no_reason_for_pre_push_to_refuse(fresh_world: World) -> None:
    """The symbolic ref that matters is the server's: a clone's own alias (its trunk names
    its main) says nothing of the remote's trunk, an ordinary branch there. pre-push read
    the clone's refs under the remote's names and refused."""
    w = fresh_world
    installed = leap("hooks", "install", cwd=w.work)
    assert installed.code == 0, installed
    git("symbolic-ref", "refs/heads/trunk", "refs/heads/main", cwd=w.work)
    result = w.push("refs/heads/trunk:refs/heads/trunk", verify=True)
    assert result.returncode == 0, result.stderr
    assert remote_refs(w.bare)["refs/heads/trunk"] == w.base
