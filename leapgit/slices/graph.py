"""The dependency graph of a slice: unknown dependencies, cycles (L4) and waves (L5)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def find_cycle(deps: Mapping[str, Sequence[str]]) -> list[str] | None:
    """One cycle as a path that returns to its start (``a -> b -> a``), or None."""
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in deps.get(node, ()):
            if nxt not in deps:
                continue
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in deps:
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def waves(deps: Mapping[str, Sequence[str]]) -> list[list[str]]:
    """Topological levels: wave 0 has no dependencies, wave n depends only on earlier waves.
    The graph must be acyclic (check ``find_cycle`` first)."""
    level: dict[str, int] = {}
    pending = {n: {d for d in ds if d in deps} for n, ds in deps.items()}
    current = 0
    while pending:
        ready = [n for n, ds in pending.items() if not ds]
        if not ready:
            raise ValueError("the graph has a cycle")
        for node in ready:
            level[node] = current
            del pending[node]
        for ds in pending.values():
            ds.difference_update(ready)
        current += 1
    out: list[list[str]] = [[] for _ in range(current)]
    for node in deps:  # keep the draft's order inside a wave
        out[level[node]].append(node)
    return out


def descendants(deps: Mapping[str, Sequence[str]], root: str) -> list[str]:
    children: dict[str, list[str]] = {n: [] for n in deps}
    for node, parents in deps.items():
        for parent in parents:
            children.setdefault(parent, []).append(node)
    seen: list[str] = []
    todo = list(children.get(root, ()))
    while todo:
        node = todo.pop(0)
        if node not in seen:
            seen.append(node)
            todo.extend(children.get(node, ()))
    return seen
