"""The record cache (``ledger/recordcache.py``): records parsed and validated once, kept by
blob id; a damaged entry costs a parse, never a wrong answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from leapgit.errors import InvalidRecord
from leapgit.ledger import layout
from leapgit.ledger.store import Ledger
from leapgit.records import yamlio
from leapgit.records.cache import RecordCache, blob_id
from leapgit.records.types import ThrowRecord
from tests.support import git, leap, make_repo

BASE = "0" * 40


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = make_repo(tmp_path / "repo", {"f.txt": "x\n"})
    assert leap("init", cwd=root).code == 0
    rec = ThrowRecord("s", "b", 1, 1, BASE, "leap/ball/s/b", "2024-01-01T00:00:00Z")
    with Ledger(root / ".git") as ledger:
        ledger.append({layout.throw_path("s", "b", 1): yamlio.dumps(rec.to_dict())}, "throw")
    return root


def test_blob_id_is_gits(tmp_path: Path) -> None:
    (tmp_path / "f").write_bytes(b"kind: x\n")
    assert blob_id(b"kind: x\n") == git("hash-object", str(tmp_path / "f"), cwd=tmp_path)


def test_a_cached_read_equals_a_validated_read_and_is_kept_by_blob(repo: Path) -> None:
    path = layout.throw_path("s", "b", 1)
    with Ledger(repo / ".git") as plain:
        expected = plain.view().record(path, ThrowRecord)
    assert expected is not None and expected.branch == "leap/ball/s/b"
    with Ledger(repo / ".git", cache_records=True) as cached:
        view = cached.view()
        assert view.record(path, ThrowRecord) == expected
        blob = view.blob_id(path)
        assert blob is not None and cached.records is not None
        assert cached.records.get(blob) == expected.to_dict()
        assert view.record(path, ThrowRecord) == expected  # now from the cache


def test_a_damaged_entry_is_parsed_again(repo: Path) -> None:
    path = layout.throw_path("s", "b", 1)
    with Ledger(repo / ".git", cache_records=True) as ledger:
        view = ledger.view()
        expected = view.record(path, ThrowRecord)
        blob = view.blob_id(path)
        assert expected is not None and blob is not None and ledger.records is not None
        Path(ledger.records._path(blob)).write_text('["not", "a record"')
        assert ledger.records.get(blob) is None
        assert view.record(path, ThrowRecord) == expected
        assert ledger.records.get(blob) == expected.to_dict()  # and written again


def test_invalid_bytes_are_refused_every_time_and_never_cached(repo: Path) -> None:
    bad = b"kind: throw\nformat: 1\n"  # a throw record missing its fields
    with Ledger(repo / ".git", cache_records=True) as ledger:
        ledger.append({"slices/s/bad.yaml": bad}, "a bad record")
        view = ledger.view()
        for _ in range(2):
            with pytest.raises(InvalidRecord):
                view.record("slices/s/bad.yaml", ThrowRecord)
        assert ledger.records is not None and ledger.records.get(blob_id(bad)) is None


def test_a_read_only_git_dir_still_reads(repo: Path, tmp_path: Path) -> None:
    cache = RecordCache(tmp_path / "no-such-dir" / "x")
    (tmp_path / "no-such-dir").write_text("a file where the folder would go")
    cache.put("ab" * 20, {"kind": "x"})  # cannot write: says nothing, raises nothing
    assert cache.get("ab" * 20) is None


def test_a_changed_schema_file_gets_a_cache_folder_of_its_own(tmp_path: Path) -> None:
    from leapgit.records.cache import schemas_stamp

    (tmp_path / "records").mkdir()
    schema_file = tmp_path / "records" / "receipt.schema.json"
    schema_file.write_text('{"type": "object"}')
    before = schemas_stamp(str(tmp_path))
    assert schemas_stamp(str(tmp_path)) == before
    schema_file.write_text('{"type": "object", "required": ["kind"]}')
    assert schemas_stamp(str(tmp_path)) != before
    assert schemas_stamp() in RecordCache(tmp_path).root.name  # the real schemas key it


def test_a_record_read_again_in_one_process_is_parsed_once_and_each_reader_owns_its_copy(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The process's memo (``ledger.view._parsed``): `leap run` reads the same records at
    every turn, at ever newer ledger commits; a YAML parse is ~3 ms, a copy far less."""
    from leapgit.ledger import view as view_module

    monkeypatch.setattr(view_module, "_parsed", {})
    monkeypatch.setattr(yamlio, "_shared", {})
    parsed: list[str] = []
    real = yamlio.loads

    def counting(data: bytes, source: str) -> object:
        parsed.append(source)
        return real(data, source)

    monkeypatch.setattr(yamlio, "loads", counting)
    path = layout.throw_path("s", "b", 1)
    with Ledger(repo / ".git") as ledger:
        first = ledger.view()._validated(path)
        assert first is not None
        first["branch"] = "changed by its reader"
        ledger.append({"slices/s/other.yaml": yamlio.dumps(ThrowRecord(
            "s", "c", 1, 1, BASE, "leap/ball/s/c", "2024-01-01T00:00:00Z").to_dict())}, "more")
        again = ledger.view().record(path, ThrowRecord)  # a newer commit, the same blob
    assert again is not None and again.branch == "leap/ball/s/b"
    assert len([p for p in parsed if p.endswith(path)]) == 1, parsed


