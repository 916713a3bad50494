"""The audit's ledger views answer from the history's index (``LedgerHistory.entry`` and
``names``: what the commits up to a view's commit added) instead of walking its trees, when
the history only ever added. Each test asks both ways, at every commit of the ledger, for
every path and folder it ever held and for names no walk finds, and they must agree: on an
honest ledger, and on histories written behind leapgit's back (an empty folder, a record
edited, a folder removed), where the index either still answers as the trees do or steps
aside."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from leapgit.audit.context import AuditView
from leapgit.audit.ledger import LedgerHistory, audit_history
from leapgit.audit.model import AuditReport
from leapgit.gitobj import GitRepo
from leapgit.ledger.repo import open_repo
from leapgit.ledger.view import TREE_MODE, LedgerView
from tests.benchmarks.bench_audit import LEDGER_REF, build
from tests.support import git

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
ODD = ["", "/", "slices/", "/slices", "slices//s0", "nope", "slices/s0/slice.yaml/x",
       "slices/s0/balls/b0/scores/1.yaml/", "ghost/x.yaml"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("index") / "repo", 20)


@pytest.fixture
def repo(built: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(built, tmp_path / "repo", symlinks=True))


def history_of(repo: Path) -> LedgerHistory:
    tip = git("rev-parse", LEDGER_REF, cwd=repo)
    return audit_history(repo, LEDGER_REF, 4, AuditReport(LEDGER_REF, tip, "refs/heads/main",
                                                          None))


def with_entry(repo: Path, tree: str, path: str, entry: str | None) -> str:
    """``tree`` with ``path`` set to ``entry`` (``<mode> <type> <id>``; None removes it),
    written with `git mktree`, behind leapgit's back."""
    name, _, rest = path.partition("/")
    lines = [line for line in git("ls-tree", tree, cwd=repo).splitlines()
             if line.split("\t", 1)[1] != name]
    if rest:
        inner = next((line.split()[2] for line in git("ls-tree", tree, cwd=repo).splitlines()
                      if line.split("\t", 1)[1] == name), EMPTY_TREE)
        entry = f"040000 tree {with_entry(repo, inner, rest, entry)}"
    if entry is not None:
        lines.append(f"{entry}\t{name}")
    return git("mktree", cwd=repo, input="".join(f"{line}\n" for line in lines).encode())


def commit_over(repo: Path, changes: dict[str, str | None], message: str) -> None:
    assert git("mktree", cwd=repo, input=b"") == EMPTY_TREE  # stored, as dulwich reads it
    tip = git("rev-parse", LEDGER_REF, cwd=repo)
    tree = git("rev-parse", f"{tip}^{{tree}}", cwd=repo)
    for path, entry in changes.items():
        tree = with_entry(repo, tree, path, entry)
    commit = git("commit-tree", tree, "-p", tip, "-m", message, cwd=repo)
    git("update-ref", LEDGER_REF, commit, tip, cwd=repo)


def blob(repo: Path, data: bytes) -> str:
    return f"100644 blob {git('hash-object', '-w', '--stdin', cwd=repo, input=data)}"


def every_name(repo: Path) -> tuple[list[str], list[str]]:
    """Every path and every folder any ledger commit held (`git log --raw -t`)."""
    out = git("log", "--raw", "-t", "--no-renames", "--format=", LEDGER_REF, cwd=repo)
    paths = {line.split("\t", 1)[1] for line in out.splitlines() if "\t" in line}
    folders = {"", *(p.rsplit("/", 1)[0] for p in paths if "/" in p)}
    return sorted(paths), sorted(folders)


def disagreements(repo: Path, history: LedgerHistory) -> list[str]:
    """Where the index's answer differs from a walk of the trees, at every commit."""
    commits = git("rev-list", "--reverse", LEDGER_REF, cwd=repo).split()
    paths, folders = every_name(repo)
    handle = open_repo(str(repo / ".git"))
    try:
        return _disagreements(handle, commits, paths, folders, history)
    finally:
        handle.close()


def _disagreements(handle: GitRepo, commits: list[str], paths: list[str],
                   folders: list[str], history: LedgerHistory) -> list[str]:
    out = []
    for commit in commits:
        indexed, walked = AuditView(handle, commit, {}, history), LedgerView(handle, commit)
        for path in [*paths, *folders, *ODD]:
            a, b = indexed._entry(path), walked._entry(path)
            if (a and (a[0], a[0] != TREE_MODE and a[1])) != \
                    (b and (b[0], b[0] != TREE_MODE and b[1])):
                out.append(f"{commit[:12]} {path!r}: index {a}, trees {b}")
            if indexed.blob_id(path) != walked.blob_id(path) or \
                    indexed.exists(path) != walked.exists(path):
                out.append(f"{commit[:12]} {path!r}: blob_id or exists differ")
        for folder in [*folders, *ODD]:
            if indexed.list(folder) != walked.list(folder):
                out.append(f"{commit[:12]} list({folder!r}): index {indexed.list(folder)}, "
                           f"trees {walked.list(folder)}")
        if list(indexed.walk()) != list(walked.walk()):
            out.append(f"{commit[:12]} walk() differs")
    return out


def tip_view(repo: Path, history: LedgerHistory) -> tuple[int | None, list[str]]:
    """(where the tip stands in the index, or None; what it lists in slices/s0)."""
    handle = open_repo(str(repo / ".git"))
    try:
        view = AuditView(handle, git("rev-parse", LEDGER_REF, cwd=repo), {}, history)
        return view._place, view.list("slices/s0")
    finally:
        handle.close()


def test_on_an_honest_ledger_every_view_answers_from_the_index_as_its_trees_do(
        repo: Path) -> None:
    history = history_of(repo)
    assert history.additive
    assert tip_view(repo, history)[0] is not None  # the index answers
    assert disagreements(repo, history) == []


def test_an_empty_folder_added_behind_leapgits_back_is_there_in_the_index_too(
        repo: Path) -> None:
    """git shows a folder with no file in it only with ``-t``: a walk of the trees finds it,
    and so must the index, from the commit that added it on."""
    commit_over(repo, {"ghost": f"040000 tree {EMPTY_TREE}",
                       "slices/s0/ghost": f"040000 tree {EMPTY_TREE}"}, "an empty folder")
    commit_over(repo, {"ghost/x.yaml": blob(repo, b"kind: x\n")}, "a file in it")
    history = history_of(repo)
    assert history.additive
    place, listed = tip_view(repo, history)
    assert place is not None and "ghost" in listed
    assert disagreements(repo, history) == []


@pytest.mark.parametrize("change", ["a record edited", "a record removed",
                                    "an empty folder removed"])
def test_a_history_that_did_more_than_add_is_read_from_its_trees(repo: Path,
                                                                 change: str) -> None:
    record = "slices/s0/balls/b0/scores/1.yaml"
    if change == "an empty folder removed":
        commit_over(repo, {"slices/s1/ghost": f"040000 tree {EMPTY_TREE}"}, "add")
        commit_over(repo, {"slices/s1/ghost": None}, "remove")
    else:
        commit_over(repo, {record: blob(repo, b"edited\n") if change == "a record edited"
                           else None}, change)
    history = history_of(repo)
    assert not history.additive
    assert tip_view(repo, history)[0] is None  # the trees answer
    assert disagreements(repo, history) == []
