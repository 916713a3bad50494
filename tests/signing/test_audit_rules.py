"""`leap audit-signatures` and `leap audit` re-check S4-S6 over the whole history, with the
very rule code pre-receive runs, each commit judged by the policy in force where it landed.
The histories here never reached the server (made in the clone, as a server without the
hook, or a rewritten remote, would hold them)."""

from __future__ import annotations

import base64
import json

from leapgit.signing.policy import fingerprint
from tests.signing.world import SLICE, SignedWorld
from tests.support import git, leap


def fp(world: SignedWorld, name: str) -> str:
    text = world.keys[name].with_suffix(".pub").read_text().split()[1]
    return fingerprint(base64.b64decode(text))


def findings(w: SignedWorld) -> tuple[int, list[dict[str, str]], str]:
    result = leap("audit-signatures", "--json", cwd=w.work)
    text = leap("audit-signatures", cwd=w.work).out
    return result.code, json.loads(result.out)["findings"], text


def test_the_four_key_flow_passes_the_audit(fresh: SignedWorld) -> None:
    w = fresh
    tree_a = w.build("a", {"src/a.py": "A = 10\n"}, "alice")
    tree_b = w.build("b", {"src/b.py": "B = 20\n"}, "bob")
    w.receipt("a", "alice", claim=True)
    w.receipt("b", "bob", claim=True)
    w.grade("a", "carol", tree_a)
    w.grade("b", "carol", tree_b)
    w.lease("ivan")
    w.merge("a", "ivan")
    w.merge("b", "ivan")
    result = w.push(f"leap/ball/{SLICE}/a", f"leap/ball/{SLICE}/b", "leap/ledger")
    # the ledger first: the server judges the spine against the ledger it
    # stores (F1)
    assert result.returncode == 0, result.stderr
    result = w.push("main")
    assert result.returncode == 0, result.stderr
    w.lease("ivan", action="release")
    assert w.push("leap/ledger").returncode == 0
    code, found, text = findings(w)
    assert code == 0, text
    assert all(f["kind"] == "ok" for f in found), text
    spine = [f for f in found if f["branch"] == "spine"]
    assert len(spine) == 2 and all(f["fingerprint"] == fp(w, "ivan") for f in spine)


def test_the_audit_finds_a_builder_who_graded_its_own_ball(fresh: SignedWorld) -> None:
    # S4: alice's round reaches the history only through the spine merge
    w = fresh
    tree = w.build("a", {"src/a.py": "A = 10\n"}, "alice")
    w.grade("a", "alice", tree)
    w.lease("ivan")
    w.merge("a", "ivan")
    round_sha = git("rev-parse", f"leap/ball/{SLICE}/a", cwd=w.work)
    code, found, text = findings(w)
    assert code == 1, text
    s4 = [f for f in found if f["rule"] == "S4"]
    # the round itself, and the grading records beside alice's own claim of it
    [by_round] = [f for f in s4 if f["commit"] == round_sha]
    assert f"a round for s1/a signed by key {fp(w, 'alice')} (alice), which signed the " \
        in by_round["message"]
    assert all("(alice)" in f["message"] for f in s4), text
    full = leap("audit", "--json", cwd=w.work)
    assert full.code == 1
    assert any(v["check"] == "signatures" and "S4" in v["message"]
               for v in json.loads(full.out)["violations"]), full.out


def test_the_audit_finds_a_second_key_of_the_builder_grading(fresh: SignedWorld) -> None:
    # S4 by name: alice builds on its branch (never merged), alice-2 grades
    w = fresh
    tree = w.build("a", {"src/a.py": "A = 10\n"}, "alice")
    sha = w.grade("a", "alice-2", tree)
    code, found, text = findings(w)
    assert code == 1, text
    s4 = [f for f in found if f["rule"] == "S4"]
    assert s4 and {f["commit"] for f in s4} <= {sha, git("rev-parse", f"leap/ball/{SLICE}/a",
                                                         cwd=w.work)}, text
    assert "which is alice, as key" in s4[0]["message"]


def test_the_audit_finds_a_lease_and_merges_by_different_integrators(fresh: SignedWorld,
                                                                     ) -> None:
    # S5, both halves: irene merges under ivan's lease, then releases it
    w = fresh
    tree = w.build("b", {"src/b.py": "B = 20\n"}, "bob")
    w.grade("b", "carol", tree)
    w.lease("ivan")
    merge = w.merge("b", "irene")
    release = w.lease("irene", action="release")
    code, found, text = findings(w)
    assert code == 1, text
    s5 = {f["commit"]: f["message"] for f in found if f["rule"] == "S5"}
    assert set(s5) == {merge, release}, text
    assert f"lease 1 was taken by key {fp(w, 'ivan')}" in s5[merge]
    assert f"lease released by key {fp(w, 'irene')} (irene), but taken by key " \
        f"{fp(w, 'ivan')}" in s5[release]


def test_the_audit_finds_a_policy_change_no_admin_signed(fresh: SignedWorld) -> None:
    # S6: bob writes a policy change, ivan (integrator, no admin) merges it
    w = fresh
    policy = (w.work / ".leap/allowed_signers").read_text()
    tree = w.build("p", {".leap/allowed_signers": policy + "# bob was here\n"}, "bob")
    w.grade("p", "carol", tree)
    w.lease("ivan")
    merge = w.merge("p", "ivan")
    code, found, text = findings(w)
    assert code == 1, text
    s6 = [f for f in found if f["rule"] == "S6"]
    assert [f["commit"] for f in s6] == [merge], text
    assert "a policy change not signed by an admin key" in s6[0]["message"]
    assert f"spine  {merge[:12]}  policy-change" in text


