"""Plain-text renderings of command results, shared by the CLI and the quickstart."""

from __future__ import annotations

import re
import shlex
from typing import TYPE_CHECKING

from leapgit.errors import printable
from leapgit.records import trailers as tr
from leapgit.records.config import CONFIG_PATH
from leapgit.records.types import ABSENT, OUTCOME_NAMES
from leapgit.rules.episodes import stopped_by_leap
from leapgit.rules.landing import failed_hint

if TYPE_CHECKING:  # annotations only: a command pays for no other command's modules
    from leapgit.audit.presence import Presence
    from leapgit.commands.audit_signatures import SignatureAudit
    from leapgit.commands.init import InitResult
    from leapgit.commands.log import LogEntry
    from leapgit.commands.slice import CutResult
    from leapgit.commands.status import BallScore, SliceStatus, Status
    from leapgit.records.types import Receipt, ThrowRecord
    from leapgit.rules.landing import Landing
    from leapgit.rules.readiness import BallStanding
    from leapgit.slices.check import CheckedSlice
    from leapgit.worktrees.check import CheckResult
    from leapgit.worktrees.closeround import RoundClosed
    from leapgit.worktrees.prune import PruneLine
    from leapgit.worktrees.respec import Respecced
    from leapgit.worktrees.run import RunResult
    from leapgit.worktrees.throw import ThrowResult


def init_lines(r: InitResult) -> list[str]:
    return [
        f"config  {r.config_path} ({'written' if r.config_written else 'kept'})",
        f"ledger  {r.ledger_ref} at {r.ledger_commit[:12]} "
        f"({'started' if r.ledger_created else 'already there'})",
        f"spine   {r.spine}" + (f" ({r.spine_chosen}; to protect another, edit spine: in "
                                f"{CONFIG_PATH} before you commit it)" if r.spine_chosen else ""),
    ] + ([f"hooks   {r.hooks}"] if r.hooks else []) + [f"        {line}" for line in r.husky] \
        + _signing_setup_lines(r)


def _signing_setup_lines(r: InitResult) -> list[str]:
    s = r.signing
    if s is None:
        return []
    policy = f"added {','.join(s.principals)}" if s.line_added else "already names this key"
    out = [f"key     {s.key} ({'created' if s.key_created else 'chosen'}), {s.fingerprint}",
           f"policy  {s.policy_path} ({policy})",
           "signing every ledger commit with it (git config leap.signingKey)"]
    if s.require is not None:
        out.append(f"server  signing.require: {str(s.require).lower()} in .leap/config.yaml "
                   "(commit it and the policy to the spine)")
    return out


def check_lines(c: CheckedSlice) -> list[str]:
    files = sum(len(s) for s in c.scopes.values())
    absent = sum(1 for s in c.scopes.values() for e in s if e.blob == ABSENT)
    out = [
        f"slice {c.draft.slice}: ok ({len(c.draft.balls)} balls, {files} scope files, "
        f"{absent} to be created, spine {c.draft.spine})",
    ]
    for i, wave in enumerate(c.waves):
        out.append(f"  wave {i}: {', '.join(wave)}")
    for ball in c.draft.balls:  # files to be created apart, so a mistyped path shows
        stamped = c.scopes.get(ball.id, ())
        there = [e.path for e in stamped if e.blob != ABSENT]
        new = [e.path for e in stamped if e.blob == ABSENT]
        out.append(f"  ball {ball.id}: " + "; ".join(
            [*([f"exists: {', '.join(there)}"] if there else []),
             *([f"to be created: {', '.join(new)}"] if new else [])]))
    return out


def cut_lines(r: CutResult) -> list[str]:
    return check_lines(r.checked) + [
        f"cut at base {r.record.base[:12]}; ledger commit {r.written.commit[:12]}"
    ]


