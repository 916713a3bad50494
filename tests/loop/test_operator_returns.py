"""The operator who comes back (a walk-away hunt): a person starts `leap run` on the shop
project (tests/loop/real_project.py: src layout, a generated file, pytest, a dependent
ball), walks away, comes back to a stop, and follows exactly what leapgit says."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.loop.real_project import S, build, events, jurors
from tests.scoring.world import Project
from tests.support import IDENTITY, git, hinted_leap
from tests.templates import Served
from tests.tribunal.jurors import JurorServer

HOLD = '''stop_at(0)
hold = here / ("hold-" + ball)
if hold.exists():
    (here / ("waiting-" + ball)).write_text("x")
    while hold.exists():
        time.sleep(0.2)
'''


def _hold_builder(p: Project, ball: str) -> None:
    """The builder of ``ball`` waits (before it builds) until the test lets it go."""
    path = p.base_dir / "builder.py"
    path.write_text(path.read_text().replace("stop_at(0)\n", HOLD, 1))
    (p.base_dir / f"hold-{ball}").write_text("")


def _run_until_checkout_waits(p: Project) -> subprocess.Popen[str]:
    """`leap run S --json` as a process, once checkout's builder (``_hold_builder``) waits."""
    run = subprocess.Popen([sys.executable, "-m", "leapgit", "run", S, "--json",
                            "--heartbeat", "0"], cwd=p.work,
                           env={**os.environ, **IDENTITY, **p.env},
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not (p.base_dir / "waiting-checkout").exists():
        assert run.poll() is None and time.monotonic() < deadline, run.communicate()
        time.sleep(0.2)
    return run


def _take_off(text: str) -> list[str]:
    """The backticked command that keeps the spine's commits aside and takes them off."""
    return [c for c in text.split("`")[1::2] if "reset --keep" in c]


def test_a_merge_stopped_by_a_commit_on_the_spine_names_the_way_on_and_status_too(
        isolated: Path, served: Served) -> None:
    """While the run waited on a builder, the person committed a hotfix on the spine in
    their checkout (the server refuses it: no integration). The merge stopped with "drop a
    spine commit made outside an integration, or re-build the ball" and no command; `leap
    status` showed every ball passed and named nothing. The stop names the commands that
    keep the hotfix on a branch and take it off the spine, then `leap run S`; status names
    `leap run S` for a slice whose balls all passed and did not land; followed, it lands."""
    with JurorServer("openai", jurors) as server:
        p = build(served.folder("op-merge-stopped"), served.daemon, server.url)
        _hold_builder(p, "checkout")
        run = _run_until_checkout_waits(p)
        try:
            prices = p.work / "src/shop/prices.py"  # a hotfix, committed on the spine
            prices.write_text(prices.read_text().replace("Prices of a basket.",
                                                         "Prices of a basket (hotfix)."))
            git("commit", "-qam", "hotfix: docstring", cwd=p.work)
            (p.base_dir / "hold-checkout").unlink()
            out, err = run.communicate(timeout=240)
        finally:
            if run.poll() is None:
                run.kill()
        stop = [e for e in events(out) if e["event"] == "stop"][-1]
        assert "merge" in str(stop["reason"]), (out[-3000:], err[-2000:])
        hint = str(stop["hint"])
        keep = _take_off(hint)
        assert len(keep) == 1, hint
        assert hinted_leap(hint) == [["run", S]], hint
        status = p.leap("status", S)
        [line] = [ln for ln in status.out.splitlines() if "not landed" in ln]
        assert hinted_leap(line) == [["run", S]], status.out
        done = subprocess.run(keep[0], shell=True, cwd=p.work, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        landed = p.leap("run", S, "--heartbeat", "0")
    assert landed.code == 0 and "landed" in landed.out, landed.out[-3000:]
    kept = git("for-each-ref", "--format=%(refname:short)", "refs/heads/kept-*", cwd=p.work)
    assert kept and git("log", "-1", "--format=%s", kept.split()[0], cwd=p.work) == \
        "hotfix: docstring", kept  # the hotfix is kept on a branch, not lost


NOTES = ("slice: notes\nspine: integrator\nballs:\n"
         + "".join(f"  - id: {b}\n    goal: {b}() says hi\n"
                   f"    spec: add {b}() to src/shop/{b}.py returning 'hi'\n"
                   f"    scope: [src/shop/{b}.py, tests/test_{b}.py]\n"
                   f"    proof: python -m pytest -q tests/test_{b}.py\n"
                   "    tests: python -m pytest -q\n    rollback: restore-scope\n"
                   for b in ("notes", "memo")))


def test_a_slice_leap_lands_meanwhile_costs_no_round_of_a_ball_in_flight(
        isolated: Path, served: Served) -> None:
    """Two slices in one clone: while the first waits on a builder, the person lands a
    small second one from another terminal, and leapgit's integrator moves their checkout
    of the spine. The first slice's round that ran meanwhile was held (0) for "work changed
    while the builder ran (L5, L9: a tree that is not the ball's own)", one of its four
    rounds (L6) spent on a move leapgit made itself. A checkout whose HEAD only moved along
    integration merges, nothing else in it changed, is no builder's write."""
    with JurorServer("openai", jurors) as server:
        p = build(served.folder("op-two-slices"), served.daemon, server.url)
        reds = json.loads((p.base_dir / "reds.json").read_text())
        builds = json.loads((p.base_dir / "builds.json").read_text())
        for b in ("notes", "memo"):
            reds[b] = [f"tests/test_{b}.py", f"def test_{b}():\n    from shop.{b} import {b}\n"
                       f"    assert {b}() == 'hi'\n"]
            # the scripted jurors pass a candidate they see quoted code of
            builds[b] = [{f"src/shop/{b}.py": f"# like def vat(\ndef {b}():\n    return 'hi'\n"}]
        (p.base_dir / "reds.json").write_text(json.dumps(reds))
        (p.base_dir / "builds.json").write_text(json.dumps(builds))
        (p.base_dir / "notes.yaml").write_text(NOTES)
        assert p.leap("slice", "cut", str(p.base_dir / "notes.yaml")).code == 0
        _hold_builder(p, "checkout")
        run = _run_until_checkout_waits(p)
        try:
            other = p.leap("run", "notes", "--heartbeat", "0")
            assert other.code == 0 and "landed" in other.out, other.out[-2000:]
            (p.base_dir / "hold-checkout").unlink()
            out, err = run.communicate(timeout=240)
        finally:
            if run.poll() is None:
                run.kill()
    assert run.returncode == 0, (out[-3000:], err[-2000:])
    receipt = git("show", f"leap/ledger:slices/{S}/balls/checkout/episodes/1/receipts/1.yaml",
                  cwd=p.work)
    assert "changed while the builder" not in receipt and "outcome: 1" in receipt, receipt


def test_a_wrong_red_sends_the_person_from_the_respec_to_a_new_ball_which_lands(
        isolated: Path, served: Served) -> None:
    """The test author wrote tax's red wrong (vat(100) must be 121). The candidate fails it,
    and the stop names a respec; the person respecs, the builder builds the same bytes, the
    same frozen red fails them, and the stop named the same respec again: a circle, since
    no respec changes a frozen red (T7.1: a different test is a different ball). Refused
    again on its red with the same bytes, the ball names giving the slice up and cutting it
    anew with a right red, and `leap status` names the same; followed, it lands."""
    with JurorServer("openai", jurors) as server:
        p = build(served.folder("op-wrong-red"), served.daemon, server.url)
        reds = p.base_dir / "reds.json"
        right = json.loads(reds.read_text())
        wrong = json.loads(reds.read_text())
        wrong["tax"][1] = wrong["tax"][1].replace("120.0", "121.0")  # the author erred
        reds.write_text(json.dumps(wrong))
        first = p.leap("run", S, "--json", "--heartbeat", "0")
        stop = next(e for e in events(first.out) if e["event"] == "stop" and
                    e.get("ball") == "tax")
        respec, run = hinted_leap(str(stop["hint"]))
        assert respec[:4] == ["ball", "respec", S, "tax"] and run == ["run", S], stop
        repaired = p.base_dir / "tax-v2.yaml"
        repaired.write_text(
            "goal: vat(100.0) is 120.0\nspec: add vat(amount, rate=0.2) to src/shop/tax.py "
            "returning amount * (1 + rate), rounded to cents\n"
            "scope: [src/shop/tax.py, tests/test_tax.py]\n"
            "proof: python -m pytest -q tests/test_tax.py\n"
            "tests: python -m pytest -q\nrollback: restore-scope\n")
        assert p.leap(*respec[:4], str(repaired)).code == 0
        second = p.leap(*run, "--json", "--heartbeat", "0")
        stop = next(e for e in events(second.out) if e["event"] == "stop" and
                    e.get("ball") == "tax")
        said = hinted_leap(str(stop["hint"]))
        assert said[:3] == [["slice", "abandon", S, "--reason", "TEXT"],
                            ["slice", "cut", "FILE"], ["run", "NEW-ID"]], stop
        shown = p.leap("status", S).out
        [line] = [ln for ln in shown.splitlines() if "slice abandon" in ln]
        assert line.strip() == f"next: {stop['hint']}", shown
        assert p.leap("slice", "abandon", S, "--reason", "tax's red asks 121").code == 0
        reds.write_text(json.dumps(right))  # the author, asked again, writes it right
        again = p.base_dir / "again.yaml"
        again.write_text((p.base_dir / "slice.yaml").read_text().replace(
            f"slice: {S}\n", f"slice: {S}-2\n"))
        assert p.leap("slice", "cut", str(again)).code == 0
        landed = p.leap("run", f"{S}-2", "--heartbeat", "0")
    assert landed.code == 0 and "landed" in landed.out, landed.out[-3000:]
