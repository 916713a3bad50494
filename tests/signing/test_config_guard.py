"""An unparsable `.leap/config.yaml` on the spine must never brick the remote: the server
refuses a spine push that brings one (naming the file and the rule), and a server that
already holds one (written before the guard, or by hand on the server) still judges pushes,
fail-closed, so an admin can land the fix."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.hooks.world import remote_refs
from tests.signing.world import CONFIG, DRAFT, SLICE, SignedWorld, signed_world
from tests.support import git
from tests.templates import Served

BROKEN = CONFIG + "round_limit: [4\n"  # a YAML syntax error: the flow sequence never closes
DRAFT_C = DRAFT + """\
  - {id: c, goal: config, spec: change the config, scope: [.leap/config.yaml], proof: "true",
      tests: "true", rollback: restore-scope}
"""


@pytest.fixture
def cw(served: Served, monkeypatch: pytest.MonkeyPatch) -> Iterator[SignedWorld]:
    """A signed world whose slice has a ball ``c`` scoped to the config."""
    monkeypatch.delenv("LEAP_SIGNING_KEY", raising=False)
    with signed_world(served, "signed-c", DRAFT_C, ("a", "b", "p", "c")) as copy:
        yield copy


def _land_config(w: SignedWorld, text: str, builder: str = "root",
                 integrator: str = "ivan") -> str:
    """Ball c rewrites the config on the spine's tip (round by ``builder``), carol passes
    it, ``integrator`` merges it under its lease."""
    from tests.signing.world import round_message, signed_commit

    branch = f"leap/ball/{SLICE}/c"
    git("checkout", "-q", "-B", branch, "main", cwd=w.work)
    signed_commit(w.work, {".leap/config.yaml": text}, round_message("c: round 1", 1, 1),
                  w.keys[builder])
    git("checkout", "-q", "main", cwd=w.work)
    w.builders["c"] = builder  # the round's builder records its claim
    w.grade("c", "carol", git("rev-parse", f"{branch}^{{tree}}", cwd=w.work))
    w.lease(integrator, holder=integrator)
    return w.merge("c", integrator)


def test_a_spine_merge_with_a_config_that_does_not_parse_is_refused(cw: SignedWorld) -> None:
    merge = _land_config(cw, BROKEN)
    before = remote_refs(cw.bare)
    result = cw.push(f"leap/ball/{SLICE}/c", "leap/ledger", "main")
    assert result.returncode != 0, result.stderr
    assert remote_refs(cw.bare) == before
    assert f"[config] refs/heads/main {merge[:12]} .leap/config.yaml: the new config does " \
        "not parse:" in result.stderr
    assert "Traceback" not in result.stderr


def _force_onto_server(w: SignedWorld, text: str) -> str:
    """Put a commit with ``text`` as the config at the server's spine tip behind the hook's
    back (as an old server without the guard, or an operator's hand, would have)."""
    git("checkout", "-q", "main", cwd=w.work)
    (w.work / ".leap/config.yaml").write_text(text)
    git("commit", "-qam", "config by hand", cwd=w.work)
    sha = git("rev-parse", "HEAD", cwd=w.work)
    assert w.push("main:refs/by-hand/main").returncode == 0  # a ref no rule guards
    git("update-ref", "refs/heads/main", sha, cwd=w.bare)
    return sha


def test_a_server_holding_a_bad_config_still_judges_pushes_and_takes_the_fix(
        cw: SignedWorld) -> None:
    _force_onto_server(cw, BROKEN)
    # an ordinary signed record still lands; the server says why it reads the defaults
    cw.receipt("b", "bob", claim=True, outcome=0)
    result = cw.push("leap/ledger")
    assert result.returncode == 0, result.stderr
    assert "refs/heads/main:.leap/config.yaml does not parse" in result.stderr
    assert "signing required" in result.stderr
    # fail closed: with the config unreadable, signatures are still required (a policy is
    # on the spine), so an unsigned record is refused rather than waved through
    cw.receipt("b", None, claim=True, outcome=0, round_no=2)
    refused = cw.push("leap/ledger")
    assert refused.returncode != 0 and "[S1]" in refused.stderr, refused.stderr
    cw.reset()
    # the admin lands the fix through the ordinary flow (root signs the round: S6; the
    # round reaches the server through the merge, judged there: S1-S4)
    merge = _land_config(cw, CONFIG + "round_limit: 3\n")
    # the ledger first: the server judges the spine against the ledger it
    # stores (F1)
    assert cw.push("leap/ledger").returncode == 0
    result = cw.push("main")
    assert result.returncode == 0, result.stderr
    assert remote_refs(cw.bare)["refs/heads/main"] == merge
    after = cw.push("leap/ledger")
    assert "does not parse" not in after.stderr


def test_a_bad_config_is_fixed_only_by_an_admin(cw: SignedWorld) -> None:
    _force_onto_server(cw, BROKEN)
    merge = _land_config(cw, CONFIG + "round_limit: 3\n", builder="bob", integrator="ivan")
    result = cw.push("leap/ledger", "main")
    assert result.returncode != 0, result.stderr
    assert f"[S6] refs/heads/main {merge[:12]} .leap/config.yaml: a policy change not " \
        "signed by an admin key" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_server_holding_a_bad_policy_stays_closed(cw: SignedWorld) -> None:
    """Unlike the config, a policy that does not parse is not replaced by an older one: the
    bad file may be an operator's revocation with a typo, and the older policy would trust
    the revoked key again (blind review r6). Every push is refused, naming the line; the
    operator repairs the spine by hand."""
    good = (cw.work / ".leap/allowed_signers").read_text()
    git("checkout", "-q", "main", cwd=cw.work)
    (cw.work / ".leap/allowed_signers").write_text(good + "this line is no key\n")
    git("commit", "-qam", "policy by hand", cwd=cw.work)
    assert cw.push("main:refs/by-hand/main").returncode == 0  # a ref no rule guards
    git("update-ref", "refs/heads/main", git("rev-parse", "HEAD", cwd=cw.work), cwd=cw.bare)
    before = remote_refs(cw.bare)
    cw.receipt("b", "bob", claim=True, outcome=0)
    refused = cw.push("leap/ledger")
    assert refused.returncode != 0
    assert "refs/heads/main:.leap/allowed_signers: line" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr
    assert remote_refs(cw.bare) == before