def status_lines(s: Status) -> list[str]:
    signed = signature_presence_lines(s.signatures)
    if s.lease is not None:  # L9: every other merge waits while it is open
        signed = [*s.lease.lines(), *signed]
    if not s.slices:
        return ["no slices yet: write a draft and run `leap slice cut FILE`", *signed]
    out: list[str] = []
    for sl in s.slices:
        rec = sl.record
        out.append(
            f"slice {rec.slice}  spine {rec.spine}  base {rec.base[:12]}  "
            f"{len(rec.balls)} balls" + ("  ABANDONED" if sl.abandoned else "")
        )
        out.extend(under_slice(sl))
        width = max(len(b.ball) for b in sl.balls)
        for i in range(len(rec.waves)):
            out.append(f"  wave {i}")
            for b in (b for b in sl.balls if b.wave == i):
                deps = sl.depends.get(b.ball, ())
                s_ = sl.standing.get(b.ball)
                # a derived state (cut, or a score's pass, refuse or episode-ending hold)
                # outranks the last receipt
                state = s_.verdict if s_ is not None and \
                    s_.own in ("cut", "pass", "refuse", "hold") else b.state
                if sl.abandoned is not None and state != "passed":  # L3: thrown no more
                    state = "abandoned"
                hit = sl.reopens.get(b.ball)
                if hit is not None:
                    state = "reopened"
                line = (f"    {b.ball:<{width}}  {state:<10}  "
                        f"round {b.rounds_used}/{s.round_limit}")
                if b.episode > 1:
                    line += f"  episode {b.episode}"
                if deps:
                    line += f"  after {', '.join(deps)}"
                out.append(line)
                out.extend(under_ball(sl, b.ball, s.round_limit))
    out.extend(signed)
    return out


def under_slice(sl: SliceStatus) -> list[str]:
    """The lines `leap status` shows under a slice, before its waves: its spend, its
    landing, what lands it, its abandonment."""
    out = []
    rec = sl.record
    spent = sl.spent
    if spent is not None:  # issue 15 item 9: every scoring of every ball, summed
        from leapgit.records.usage import show as show_usage  # only once a ball scored

        out.append(f"  spent on jurors: {show_usage(spent)}")
    if sl.landing is not None:  # T9: land, then prove it live
        out.extend(_landing_lines(sl.landing, rec.slice, sl.remote))
    elif sl.abandoned is None and sl.standing and \
            all(b.verdict == "passed" for b in sl.standing.values()):
        # its merge stopped (a hunt: status showed every ball passed and named nothing)
        shared = f" --remote {shlex.quote(sl.remote)}" if sl.remote else ""
        out.append(f"  every ball passed; not landed yet: `leap run {rec.slice}{shared}` "
                   "merges it, or says what stops the merge")
    if sl.abandoned is not None:  # L3: thrown no more; its worktrees are prunable
        out.append(f"  abandoned at {sl.abandoned.abandoned_at}: {sl.abandoned.reason} "
                   f"(`leap worktree prune {rec.slice}` removes its worktrees)")
    return out


def status_json(s: Status) -> dict[str, object]:
    """`leap status --json`: the records, and under each slice and each ball the lines the
    text shows there, the next step among them (an orchestrating agent reads this, not the
    text)."""
    out = s.to_json()
    for sl, shown in zip(s.slices, out["slices"], strict=True):
        shown["lines"] = [ln.strip() for ln in under_slice(sl)]
        for wave in shown["waves"]:
            for ball in wave:
                ball["lines"] = [ln.strip() for ln in under_ball(sl, ball["ball"],
                                                                 s.round_limit)]
    return out


def under_ball(sl: SliceStatus, ball: str, round_limit: int) -> list[str]:
    """The lines `leap status` shows under a ball: a reopen, its throw and what comes next,
    its last score."""
    out = []
    hit = sl.reopens.get(ball)
    if hit is not None:
        # a commit only this clone holds is no reopen the server would take:
        # the merge says how to take it off the spine instead (issue 18 F6)
        out.append(f"      reopened (L8): {hit.reason()}; not recorded yet "
                   f"(`leap merge {sl.record.slice}` records it, or says how to take "
                   "it off the spine when only this clone holds it)")
    if sl.abandoned is None:  # what comes next: nothing, once abandoned
        out.extend(_throw_detail(sl.standing.get(ball), sl.record.slice, round_limit,
                                 sl.escalated.get(ball), ball in sl.redless, sl.author,
                                 ball in sl.held_before, sl.remote, sl.refused.get(ball),
                                 ball in sl.answering))
    out.extend(_score_detail(sl.scores.get(ball)))
    return out


