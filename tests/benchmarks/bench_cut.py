"""`leap slice cut` of a slice scoping 1,000 files against hashing the same files with git.

    python -m tests.benchmarks.bench_cut [--smoke]
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from leapgit.records import yamlio
from tests.benchmarks.common import arguments, git, median_ms, report, timed

BALLS = 4


def _repo(root: Path, files: int) -> list[str]:
    git("init", "-q", "-b", "main", str(root), cwd=root.parent)
    names = [f"pkg{i % 20}/mod{i}.py" for i in range(files)]
    for i, name in enumerate(names):
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"VALUE = {i}\n" + "# padding\n" * 100)
    git("add", "-A", cwd=root)
    git("commit", "-q", "-m", "files", cwd=root)
    subprocess.run([sys.executable, "-m", "leapgit", "init"], cwd=root, check=True,
                   capture_output=True)
    return names


def _draft(path: Path, slice_id: str, names: list[str]) -> None:
    share = len(names) // BALLS
    balls = [{"id": f"b{b}", "goal": "g", "spec": "s", "proof": "true", "tests": "true",
              "rollback": "restore-scope", "scope": names[b * share:(b + 1) * share]}
             for b in range(BALLS)]
    path.write_bytes(yamlio.dumps({"slice": slice_id, "spine": "integrator", "balls": balls}))


def main() -> None:
    smoke = arguments(__doc__).smoke
    files, runs = (40, 1) if smoke else (1_000, 9)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        count = 2 * runs + 2
        # each slice scopes files of its own: an open slice owns its files (L4, issue 14)
        names = _repo(root, files * count)
        drafts = []
        for i in range(count):
            draft = Path(tmp) / f"d{i}.yaml"
            _draft(draft, f"s{i}", names[i * files:(i + 1) * files])
            drafts.append(draft)
        queue = iter(drafts)
        one_slice = "".join(f"{n}\n" for n in names[:files]).encode()

        def cut() -> None:
            subprocess.run([sys.executable, "-m", "leapgit", "slice", "cut", str(next(queue))],
                           cwd=root, check=True, capture_output=True)

        def hash_all() -> None:
            subprocess.run(["git", "hash-object", "--stdin-paths"], input=one_slice, cwd=root,
                           check=True, capture_output=True)

        def in_process() -> None:
            from leapgit.commands.slice import cut as cut_now

            cut_now(next(queue), start=root)

        leap_ms = median_ms(timed(cut, runs, warmup=1))
        git_ms = median_ms(timed(hash_all, runs, warmup=1))
        inproc_ms = median_ms(timed(in_process, runs, warmup=1))
        report(f"leap slice cut, {BALLS} balls scoping {files} files", leap_ms,
               "git hash-object of the same files", git_ms, "< 3")
        report("  the same cut in-process (no start-up)", inproc_ms,
               "git hash-object of the same files", git_ms, "< 3")


if __name__ == "__main__":
    main()