def test_a_merge_recorded_after_its_lease_was_given_back_keeps_its_own_lease(
        fresh: SignedWorld) -> None:
    # a stop after the push gives the lease back before the merge record is written (the
    # merge resumes later); by then another integrator holds the next lease. The merge
    # landed under lease 1, which its record names: no S5 finding against irene's lease.
    from leapgit.ledger import layout
    from leapgit.records import yamlio

    w = fresh
    tree = w.build("b", {"src/b.py": "B = 20\n"}, "bob")
    w.grade("b", "carol", tree)
    w.lease("ivan")
    merge = w.merge("b", "ivan")
    w.lease("ivan", action="release")
    w.lease("irene", number=2, holder="irene")
    record = {"kind": "merge", "format": 1, "slice": SLICE, "spine": "main", "lease": 1,
              "holder": "ivan", "base": w.base, "tip": merge,
              "merges": [{"ball": "b", "commit": merge, "candidate": tree,
                          "candidate_commit": git("rev-parse", f"{merge}^2", cwd=w.work),
                          "run_id": "t-pass-b", "score": 1}],
              "aggregate": {"run_id": "t-agg", "outcome": "pass", "tree": tree},
              "tests": [], "remote": None, "recorded_at": "2024-01-01T00:00:00Z"}
    w.append({layout.merge_path(SLICE): yamlio.dumps(record)}, "ivan", "merge record")
    code, found, text = findings(w)
    assert code == 0, text
    assert [f["fingerprint"] for f in found if f["commit"] == merge] == [fp(w, "ivan")]


def test_an_auditors_fresh_clone_judges_the_remote_tracking_ball_branches(
        fresh: SignedWorld) -> None:
    """A clone holds the ball branches only as remote-tracking refs: the audit judges them as
    the branches they are on the remote (here, a second key of the builder grading)."""
    w = fresh
    tree = w.build("a", {"src/a.py": "A = 10\n"}, "alice")
    w.grade("a", "alice-2", tree)
    _, local, _ = findings(w)
    assert any(f["rule"] == "S4" and f["branch"] != "ledger" for f in local), local
    clone = w.work.parent / "auditor"
    git("clone", "-q", str(w.work), str(clone), cwd=w.work.parent)
    git("branch", "-q", "leap/ledger", "origin/leap/ledger", cwd=clone)
    assert git("for-each-ref", "refs/heads/leap/ball", cwd=clone) == ""
    assert git("rev-parse", f"origin/leap/ball/{SLICE}/a", cwd=clone) == \
        git("rev-parse", f"leap/ball/{SLICE}/a", cwd=w.work)
    result = leap("audit-signatures", "--json", cwd=clone)
    found = json.loads(result.out)["findings"]
    assert result.code == 1, result.out
    assert [(f["rule"], f["commit"]) for f in found if f["rule"] == "S4"] == \
        [(f["rule"], f["commit"]) for f in local if f["rule"] == "S4"]


def test_odd_remote_tracking_refs_are_judged_once_or_not_at_all(fresh: SignedWorld) -> None:
    """Blind review r6, F3 and F4: a remote whose name holds a slash is mapped through its
    fetch refspec; a round two tips of one branch share is reported once; a symbolic ref,
    a dangling one and another remote's unrelated refs are no ball branches."""
    w = fresh
    tree = w.build("a", {"src/a.py": "A = 10\n"}, "alice")
    w.grade("a", "alice-2", tree)
    shared = git("rev-parse", f"leap/ball/{SLICE}/a", cwd=w.work)
    clone = w.work.parent / "auditor"
    git("clone", "-q", "-o", "team/x", str(w.work), str(clone), cwd=w.work.parent)
    git("branch", "-q", "leap/ledger", "team/x/leap/ledger", cwd=clone)
    git("symbolic-ref", f"refs/remotes/team/x/leap/ball/{SLICE}/zz",
        f"refs/remotes/team/x/leap/ball/{SLICE}/a", cwd=clone)
    git("symbolic-ref", f"refs/remotes/team/x/leap/ball/{SLICE}/gone",
        f"refs/remotes/nowhere/leap/ball/{SLICE}/x", cwd=clone)
    blob = git("hash-object", "-w", "--stdin", cwd=clone, input=b"not a commit\n")
    git("update-ref", f"refs/remotes/team/x/leap/ball/{SLICE}/blob", blob, cwd=clone)
    # the local branch one round ahead of the remote's: the round both hold is judged once
    git("checkout", "-q", "-b", f"leap/ball/{SLICE}/a", f"team/x/leap/ball/{SLICE}/a",
        cwd=clone)
    git("commit", "-q", "--allow-empty", "-m", "one more", cwd=clone)
    result = leap("audit-signatures", "--json", cwd=clone)
    assert result.code == 1, result.out + result.err
    found = json.loads(result.out)["findings"]
    assert [f["commit"] for f in found if f["rule"] == "S4" and f["branch"] != "ledger"] == \
        [shared], found
    assert not any(name in json.dumps(f) for f in found
               for name in (f"{SLICE}/zz", f"{SLICE}/gone", blob))
    git("checkout", "-q", "main", cwd=clone)  # only the slash-named remote holds it now
    git("branch", "-q", "-D", f"leap/ball/{SLICE}/a", cwd=clone)
    result = leap("audit-signatures", "--json", cwd=clone)
    found = json.loads(result.out)["findings"]
    assert [f["commit"] for f in found if f["rule"] == "S4" and f["branch"] != "ledger"] == \
        [shared], found
