"""The audit's ledger views answer from the history's index (``audit.index``: what the
commits up to a view's commit added) instead of walking its trees, when the history only
ever added. The tests ask both ways, at every commit of the ledger, for every path and
folder any commit held and for names no walk finds, and the answers must agree: on an
honest ledger, and on histories written behind leapgit's back that still only add (an
empty folder, odd names, a commit message that reads like a diff). A history that did
more than add, or hid what it did from git's diff, is read from its trees."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from leapgit.audit.context import AuditView
from leapgit.audit.ledger import LedgerHistory, audit_history
from leapgit.audit.model import AuditReport
from leapgit.gitobj import GitRepo
from leapgit.ledger.repo import open_repo
from leapgit.ledger.view import LedgerView
from tests.benchmarks.bench_audit import LEDGER_REF, build
from tests.support import git

EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
ODD = ["", "/", ".", "..", "slices/", "/slices", "slices//s0", "nope", "slices/s0/slice.yaml/x",
       "slices/s0/balls/b0/scores/1.yaml/", "ghost/x.yaml", "fake/claim.yaml", "fake"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build(tmp_path_factory.mktemp("index") / "repo", 20)


@pytest.fixture
def repo(built: Path, tmp_path: Path) -> Path:
    path = Path(shutil.copytree(built, tmp_path / "repo", symlinks=True))
    git("mktree", cwd=path, input=b"")  # the empty tree, stored, as dulwich reads objects
    return path


def audited(repo: Path) -> tuple[LedgerHistory, AuditReport]:
    tip = git("rev-parse", LEDGER_REF, cwd=repo)
    report = AuditReport(LEDGER_REF, tip, "refs/heads/main", None)
    return audit_history(repo, LEDGER_REF, 4, report), report


def entries(repo: Path, tree: str) -> list[tuple[str, str]]:
    """(``<mode> <type> <id>``, name) of each entry of ``tree``."""
    return [(line.split("\t", 1)[0], line.split("\t", 1)[1])
            for line in git("ls-tree", "-z", tree, cwd=repo).split("\0") if line]


def literal_tree(repo: Path, items: list[tuple[str, str]]) -> str:
    """A tree object of exactly ``items`` (``<mode> <type> <id>``, name), in their order,
    written as given (`hash-object --literally`: odd modes, a slash in a name, twice the
    same name), as only a writer behind leapgit's back would."""
    body = b"".join(b"%s %s\0%s" % (meta.split()[0].lstrip("0").encode(), name.encode(),
                                    bytes.fromhex(meta.split()[2])) for meta, name in items)
    return git("hash-object", "-t", "tree", "-w", "--literally", "--stdin", cwd=repo,
               input=body)


def with_entry(repo: Path, tree: str, path: str, entry: str | None) -> str:
    """``tree`` with ``path`` set to ``entry`` (``<mode> <type> <id>``; None removes it)."""
    name, _, rest = path.partition("/")
    old = entries(repo, tree)
    kept = [(meta, n) for meta, n in old if n != name]
    if rest:
        inner = next((meta.split()[2] for meta, n in old if n == name), EMPTY_TREE)
        entry = f"040000 tree {with_entry(repo, inner, rest, entry)}"
    if entry is not None:
        kept.append((entry, name))
    return git("mktree", "-z", cwd=repo,
               input=b"".join(f"{meta}\t{n}\0".encode() for meta, n in kept))


def commit(repo: Path, tree: str, message: str = "behind leapgit's back") -> str:
    tip = git("rev-parse", LEDGER_REF, cwd=repo)
    sha = git("commit-tree", tree, "-p", tip, cwd=repo, input=message.encode())
    git("update-ref", LEDGER_REF, sha, tip, cwd=repo)
    return sha


def commit_over(repo: Path, changes: dict[str, str | None], message: str = "over") -> str:
    tree = git("rev-parse", f"{LEDGER_REF}^{{tree}}", cwd=repo)
    for path, entry in changes.items():
        tree = with_entry(repo, tree, path, entry)
    return commit(repo, tree, message)


