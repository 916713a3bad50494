"""Reopen on byte change (L8): any byte change to a passed or merged candidate (a commit on
the ball branch after its pass, or a spine commit outside an integration that changes files
of a merged ball) reopens that ball: a reopen record voids its pass, so the ball is no
longer passed anywhere (readiness, merge, pre-receive, audit) and the slice must be
re-scored. Reopen records are written by the post-commit hook, `leap score` and
`leap merge`; `leap status` and `leap audit` report a spine-side reopen not yet recorded;
the server's pre-receive refuses the spine commit itself."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple

from leapgit import git
from leapgit.errors import Hold
from leapgit.ledger import history, layout
from leapgit.ledger.store import Ledger, LedgerView
from leapgit.records import trailers as tr
from leapgit.records import yamlio
from leapgit.records.types import Config, SliceRecord
from leapgit.timeutil import now_iso

if TYPE_CHECKING:  # imported where built: `leap status` reads no scoring record of an
    # unmerged slice, and records.scoring's frozen dataclasses cost it ~6 ms to define
    from leapgit.records.scoring import ReopenRecord, ScoreRecord

Where = Literal["ball-branch", "spine"]


def write_reopen(ledger: Ledger, rec: ScoreRecord, found: str | None, where: Where,
                 commit: str | None, reason: str, paths: tuple[str, ...] = ()
                 ) -> ReopenRecord:
    from leapgit.records.scoring import ReopenRecord

    view = ledger.require()
    folder = f"{layout.ball_dir(rec.slice, rec.ball)}/reopens"
    number = history.next_number(view, folder)
    reopen = ReopenRecord(rec.slice, rec.ball, number, rec.score, rec.candidate, found, where,
                          commit, reason, now_iso(), paths)
    trailers = [(tr.SLICE, rec.slice), (tr.BALL, rec.ball),
                (tr.CANDIDATE, rec.candidate), (tr.OUTCOME, "reopen")]
    ledger.append({layout.reopen_path(rec.slice, rec.ball, number):
                   yamlio.dumps(reopen.to_dict())},
                  f"reopen {rec.slice}/{rec.ball}: {reason}", trailers)
    return reopen


def reopen_if_moved(ledger: Ledger, slice_id: str, ball_id: str, tree: str,
                    commit: str | None) -> ReopenRecord | None:
    """The ball branch now holds ``tree``: reopen its standing pass when that is another."""
    from leapgit.rules.passes import standing_pass

    rec = standing_pass(ledger.require(), slice_id, ball_id)
    if rec is None or rec.candidate == tree:
        return None
    return write_reopen(ledger, rec, tree, "ball-branch", commit,
                        f"the ball branch moved to tree {tree[:12]} after the pass of "
                        f"{rec.candidate[:12]} (a byte change)")


class Watched(NamedTuple):
    """A merged ball whose standing pass landed: its bytes on the spine since ``since`` (the
    slice's latest merge tip) must stay the candidate's."""

    passed: ScoreRecord
    since: str

    @property
    def files(self) -> set[str]:
        return {t.path for t in self.passed.touched}


class SpineHit(NamedTuple):
    """A spine commit outside an integration that changes files of a merged ball (L8): a
    reopen, whether or not the ledger records it yet."""

    passed: ScoreRecord
    commit: str
    paths: tuple[str, ...]

    def reason(self) -> str:
        return (f"spine commit {self.commit[:12]} changes {', '.join(self.paths)} of the "
                "merged ball outside an integration")


def watched(view: LedgerView, rec: SliceRecord) -> list[Watched]:
    """The balls of ``rec`` whose standing pass is on the spine (none when unmerged)."""
    records = history.merge_records(view, rec.slice)
    if not records:
        return []
    from leapgit.rules.passes import standing_pass

    landed = history.merged_scores(records)
    out = []
    for ball in rec.balls:
        passed = standing_pass(view, rec.slice, ball)
        if passed is not None and passed.score in landed.get(ball, ()):
            out.append(Watched(passed, records[-1].tip))
    return out


def spine_hits(root: Path, spine: str, balls: list[Watched]) -> list[SpineHit]:
    """For each watched ball, the first spine commit after its slice's latest merge that
    changes its files outside an integration. Cheap: one `git log` of the spine's
    first-parent line since the oldest of those merges (no diffs), then one diff of only
    the commits that are no integration merge (none on a healthy spine)."""
    if not balls:
        return []
    with git.as_is():  # the commits as they are: no graft of this clone's reparents them
        line = _line_since(root, spine, {w.since for w in balls})
        strays = [sha for sha, integration in line if not integration]
        if not strays:
            return []
        changed = _changed(root, strays)
    at = {sha: i for i, (sha, _) in enumerate(line)}  # newest first
    out = []
    for w in balls:
        if w.since not in at:
            continue  # the merge is off the spine's line: `leap audit` names that
        files = w.files
        later = reversed(line[:at[w.since]])  # oldest first
        hit = next(((sha, changed.get(sha, set()) & files) for sha, integration in later
                    if not integration and changed.get(sha, set()) & files), None)
        if hit is not None:
            out.append(SpineHit(w.passed, hit[0], tuple(sorted(hit[1]))))
    return out


def _line_since(root: Path, spine: str, tips: set[str]) -> list[tuple[str, bool]]:
    """(commit, is an integration merge) on the spine's first-parent line after the oldest
    of ``tips``, newest first, ending with that oldest tip (never judged itself)."""
    # newest first (`rev-list --no-walk` orders by date): the octopus then steps back from
    # tip to tip, not across the whole line for each (1,000 slices' tips: 0.14 s, not 1.1 s)
    dated = git.run(["rev-list", "--no-walk", "--stdin"], root, check=False,
                    input="".join(f"{t}\n" for t in sorted(tips)).encode())
    ordered = dated.stdout.decode().split() if dated.returncode == 0 else sorted(tips)
    oldest = _octopus_base(root, ordered)
    fmt = f"%x01%H %P%x00%(trailers:key={tr.SLICE},valueonly)"
    span = f"{oldest}..refs/heads/{spine}" if oldest else f"refs/heads/{spine}"
    out = git.run(["log", "--first-parent", f"--format={fmt}", span], root,
                  check=False).stdout.decode("utf-8", "replace")
    line = []
    for chunk in out.split("\x01")[1:]:
        ids, _, trailer = chunk.partition("\x00")
        shas = ids.split()
        line.append((shas[0], len(shas) == 3 and bool(trailer.strip())))
    if oldest:
        line.append((oldest, True))  # the boundary itself: what the oldest tip is after
    return line


# tips a `git merge-base` call takes: 4,000 ids are 164 KB of arguments, far under the
# system's limit (ARG_MAX, 2 MiB on Linux), which about 50,000 tips would overflow
_OCTOPUS_ARGS = 4000


def _octopus_base(root: Path, tips: list[str]) -> str:
    """git's octopus merge base of ``tips`` ("" when there is none), the tips given in
    slices: each base found so far is folded with the next slice, and every base found is
    carried on, as git's --octopus folds tips one by one and keeps every base. The answer
    is one of the bases a single call finds: the one, on the spine's line of merges (a
    criss-cross history has several, in an order of git's own)."""
    bases: list[str] = []
    for at in range(0, len(tips), _OCTOPUS_ARGS):
        chunk, found = tips[at:at + _OCTOPUS_ARGS], []
        for base in bases or [""]:
            proc = git.run(["merge-base", "--octopus", "--all", *([base] if base else []),
                            *chunk], root, check=False)
            found += [s for s in proc.stdout.decode().split() if s not in found] \
                if proc.returncode == 0 else []
        if len(found) > 1:  # none that is an ancestor of another, as git reduces them
            found = git.run(["merge-base", "--independent", *found], root,
                            check=False).stdout.decode().split() or found
        bases = found
        if not bases:
            return ""
    return bases[0] if bases else ""


def all_here(root: Path, balls: list[Watched]) -> bool:
    """Is every watched merge in this clone? One that is not (the ledger was synced before
    the spine was fetched) is no spine hit today and may be one after a `git fetch` that
    moves no branch: an answer computed without it is not kept (``status_cache``)."""
    if not balls:
        return True
    return git.run(["rev-list", "--no-walk", "--stdin"], root, check=False,
                   input="".join(f"{w.since}\n" for w in balls).encode()).returncode == 0


def _changed(root: Path, commits: list[str]) -> dict[str, set[str]]:
    """The paths each commit changes against its first parent, one `git log`: a rename is
    a deletion and an addition, whatever this clone's ``diff.renames`` (a ball's file moved
    away is changed), and every path is read as git stores it (``-z``: never quoted)."""
    out = git.run(["log", "--no-walk=unsorted", "--stdin", "--diff-merges=first-parent",
                   "--no-renames", "--name-only", "-z", "--format=%x00%H"], root,
                  input="\n".join(commits).encode() + b"\n", check=False).stdout
    # each commit: NUL, its id, NUL, then a line break and its paths, each NUL-ended; a
    # path is never empty, so an empty field is where the next commit's id comes
    found: dict[str, set[str]] = {}
    paths: set[str] = set()
    fields = iter(out.decode("utf-8", "surrogateescape").split("\0"))
    for field in fields:
        if not field:
            sha = next(fields, "")
            if not sha:
                break
            paths = found[sha] = set()
        elif paths or not field.startswith("\n"):
            paths.add(field)
        else:
            paths.add(field[1:])  # the first path, after the line break
    return found


def pending(view: LedgerView, root: Path, config: Config, rec: SliceRecord
            ) -> list[SpineHit]:
    """The spine-side reopens of ``rec`` that the ledger does not record yet (read-only:
    `leap status` and `leap audit` report them; `leap merge` writes them, ``scan``)."""
    return spine_hits(root, config.spine, watched(view, rec))


def scan(ledger: Ledger, root: Path, config: Config, rec: SliceRecord) -> list[ReopenRecord]:
    """Reopen every ball of the slice whose passed bytes changed: its branch moved off the
    passed candidate, or a spine commit outside an integration changed its merged files;
    return the new reopens."""
    from leapgit.rules.passes import standing_pass

    out: list[ReopenRecord] = []
    for ball in rec.balls:
        if standing_pass(ledger.require(), rec.slice, ball) is None:
            continue
        tip = git.rev_parse(f"refs/heads/{config.ball_branch(rec.slice, ball)}", root)
        tree = git.out(["rev-parse", f"{tip}^{{tree}}"], root) if tip else None
        if tree is not None:
            found = reopen_if_moved(ledger, rec.slice, ball, tree, tip)
            if found:
                out.append(found)
    hits = pending(ledger.require(), root, config, rec)
    _published(root, config.spine, hits)
    for hit in hits:
        out.append(write_reopen(ledger, hit.passed, None, "spine", hit.commit, hit.reason(),
                                hit.paths))
    return out


def _published(root: Path, spine: str, hits: list[SpineHit]) -> None:
    """L8 (issue 18 F6): the server takes a spine reopen only for a byte change on the
    spine it stores. A spine commit only this clone holds changes no merged candidate
    there: never recorded, and nothing lands over it (``Hold``) until it is dropped. The
    spine's remote as last fetched or pushed stands in for the server; a spine with no
    remote is its own authority."""
    from leapgit.scoring.spine import spine_remote

    remote = spine_remote(root, spine)
    tracked = git.rev_parse(f"refs/remotes/{remote}/{spine}", root) if remote else None
    local = [h for h in hits if remote is not None and
             (tracked is None or not git.is_ancestor(root, h.commit, tracked))]
    if local:
        hit = local[0]
        raise Hold(f"spine commit {hit.commit[:12]}, which only this clone holds, changes "
                   f"{', '.join(hit.paths)} of merged ball {hit.passed.slice}/"
                   f"{hit.passed.ball} outside an integration: the spine on {remote} holds "
                   "the merged candidate, and the server refuses that commit", rule="L8",
                   hint=f"drop it (`git reset --keep {remote}/{spine}` on {spine}), then "
                   "merge again")