def _landing_lines(landing: Landing, slice_id: str, remote: str | None) -> list[str]:
    """``remote``: a slice published to workers is run with it (L9: a plain `leap run S`
    of it is refused), its proof too."""
    line = f"  {landing.state()} (merge {landing.merge} at {landing.tip[:12]})"
    live = landing.live
    if landing.declared and live is None:
        lines = [line, f"    `leap run {slice_id}` proves it live"]
    elif live is None or live.outcome == 1:
        return [line]
    else:
        lines = [line, f"    live proof attempt {live.attempt} at {live.tip[:12]} exited "
                 f"{live.exit_code}; {failed_hint(slice_id)}"]
    if remote is None:
        return lines
    from leapgit.loop.events import as_started

    return [as_started(ln, slice_id, ["--remote", remote]) for ln in lines]


def _score_detail(scored: BallScore | None) -> list[str]:
    """Under a thrown ball: its last score (issue 14 item 11) and what every scoring of it
    spent on jurors (issue 15 item 9)."""
    if scored is None:
        return []
    from leapgit.records.usage import show

    return [f"      score {scored.score}: {OUTCOME_NAMES[scored.outcome]}: {scored.reason}",
            f"      spent on jurors: {show(scored.spent)}"]


def _throw_detail(s: BallStanding | None, slice_id: str, round_limit: int,
                  escalated: tuple[str, str] | None = None, redless: bool = False,
                  author: bool = False, held_before: bool = False,
                  remote: str | None = None, refused: str | None = None,
                  answering: bool = False) -> list[str]:
    """``_ball_lines``, and ``refused``: what leads on from a refused ball, as `leap run`
    says it. In a slice published to workers every `leap run S` and `leap throw S ...
    --resume` they name goes with `--remote R` (a blind review: the repair and the
    escalation lines, as `leap run` says them, named none, and followed, built here)."""
    lines = _ball_lines(s, slice_id, round_limit, escalated, redless, author, held_before,
                        remote, answering) + ([f"      next: {refused}"] if refused else [])
    if remote is None:
        return lines
    from leapgit.loop.events import as_started

    lines = [as_started(line, slice_id, ["--remote", remote]) for line in lines]
    if s is None or s.episode is None or not s.episode.throw.published:
        return lines  # thrown here: resumed here, as it was built
    resume = re.compile(rf"`leap throw {re.escape(slice_id)} --ball \S+ --resume(?=`)")
    return [resume.sub(lambda m: f"{m.group(0)} --remote {shlex.quote(remote)}", line)
            for line in lines]


