"""The dependency graph of a slice: unknown dependencies, cycles (L4) and waves (L5)."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping, Sequence


def find_cycle(deps: Mapping[str, Sequence[str]]) -> list[str] | None:
    """One cycle as a path that returns to its start (``a -> b -> a``), or None. Iterative:
    a chain of thousands of balls must not exhaust Python's recursion limit."""
    state: dict[str, int] = {}  # 1 on the path, 2 done
    for root in deps:
        if root in state:
            continue
        path: list[str] = [root]
        todo: list[list[str]] = [[d for d in deps.get(root, ()) if d in deps]]
        state[root] = 1
        while path:
            if not todo[-1]:
                state[path.pop()] = 2
                todo.pop()
                continue
            nxt = todo[-1].pop(0)
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                todo.append([d for d in deps.get(nxt, ()) if d in deps])
    return None


def waves(deps: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """Topological levels: wave 0 has no dependencies, wave n depends only on earlier waves.
    The graph must be acyclic (check ``find_cycle`` first). Linear in balls and edges (a
    chain of thousands of balls is thousands of waves)."""
    waiting = {n: len({d for d in ds if d in deps}) for n, ds in deps.items()}
    children: dict[str, list[str]] = {n: [] for n in deps}
    for node, ds in deps.items():
        for parent in {d for d in ds if d in deps}:
            children[parent].append(node)
    level: dict[str, int] = {}
    ready = [n for n, count in waiting.items() if count == 0]
    current = 0
    while ready:
        nxt: list[str] = []
        for node in ready:
            level[node] = current
            for child in children[node]:
                waiting[child] -= 1
                if waiting[child] == 0:
                    nxt.append(child)
        ready, current = nxt, current + 1
    if len(level) != len(deps):
        raise ValueError("the graph has a cycle")
    out: list[list[str]] = [[] for _ in range(current)]
    for node in deps:  # keep the draft's order inside a wave
        out[level[node]].append(node)
    return out


def descendants(deps: Mapping[str, Sequence[str]], root: str) -> list[str]:
    children: dict[str, list[str]] = {n: [] for n in deps}
    for node, parents in deps.items():
        for parent in parents:
            children.setdefault(parent, []).append(node)
    seen: dict[str, None] = {}  # insertion-ordered: breadth first, as found
    todo = deque(children.get(root, ()))
    while todo:
        node = todo.popleft()
        if node not in seen:
            seen[node] = None
            todo.extend(children.get(node, ()))
    return list(seen)
