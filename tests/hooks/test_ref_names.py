"""Issue 18 F2, F3: refs that are, or read as, a protected ref without its exact name.

On a server whose filesystem folds case (macOS, Windows, ext4 casefold), the loose ref
``refs/heads/MAIN`` is the file ``refs/heads/main``: a push to it replaces the spine
unchecked, and then the hook reads the attacker's config and signer policy. A replace ref
makes `git show main:...` serve bytes no rule judged; a tag or a top-level ref named
``main`` or ``leap/ledger`` wins git's short-name lookup on the server and in every clone;
a note can carry fake ``Leap-*`` lines. Each is pushed for real to the served remote and
refused by name, with its rule id, the remote's refs unchanged."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.hooks.world import SLICE, World, remote_refs
from tests.support import git


@pytest.fixture
def w(world: World) -> Iterator[World]:
    before = remote_refs(world.bare)
    yield world
    assert remote_refs(world.bare) == before, "a refused push changed the remote"


def refused(w: World, ref: str, rule: str, says: str, sha: str | None = None) -> str:
    before = remote_refs(w.bare)
    result = w.push(f"{sha or w.base}:{ref}")
    assert result.returncode != 0, result.stdout + result.stderr
    assert f"[{rule}] {ref} " in result.stderr, result.stderr
    assert says in result.stderr, result.stderr
    assert remote_refs(w.bare) == before
    return result.stderr


# F2: names that fold onto a protected ref


@pytest.mark.parametrize(("ref", "rule", "protected"), [
    ("refs/heads/MAIN", "L8", "refs/heads/main"),
    ("refs/heads/Main", "L8", "refs/heads/main"),
    ("refs/heads/\uff4d\uff41\uff49\uff4e", "L8", "refs/heads/main"),  # fullwidth: NFKC
    ("refs/HEADS/main", "L8", "refs/heads/main"),
    ("refs/heads/leap/LEDGER", "L8", "refs/heads/leap/ledger"),
    ("refs/heads/LEAP/ledger", "L8", "refs/heads/leap/ledger"),
    ("refs/heads/leap/ledge\u0280", None, None),  # a look-alike that folds to nothing else
    (f"refs/heads/LEAP/ball/{SLICE}/a", "L4", "refs/heads/leap/ball/"),
    (f"refs/heads/leap/Ball/{SLICE}/zzz", "L4", "refs/heads/leap/ball/"),
])
def test_a_ref_that_folds_onto_a_protected_one_is_refused(w: World, ref: str,
                                                         rule: str | None,
                                                         protected: str | None) -> None:
    if rule is None:  # not every odd name collides: only case folding and NFKC count
        result = w.push(f"{w.base}:{ref}")
        assert result.returncode == 0, result.stderr
        w.push(f":{ref}")
        return
    refused(w, ref, rule, f"folds onto the protected {protected}")


def test_deleting_a_case_variant_of_the_spine_is_refused(w: World) -> None:
    """On a case-folding filesystem the deletion removes the spine itself. Emulated: the
    server's admin made the variant by hand, as the folded file would show it."""
    git("update-ref", "refs/heads/MAIN", w.base, cwd=w.bare)
    try:
        before = remote_refs(w.bare)
        result = w.push(":refs/heads/MAIN")
        assert result.returncode != 0
        assert "[L8] refs/heads/MAIN" in result.stderr, result.stderr
        assert remote_refs(w.bare) == before
    finally:
        git("update-ref", "-d", "refs/heads/MAIN", cwd=w.bare)


def test_ordinary_branches_beside_the_protected_ones_are_accepted(w: World) -> None:
    for ref in ("refs/heads/mainline", "refs/heads/leap/notes-of-mine", "refs/heads/ball/x"):
        result = w.push(f"{w.base}:{ref}")
        assert result.returncode == 0, result.stderr
        assert w.push(f":{ref}").returncode == 0
