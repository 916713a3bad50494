"""A cut on the ledger is judged on the server as `leap slice cut` judges the draft (L1):
a slice record lands only with a first spec of every ball it names, and the slice of those
specs passes the cut's own check; no first spec joins a slice cut before. Before, the server
took a slice record alone (fuzzing review): every clone's `leap status` then stopped on it
("unknown ball"), and `leap audit`, which asks the same rules, said all holds."""

from __future__ import annotations

from leapgit.ledger import layout
from leapgit.records import yamlio
from leapgit.records.types import BallRecord, SliceRecord, StampedScope
from tests.hooks.test_server_rules import refused
from tests.hooks.world import NOW, SLICE, World, remote_refs
from tests.support import git, leap


def _records(w: World, slice_id: str, balls: dict[str, BallRecord | None],
             names: tuple[str, ...] | None = None) -> dict[str, bytes]:
    """A cut of ``slice_id`` as `leap slice cut` writes it, copied from the world's cut:
    a slice record naming ``names`` (default: the balls), a first spec for each ball
    given (None: left out)."""
    with w.ledger() as ledger:
        s1 = ledger.require().record(layout.slice_path(SLICE), SliceRecord)
    assert s1 is not None
    named = names or tuple(balls)
    rec = s1._replace(slice=slice_id, balls=named, waves=(named,), cut_at=NOW)
    out = {layout.slice_path(slice_id): yamlio.dumps(rec.to_dict())}
    for ball, spec in balls.items():
        if spec is not None:
            out[layout.ball_path(slice_id, ball)] = yamlio.dumps(
                spec._replace(slice=slice_id, ball=ball).to_dict())
    return out


def _spec(w: World, ball: str) -> BallRecord:
    with w.ledger() as ledger:
        found = ledger.require().record(layout.ball_path(SLICE, ball), BallRecord)
    assert found is not None
    return found


def test_a_slice_record_without_its_balls_specs_is_refused(fresh_world: World) -> None:
    w = fresh_world
    before = remote_refs(w.bare)
    w.append(_records(w, "s2", {"a": None, "b": None}))
    refused(w, w.push("leap/ledger"), before, "L1", layout.slice_path("s2"),
            "names ball a, whose first spec", layout.ball_path("s2", "a"))


def test_a_cut_over_an_open_slices_file_is_refused_as_the_cut_refuses_it(
        fresh_world: World) -> None:
    """L4 across slices, on the server as at the cut (``slices.cut.claimed_elsewhere``).
    It was the clone's check alone, since a refusal left the second clone's ledger holding
    a cut no command took back (a blind review); then a clone whose ledger was stale cut
    over an open slice's file and both slices stood (a walk-away hunt). The refused clone's
    `leap sync --take-remote` now takes its cut back (tests/hooks/test_sync.py)."""
    w = fresh_world
    before = remote_refs(w.bare)
    w.append(_records(w, "s2", {"a": _spec(w, "a"), "c": _on(w, "src/c.py")}))
    refused(w, w.push("leap/ledger"), before, "L4", "belongs to ball 'a' of open slice 's1'")


def test_a_cut_naming_a_ball_twice_or_on_a_base_that_is_no_commit_is_refused(
        fresh_world: World) -> None:
    w = fresh_world
    before = remote_refs(w.bare)
    records = _records(w, "s2", {"c": _on(w, "src/c.py"), "d": _on(w, "src/d.py")},
                       names=("c", "c", "d"))
    w.append(records)
    refused(w, w.push("leap/ledger"), before, "L1", layout.slice_path("s2"),
            "names ball c more than once")
    w.reset_ledger()
    blob = git("rev-parse", "main:src/c.py", cwd=w.work)
    cut = _records(w, "s3", {"c": _on(w, "src/c.py"), "d": _on(w, "src/d.py")})
    rec = yamlio.loads(cut[layout.slice_path("s3")], "s3")
    cut[layout.slice_path("s3")] = yamlio.dumps({**rec, "base": blob})
    w.append(cut)
    refused(w, w.push("leap/ledger"), before, "L1", layout.slice_path("s3"),
            f"its base {blob[:12]} is a blob, not a commit")


