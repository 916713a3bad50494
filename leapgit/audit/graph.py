"""The commit graph the audit judges, read with git a few times for the whole audit (one
`git log` over every tip a check needs), never a process or a walk per ball: each commit's
parents, tree and trailers; what a tip reaches; a first-parent line; a candidate's line of
rounds; whether one commit is an ancestor of another."""

from __future__ import annotations

import subprocess
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from leapgit import git

_FORMAT = "%x01%H%x00%P%x00%T%x00%(trailers:only,unfold)"
_MAX_LINE = 10_000  # a longer "line of rounds" is no ball branch


def batch_check(root: Path, names: Iterable[str]) -> dict[str, str | None]:
    """Object id of each name (``sha^{tree}``, ``sha:path``), None when missing: one process."""
    todo = list(dict.fromkeys(names))
    if not todo:
        return {}
    proc = subprocess.run(["git", "cat-file", "--batch-check=%(objectname)"], cwd=root,
                          input="\n".join(todo).encode() + b"\n", capture_output=True,
                          env=git.scrubbed_env())
    lines = proc.stdout.decode().splitlines()
    return {name: (line if not line.endswith(" missing") and " " not in line else None)
            for name, line in zip(todo, lines, strict=False)}


@dataclass(frozen=True)
class Node:
    parents: tuple[str, ...]
    tree: str
    trailers: dict[str, str]  # key -> its last value

    @property
    def ball(self) -> str | None:
        """``slice/ball`` of an integration merge's trailers, or None."""
        if "Leap-Ball" not in self.trailers:
            return None
        return f"{self.trailers.get('Leap-Slice')}/{self.trailers['Leap-Ball']}"


class Graph:
    """The commits reachable from the tips loaded so far (``load``)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.nodes: dict[str, Node] = {}
        self._tips: list[str] = []
        self._reach: dict[str, frozenset[str]] = {}
        self._gens: dict[str, int] = {}  # generation: 1 + the highest of its parents'
        self._shallow = False  # a parent is missing: no generations

    def load(self, tips: Iterable[str]) -> None:
        """Read every commit the new ``tips`` reach that is not read yet: one `git log`
        (tips that are no commits here are left out)."""
        new = [t for t in dict.fromkeys(tips) if t and t not in self.nodes]
        if not new:
            return
        found = batch_check(self.root, (f"{t}^{{commit}}" for t in new))
        new = [t for t in new if found.get(f"{t}^{{commit}}") == t]
        if not new:
            return
        revs = new + [f"^{t}" for t in self._tips]
        proc = git.run(["-c", "log.showSignature=false", "log", "--stdin", "--no-color",
                        f"--format={_FORMAT}"], self.root,
                       input="\n".join(revs).encode() + b"\n")
        for chunk in proc.stdout.decode("utf-8", "replace").split("\x01")[1:]:
            sha, parents, tree, trailers = (chunk.split("\x00") + ["", "", ""])[:4]
            pairs = dict(line.split(": ", 1) for line in trailers.splitlines() if ": " in line)
            self.nodes[sha] = Node(tuple(parents.split()), tree, pairs)
        self._tips += new
        self._reach.clear()
        self._gens.clear()
        self._shallow = False

    def node(self, sha: str) -> Node | None:
        return self.nodes.get(sha)

    def reachable(self, tip: str | None) -> frozenset[str]:
        """Every commit ``tip`` reaches (itself included); empty when it is not loaded."""
        if tip is None or tip not in self.nodes:
            return frozenset()
        if tip not in self._reach:
            seen: set[str] = set()
            todo = [tip]
            while todo:
                sha = todo.pop()
                if sha in seen or sha not in self.nodes:
                    continue
                seen.add(sha)
                todo.extend(self.nodes[sha].parents)
            self._reach[tip] = frozenset(seen)
        return self._reach[tip]

    def first_parents(self, tip: str) -> list[str]:
        """The first-parent line from ``tip``, newest first."""
        out: list[str] = []
        sha: str | None = tip
        while sha is not None and sha in self.nodes:
            out.append(sha)
            parents = self.nodes[sha].parents
            sha = parents[0] if parents else None
        return out

    def line_since(self, head: str, base: str) -> list[str] | None:
        """The commits from ``head`` back to ``base`` (excluded), newest first; None when the
        history is no line leading back to ``base`` (a merge, a root, a missing commit)."""
        out: list[str] = []
        sha = head
        while sha != base and len(out) < _MAX_LINE:
            found = self.nodes.get(sha)
            if found is None or len(found.parents) != 1:
                return None
            out.append(sha)
            sha = found.parents[0]
        return out if sha == base else None

    def is_ancestor(self, older: str, newer: str) -> bool | None:
        """Whether ``newer`` reaches ``older``; None when the graph cannot say (a commit
        not read, a parent missing). A walk back from ``newer`` stops at the generation of
        ``older``: a candidate's line costs its length, not the history under it."""
        gens = self._generations()
        if gens is None or older not in gens or newer not in gens:
            return None
        if older in self._reach.get(newer, ()):
            return True
        if newer in self._reach:
            return False
        floor, seen, todo = gens[older], set(), [newer]
        while todo:
            sha = todo.pop()
            if sha == older:
                return True
            if sha in seen or gens[sha] <= floor:
                continue
            seen.add(sha)
            if len(seen) > _MAX_LINE:
                return older in self.reachable(newer)
            todo.extend(self.nodes[sha].parents)
        return False

    def _generations(self) -> dict[str, int] | None:
        """Every commit's generation, computed once per load; None when a parent is
        missing (a shallow clone): generations would lie."""
        if self._gens or self._shallow or not self.nodes:
            return self._gens or None
        gens: dict[str, int] = {}
        for start in self.nodes:
            stack = [start]
            while stack:
                sha = stack[-1]
                if sha in gens:
                    stack.pop()
                    continue
                parents = self.nodes[sha].parents
                if any(p not in self.nodes for p in parents):
                    self._shallow = True
                    return None
                todo = [p for p in parents if p not in gens]
                if todo:
                    stack.extend(todo)
                    continue
                gens[sha] = 1 + max((gens[p] for p in parents), default=0)
                stack.pop()
        self._gens.update(gens)
        return self._gens