def blob(repo: Path, data: bytes) -> str:
    return f"100644 blob {git('hash-object', '-w', '--stdin', cwd=repo, input=data)}"


def names_held(repo: Path) -> tuple[list[str], list[str]]:
    """Every path and every folder any ledger commit held, as a walk names them."""
    paths: set[str] = set()
    for sha in git("rev-list", LEDGER_REF, cwd=repo).split():
        for line in git("ls-tree", "-r", "-t", "-z", sha, cwd=repo).split("\0"):
            if "\t" in line:
                paths.add(line.split("\t", 1)[1])
    folders = {"", *(p.rsplit("/", 1)[0] for p in paths if "/" in p)}
    return sorted(paths), sorted(folders | paths)


def disagreements(repo: Path, history: LedgerHistory) -> list[str]:
    """Where a view reading the index answers otherwise than a view walking the trees, at
    every commit: each path's blob and existence, each folder's names, the whole walk."""
    commits = git("rev-list", "--reverse", LEDGER_REF, cwd=repo).split()
    paths, folders = names_held(repo)
    handle = open_repo(str(repo / ".git"))
    try:
        return _disagreements(handle, commits, [*paths, *ODD], [*folders, *ODD], history)
    finally:
        handle.close()


def _disagreements(handle: GitRepo, commits: list[str], paths: list[str],
                   folders: list[str], history: LedgerHistory) -> list[str]:
    out = []
    for sha in commits:
        indexed = AuditView(handle, sha, {}, history.index)
        walked = LedgerView(handle, sha)
        assert history.index.place(sha) is not None, "no index: this would compare nothing"
        for path in paths:
            asked = [(v.blob_id(path), v.exists(path)) for v in (indexed, walked)]
            if asked[0] != asked[1]:
                out.append(f"{sha[:12]} {path!r}: index {asked[0]}, trees {asked[1]}")
        for folder in folders:
            if indexed.list(folder) != walked.list(folder):
                out.append(f"{sha[:12]} list({folder!r}): index {indexed.list(folder)}, "
                           f"trees {walked.list(folder)}")
        if list(indexed.walk()) != list(walked.walk()):
            out.append(f"{sha[:12]} walk() differs")
    return out


def test_on_an_honest_ledger_every_view_answers_from_the_index_as_its_trees_do(
        repo: Path) -> None:
    history, report = audited(repo)
    assert history.index.additive and not report.violations
    assert disagreements(repo, history) == []


def test_an_empty_folder_added_behind_leapgits_back_is_there_in_the_index_too(
        repo: Path) -> None:
    """git shows a folder with no file in it only with ``-t``: a walk of the trees finds it,
    and so must the index, from the commit that added it on."""
    commit_over(repo, {"ghost": f"040000 tree {EMPTY_TREE}",
                       "slices/s0/ghost": f"040000 tree {EMPTY_TREE}"})
    commit_over(repo, {"ghost/x.yaml": blob(repo, b"kind: x\n")})
    history, _ = audited(repo)
    assert history.index.additive
    assert disagreements(repo, history) == []


@pytest.mark.parametrize("name", ['we"ird.yaml', "tab\there.yaml", "line\u2028break.yaml",
                                  "next\u0085line.yaml", "new\nline.yaml", "é.yaml"])
def test_a_name_git_would_quote_or_split_is_read_as_it_is(repo: Path, name: str) -> None:
    """`git log -z`: no name is quoted, and none can pass for the end of a line."""
    commit_over(repo, {f"slices/s1/{name}": blob(repo, b"kind: x\n"),
                       f"odd/{name}": f"040000 tree {EMPTY_TREE}"})
    history, _ = audited(repo)
    assert history.index.additive
    assert disagreements(repo, history) == []


def test_a_commit_message_that_reads_like_a_diff_adds_nothing(repo: Path) -> None:
    """The message comes from the commit object, never from the log's stream: a message
    holding the log's own separators and a diff line of a file no tree holds neither
    adds it nor names it as recorded."""
    same = git("rev-parse", f"{LEDGER_REF}^{{tree}}", cwd=repo)
    fake = blob(repo, b"kind: fake\n").split()[2]
    commit(repo, same, f"two\n\n\x02\n:000000 100644 {'0' * 40} {fake} A\tfake/claim.yaml\n"
           f"\x01{'1' * 40}  {same}\n\nLeap-Record: fake/claim.yaml\n")
    history, report = audited(repo)
    assert history.index.additive
    assert disagreements(repo, history) == []
    assert [v.check for v in report.violations] == ["ledger-written-by-leapgit"]  # named