def test_a_nul_byte_in_the_slice_s_live_proof_is_refused_as_the_cut_refuses_it(
        fresh_world: World) -> None:
    w = fresh_world
    before = remote_refs(w.bare)
    cut = _records(w, "s2", {"c": _on(w, "src/c.py"), "d": _on(w, "src/d.py")})
    rec = yamlio.loads(cut[layout.slice_path("s2")], "s2")
    cut[layout.slice_path("s2")] = yamlio.dumps({**rec, "live_proof": "make check\0"})
    w.append(cut)
    refused(w, w.push("leap/ledger"), before, "L1", layout.slice_path("s2"),
            "live_proof: holds a NUL byte")  # the field named (telemetry review)


def test_an_honest_cut_through_a_symlink_of_the_work_tree_lands(fresh_world: World) -> None:
    """A file the base lacks, named through a symlink only the clone's work tree has: the
    cut records where it resolves, which the server cannot see; the stamp (absent) is
    what it holds to (blind review: the server refused this honest cut)."""
    w = fresh_world
    (w.work / "lib").symlink_to("src")
    draft = w.base_dir / "s2.yaml"
    draft.write_text("slice: s2\nspine: integrator\nballs:\n"
                     "  - {id: c, goal: g, spec: s, scope: [lib/other.py], proof: 'true', "
                     "tests: 'true', rollback: restore-scope}\n"
                     "  - {id: d, goal: g, spec: s, scope: [src/c.py], proof: 'true', "
                     "tests: 'true', rollback: restore-scope}\n")
    assert leap("slice", "cut", str(draft), cwd=w.work).code == 0
    assert leap("sync", cwd=w.work).code == 0
    assert leap("audit", cwd=w.work).code == 0


def test_a_cut_whose_waves_are_not_its_dependency_order_is_refused(
        fresh_world: World) -> None:
    w = fresh_world
    before = remote_refs(w.bare)
    late = _on(w, "src/d.py")._replace(depends_on=("c",))
    w.append(_records(w, "s2", {"c": _on(w, "src/c.py"), "d": late}))
    refused(w, w.push("leap/ledger"), before, "L1", layout.slice_path("s2"),
            "are not the balls' dependency order")


def test_a_first_spec_added_to_a_slice_cut_before_is_refused(fresh_world: World) -> None:
    w = fresh_world
    before = remote_refs(w.bare)
    extra = _on(w, "src/c.py")._replace(ball="z")
    w.append({layout.ball_path(SLICE, "z"): yamlio.dumps(extra.to_dict())})
    refused(w, w.push("leap/ledger"), before, "L1", layout.ball_path(SLICE, "z"),
            f"slice {SLICE} was cut without it")


def test_an_honest_second_cut_lands(fresh_world: World) -> None:
    """The check refuses only what the cut would: a slice of a new file lands."""
    w = fresh_world
    w.append(_records(w, "s2", {"c": _on(w, "src/c.py"), "d": _on(w, "src/d.py")}))
    assert w.push("leap/ledger").returncode == 0


def test_the_audit_and_status_name_a_forged_cut_written_behind_leapgits_back(
        fresh_world: World) -> None:
    """Written locally (never pushed), the forged cut is named by `leap audit` with the
    commit and the rule, and `leap status` names the record it lacks."""
    w = fresh_world
    forged = w.append(_records(w, "s2", {"a": None, "b": None}), "forged")
    status = leap("status", cwd=w.work)
    assert status.code == 2, status
    assert f"{layout.ball_path('s2', 'a')}: missing: slice s2 names ball a [L1]; `leap audit` " \
        "names the commit that cut it so" in status.err, status
    audit = leap("audit", cwd=w.work)  # the hint: it names the commit
    assert audit.code == 1 and "[L1] slice-cut: s2: names ball a, whose first spec" in \
        audit.out and forged[:12] in audit.out, audit


def _on(w: World, path: str) -> BallRecord:
    """Ball b's first spec, moved to ``path``, stamped as the cut stamps it at the base."""
    found = git("ls-tree", "main", "--", path, cwd=w.work).split()
    blob = found[2] if found else "absent"
    return _spec(w, "b")._replace(scope=(StampedScope(path, blob),))