def _ball_lines(s: BallStanding | None, slice_id: str, round_limit: int,
                escalated: tuple[str, str] | None = None, redless: bool = False,
                author: bool = False, held_before: bool = False,
                remote: str | None = None, answering: bool = False) -> list[str]:
    """Under a ball in `leap status`: why it waits, or its throw, last receipt, checkpoint.
    ``author``: a test author is configured, so `leap run` gets a red from it (the red by
    hand was all status named: a walk-away hunt)."""
    if s is None:
        return []
    pad = " " * 6
    # L9: a slice published to workers (``remote`` as git names it: quoted here)
    shared = f" --remote {shlex.quote(remote)}" if remote else ""
    if s.verdict == "ready" and redless:  # T7.1: no ball is thrown before its red
        # L5: a dependent ball's red builds on its dependencies' code, its stack base
        on = "its stack base" if s.depends_on else "its base"
        by_hand = (f"its failing test committed on {on} (`leap ball base {slice_id} "
                   f"{s.ball}`), then `leap red {slice_id} {s.ball} COMMIT`")
        if author:
            return [f"{pad}ready to throw once its red is recorded (T7.1): `leap run "
                    f"{slice_id}{shared}` asks the test author (red.command) for it; or by hand, "
                    f"{by_hand}"]
        return [f"{pad}ready to throw once its red is recorded (T7.1): {by_hand}"]
    if s.verdict in ("blocked", "held", "waiting", "ready"):
        return [f"{pad}{s.why()}" if s.verdict != "ready" else  # a hunt: it named nothing
                f"{pad}ready to throw (L5): `leap throw {slice_id} --ball {s.ball}{shared}` "
                "throws it; "
                f"`leap run {slice_id}{shared}` throws and drives every ready ball"]
    ep = s.episode
    if ep is None:
        return []
    t = ep.throw
    based = "stack base" if t.stack else "base"  # L5: on its dependencies' candidates
    where = "built by a worker of the shared remote" if t.published else f"at {t.worktree}"
    out = [f"{pad}{t.branch} {where} ({based} {t.base[:12]}, spec v{t.spec_version})"]
    if ep.receipts:
        r = ep.receipts[-1]
        word = OUTCOME_NAMES[r.outcome] + (" (claim)" if r.claim and r.outcome == 1 else "")
        out.append(f"{pad}receipt {r.round}: {word}: {printable(r.evidence)}")
        if r.log:  # a worker's log is a path on its own machine, not in this clone
            out.append(f"{pad}log {r.log}" + (f" (on worker {r.worker}'s machine)"
                                              if r.worker else ""))
    again = shared if t.published else ""  # published again to the workers, not built here
    resume = f"`leap throw {t.slice} --ball {t.ball} --resume{again}` starts a new episode"
    if s.spec_version > t.spec_version and s.verdict in ("checkpoint", "hold", "refused"):
        # what `leap run` does first, before an escalation or a resume (``steps.next_step``)
        how = "throws it again" if s.verdict == "refused" else "resumes it"
        return [*out, f"{pad}respecced to version {s.spec_version}: `leap run {t.slice}"
                      f"{shared}` {how} in a new episode"]
    if stopped_by_leap(ep):  # L6: as `leap run` says it (``loop.steps``)
        resume = f"leap stopped its last round: `leap run {t.slice}{shared}` resumes it"
    elif held_before and s.verdict in ("checkpoint", "hold"):
        from leapgit.loop.steps import repair  # L3: as `leap run` says it

        resume = (f"resumed from episode {t.resumed_from} and ended at 0 again: the spec "
                  f"needs repair: {repair(t.slice, t.ball)}")
    if escalated is None and ep.checkpoint is not None:
        out.append(f"{pad}checkpoint after {ep.checkpoint.rounds_used} rounds; {resume}")
    elif escalated is not None:  # T9: as `leap run` says it (``loop.steps.escalation``)
        out.extend([f"{pad}{escalated[0]}", f"{pad}next: {escalated[1]}"])
    elif s.verdict == "in-flight" and ep.checkpoint is None:  # what goes on with it
        out.append(f"{pad}next: {_in_flight(t, ep.receipts, shared, remote, answering, author)}")
    elif s.verdict == "hold":
        last = ", the last the limit allows" if len(ep.receipts) >= round_limit else ""
        out.append(f"{pad}its score held round {len(ep.receipts)} (0){last}: the episode "
                   f"ended; {resume}")
    return out


def _in_flight(t: ThrowRecord, receipts: tuple[Receipt, ...], shared: str,
               remote: str | None, answering: bool = False, author: bool = False) -> str:
    """A ball in flight: what goes on with it (a chaos hunt: after a kill, `leap status`
    named nothing for a claim not yet scored, or a round not yet built). ``answering``:
    its last claim was refused on the tribunal's findings (T7.6), which the next round
    answers, their tests written first by the test author (``author``)."""
    run = f"`leap run {t.slice}{shared}`"
    if answering:
        if t.published:
            worker = f"`leap worker --remote {shlex.quote(remote or 'REMOTE')}`"
            if author:
                return (f"{run} has the test author write the tribunal's findings as tests; "
                        f"then a worker builds its next round, which answers them ({worker})")
            return (f"a worker builds its next round, which answers the tribunal's findings "
                    f"({worker}); {run} scores it")
        first = "has the test author write the tribunal's findings as tests, then " \
            if author else ""
        return f"{run} {first}builds its next round, which answers the tribunal's findings"
    claimed = bool(receipts) and receipts[-1].outcome == 1
    if t.published:
        return (f"{run} scores its claimed pass" if claimed else
                f"a worker builds its rounds (`leap worker --remote "
                f"{shlex.quote(remote or 'REMOTE')}`); "
                f"{run} scores them")
    return f"{run} scores its claimed pass" if claimed else f"{run} builds its next round"