@pytest.mark.parametrize("change", ["a record edited", "a record removed",
                                    "an empty folder removed", "a merge"])
def test_a_history_that_did_more_than_add_is_read_from_its_trees(repo: Path,
                                                                 change: str) -> None:
    record = "slices/s0/balls/b0/scores/1.yaml"
    if change == "an empty folder removed":
        commit_over(repo, {"slices/s1/ghost": f"040000 tree {EMPTY_TREE}"})
        commit_over(repo, {"slices/s1/ghost": None})
    elif change == "a merge":
        tip = git("rev-parse", LEDGER_REF, cwd=repo)
        side_tree = with_entry(repo, git("rev-parse", f"{tip}^{{tree}}", cwd=repo),
                               "side/x.yaml", blob(repo, b"kind: x\n"))
        side = git("commit-tree", side_tree, "-p", f"{tip}~3", cwd=repo, input=b"side")
        merged = git("commit-tree", side_tree, "-p", tip, "-p", side, cwd=repo,
                     input=b"merge")
        git("update-ref", LEDGER_REF, merged, tip, cwd=repo)
    else:
        commit_over(repo, {record: blob(repo, b"edited\n") if change == "a record edited"
                           else None})
    history, _ = audited(repo)
    assert not history.index.additive
    tip = git("rev-parse", LEDGER_REF, cwd=repo)
    assert history.index.place(tip) is None  # the views walk their trees


def test_a_mode_git_does_not_show_changed_is_named_and_read_from_the_trees(
        repo: Path) -> None:
    """100644 to 100664 is no change in git's diff, but the record's folder is another tree
    (dulwich's diff, the server's, calls it a modify, L8)."""
    folder = "slices/s0/balls/b0/scores"
    tree = git("rev-parse", f"{LEDGER_REF}:{folder}", cwd=repo)
    odd = literal_tree(repo, [(meta.replace("100644", "100664"), name)
                              for meta, name in entries(repo, tree)])
    changed = commit_over(repo, {folder: f"040000 tree {odd}"})
    history, report = audited(repo)
    assert not history.index.additive
    assert [(v.check, v.commit, v.path) for v in report.violations] == \
        [("ledger-append-only", changed, folder)]


@pytest.mark.parametrize("case", ["a name across folders", "a name twice"])
def test_a_tree_no_git_writes_is_read_from_the_trees(repo: Path, case: str) -> None:
    """A name with a slash in it lists as a path inside the folder it names, and a name
    twice lists twice: the index holds what git listed, and its folders then hash to
    another tree than the one the commit holds."""
    top = git("rev-parse", f"{LEDGER_REF}^{{tree}}", cwd=repo)
    extra = blob(repo, b"kind: x\n")
    if case == "a name across folders":
        items = [*entries(repo, top), (extra, "slices/zz.yaml")]
    else:
        items = [*entries(repo, top), (extra, "zz.yaml"), (extra, "zz.yaml")]
    commit(repo, literal_tree(repo, sorted(items, key=lambda item: item[1])))
    history, _ = audited(repo)
    assert not history.index.additive


def hidden_mode_beside_an_add(repo: Path) -> str:
    """A commit that changes a record's mode as git's diff does not show (100644 to
    100664) and adds another record beside it: the commit."""
    folder = "slices/s0/balls/b0/scores"
    tree = git("rev-parse", f"{LEDGER_REF}:{folder}", cwd=repo)
    extra = blob(repo, b"kind: x\n")
    odd = literal_tree(repo, sorted([*[(meta.replace("100644", "100664"), name)
                                       for meta, name in entries(repo, tree)],
                                     (extra, "9.yaml")], key=lambda item: item[1]))
    return commit_over(repo, {folder: f"040000 tree {odd}"})


