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


# F3: refs that make plain git show bytes no rule judged


def forged_readme(w: World) -> str:
    """A commit like the spine's tip, with other README bytes: what a replace ref would
    make `git show main:README.md` serve."""
    blob = git("hash-object", "-w", "--stdin", cwd=w.work, input=b"# forged\n")
    tree = git("mktree", cwd=w.work, input="".join(
        (f"100644 blob {blob}\tREADME.md\n" if line.endswith("\tREADME.md") else line + "\n")
        for line in git("ls-tree", w.base, cwd=w.work).splitlines()).encode())
    return git("commit-tree", tree, "-p", f"{w.base}^", "-m", "leap: config", cwd=w.work)


def test_replace_and_notes_refs_are_refused(w: World) -> None:
    forged = forged_readme(w)
    refused(w, f"refs/replace/{w.base}", "L8", "replace", forged)
    refused(w, "refs/notes/commits", "L8", "notes", forged)
    refused(w, "refs/notes/leap", "L8", "notes", forged)


@pytest.mark.parametrize("ref", [
    "refs/tags/main", "refs/tags/MAIN", "refs/tags/leap/ledger",
    f"refs/tags/leap/ball/{SLICE}/a", "refs/tags/leap/anything", "refs/main",
    "refs/leap/ledger", f"refs/leap/ball/{SLICE}/a",
])
def test_a_ref_whose_short_name_shadows_the_protected_refs_is_refused(w: World, ref: str
                                                                     ) -> None:
    refused(w, ref, "L8", "shadows")


def test_ordinary_tags_are_accepted(w: World) -> None:
    for ref in ("refs/tags/v1.0", "refs/tags/mainline", "refs/tags/releases/leap"):
        result = w.push(f"{w.base}:{ref}")
        assert result.returncode == 0, result.stderr
        assert w.push(f":{ref}").returncode == 0


def test_the_server_ignores_replace_refs(fresh_world: World) -> None:
    """A replace ref already on the server (planted before the hook, or by hand) never
    changes what the server's git shows: install --server sets core.useReplaceRefs=false."""
    w = fresh_world
    forged = forged_readme(w)
    assert w.push(f"{forged}:refs/heads/by-hand").returncode == 0  # the objects get there
    git("update-ref", f"refs/replace/{w.base}", forged, cwd=w.bare)
    assert git("config", "--get", "core.useReplaceRefs", cwd=w.bare) == "false"
    assert git("show", "main:README.md", cwd=w.bare) == "# sample"


def test_leapgit_reads_no_replace_objects(fresh_world: World) -> None:
    """A clone that fetched a replace ref (or made one): `git log leap/ledger` would show
    its forged subject; `leap log` (and every git call leapgit makes) shows the ledger."""
    from tests.support import leap

    w = fresh_world
    tip = w.tip("leap/ledger")
    real = git("log", "-1", "--format=%s", tip, cwd=w.work)
    forged = git("commit-tree", f"{tip}^{{tree}}", "-p", f"{tip}^", "-m", "score s1/a: pass",
                 cwd=w.work)
    git("replace", tip, forged, cwd=w.work)
    try:
        assert git("log", "-1", "--format=%s", "leap/ledger", cwd=w.work) == "score s1/a: pass"
        shown = leap("log", "-n", "1", cwd=w.work)
        assert shown.code == 0, shown
        assert real in shown.out and "score s1/a: pass" not in shown.out, shown.out
    finally:
        git("replace", "-d", tip, cwd=w.work)


# blind review r1 (defect lens) of issue 18: what the name checks still let through


@pytest.mark.parametrize("ref", [
    "refs/TAGS/main", "refs/Tags/leap/ledger", "refs/NOTES/commits",
])
def test_a_case_variant_of_a_masking_prefix_is_refused(w: World, ref: str) -> None:
    """Review F3: on a case-folding server `refs/TAGS/main` is the file `refs/tags/main`."""
    refused(w, ref, "L8", "", None)


def test_a_case_variant_of_the_replace_prefix_is_refused(w: World) -> None:
    refused(w, f"refs/REPLACE/{w.base}", "L8", "replace", forged_readme(w))


@pytest.mark.parametrize("ref", [
    "refs/heads/ma\u200cin", "refs/heads/leap/ledger\u200d", "refs/heads/m\ufeffain",
    f"refs/heads/leap/ba\ufeffll/{SLICE}/a",
])
def test_a_name_with_characters_a_filesystem_ignores_is_refused(w: World, ref: str) -> None:
    """Review F4: HFS+ (and ext4 casefold before 2025) ignore zero-width characters and
    the byte-order mark in a name, so `ma<ZWNJ>in` is the file `main`."""
    refused(w, ref, "L4" if "/ba" in ref else "L8", "folds onto the protected")


@pytest.mark.parametrize("ref", [
    "refs/heads/leap/ball", "refs/heads/leap", "refs/heads/main/x",
    "refs/heads/leap/ledger/x",
])
def test_a_ref_that_blocks_a_protected_one_by_its_path_is_refused(w: World, ref: str) -> None:
    """Review F6: `refs/heads/leap/ball` as a branch makes every ball branch impossible
    (`'refs/heads/leap/ball' exists; cannot create ...`): a denial of the protocol."""
    refused(w, ref, "L8", "in the way")


# blind review r2 of issue 18: ball ids that fold together


@pytest.mark.parametrize("ref", [
    "refs/heads/leap/ball/S1/a", f"refs/heads/leap/ball/{SLICE}/A",
    f"refs/heads/leap/ball/{SLICE.upper()}/\uff41",  # fullwidth a: NFKC
])
def test_a_ball_ref_that_folds_onto_a_recorded_ball_is_refused(w: World, ref: str) -> None:
    """On a case-folding server `leap/ball/S1/a` is the file of ball s1/a's branch: a push
    to it would be judged as ball S1/a (or refused as unknown) and land on s1/a's."""
    says = refused(w, ref, "L4", f"folds onto refs/heads/leap/ball/{SLICE}/a, the branch "
                   f"of recorded ball {SLICE}/a")
    assert "no ball" not in says, says


def test_deleting_a_case_variant_of_a_ball_branch_is_refused(w: World) -> None:
    """Emulated as the case-folding server would show it: the branch of ball s1/a and its
    variant, both made by the admin; deleting the variant deletes s1/a's branch."""
    branch, variant = f"refs/heads/leap/ball/{SLICE}/a", "refs/heads/leap/ball/S1/a"
    for ref in (branch, variant):
        git("update-ref", ref, w.base, cwd=w.bare)
    try:
        before = remote_refs(w.bare)
        result = w.push(f":{variant}")
        assert result.returncode != 0, result.stderr
        assert f"[L4] {variant}" in result.stderr, result.stderr
        assert f"folds onto the protected {branch}" in result.stderr, result.stderr
        assert remote_refs(w.bare) == before
    finally:
        for ref in (branch, variant):
            git("update-ref", "-d", ref, cwd=w.bare)


def test_two_ball_refs_of_one_push_that_fold_together_are_refused(w: World) -> None:
    ref = f"refs/heads/leap/ball/{SLICE}/b"
    before = remote_refs(w.bare)
    result = w.push(f"{w.base}:{ref}", f"{w.base}:refs/heads/leap/ball/{SLICE}/B")
    assert result.returncode != 0, result.stderr
    assert f"[L4] refs/heads/leap/ball/{SLICE}/B" in result.stderr, result.stderr
    assert f"folds onto the protected {ref}" in result.stderr, result.stderr
    assert remote_refs(w.bare) == before