def test_shared_parsing_gives_each_caller_its_own_copy_and_refuses_bad_bytes_each_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``yamlio.loads_shared``: what the server's ledger rule, the signature rules, the audit
    and the views parse ledger records with, once per process for the same bytes."""
    monkeypatch.setattr(yamlio, "_shared", {})
    data = b"kind: throw\nballs: [a, b]\nnested: {x: 1}\n"
    first = yamlio.loads_shared(data, "one.yaml")
    first["balls"].append("changed")
    first["nested"]["x"] = 2
    again = yamlio.loads_shared(data, "two.yaml")
    assert again == {"kind": "throw", "balls": ["a", "b"], "nested": {"x": 1}}
    assert len(yamlio._shared) == 1
    for _ in range(2):  # never remembered: refused again, naming the file it came from
        with pytest.raises(InvalidRecord) as info:
            yamlio.loads_shared(b"a: *alias\n", "bad.yaml")
        assert "bad.yaml" in " ".join(info.value.lines())
    with pytest.raises(InvalidRecord):
        yamlio.loads_shared(b"a: " + b"x" * yamlio.MAX_BYTES + b"\n", "huge.yaml")


def test_a_changed_check_gets_a_cache_folder_of_its_own(tmp_path: Path) -> None:
    """Blind review (f1347c1): an entry skips the checks a schema cannot say (a config's
    builder and identity checks, its rungs), which are code: a development checkout that
    changes one read entries its older code had let through. The code is stamped too."""
    from leapgit.records.cache import schemas_stamp

    (tmp_path / "schemas").mkdir()
    (tmp_path / "schemas" / "config.schema.json").write_text('{"type": "object"}')
    code = tmp_path / "records"
    (code / "__pycache__").mkdir(parents=True)
    (code / "config.py").write_text("LOOSE = True\n")
    before = schemas_stamp(str(tmp_path / "schemas"), str(code))
    (code / "__pycache__" / "config.cpython-311.pyc").write_bytes(b"compiled")
    assert schemas_stamp(str(tmp_path / "schemas"), str(code)) == before  # not code
    (code / "config.py").write_text("LOOSE = False\n")
    changed = schemas_stamp(str(tmp_path / "schemas"), str(code))
    assert changed != before
    # an editor's lock file, a dangling link beside a module (review e6e0b48: every
    # command was an internal error): no module, no stamp of its own
    (code / ".#config.py").symlink_to("me@host.1234:1700000000")
    assert schemas_stamp(str(tmp_path / "schemas"), str(code)) == changed
    assert schemas_stamp(str(tmp_path / "schemas")) != schemas_stamp(None, str(code))


def test_a_config_entry_damaged_from_outside_costs_a_parse_not_the_command(
        tmp_path: Path) -> None:
    """Blind review (f1347c1): every command reads the config through the cache, and an
    entry edited by hand to a mapping that is no config (`{}`) made each of them an
    internal error (KeyError 'spine'), `leap init` too."""
    repo = make_repo(tmp_path / "repo", {"f.txt": "x\n"})
    assert leap("init", cwd=repo).code == 0
    assert leap("log", cwd=repo).code == 0  # the config's entry is written
    [entry] = (repo / ".git" / "leap-cache").glob("config-*/*/*.json")
    entry.write_text("{}")
    for args in (["status"], ["log"], ["init"]):
        r = leap(*args, cwd=repo)
        assert r.code == 0 and "internal error" not in r.err, (args, r)


def test_what_other_versions_left_untouched_for_a_week_goes_when_a_new_folder_is_made(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An upgrade, or an edit of a development checkout's records code, starts a folder of
    its own: what the others left and nothing wrote for a week is removed then (no pile
    of folders, one a stamp); what is newer, and the cache's own folder, stay."""
    import os
    import time

    from leapgit.records import cache

    git_dir = tmp_path / "git"
    kept_dir = git_dir / "leap-cache"
    week_old = time.time() - 8 * 24 * 3600
    for name in ("records-0.0.9-1-aaaaaaaaaaaa", "config-0.0.9-1-aaaaaaaaaaaa",
                 "presence-0.0.9-1.json", "records-0.1.0-1-bbbbbbbbbbbb"):
        path = kept_dir / name
        if name.endswith(".json"):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("{}")
        else:
            (path / "ab").mkdir(parents=True)
            (path / "ab" / "cd.json").write_text("{}")
        os.utime(path, (week_old, week_old))
    recent = kept_dir / "records-0.1.0-1-cccccccccccc"
    (recent / "ab").mkdir(parents=True)
    monkeypatch.setattr(cache, "_stamp", "dddddddddddd")
    store = RecordCache(git_dir)
    store.put("ab" + "1" * 38, {"a": 1})
    assert sorted(p.name for p in kept_dir.iterdir()) == [
        "records-0.1.0-1-cccccccccccc", store.root.name]
    assert store.get("ab" + "1" * 38) == {"a": 1}

    # once made, its folder sweeps no more: a put is one write
    (kept_dir / "status-0.0.9-1").mkdir()
    os.utime(kept_dir / "status-0.0.9-1", (week_old, week_old))
    RecordCache(git_dir).put("ef" + "2" * 38, {"b": 2})
    assert (kept_dir / "status-0.0.9-1").is_dir()