def log_lines(entries: list[LogEntry]) -> list[str]:
    out = []
    for e in entries:
        out.append(f"{e.commit[:12]}  {e.date}  {e.subject}")
        shown = [f"{k}: {v}" for k, v in e.trailers if k != tr.RECORD]
        records = [v for k, v in e.trailers if k == tr.RECORD]
        if shown:
            out.append("    " + "  ".join(shown))
        if records:
            more = f" (+{len(records) - 3} more)" if len(records) > 3 else ""
            out.append("    records: " + ", ".join(records[:3]) + more)
    return out


# throw, rounds and rollback (issue 4)


def throw_lines(r: ThrowResult) -> list[str]:
    new = [t for t in r.thrown if t.continues_at is None]
    out = [f"threw {len(new)} ball(s) of {r.slice} from base {r.base[:12]}"] if new else []
    if len(new) < len(r.thrown):
        out.append(f"continuing {len(r.thrown) - len(new)} ball(s) in flight of {r.slice}")
    width = max(len(t.record.ball) for t in r.thrown)
    for t in r.thrown:
        rec = t.record
        how = "published to workers" if rec.published else \
            "new worktree" if t.created else "same worktree"
        if rec.resumed_from:
            how += f", after episode {rec.resumed_from}"
        if t.continues_at is not None:
            how += f", continues at round {t.continues_at}"
        out.append(f"  {rec.ball:<{width}}  wave {rec.wave}  episode {rec.episode}  "
                   f"spec v{rec.spec_version}  {rec.branch}  ({how})")
        if rec.worktree:
            out.append(f"  {'':<{width}}  {rec.worktree}")
        out += [f"  {'':<{width}}  {line}" for line in t.repairs()]
        if rec.stack:  # L5: built on its dependencies' passed candidates
            on = ", ".join(f"{e.ball} (score {e.score}, candidate {e.candidate[:12]})"
                           for e in rec.stack)
            out.append(f"  {'':<{width}}  stack base {rec.base[:12]}: the slice's base + {on}")
    for s in r.skipped:
        out.append(f"  not thrown: {s.ball}: {s.error.lines()[0]}")
    if r.ledger_commit:
        out.append(f"ledger commit {r.ledger_commit[:12]}")
    return out


def run_lines(r: RunResult) -> list[str]:
    out = [f"run of {r.slice}" + (" (interrupted)" if r.interrupted else "") + ":"]
    for b in r.balls:
        if b.error is not None:
            out.append(f"  {b.ball}: error: {b.error.lines()[0]}")
            continue
        last = b.last
        if last is None:
            out.append(f"  {b.ball}: no round started")
            continue
        word = OUTCOME_NAMES[last.outcome] + (" (claim)" if last.claim and last.outcome == 1
                                              else "")
        # the evidence is the builder's text (its report, a file name): one line, escaped
        out.append(f"  {b.ball}: {len(b.receipts)} round(s), last {word}: "
                   f"{printable(last.evidence)}")
        if b.checkpoint:
            out.append(f"    checkpoint written; `leap throw {r.slice} --ball {b.ball} "
                       "--resume` starts a new episode")
        if b.rolled_back:
            out.append(f"    {b.rolled_back}")
        if last.log:
            out.append(f"    log: {last.log}")
    return out


def ball_check_lines(c: CheckResult) -> list[str]:
    word = {1: "map ok", 0: "hold (0)", -1: "refuse (-1)"}[c.outcome]
    return [f"ball {c.slice}/{c.ball} in {c.worktree}: {word}", f"  {c.evidence()}"]


