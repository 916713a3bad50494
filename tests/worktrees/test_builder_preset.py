"""Issue 17 item 2: a builder preset drives a real round (`leap throw --run`) through a
stand-in of its program that checks the exact argv; a preset whose program is missing is
refused before any worktree or round (L3)."""

from __future__ import annotations

import os
from pathlib import Path

from tests.records.test_presets import BUILDERS
from tests.standins import BUILDER_ACT, calls, stand_in
from tests.support import git, leap
from tests.worktrees.conftest import worktree_of

TEMPLATE_LINE = '  # command: my-agent --non-interactive --task "$LEAP_HANDOFF"'


def _use_preset(repo: Path, name: str) -> None:
    path = repo / ".leap" / "config.yaml"
    text = path.read_text()
    assert TEMPLATE_LINE in text
    path.write_text(text.replace(TEMPLATE_LINE, f"  preset: {name}"))


def test_the_aider_preset_drives_a_real_round(diamond: Path, tmp_path: Path) -> None:
    _use_preset(diamond, "aider")
    argv, env = BUILDERS["aider"]
    bin_dir = tmp_path / "bin"
    log = stand_in(bin_dir, "aider", argv, act=BUILDER_ACT, env=env)
    path = f"{bin_dir}{os.pathsep}{os.environ['PATH']}"
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond, env={"PATH": path})
    assert r.code == 0, r
    assert "A: 1 round(s), last pass (claim): stand-in built it" in r.out
    [call] = calls(log)
    assert Path(call["cwd"]).resolve() == worktree_of(diamond, "A").resolve()
    assert call["argv"][-2:] == ["src/a.py", "tests/a.sh"]  # the scope, from $LEAP_SCOPE


def test_a_preset_whose_program_is_missing_throws_nothing(diamond: Path, tmp_path: Path
                                                          ) -> None:
    _use_preset(diamond, "codex")
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    git_dir = os.path.dirname(os.popen("command -v git").read().strip())
    r = leap("throw", "dia", "--ball", "A", "--run", cwd=diamond,
             env={"PATH": f"{empty}{os.pathsep}{git_dir}"})
    assert r.code == 2, r
    assert (".leap/config.yaml: builder.preset: preset 'codex': its program 'codex' is not "
            "on PATH; no ball was thrown [L3]") in r.err
    assert "leap presets" in r.err
    assert len(git("worktree", "list", "--porcelain", cwd=diamond).split("\n\n")) == 1
    listed = leap("presets", cwd=diamond)  # the hint's command leads on
    assert listed.code == 0 and "builder codex" in listed.out
