from __future__ import annotations

from leapgit.slices.graph import descendants, find_cycle, waves


def test_cycles_are_named_from_where_they_close() -> None:
    assert find_cycle({"a": ["b"], "b": ["c"], "c": ["a"]}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": [], "b": ["a"], "c": ["b", "a"]}) is None
    assert find_cycle({"x": ["y"], "y": [], "a": ["b"], "b": ["a"]}) == ["a", "b", "a"]


def test_a_chain_of_five_thousand_balls_listed_dependents_first() -> None:
    # found in review: the recursive search hit Python's recursion limit (exit 70)
    n = 5000
    deps = {f"b{i}": [f"b{i + 1}"] if i + 1 < n else [] for i in range(n)}
    assert find_cycle(deps) is None
    assert len(waves(deps)) == n
    deps[f"b{n - 1}"] = ["b0"]
    cycle = find_cycle(deps)
    assert cycle is not None and cycle[0] == cycle[-1] and len(cycle) == n + 1


def test_waves_and_descendants_of_a_diamond() -> None:
    deps = {"A": [], "B": ["A"], "C": ["A"], "D": ["B", "C"]}
    assert waves(deps) == [["A"], ["B", "C"], ["D"]]
    assert descendants(deps, "B") == ["D"]
    assert descendants(deps, "A") == ["B", "C", "D"]