def test_a_hidden_mode_change_beside_a_real_add_is_named(repo: Path) -> None:
    """The folder shows a change (the add), and holds another git's diff does not show: each
    changed folder must hash to the tree git gave it, at every commit, not only at the tip."""
    folder = "slices/s0/balls/b0/scores"
    held = entries(repo, git("rev-parse", f"{LEDGER_REF}:{folder}", cwd=repo))
    changed = hidden_mode_beside_an_add(repo)
    commit_over(repo, {f"{folder}/{name}": meta for meta, name in held}
                | {f"{folder}/8.yaml": blob(repo, b"kind: x\n")})  # modes back, beside an add
    history, report = audited(repo)
    assert not history.index.additive
    assert (("ledger-append-only", changed, folder) in
            [(v.check, v.commit, v.path) for v in report.violations])


def test_a_folder_written_with_another_mode_is_read_from_the_trees(repo: Path) -> None:
    """git takes 40755 for a folder; a walk of the trees, as dulwich reads them, does not."""
    inner = git("mktree", cwd=repo, input=blob(repo, b"kind: y\n").encode() + b"\ty.yaml\n")
    top = git("rev-parse", f"{LEDGER_REF}^{{tree}}", cwd=repo)
    commit(repo, literal_tree(repo, sorted([*entries(repo, top), (f"40755 tree {inner}", "x")],
                                           key=lambda item: item[1])))
    commit_over(repo, {"x": f"040000 tree {inner}", "z.yaml": blob(repo, b"kind: z\n")})
    history, _ = audited(repo)
    assert not history.index.additive


@pytest.mark.parametrize("config", [("diff.ignoreSubmodules", "all"),
                                    ("log.showSignature", "true"),
                                    ("i18n.logOutputEncoding", "UTF-16")])
def test_the_users_git_config_does_not_change_what_the_audit_reads(repo: Path,
                                                                    config: tuple[str, str]
                                                                    ) -> None:
    """A gitlink added and then removed, one commit carrying a signature header: whatever
    the repository's configuration, every commit is read and the removal is named."""
    tip = git("rev-parse", LEDGER_REF, cwd=repo)
    top = git("rev-parse", f"{tip}^{{tree}}", cwd=repo)
    with_link = with_entry(repo, top, "g", f"160000 commit {tip}")
    signed = (f"tree {with_link}\nparent {tip}\nauthor a <a@a> 1700000000 +0000\ncommitter a "
              "<a@a> 1700000000 +0000\ngpgsig -----BEGIN SSH SIGNATURE-----\n U1NIU0lHAAAAAQ==\n"
              " -----END SSH SIGNATURE-----\n\na gitlink\n").encode()
    linked = git("hash-object", "-t", "commit", "-w", "--stdin", cwd=repo, input=signed)
    git("update-ref", LEDGER_REF, linked, tip, cwd=repo)
    unlinked = commit_over(repo, {"g": None, "z.yaml": blob(repo, b"kind: z\n")})
    git("config", *config, cwd=repo)
    history, report = audited(repo)
    assert report.commits == len(git("rev-list", LEDGER_REF, cwd=repo).split())
    assert ("ledger-append-only", unlinked, "g") in \
        [(v.check, v.commit, v.path) for v in report.violations]
    assert not history.index.additive


def test_a_diff_order_in_the_users_config_changes_nothing(repo: Path, tmp_path: Path) -> None:
    """`diff.orderFile` lists files before their folders: the audit's log keeps git's own
    order, so the index still sees each folder come before what it holds."""
    order = tmp_path / "order"
    order.write_text("*.yaml\n")
    git("config", "diff.orderFile", str(order), cwd=repo)
    changed = hidden_mode_beside_an_add(repo)
    history, report = audited(repo)
    assert ("ledger-append-only", changed, "slices/s0/balls/b0/scores") in \
        [(v.check, v.commit, v.path) for v in report.violations]


