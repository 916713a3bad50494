"""`leap audit-signatures` judges each signature by the policy in force when it was made:
a key retired later (by valid-before, or by leaving the policy) passes for what it signed
while valid; a signature made after retirement, or an unsigned record when signatures are
required, fails."""

from __future__ import annotations

import base64
import json
import time
from pathlib import Path

import pytest

from leapgit.ledger import layout
from leapgit.ledger.store import Ledger
from leapgit.records import yamlio
from leapgit.records.types import Receipt
from leapgit.signing.policy import fingerprint
from leapgit.signing.sign import Signer
from tests.signing.world import CONFIG, FILES, make_key, policy_text
from tests.support import git, leap, make_repo, write_files

NOW = int(time.time())
HOUR = 3600


def _at(mp: pytest.MonkeyPatch, when: int) -> dict[str, str]:
    date = f"{when} +0000"
    mp.setenv("GIT_COMMITTER_DATE", date)
    mp.setenv("GIT_AUTHOR_DATE", date)
    return {"GIT_COMMITTER_DATE": date, "GIT_AUTHOR_DATE": date}


def _admin_commit(repo: Path, key: Path, message: str) -> str:
    """A spine commit signed by an admin (S6: the audit judges every policy change)."""
    git("-c", "gpg.format=ssh", "-c", f"user.signingkey={key}", "commit", "-S", "-qam",
        message, cwd=repo)
    return git("rev-parse", "HEAD", cwd=repo)


def _claim(repo: Path, key: Path | None, ball: str, round_no: int = 1) -> str:
    rec = Receipt("s1", ball, 1, round_no, 0, "test", "2024-01-01T00:00:00Z", claim=True)
    with Ledger(repo / ".git", signer=Signer(str(key)) if key else None) as ledger:
        return ledger.append({layout.receipt_path("s1", ball, 1, round_no): yamlio.dumps(
            rec.to_dict())}, f"round {round_no} of {ball}").commit


def _throws(repo: Path, key: Path) -> None:
    from leapgit.records.types import ThrowRecord

    base = git("rev-parse", "HEAD", cwd=repo)
    with Ledger(repo / ".git", signer=Signer(str(key))) as ledger:
        ledger.append({layout.throw_path("s1", b, 1): yamlio.dumps(ThrowRecord(
            "s1", b, 1, 1, base, f"leap/ball/s1/{b}", "2024-01-01T00:00:00Z").to_dict())
            for b in ("a", "b")}, "throw a and b")


