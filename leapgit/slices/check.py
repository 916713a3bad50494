"""Validate a whole slice draft before anything is dispatched (L1, L2, L4).

Every problem of a draft is reported at once. Shape problems (L1) are bad input; a
well-formed slice that breaks L2 or L4 is a rule violation.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from leapgit.errors import InvalidRecord, LeapError, RuleViolation, combine
from leapgit.ledger import query
from leapgit.records import schema, yamlio
from leapgit.records.drafts import BallDraft, SliceDraft
from leapgit.records.types import INTEGRATOR, StampedScope
from leapgit.slices.graph import find_cycle, waves
from leapgit.slices.scope import ScopeError, TreeResolver

if TYPE_CHECKING:
    from leapgit.ledger.view import LedgerView


@dataclass(frozen=True)
class CheckedSlice:
    draft: SliceDraft
    scopes: dict[str, tuple[StampedScope, ...]]
    waves: tuple[tuple[str, ...], ...]


def load_draft(path: Path) -> SliceDraft:
    """Read and shape-check a draft (L1). Raises one error listing every shape problem."""
    try:
        raw = yamlio.load_file(path)
    except InvalidRecord as exc:  # a draft that cannot be read is no well-formed slice (L1)
        raise InvalidRecord(problems=[
            p if p.rule else p._replace(rule="L1") for p in exc.problems
        ]) from None
    return parse_draft(raw, str(path))


def parse_draft(raw: Any, source: str) -> SliceDraft:
    if not isinstance(raw, dict):
        raise InvalidRecord(
            "a slice draft is a mapping with slice, spine and balls", file=source, rule="L1"
        )
    errors: list[LeapError] = []
    spine = raw.get("spine")
    if isinstance(spine, list):
        errors.append(RuleViolation(
            f"names {len(spine)} write spines ({', '.join(repr(str(s)) for s in spine[:4])}"
            f"{', ...' if len(spine) > 4 else ''}); "
            "a slice has exactly one write spine", file=source,
            field="spine", rule="L4", hint="name one ball id, or \"integrator\"",
        ))
    balls = raw.get("balls")
    shallow = dict(raw)
    if isinstance(spine, list):
        shallow["spine"] = INTEGRATOR  # reported above as L4
    if isinstance(balls, list):
        shallow["balls"] = [{}] * len(balls)
    try:
        schema.validate_shallow(shallow, "slice", source, rule="L1", items_of="balls")
    except InvalidRecord as exc:
        errors.append(exc)
    good: dict[int, BallDraft] = {}  # by its place in the draft, which messages name
    for i, ball in enumerate(balls if isinstance(balls, list) else []):
        try:
            schema.validate(ball, "slice", source, rule="L1", prefix=f"balls[{i}]",
                            definition="ball")
            good[i] = BallDraft.from_dict(ball)
        except InvalidRecord as exc:
            errors.append(exc)
            errors.extend(tests_missing_too(ball, exc, source, f"balls[{i}].tests"))
    for i, ball in good.items():
        errors.extend(_ball_shape(ball, i, source))
    if errors:
        raise combine(errors)  # type: ignore[misc]
    return SliceDraft(
        source=source, slice=raw["slice"], spine=spine, balls=tuple(good.values()),  # type: ignore[arg-type]
        description=raw.get("description"), live_proof=raw.get("live_proof"),
    )


def tests_missing(ball: BallDraft, source: str, field: str) -> InvalidRecord | None:
    """L1: every ball declares `tests`, the suite its candidate must keep green: the
    mechanical checks (T7) run it at the base and at the candidate, and without it `leap
    score` can never pass the ball. Only read here: nothing runs at the cut."""
    return None if ball.tests else _no_tests(ball.id, source, field)


def tests_missing_too(ball: Any, refused: InvalidRecord, source: str, field: str
                      ) -> list[InvalidRecord]:
    """The L1 `tests` problem of a ball its schema ``refused``, said with the schema's in
    one pass (a ball missing several fields named `tests` only on the second try)."""
    if not isinstance(ball, dict) or ball.get("tests") or \
            any(p.field == field for p in refused.problems):
        return []
    named = ball.get("id")
    return [_no_tests(named if isinstance(named, str) else "?", source, field)]


def _no_tests(ball_id: str, source: str, field: str) -> InvalidRecord:
    return InvalidRecord(f"ball {ball_id!r} declares no `tests` command (the suite a candidate "
                         "must keep green; without it no score can pass the ball)",
                         file=source, field=field, rule="L1",
                         hint="add e.g. `tests: python -m pytest -q`")


def _ball_shape(ball: BallDraft, i: int, source: str) -> list[LeapError]:
    errors: list[LeapError] = []
    missing = tests_missing(ball, source, f"balls[{i}].tests")
    if missing is not None:
        errors.append(missing)
    seen: set[str] = set()
    for j, entry in enumerate(ball.scope):
        field = f"balls[{i}].scope[{j}]"
        if entry.path in seen:
            errors.append(InvalidRecord(
                f"{entry.path!r} is listed twice in ball {ball.id!r}", file=source, field=field,
                rule="L1",
            ))
        seen.add(entry.path)
        if entry.lines and "-" in entry.lines:
            start, end = (int(x) for x in entry.lines.split("-"))
            if start > end:
                errors.append(InvalidRecord(
                    f"line range {entry.lines} ends before it starts", file=source,
                    field=f"{field}.lines", rule="L1",
                ))
    return errors


def _process_texts(draft: SliceDraft, only: int | None = None
                   ) -> Iterator[tuple[str, str | None]]:
    """(field, text) of every text a process gets: the commands a shell runs, the goal and
    spec a builder gets in its environment. Scope paths are ``normalise``'s (L2). ``only``:
    the one ball whose texts are judged (a respec: the others stand as recorded)."""
    if only is None:
        yield "live_proof", draft.live_proof
    for i, ball in enumerate(draft.balls):
        if only is not None and i != only:
            continue
        yield from ((f"balls[{i}].{name}", text) for name, text in (
            ("goal", ball.goal), ("spec", ball.spec), ("proof", ball.proof),
            ("tests", ball.tests), ("rollback", ball.rollback),
            ("live_proof", ball.live_proof),
            ("metric.command", ball.metric.command if ball.metric else None)))


def nul_bytes(draft: SliceDraft, only: int | None = None) -> list[LeapError]:
    """L1: no command line, path or environment can carry a NUL byte; one found only when
    the command runs (`leap red`, a throw) would sit in the ledger for good."""
    return [InvalidRecord("holds a NUL byte (\\x00), which no command, path or environment "
                          "can carry", file=draft.source, field=field, rule="L1",
                          hint="remove it")
            for field, text in _process_texts(draft, only) if text and "\0" in text]


def blank_texts(draft: SliceDraft, only: int | None = None) -> list[LeapError]:
    """L1: a goal or spec of only blanks tells a builder nothing, and a command of only
    blanks is a shell's exit 0: a proof that proves nothing, a rollback that restores
    nothing. The schema's ``minLength`` refuses the empty text only; found at `leap red`,
    such a ball sat in the ledger for good (a bad-input hunt). ``only``: as
    ``_process_texts``, so a slice cut before this check can still have each ball repaired."""
    return [InvalidRecord("holds only blanks", file=draft.source, field=field, rule="L1",
                          hint="write it out, or leave an optional field away")
            for field, text in _process_texts(draft, only)
            if text is not None and not text.strip()]


def check_slice(draft: SliceDraft, resolver: TreeResolver, texts_of: int | None = None
                ) -> CheckedSlice:
    """L2 and L4 over a shape-checked draft, and L1's text checks (``nul_bytes``,
    ``blank_texts``: a respec's repaired ball, ``texts_of``, meets them here too); stamps
    every scope file with its base blob."""
    source = draft.source
    errors: list[LeapError] = [*nul_bytes(draft, texts_of), *blank_texts(draft, texts_of)]
    ids = [b.id for b in draft.balls]

    def rule(message: str, field: str, rule_id: str, hint: str | None = None) -> None:
        errors.append(RuleViolation(message, file=source, field=field, rule=rule_id, hint=hint))

    if len(draft.balls) < 2:
        rule("a slice has two or more balls", "balls", "L4",
             "a change one builder can hold needs no slice; add the related balls")
    for i, ball_id in enumerate(ids):
        if ids.index(ball_id) != i:
            rule(f"ball id {ball_id!r} is used more than once", f"balls[{i}].id", "L4",
                 "give every ball its own id")
    if INTEGRATOR in ids:
        rule(f"ball id {INTEGRATOR!r} is reserved for the integrator spine",
             f"balls[{ids.index(INTEGRATOR)}].id", "L4", "rename the ball")
    if draft.spine != INTEGRATOR and draft.spine not in ids:
        rule(f"spine {draft.spine!r} is neither \"integrator\" nor a ball of this slice",
             "spine", "L4", "name exactly one ball id, or \"integrator\"")
    deps: dict[str, list[str]] = {}
    for i, ball in enumerate(draft.balls):
        deps.setdefault(ball.id, [])
        for j, dep in enumerate(ball.depends_on):
            if dep == ball.id:
                rule(f"ball {ball.id!r} depends on itself", f"balls[{i}].depends_on[{j}]", "L4")
            elif dep not in ids:
                rule(f"ball {ball.id!r} depends on {dep!r}, which is not a ball of this slice",
                     f"balls[{i}].depends_on[{j}]", "L4", "name a ball of the same slice")
            else:
                deps[ball.id].append(dep)
    cycle = find_cycle({k: [d for d in v if d != k] for k, v in deps.items()})
    if cycle:
        rule(f"dependency cycle: {' -> '.join(cycle)}", "depends_on", "L4",
             "break the cycle: a ball can only wait on balls that do not wait on it")
    scopes = _stamp_scopes(draft, resolver, errors)
    failure = combine(errors)
    if failure:
        raise failure
    return CheckedSlice(
        draft=draft, scopes=scopes, waves=tuple(tuple(w) for w in waves(deps)),
    )


def _stamp_scopes(
    draft: SliceDraft, resolver: TreeResolver, errors: list[LeapError]
) -> dict[str, tuple[StampedScope, ...]]:
    owner: dict[str, tuple[str, str]] = {}  # real path -> (ball id, path as written)
    scopes: dict[str, tuple[StampedScope, ...]] = {}
    for i, ball in enumerate(draft.balls):
        stamped: list[StampedScope] = []
        for j, entry in enumerate(ball.scope):
            field = f"balls[{i}].scope[{j}]"
            try:
                found = resolver.resolve(entry.path)
            except ScopeError as exc:
                errors.append(RuleViolation(str(exc), file=draft.source, field=field, rule="L2"))
                continue
            for key in {found.path, found.real}:
                other = owner.get(key)
                if other and other[0] == ball.id:
                    errors.append(InvalidRecord(
                        f"{entry.path!r} is the same file as {other[1]!r}, already in this "
                        "ball's scope", file=draft.source, field=field, rule="L1",
                        hint="list each file once",
                    ))
                    break
                if other:
                    errors.append(RuleViolation(
                        f"{entry.path!r} is the same file as {other[1]!r} of ball {other[0]!r}",
                        file=draft.source, field=field, rule="L4",
                        hint="scopes must be disjoint: re-cut so one ball owns the file",
                    ))
                    break
            for key in {found.path, found.real}:
                owner.setdefault(key, (ball.id, entry.path))
            stamped.append(StampedScope(
                path=found.path, blob=found.blob,
                resolved=found.real if found.real != found.path else None,
                symbols=entry.symbols, lines=entry.lines,
            ))
        scopes[ball.id] = tuple(stamped)
    return scopes


def claimed_elsewhere(view: LedgerView, checked: CheckedSlice) -> list[RuleViolation]:
    """L4: an open slice (neither merged nor abandoned) owns its balls' scope files; a new
    slice may not claim one of them. Every clash is named, with the slice that owns it.
    The cut asks it of its clone's ledger, the server of the ledger pushed to it
    (``rules.cuts``: a clone whose ledger was stale cut over an open slice's file)."""
    owner: dict[str, tuple[str, str]] = {}  # file -> (slice, ball), every open slice
    for sid in query.slice_ids(view):
        if sid == checked.draft.slice or not query.open_slice(view, sid):
            continue
        for ball_id in query.load_slice(view, sid).balls:
            for entry in query.load_ball(view, sid, ball_id).scope:
                for key in {entry.path, entry.real}:
                    owner.setdefault(key, (sid, ball_id))
    out: list[RuleViolation] = []
    draft = checked.draft
    for i, ball in enumerate(draft.balls):
        for j, entry in enumerate(checked.scopes[ball.id]):
            other = owner.get(entry.path) or owner.get(entry.real)
            if other is not None:
                out.append(RuleViolation(
                    f"{entry.path!r} belongs to ball {other[1]!r} of open slice "
                    f"{other[0]!r}", file=draft.source, field=f"balls[{i}].scope[{j}]",
                    rule="L4", hint=f"merge slice {other[0]} first, or give it up with "
                    f"`leap slice abandon {other[0]} --reason TEXT`"))
    return out