def round_lines(r: RoundClosed) -> list[str]:
    rec = r.recorded.receipt
    word = OUTCOME_NAMES[rec.outcome] + (" (claim)" if rec.claim and rec.outcome == 1 else "")
    head = "already recorded: " if r.recorded.written is None else ""
    out = [f"{head}round {rec.round} of {rec.slice}/{rec.ball} (episode {rec.episode}): {word}"]
    if r.commit:
        out.append(f"  commit {r.commit[:12]}")
    if r.breach:
        out.append(f"  scope breach (L9): {', '.join(r.breach)}")
    if r.rolled_back:
        out.append(f"  {r.rolled_back.summary()}")
    if r.recorded.checkpoint:
        out.append(f"  round limit reached: checkpoint written; `leap throw {rec.slice} "
                   f"--ball {rec.ball} --resume` starts episode {rec.episode + 1}")
    return out


def respec_lines(r: Respecced) -> list[str]:
    rec = r.record
    head = (f"{rec.slice}/{rec.ball}: spec version {r.previous} -> {rec.spec_version} "
            f"({len(rec.scope)} scope file(s)); ledger commit {r.written.commit[:12]}")
    if r.needs_red:  # T7.1: no ball is thrown before its red (a blind review: named throw)
        return [head, f"  its red next: its failing test committed on `leap ball base "
                      f"{rec.slice} {rec.ball}`, then `leap red {rec.slice} {rec.ball} COMMIT`"]
    if r.remote is not None:
        return [head, f"  throw it again: `leap run {rec.slice} --remote "
                      f"{shlex.quote(r.remote)}` publishes it to the workers"]
    return [head, f"  throw it again: `leap throw {rec.slice} --ball {rec.ball}`"]


def prune_lines(lines: list[PruneLine]) -> list[str]:
    if not lines:
        return ["nothing to prune"]
    return [f"{p.slice}/{p.ball}: {p.why}" + (f" ({p.worktree})" if p.worktree else "")
            for p in lines]


def signature_audit_lines(a: SignatureAudit) -> list[str]:
    out = [f"{f.branch:<6} {f.commit[:12]}  {f.kind:<15} {f.message}"
           + (f"  ({f.rule})" if f.rule else "")
           + (f"  [{', '.join(f.paths[:3])}{' ...' if len(f.paths) > 3 else ''}]"
              if f.paths else "")
           for f in a.findings if not f.ok]
    ok, unsigned = a.count("ok"), a.count("unsigned")
    total = len(a.findings)
    mode = "signatures required" if a.require else "unsigned records allowed"
    verdict = "FAILED" if a.failed else "passed"
    out.append(f"signatures: {ok} of {total} good, {unsigned} unsigned, "
               f"{total - ok - unsigned} bad ({mode}): audit {verdict}")
    return out


def signature_presence_lines(p: Presence | None) -> list[str]:
    if p is None or p.commits == 0:
        return []
    cut = ""
    if p.shallow:  # a shallow clone: say what was counted, and how to fetch the rest
        how = f"`{p.fetch}` fetches the rest" if p.fetch else "a clone without --depth has it"
        newest = "newest commit" if p.commits == 1 else f"newest {p.commits} commits"
        cut = (f" (this clone is shallow: it holds the ledger's {newest} only, and what the "
               f"oldest of them added is not known here; {how})")
    if not p.unsigned_commits:
        return [f"signatures: all {p.commits} ledger commits signed{cut} "
                "(`leap audit-signatures` verifies them)"]
    shown = ", ".join(p.unsigned_records[:5]) or "not known here (those of the commit at " \
        "the cut)"
    more = (f" and {len(p.unsigned_records) - 5} more (`leap audit-signatures --json` lists "
            "them)"
            if len(p.unsigned_records) > 5 else "")
    return [f"signatures: {p.unsigned_commits} of {p.commits} ledger commits are UNSIGNED"
            f"{cut}; unsigned records: {shown}{more}"]
