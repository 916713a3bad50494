"""A corpus of malformed and hostile slice drafts. Each one gets its documented exit code,
a message naming the rule, no traceback, and leaves the ledger ref where it was."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.slices.drafts import DELETE, base_draft, draft_repo, mutated, with_ball, write
from tests.support import leap_inproc, ref

BAD_INPUT, RULE = 2, 1


def _cycle() -> dict[str, Any]:
    d = base_draft()
    d["balls"][0]["depends_on"] = ["b"]
    return d


def _ball_ids(a: str, b: str) -> dict[str, Any]:
    d = base_draft()
    d["balls"][0]["id"], d["balls"][1]["id"] = a, b
    d["balls"][1]["depends_on"] = []
    return d


def _scope_b(*paths: Any) -> dict[str, Any]:
    return with_ball(1, scope=list(paths))


CASES: list[tuple[str, Any, int, str]] = [
    # file-level guards: bad input
    ("empty", "", BAD_INPUT, "L1"),
    ("top-level list", "- a\n- b\n", BAD_INPUT, "L1"),
    ("scalar", "just text\n", BAD_INPUT, "L1"),
    ("duplicate key", "slice: a\nslice: b\nspine: integrator\nballs: []\n", BAD_INPUT,
     "duplicate key"),
    ("alias bomb", "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a]\n"
     "c: &c [*b, *b, *b, *b, *b, *b, *b]\nslice: *c\n", BAD_INPUT, "aliases"),
    ("not utf-8", b"slice: \xff\xfe\n", BAD_INPUT, "not UTF-8"),
    ("binary", b"slice: a\x00\n", BAD_INPUT, "binary"),
    ("over the size cap", "slice: a\n#" + "x" * (1 << 20) + "\n", BAD_INPUT, "cap"),
    ("yaml syntax", "slice: [a\n", BAD_INPUT, "line 2"),
    ("python tag", "slice: !!python/object/apply:os.system [echo hi]\n", BAD_INPUT, "python"),
    ("unquoted date", "slice: 2026-01-01\nspine: integrator\nballs: []\n", BAD_INPUT, "date"),
    ("deep nesting", "slice: " + "[" * 200 + "]" * 200 + "\n", BAD_INPUT, "nested"),
    # L1: every required field, well typed
    ("missing slice", mutated(slice=None) | {"slice": None}, BAD_INPUT, "L1"),
    ("missing balls key", {"slice": "s1", "spine": "integrator"}, BAD_INPUT, "L1"),
    ("balls not a list", mutated(balls="a, b"), BAD_INPUT, "L1"),
    ("missing goal", with_ball(0, goal=DELETE), BAD_INPUT, "goal"),
    ("missing spec", with_ball(0, spec=DELETE), BAD_INPUT, "spec"),
    ("missing scope", with_ball(0, scope=DELETE), BAD_INPUT, "scope"),
    ("missing proof", with_ball(1, proof=DELETE), BAD_INPUT, "proof"),
    ("missing rollback", with_ball(1, rollback=DELETE), BAD_INPUT, "rollback"),
    ("empty goal", with_ball(0, goal=""), BAD_INPUT, "L1"),
    ("empty scope", with_ball(0, scope=[]), BAD_INPUT, "L1"),
    ("scope entry is a number", with_ball(0, scope=[3]), BAD_INPUT, "L1"),
    ("scope mapping without path", with_ball(0, scope=[{"symbols": ["f"]}]), BAD_INPUT, "L1"),
    ("malformed line range", with_ball(0, scope=[{"path": "src/a.py", "lines": "10-"}]),
     BAD_INPUT, "L1"),
    ("reversed line range", with_ball(0, scope=[{"path": "src/a.py", "lines": "40-10"}]),
     BAD_INPUT, "ends before it starts"),
    ("unknown top-level field", mutated(owner="me"), BAD_INPUT, "unknown field"),
    ("unknown ball field", with_ball(0, prio=1), BAD_INPUT, "unknown field"),
    ("slice id with a slash", mutated(slice="a/b"), BAD_INPUT, "L1"),
    ("ball id dot-dot", with_ball(0, id=".."), BAD_INPUT, "L1"),
    ("depends_on not a list", with_ball(1, depends_on="a"), BAD_INPUT, "L1"),
    ("metric without fields", with_ball(0, metric={"command": "x"}), BAD_INPUT, "L1"),
    ("metric direction", with_ball(0, metric={"command": "x",
                                              "fields": [{"name": "p95", "better": "up"}]}),
     BAD_INPUT, "L1"),
    ("same path twice in a ball", with_ball(0, scope=["src/a.py", "src/a.py"]), BAD_INPUT, "L1"),
    # L2: the file map is reference data
    ("absolute path", _scope_b("/etc/passwd"), RULE, "L2"),
    ("dot-dot traversal", _scope_b("../outside.py"), RULE, "L2"),
    ("traversal in the middle", _scope_b("src/../../x.py"), RULE, "L2"),
    ("directory", _scope_b("src"), RULE, "L2"),
    ("trailing slash", _scope_b("src/b.py/"), RULE, "L2"),
    ("symlink leaf escapes", _scope_b("passwd_link"), RULE, "L2"),
    ("symlink folder escapes", _scope_b("up_link/elsewhere.py"), RULE, "L2"),
    ("symlink to a directory", _scope_b("src_link"), RULE, "L2"),
    ("inside .git", _scope_b(".git/config"), RULE, "L2"),
    ("backslash", _scope_b("src\\b.py"), RULE, "L2"),
    ("drive letter", _scope_b("C:/src/b.py"), RULE, "L2"),
    ("file used as a folder", _scope_b("src/b.py/inner.py"), RULE, "L2"),
    ("control character", _scope_b("src/b\x01.py"), RULE, "control"),
    ("committed symlink loop", _scope_b("la"), RULE, "loop"),
    ("submodule", _scope_b("vendor/sub"), RULE, "submodule"),
    ("inside a submodule", _scope_b("vendor/sub/x.py"), RULE, "submodule"),
    ("committed symlink into .git", _scope_b("g/hooks/pre-commit"), RULE, "into .git"),
    ("untracked symlink leaf escapes", _scope_b("wt_passwd"), RULE, "outside the repository"),
    ("untracked symlink folder escapes", _scope_b("wt_etc/hosts"), RULE,
     "outside the repository"),
    ("untracked symlink into .git", _scope_b("wt_gitcfg"), RULE, "into .git"),
    ("untracked folder", _scope_b("build"), RULE, "directory"),
    ("lines beyond any file", with_ball(0, scope=[{"path": "src/a.py",
                                                  "lines": "1-" + "9" * 5000}]),
     BAD_INPUT, "L1"),
    ("same file twice, spelled differently", with_ball(0, scope=["src/a.py", "./src/a.py"]),
     BAD_INPUT, "already in this ball's scope"),
    ("a ball named integrator", with_ball(0, id="integrator") | {"spine": "integrator"}, RULE,
     "reserved"),
    # L4: the slice
    ("duplicate ball ids", _ball_ids("a", "a"), RULE, "L4"),
    ("unknown dependency", with_ball(1, depends_on=["zz"]), RULE, "L4"),
    ("self dependency", with_ball(1, depends_on=["b"]), RULE, "L4"),
    ("cycle", _cycle(), RULE, "cycle"),
    ("shared file", _scope_b("src/a.py"), RULE, "L4"),
    ("shared file via ./", _scope_b("./src/a.py"), RULE, "L4"),
    ("shared file via a/..", _scope_b("src/x/../a.py"), RULE, "L4"),
    ("shared file via a symlink", _scope_b("alias_a.py"), RULE, "L4"),
    ("shared file via a folder symlink", _scope_b("src_link/a.py"), RULE, "L4"),
    ("spine names no ball", mutated(spine="nobody"), RULE, "L4"),
    ("two spines", mutated(spine=["a", "b"]), RULE, "L4"),
    ("one ball", mutated(balls=[base_draft()["balls"][0]]), RULE, "L4"),
]


@pytest.fixture(scope="module")
def corpus_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = draft_repo(tmp_path_factory.mktemp("corpus") / "repo")
    result = leap_inproc("init", cwd=root)
    assert result.code == 0, result
    return root


def test_corpus_is_big_enough() -> None:
    assert len(CASES) >= 40


@pytest.mark.parametrize(("name", "draft", "code", "needle"), CASES, ids=[c[0] for c in CASES])
def test_hostile_draft_is_refused_cleanly(
    corpus_repo: Path, tmp_path: Path, name: str, draft: Any, code: int, needle: str
) -> None:
    before = ref(corpus_repo, "leap/ledger")
    path = write(tmp_path / "draft.yaml", draft)
    for command in ("check", "cut"):
        result = leap_inproc("slice", command, str(path), cwd=corpus_repo)
        assert result.code == code, (command, result)
        assert needle in result.err, (command, result)
        assert "Traceback" not in result.err + result.out
        assert result.err.startswith("leap: "), result
        assert ref(corpus_repo, "leap/ledger") == before


def test_missing_and_directory_files_are_bad_input(corpus_repo: Path, tmp_path: Path) -> None:
    missing = leap_inproc("slice", "cut", str(tmp_path / "nope.yaml"), cwd=corpus_repo)
    assert (missing.code, "no such file" in missing.err) == (2, True)
    folder = leap_inproc("slice", "cut", str(tmp_path), cwd=corpus_repo)
    assert (folder.code, "directory" in folder.err) == (2, True)


def test_every_problem_of_a_draft_is_reported_at_once(corpus_repo: Path, tmp_path: Path) -> None:
    d = base_draft()
    d["balls"][0]["goal"] = ""                      # L1
    d["balls"][1]["scope"] = ["/abs.py", "src/a.py"]  # L2 and L4
    d["balls"][1]["depends_on"] = ["ghost"]         # L4
    result = leap_inproc("slice", "check", str(write(tmp_path / "d.yaml", d)), cwd=corpus_repo)
    assert result.code == 2  # bad input outranks the rule violations
    lines = result.err.strip().splitlines()
    assert any("balls[0].goal" in line and "[L1]" in line for line in lines), lines
    # L1 problems stop before the tree is read, so fix L1 and look again:
    d["balls"][0]["goal"] = "g"
    result = leap_inproc("slice", "check", str(write(tmp_path / "d.yaml", d)), cwd=corpus_repo)
    lines = result.err.strip().splitlines()
    assert result.code == 1
    assert any("balls[1].scope[0]" in line and "[L2]" in line for line in lines), lines
    assert any("balls[1].scope[1]" in line and "[L4]" in line for line in lines), lines
    assert any("ghost" in line and "[L4]" in line for line in lines), lines


def test_two_write_spines_are_named_as_such(corpus_repo: Path, tmp_path: Path) -> None:
    # L4: the message says what the rule is, not only that the draft broke one
    path = write(tmp_path / "draft.yaml", mutated(spine=["a", "b"]))
    result = leap_inproc("slice", "check", str(path), cwd=corpus_repo)
    assert result.code == RULE, result
    assert f"leap: {path}: spine: names 2 write spines ('a', 'b'); a slice has exactly one " \
        "write spine [L4]; name one ball id, or \"integrator\"" in result.err, result.err
