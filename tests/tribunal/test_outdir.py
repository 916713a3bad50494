"""T6: stamped before swept; foreign folders refused or left alone; every file 0600."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from leapgit.tribunal import outdir
from leapgit.tribunal.errors import OutDirRefused
from tests.tribunal.conftest import Repo, rung
from tests.tribunal.jurors import JurorServer, load
from tests.tribunal.jurors import verdict as verdict_text


def _modes(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): stat.S_IMODE(p.stat().st_mode)
            for p in folder.rglob("*") if p.is_file()}


def test_every_file_written_is_0600(repo: Repo) -> None:
    with JurorServer("openai") as server:
        repo.config([rung("r1", "openai", server.url)])
        result = repo.convene()
    modes = _modes(result.out)
    assert "summary.yaml" in modes and "verdicts/telemetry.yaml" in modes
    assert len(modes) == 1 + 4 + 8  # stamp, envelope.yaml/.txt, routing, summary, 8 verdicts
    # (the sitting lock, T6, goes when the convening ends: ``tribunal.left``)
    assert set(modes.values()) == {0o600}
    assert stat.S_IMODE((result.out / "verdicts").stat().st_mode) == 0o700


def test_unstamped_folder_with_tribunal_files_is_refused_nothing_deleted(tmp_path: Path) -> None:
    (tmp_path / "verdicts").mkdir()
    (tmp_path / "verdicts" / "defect.yaml").write_text("mine")
    (tmp_path / "summary.yaml").write_text("mine too")
    with pytest.raises(OutDirRefused, match=r"summary.yaml, verdicts/defect.yaml; nothing was "
                       r"deleted \[T6\]; pick another --out"):
        outdir.claim(tmp_path)
    assert (tmp_path / "summary.yaml").read_text() == "mine too"
    assert not (tmp_path / outdir.STAMP).exists()


def test_foreign_files_are_used_without_touching_them(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("keep me")
    out = outdir.claim(tmp_path)
    out.write("summary.yaml", b"x")
    again = outdir.claim(tmp_path)  # stamped now: the sweep removes only our shapes
    assert (tmp_path / "notes.txt").read_text() == "keep me"
    assert not (tmp_path / "summary.yaml").exists()
    assert again.path == tmp_path.resolve()


def test_an_existing_file_is_rewritten_0600(tmp_path: Path) -> None:
    target = tmp_path / "x"
    target.write_text("old")
    target.chmod(0o644)
    outdir.write_private(target, b"new")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600 and target.read_bytes() == b"new"


def test_a_record_is_validated_when_it_is_put(repo: Repo, tmp_path: Path) -> None:
    from leapgit.errors import InvalidRecord
    from leapgit.records.tribunal_run import VerdictRecord
    from leapgit.tribunal.recorder import Recorder

    with JurorServer("openai") as server:
        repo.config([rung("r1", "openai", server.url)])
        result = repo.convene()
    record = load(result.out / "verdicts" / "defect.yaml")
    record["seat"]["attempts"][0]["raw_tail"] = "x" * 2001
    rec = Recorder(outdir.claim(tmp_path / "again"), result.info)
    with pytest.raises(InvalidRecord, match=r"raw_tail"):
        rec.put("verdicts/defect.yaml", VerdictRecord.from_dict(record))
    assert not (tmp_path / "again" / "verdicts").exists() and rec.files == {}


def test_a_verdict_that_fails_its_schema_is_a_recorded_seat_failure(
        repo: Repo, monkeypatch: pytest.MonkeyPatch) -> None:
    # a bound that drifts from the schema's (here: a raw tail kept too long) must not abort
    # the convening after the decision: the seat fails, recorded, and the lens holds
    from leapgit.tribunal import verdict

    monkeypatch.setattr(verdict, "RAW_TAIL", 5000)
    from tests.tribunal.jurors import Reply

    def script(call):  # type: ignore[no-untyped-def]
        return Reply(raw=b"x" * 3000, status=502) if call.lens == "defect" else \
            Reply(verdict_text(call.lens or "?"))
    with JurorServer("openai", script) as server:
        repo.config([rung("r1", "openai", server.url)])
        result = repo.convene()
    defect = next(r for r in result.results if r.lens == "defect")
    assert defect.outcome == "hold" and "record failed its schema" in defect.reason
    saved = load(result.out / "verdicts" / "defect.yaml")
    assert saved["outcome"] == "hold" and "record failed its schema" in saved["reason"]
    assert result.decision.outcome == "hold" and result.ledger_commit


def test_a_dangling_tribunal_named_symlink_is_refused_and_nothing_lands_outside(
        tmp_path: Path) -> None:
    out, outside = tmp_path / "out", tmp_path / "outside"
    out.mkdir()
    outside.mkdir()
    (out / "summary.yaml").symlink_to(outside / "summary.yaml")  # dangling
    with pytest.raises(OutDirRefused, match=r"summary.yaml; nothing was deleted"):
        outdir.claim(out)
    assert list(outside.iterdir()) == [] and (out / "summary.yaml").is_symlink()


def test_a_symlinked_verdicts_folder_is_tribunal_shaped_and_never_followed(
        tmp_path: Path) -> None:
    out, foreign = tmp_path / "out", tmp_path / "foreign"
    out.mkdir()
    foreign.mkdir()
    (foreign / "defect.yaml").write_text("not ours")
    (out / "verdicts").symlink_to(foreign)
    with pytest.raises(OutDirRefused, match=r"verdicts; nothing was deleted"):
        outdir.claim(out)
    (out / outdir.STAMP).write_bytes(outdir.STAMP_TEXT)  # ours now: the sweep runs
    claimed = outdir.claim(out)
    claimed.write("verdicts/defect.yaml", b"x")
    assert (foreign / "defect.yaml").read_text() == "not ours"
    assert not (out / "verdicts").is_symlink() and (out / "verdicts" / "defect.yaml").exists()


def test_a_symlinked_stamp_is_refused(tmp_path: Path) -> None:
    out, victim = tmp_path / "out", tmp_path / "victim"
    out.mkdir()
    victim.write_text("keep")
    (out / outdir.STAMP).symlink_to(victim)
    with pytest.raises(OutDirRefused, match=r"\.leap-tribunal is a symbolic link"):
        outdir.claim(out)
    assert victim.read_text() == "keep"


def test_writing_never_follows_a_symlink(tmp_path: Path) -> None:
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (tmp_path / "link").symlink_to(victim)
    with pytest.raises(OutDirRefused, match=r"is a symbolic link: not followed"):
        outdir.write_private(tmp_path / "link", b"new")
    assert victim.read_text() == "keep"
