"""Blind review (issue 17 item 2, lens correctness): `leap tribunal rungs` never calls a preset
rung live when its program is not on PATH (a convening refuses before any seat for it): the
rung is shown skipped with why, and a lens it alone served has no live rung (exit 3)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.support import leap
from tests.tribunal.conftest import Repo, rung


def _preset_rung(rung_id: str, **extra: object) -> dict[str, object]:
    out = rung(rung_id, "command", command="unused", **extra)
    del out["command"]
    return out


def test_a_preset_rung_whose_program_is_missing_is_not_live(repo: Repo, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    git_dir = os.path.dirname(os.popen("command -v git").read().strip())
    repo.config([_preset_rung("local", preset="ollama", model="qwen3:8b")])
    env = {"PATH": f"{empty}{os.pathsep}{git_dir}"}
    text = leap("tribunal", "rungs", cwd=repo.root, env=env)
    data = json.loads(leap("tribunal", "rungs", "--json", cwd=repo.root, env=env).out)
    assert text.code == 3, text
    assert ("      skipped now: preset 'ollama': its program 'ollama' is not on PATH; a "
            "convening refuses before any seat (T2)") in text.out
    assert "every lens has a live rung" not in text.out
    assert data["dead"] == [x["lens"] for x in data["lenses"]]
    assert data["lenses"][0]["skipped"][0]["kind"] == "program"
