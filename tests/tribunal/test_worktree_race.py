"""Fresh worktrees made at once in one repository (found by tests/loop/test_real_project.py):
`leap run --jobs 2` (the default) runs two test authors, builders or scorings side by side,
each making a throwaway worktree with `tribunal.worktree.temporary`, i.e. `git worktree add`
in the same repository at the same moment. git does not make that safe: one `worktree add`
reads every admin folder under `.git/worktrees`, including one another add is still writing
(its `commondir` created, still empty), and dies with `fatal: failed to read
.git/worktrees/<name>/commondir: Success`. Giving each tree a name of its own (5b14479) does
not close it, since the reader is not after its own folder: with it, the real-project run at
--jobs 2 still stopped a ball before its red in 1 of 3 runs (2 of 3 before), and 6 threads x
40 makes failed 9 to 14 of 240 (3 runs). Serialising `git worktree` calls with one lock
(tried in a scratch copy) made 0 of 300 fail."""

from __future__ import annotations

import threading
from pathlib import Path

from leapgit.tribunal.worktree import temporary
from tests.support import git, make_repo

THREADS, ROUNDS = 6, 25  # unserialised, about 5 % failed: 0 of 150 by chance is < 0.1 %


def test_worktrees_made_at_once_all_succeed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"a.txt": "a\n"})
    head = git("rev-parse", "HEAD", cwd=repo)
    failed: list[str] = []
    made: list[bool] = []

    def one() -> None:
        try:
            with temporary(repo, head) as tree:
                made.append((tree / "a.txt").is_file())
        except Exception as exc:  # noqa: BLE001 - each failure is the finding, kept whole
            failed.append(str(exc))

    for _ in range(ROUNDS):
        threads = [threading.Thread(target=one) for _ in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert not failed, (len(failed), failed[:3])
    assert len(made) == THREADS * ROUNDS and all(made)
    assert git("worktree", "list", "--porcelain", cwd=repo).count("worktree ") == 1