@pytest.fixture
def history(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, dict[str, Path]]:
    keys = {n: make_key(tmp_path, n) for n in ("root", "ivan", "olga", "ulla", "nick")}
    v1 = {"root": ["admin:root", "integrator:root"], "ivan": ["integrator:ivan"],
          "olga": ["builder:olga"], "ulla": ["builder:ulla"]}
    t0 = NOW - 4 * HOUR
    env = _at(monkeypatch, t0)
    repo = make_repo(tmp_path / "work", {**FILES, ".leap/config.yaml": CONFIG.replace(
        "require: true", "require: false"), ".leap/allowed_signers": policy_text(keys, v1, {})})
    env = _at(monkeypatch, t0 + 600)
    assert leap("init", cwd=repo, env={**env, "LEAP_SIGNING_KEY": str(keys["root"])}).code == 0
    (repo / "slice.yaml").write_text("slice: s1\nspine: integrator\nballs:\n"
                                     "  - {id: a, goal: g, spec: s, scope: [src/a.py], "
                                     "proof: 'true', tests: 'true', rollback: restore-scope}\n"
                                     "  - {id: b, goal: g, spec: s, scope: [src/b.py], "
                                     "proof: 'true', tests: 'true', rollback: restore-scope}\n")
    env = _at(monkeypatch, t0 + 1200)
    assert leap("slice", "cut", "slice.yaml", cwd=repo,
                env={**env, "LEAP_SIGNING_KEY": str(keys["ivan"])}).code == 0
    (repo / "slice.yaml").unlink()
    _throws(repo, keys["ivan"])
    _at(monkeypatch, NOW - 3 * HOUR)
    _claim(repo, keys["olga"], "a")  # olga and ulla sign while their keys are current
    _claim(repo, keys["ulla"], "b")
    # policy v2: olga retired two and a half hours ago, ulla removed, nick added
    retire = time.strftime("%Y%m%d%H%M%SZ", time.gmtime(NOW - 5 * HOUR // 2))
    v2 = {**{n: p for n, p in v1.items() if n != "ulla"}, "nick": ["builder:nick"]}
    _at(monkeypatch, NOW - 2 * HOUR)
    write_files(repo, {".leap/allowed_signers": policy_text(keys, v2, {"olga": retire})})
    _admin_commit(repo, keys["root"], "policy v2: retire olga and ulla, add nick")
    monkeypatch.delenv("GIT_COMMITTER_DATE")
    monkeypatch.delenv("GIT_AUTHOR_DATE")
    return repo, keys


def test_retired_and_current_keys_pass_the_audit(history: tuple[Path, dict[str, Path]]) -> None:
    repo, keys = history
    _claim(repo, keys["nick"], "a", 2)  # the current key, now
    result = leap("audit-signatures", cwd=repo)
    assert result.code == 0, result
    assert "signatures: 7 of 7 good, 0 unsigned, 0 bad" in result.out  # 6 ledger, 1 spine
    result = leap("audit-signatures", "--require-signatures", "--json", cwd=repo)
    assert result.code == 0, result
    signers = {f["fingerprint"] for f in json.loads(result.out)["findings"] if f["kind"] == "ok"}
    for retired in ("olga", "ulla", "nick"):
        blob = (keys[retired].with_suffix(".pub")).read_text().split()[1]
        assert fingerprint(base64.b64decode(blob)) in signers


def test_a_key_used_after_its_retirement_fails_the_audit(
        history: tuple[Path, dict[str, Path]]) -> None:
    repo, keys = history
    late = _claim(repo, keys["olga"], "b", 2)  # now: past olga's valid-before
    result = leap("audit-signatures", cwd=repo)
    assert result.code == 1, result
    assert f"ledger {late[:12]}  expired-key" in result.out
    assert "audit FAILED" in result.out


def test_unsigned_records_fail_only_when_signatures_are_required(
        history: tuple[Path, dict[str, Path]]) -> None:
    repo, _keys = history
    unsigned = _claim(repo, None, "a", 2)
    status = leap("status", cwd=repo)
    assert "signatures: 1 of 6 ledger commits are UNSIGNED; unsigned records: " \
        "slices/s1/balls/a/episodes/1/receipts/2.yaml" in status.out
    assert leap("audit-signatures", cwd=repo).code == 0
    result = leap("audit-signatures", "--require-signatures", cwd=repo)
    assert result.code == 1, result
    assert f"ledger {unsigned[:12]}  unsigned        the commit is not signed" in result.out


def test_a_bad_historical_policy_is_a_finding_not_a_failed_audit(
        history: tuple[Path, dict[str, Path]]) -> None:
    repo, keys = history
    good = (repo / ".leap/allowed_signers").read_text()
    write_files(repo, {".leap/allowed_signers": good + "builder:eve not-a-key\n"})
    bad = _admin_commit(repo, keys["root"], "policy v3: broken")
    write_files(repo, {".leap/allowed_signers": good})
    fix = _admin_commit(repo, keys["root"], "policy v4: fixed")
    time.sleep(1)
    _claim(repo, keys["nick"], "a", 2)  # judged under v4
    result = leap("audit-signatures", cwd=repo)
    assert result.code == 1, result
    assert f"spine  {bad[:12]}  bad-policy" in result.out
    assert f"line {len(good.splitlines()) + 1}:" in result.out
    # the broken policy was refused (S6), so it was never in force: the fix, which puts
    # v2's bytes back, is judged by v2 and passes
    assert f"spine  {fix[:12]}" not in result.out
    assert "signatures: 8 of 9 good" in result.out, result.out


def test_an_empty_ledger_commit_needs_an_admin_in_the_audit_too(
        history: tuple[Path, dict[str, Path]]) -> None:
    # the same rule as pre-receive's (S3): a commit that adds no record acts as an admin
    repo, keys = history
    sha = git("-c", "gpg.format=ssh", "-c", f"user.signingkey={keys['ivan']}", "commit-tree",
              "-S", "-p", "leap/ledger", "-m", "nothing", "leap/ledger^{tree}", cwd=repo)
    git("update-ref", "refs/heads/leap/ledger", sha, cwd=repo)
    result = leap("audit-signatures", cwd=repo)
    assert result.code == 1, result
    assert f"ledger {sha[:12]}  missing-role    a ledger commit signed by key " in result.out
    assert "(ivan), which lacks role admin (holds: integrator)" in result.out


def _throw_on(repo: Path, key: Path, base: str, episode: int = 2) -> str:
    """A throw of ball a whose base is ``base``: the ledger names that spine commit, so
    every later ledger commit provably came after it."""
    from leapgit.records.types import ThrowRecord

    rec = ThrowRecord("s1", "a", episode, 1, base, "leap/ball/s1/a", "2024-01-01T00:00:00Z")
    with Ledger(repo / ".git", signer=Signer(str(key))) as ledger:
        return ledger.append({layout.throw_path("s1", "a", episode): yamlio.dumps(
            rec.to_dict())}, f"throw a (episode {episode})").commit


def test_a_back_dated_record_by_a_removed_key_is_judged_by_the_policy_it_followed(
        history: tuple[Path, dict[str, Path]], monkeypatch: pytest.MonkeyPatch) -> None:
    # ulla left the policy in v2. She signs after v2 landed and the ledger named it, with
    # her clock set back to before v2: the committer time says v1, the topology says v2.
    repo, keys = history
    _throw_on(repo, keys["ivan"], git("rev-parse", "HEAD", cwd=repo))
    _at(monkeypatch, NOW - 3 * HOUR + 60)
    forged = _claim(repo, keys["ulla"], "b", 2)
    result = leap("audit-signatures", cwd=repo)
    assert result.code == 1, result
    assert f"ledger {forged[:12]}  unknown-key" in result.out
    assert f"ledger {forged[:12]}  time-backwards" in result.out
    assert "its parent" in result.out


def test_a_back_dated_record_within_a_retired_keys_lifetime_is_a_time_finding(
        history: tuple[Path, dict[str, Path]], monkeypatch: pytest.MonkeyPatch) -> None:
    # olga's key is retired (valid-before, 2.5 hours ago). Her clock set back to 3 hours
    # ago makes the signature look valid; only the order of times can tell.
    repo, keys = history
    _claim(repo, keys["nick"], "a", 2)
    _at(monkeypatch, NOW - 3 * HOUR + 60)
    forged = _claim(repo, keys["olga"], "b", 2)
    result = leap("audit-signatures", "--json", cwd=repo)
    assert result.code == 1, result
    kinds = {(f["commit"], f["kind"]) for f in json.loads(result.out)["findings"]}
    assert (forged, "time-backwards") in kinds
    assert (forged, "ok") in kinds  # the key was valid at the time it claims


def test_a_record_dated_in_the_future_is_a_time_finding(
        history: tuple[Path, dict[str, Path]], monkeypatch: pytest.MonkeyPatch) -> None:
    repo, keys = history
    _at(monkeypatch, NOW + 48 * HOUR)
    ahead = _claim(repo, keys["nick"], "a", 2)
    result = leap("audit-signatures", cwd=repo)
    assert result.code == 1, result
    assert f"ledger {ahead[:12]}  time-future" in result.out


def _takeover(repo: Path, mallory: Path) -> str:
    """An unsigned, non-merge spine commit that makes mallory an admin, builder and scorer
    (what a server without the hook, or a rewritten remote, could hold)."""
    text = (repo / ".leap/allowed_signers").read_text() + policy_text(
        {"mallory": mallory}, {"mallory": ["admin:mallory", "builder:mallory",
                                           "scorer:mallory"]}, {})
    write_files(repo, {".leap/allowed_signers": text})
    git("commit", "-qam", "add mallory", cwd=repo)
    return git("rev-parse", "HEAD", cwd=repo)


def _finding(found: list[dict[str, str]], commit: str, rule: str) -> dict[str, str]:
    hits = [f for f in found if f["commit"] == commit and f["rule"] == rule]
    assert len(hits) == 1, found
    return hits[0]


def test_a_policy_change_no_admin_signed_is_never_the_policy_in_force(
        history: tuple[Path, dict[str, Path]], tmp_path: Path) -> None:
    # S6: the takeover is a finding, and the policy it wrote judges nothing after it, even
    # once an admin's later commit (which leaves the file alone) carries its bytes on
    repo, keys = history
    mallory = make_key(tmp_path, "mallory")
    takeover = _takeover(repo, mallory)
    write_files(repo, {"README.md": "# sample, v2\n"})
    carried = _admin_commit(repo, keys["root"], "readme")
    time.sleep(1)
    late = _claim(repo, mallory, "a", 2)
    result = leap("audit-signatures", "--require-signatures", "--json", cwd=repo)
    assert result.code == 1, result
    found = json.loads(result.out)["findings"]
    s6 = _finding(found, takeover, "S6")
    assert s6["message"].count(takeover[:12]) == 1, s6
    assert _finding(found, takeover, "S1")["kind"] == "unsigned"
    # the policy file the unsigned change wrote stays named (a blind review: widening an
    # unsigned ledger commit's finding to all its records dropped a spine commit's path)
    assert s6["kind"] == "unsigned" and s6["paths"] == [".leap/allowed_signers"], s6
    assert _finding(found, carried, "")["kind"] == "ok"
    unknown = _finding(found, late, "S2")
    assert unknown["kind"] == "unknown-key", unknown
    assert f"is not in the policy {carried[:12]}" not in unknown["message"]
    # the same without --require-signatures: the record is no "unsigned" matter
    plain = leap("audit-signatures", cwd=repo)
    assert plain.code == 1, plain
    assert f"ledger {late[:12]}  unknown-key" in plain.out


def test_a_takeover_cannot_approve_its_own_next_change(
        history: tuple[Path, dict[str, Path]], tmp_path: Path) -> None:
    # mallory, admin only in the policy no admin approved, signs the next policy change:
    # judged by the policy in force (v2), which does not know her key
    repo, keys = history
    mallory = make_key(tmp_path, "mallory")
    _takeover(repo, mallory)
    text = (repo / ".leap/allowed_signers").read_text()
    write_files(repo, {".leap/allowed_signers": text.replace("admin:root,", "")})
    second = _admin_commit(repo, mallory, "drop root's admin")
    time.sleep(1)
    late = _claim(repo, mallory, "a", 2)
    result = leap("audit-signatures", "--json", cwd=repo)
    assert result.code == 1, result
    found = json.loads(result.out)["findings"]
    assert _finding(found, second, "S6")["kind"] == "policy-change"
    assert _finding(found, late, "S2")["kind"] == "unknown-key"


def test_a_deleted_policy_is_no_first_arrival_while_one_is_in_force(
        history: tuple[Path, dict[str, Path]], tmp_path: Path) -> None:
    # root retires its own admin line (approved: root was admin then). With no admin left,
    # nobody may change the policy; deleting it and writing a new one must not make the new
    # one a "first policy" that approves itself.
    repo, keys = history
    mallory = make_key(tmp_path, "mallory")
    v2 = (repo / ".leap/allowed_signers").read_text()
    gone = time.strftime("%Y%m%d%H%M%SZ", time.gmtime(NOW - HOUR))
    write_files(repo, {".leap/allowed_signers": v2.replace(
        "admin:root,integrator:root ", f'admin:root,integrator:root valid-before="{gone}" ')})
    _admin_commit(repo, keys["root"], "policy v3: no admin from now on")
    git("rm", "-q", ".leap/allowed_signers", cwd=repo)
    git("commit", "-qm", "no policy", cwd=repo)
    write_files(repo, {".leap/allowed_signers": policy_text(
        {"mallory": mallory}, {"mallory": ["admin:mallory", "builder:mallory"]}, {})})
    git("add", ".leap/allowed_signers", cwd=repo)
    readded = _admin_commit(repo, mallory, "a new first policy")
    time.sleep(1)
    late = _claim(repo, mallory, "a", 2)
    result = leap("audit-signatures", "--json", cwd=repo)
    assert result.code == 1, result
    found = json.loads(result.out)["findings"]
    assert _finding(found, readded, "S6")["kind"] == "no-admin"
    assert _finding(found, late, "S2")["kind"] == "unknown-key"


def test_the_audit_judges_an_octopus_merge_on_the_spine(
        history: tuple[Path, dict[str, Path]], tmp_path: Path) -> None:
    repo, keys = history
    nick = keys["nick"]  # a builder: may sign rounds, never a spine commit
    sign = ["-c", "gpg.format=ssh", "-c", f"user.signingkey={nick}"]
    base = git("rev-parse", "HEAD", cwd=repo)
    for name in ("x", "y"):
        git("checkout", "-q", "-b", name, base, cwd=repo)
        write_files(repo, {f"src/{name}.py": "X = 1\n"})
        git("add", "-A", cwd=repo)
        git(*sign, "commit", "-S", "-qm", name, cwd=repo)
    git("checkout", "-q", "main", cwd=repo)
    git(*sign, "merge", "-S", "-q", "--no-ff", "-m", "octopus", "x", "y", cwd=repo)
    octopus = git("rev-parse", "HEAD", cwd=repo)
    assert len(git("rev-list", "--parents", "-1", octopus, cwd=repo).split()) == 4
    result = leap("audit-signatures", "--json", cwd=repo)
    assert result.code == 1, result
    found = json.loads(result.out)["findings"]
    assert _finding(found, octopus, "S3")["kind"] == "missing-role"


def test_status_counts_signatures_from_the_tip_it_counted_last(
        history: tuple[Path, dict[str, Path]]) -> None:
    """Issue 13 (7), the CLI at scale: `leap status` walked the whole ledger history to
    count its signatures on every run (1.8 s of a 2 s `leap status S` over 1,000 balls).
    It keeps the count of the tip it saw and walks only what was added since; a ledger
    rewritten under it, or a kept count damaged, is counted afresh. Each count equals a
    count of the whole history."""
    from leapgit.audit.presence import presence_cache, signature_presence

    repo, keys = history
    kept = presence_cache(repo / ".git")

    def said() -> str:
        status = leap("status", cwd=repo)
        assert status.code == 0, status
        [line] = [x for x in status.out.splitlines() if x.startswith("signatures: ")]
        git_dir = repo / ".git"  # the whole history, counted afresh
        assert signature_presence(git_dir, "refs/heads/leap/ledger", cache=kept) == \
            signature_presence(git_dir, "refs/heads/leap/ledger")
        return line

    assert said().startswith("signatures: all 5 ledger commits signed")
    assert kept.exists()
    signed_tip = git("rev-parse", "leap/ledger", cwd=repo)
    _claim(repo, None, "a", 2)
    assert said().startswith("signatures: 1 of 6 ledger commits are UNSIGNED; unsigned "
                             "records: slices/s1/balls/a/episodes/1/receipts/2.yaml")
    _claim(repo, keys["ulla"], "b", 2)
    assert said().startswith("signatures: 1 of 7 ledger commits are UNSIGNED")
    git("update-ref", "refs/heads/leap/ledger", signed_tip, cwd=repo)  # rewritten under it
    assert said().startswith("signatures: all 5 ledger commits signed")
    _claim(repo, None, "b", 2)
    kept.write_text('{"tip": "' + signed_tip + '", "commits": 2, "unsigned": 3}')  # damaged
    assert said().startswith("signatures: 1 of 6 ledger commits are UNSIGNED; unsigned "
                             "records: slices/s1/balls/b/episodes/1/receipts/2.yaml")


@pytest.mark.parametrize("damage", ['{"tip": "T", "commits": 5, "unsigned": 0, '
                                    '"records": [], "seen": ["x"]}',
                                    '{"tip": "T", "commits": 1e400, "unsigned": 0, '
                                    '"records": [], "seen": "x"}',
                                    "records as a string",
                                    "not a folder",
                                    "[" * 200_000])  # deeper than the parser recurses
def test_a_kept_count_that_cannot_be_read_or_written_costs_a_count(
        history: tuple[Path, dict[str, Path]], damage: str) -> None:
    """Blind review (e6e0b48): a kept count edited into JSON of the wrong kinds, and a
    `.git/leap-cache` that is a file (no count can be kept), made `leap status` an internal
    error; each costs a count of the whole history."""
    import shutil

    from leapgit.audit.presence import presence_cache

    repo, _keys = history
    kept = presence_cache(repo / ".git")
    if damage == "records as a string":  # a kept count of the right size, records wrong
        assert leap("status", cwd=repo).code == 0
        data = json.loads(kept.read_text())
        data.update(unsigned=1, records="LEDGER")
        damage = json.dumps(data)
    if damage == "not a folder":
        shutil.rmtree(kept.parent, ignore_errors=True)
        kept.parent.write_text("a file where the cache folder goes\n")
    else:
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_text(damage.replace("T", git("rev-parse", "leap/ledger", cwd=repo)))
    status = leap("status", cwd=repo)
    assert status.code == 0 and "signatures: all 5 ledger commits signed" in status.out, \
        status