def test_the_sweep_never_leaves_the_git_dir_nor_touches_what_it_did_not_write(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Blind review (security): a `.git/leap-cache` that is a link to a folder of the
    user's (a `.git` from an archive can plant one) had that folder's old files and
    subfolders removed; and an old entry not of leapgit's naming is not leapgit's."""
    import os
    import time

    from leapgit.records import cache

    week_old = time.time() - 8 * 24 * 3600
    victim = tmp_path / "victim"
    (victim / "photos").mkdir(parents=True)
    (victim / "photos" / "a.jpg").write_text("a photo\n")
    (victim / "notes.txt").write_text("notes\n")
    for path in (victim / "photos", victim / "notes.txt"):
        os.utime(path, (week_old, week_old))
    linked = tmp_path / "linked"
    linked.mkdir()
    (linked / "leap-cache").symlink_to(victim)
    monkeypatch.setattr(cache, "_stamp", "eeeeeeeeeeee")
    RecordCache(linked).put("ab" + "1" * 38, {"a": 1})
    assert (victim / "photos" / "a.jpg").exists() and (victim / "notes.txt").exists()

    plain = tmp_path / "plain" / "leap-cache"
    (plain / "mine-but-not-leapgits").mkdir(parents=True)
    (plain / "README").write_text("a note someone left\n")
    for path in (plain / "mine-but-not-leapgits", plain / "README"):
        os.utime(path, (week_old, week_old))
    monkeypatch.setattr(cache, "_stamp", "ffffffffffff")
    RecordCache(plain.parent).put("ab" + "1" * 38, {"a": 1})
    assert (plain / "mine-but-not-leapgits").is_dir() and (plain / "README").exists()


def test_a_cache_entry_nested_past_the_parser_s_depth_costs_a_parse(
        tmp_path: Path) -> None:
    """Blind review (boundary): JSON nested deeper than the parser recurses raised
    RecursionError, no ValueError: every command that read it was an internal error."""
    store = RecordCache(tmp_path)
    blob = "ab" + "1" * 38
    store.put(blob, {"a": 1})
    Path(store._path(blob)).write_text("[" * 200_000)
    assert store.get(blob) is None


def test_a_config_entry_planted_with_a_ref_git_refuses_is_named_and_its_hint_leads_on(
        tmp_path: Path) -> None:
    """A cached config is not checked again (the checks passed before it was kept); an entry
    planted by hand with a ledger ref git refuses made `leap init` an internal error (exit
    70, dulwich's RefFormatError), while `leap status` sent the user to `leap init`. The
    ledger names the kept copy (not .leap/config.yaml, which is right), the field and the
    rule, and the folder to delete by its whole path: in a linked worktree (a ball's),
    `.git` is a file and `.git/leap-cache` deleted nothing (a telemetry review). Run as
    said from there, the next command goes through."""
    import re
    import shutil

    repo = make_repo(tmp_path / "repo", {"f.txt": "x\n"})
    assert leap("init", cwd=repo).code == 0
    [entry] = (repo / ".git" / "leap-cache").glob("config-*/*/*.json")
    entry.write_text(entry.read_text().replace("refs/heads/leap/ledger", "refs/heads/a..b"))
    linked = tmp_path / "linked"
    git("worktree", "add", "-q", "--detach", str(linked), cwd=repo)
    for where in (repo, linked):
        said = leap("init", cwd=where)
        assert said.code == InvalidRecord.exit_code and "internal error" not in said.err, said
        [line] = [ln for ln in said.err.splitlines() if "a..b" in ln]
        assert "ledger_ref" in line and "[config]" in line, said.err
        assert "a kept copy of .leap/config.yaml" in line and \
            not line.startswith("leap: .leap/config.yaml:"), line
    assert not (repo / ".git" / "refs" / "heads" / "a..b").exists()
    found = re.search(r"delete (\S+)$", line)
    assert found is not None and Path(found.group(1)) == repo / ".git" / "leap-cache", line
    shutil.rmtree(found.group(1))  # as the hint says, from the linked worktree
    again = leap("init", cwd=linked)
    assert again.code == 0, again
    assert git("rev-parse", "--verify", "-q", "refs/heads/leap/ledger", cwd=repo)


@pytest.mark.parametrize("planted", [None, 5, "refs/heads/leap/\udcff", "refs/heads/lé"],
                         ids=["null", "number", "surrogate", "non-ascii"])
def test_a_kept_config_copy_with_a_ledger_ref_no_config_may_hold_is_named(
        tmp_path: Path, planted: object) -> None:
    """What the config's schema refuses a kept copy may still hold (it is not checked
    again): a null or a number crashed the check itself, and a name git takes but the
    schema does not went on to fail later (a boundary review: exit 70 each)."""
    import json

    repo = make_repo(tmp_path / "repo", {"f.txt": "x\n"})
    assert leap("init", cwd=repo).code == 0
    [entry] = (repo / ".git" / "leap-cache").glob("config-*/*/*.json")
    data = json.loads(entry.read_text())
    data["ledger_ref"] = planted
    entry.write_text(json.dumps(data))
    said = leap("init", cwd=repo)
    assert said.code == InvalidRecord.exit_code and "internal error" not in said.err, said
    assert "ledger_ref" in said.err and "[config]" in said.err, said.err