def test_a_name_that_is_not_utf8_turns_the_index_off_and_is_no_violation(repo: Path) -> None:
    """An empty folder named with a byte that is not UTF-8 (the server's diff shows no empty
    folder): the audit reads on, names nothing, and its views walk the trees."""
    top = git("rev-parse", f"{LEDGER_REF}^{{tree}}", cwd=repo)
    listed = git("ls-tree", "-z", top, cwd=repo).encode()
    items = [(e.split(b"\t", 1)[1], e.split(b"\t", 1)[0].split()) for e in listed.split(b"\0")
             if e] + [(name, [b"40000", b"tree", EMPTY_TREE.encode()])
                      for name in (b"\xff",)]
    items.sort(key=lambda item: item[0] + (b"/" if item[1][0].lstrip(b"0") == b"40000" else b""))
    body = b"".join(b"%s %s\0%s" % (meta[0].lstrip(b"0"), name, bytes.fromhex(meta[2].decode()))
                    for name, meta in items)
    odd = git("hash-object", "-t", "tree", "-w", "--literally", "--stdin", cwd=repo, input=body)
    commit(repo, odd)
    history, report = audited(repo)
    assert not history.index.additive
    assert report.violations == []


def test_a_graft_hides_no_commit_from_the_audit(repo: Path) -> None:
    """`info/grafts` makes git's log skip a commit that edits a record: the audit reads the
    commits' own parents, and names the edit."""
    record = "slices/s0/balls/b0/scores/1.yaml"
    before = git("rev-parse", LEDGER_REF, cwd=repo)
    kept = git("rev-parse", f"{LEDGER_REF}:{record}", cwd=repo)
    edited = commit_over(repo, {record: blob(repo, b"edited\n")})
    restored = commit_over(repo, {record: f"100644 blob {kept}"})
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "grafts").write_text(f"{restored} {before}\n")
    history, report = audited(repo)
    assert (edited, record) in [(v.commit, v.path) for v in report.violations
                                if v.check == "ledger-append-only"]
    assert not history.index.additive


def test_a_merge_is_named_once_as_a_merge(repo: Path) -> None:
    """git shows a merge no diff: it is named for what it is, never also as a change git's
    diff hid, and its side commit is diffed against its own parent."""
    tip = git("rev-parse", LEDGER_REF, cwd=repo)
    side_tree = with_entry(repo, git("rev-parse", f"{tip}~3^{{tree}}", cwd=repo),
                           "side/x.yaml", blob(repo, b"kind: x\n"))
    side = git("commit-tree", side_tree, "-p", f"{tip}~3", cwd=repo,
               input=b"side\n\nLeap-Record: side/x.yaml\n")
    merged_tree = with_entry(repo, git("rev-parse", f"{tip}^{{tree}}", cwd=repo),
                             "side/x.yaml", blob(repo, b"kind: x\n"))
    merged = git("commit-tree", merged_tree, "-p", tip, "-p", side, cwd=repo, input=b"merge")
    git("update-ref", LEDGER_REF, merged, tip, cwd=repo)
    _, report = audited(repo)
    said = [(v.check, v.commit, v.message) for v in report.violations]
    assert said == [("ledger-append-only", merged,
                     "a merge commit: the ledger stays linear")], said


@pytest.mark.parametrize("what", ["missing", "a tree"])
def test_a_commit_whose_message_cannot_be_read_stops_the_audit_before_it_judges(
        repo: Path, what: str) -> None:
    """The messages come from `git cat-file --batch` after `git log` listed the commits: an
    answer that is not the commit asked for (an object gone, or no commit) stops the audit,
    never leaves that commit and every later one without a message (a wrong trailer
    finding, each)."""
    from leapgit.audit.ledger import _messages
    from leapgit.errors import LeapError

    tip = git("rev-parse", LEDGER_REF, cwd=repo)
    odd = "0" * 40 if what == "missing" else git("rev-parse", f"{tip}^{{tree}}", cwd=repo)
    first = git("rev-list", "--max-parents=0", LEDGER_REF, cwd=repo)
    with pytest.raises(LeapError) as caught:
        _messages(repo, [first, odd, tip])
    assert odd in str(caught.value) and "nothing was judged" in str(caught.value)
    assert set(_messages(repo, [first, tip])) == {first, tip}
