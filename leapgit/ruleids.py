"""The rule ids (SPEC: L1-L9, T1-T9; README: S1-S6) and where each is enforced.

Issues, tests and messages cite these ids; they are stable. ``RuleId`` is a ``str`` enum,
so ``RuleViolation(rule=RuleId.L6)`` and ``Refusal(RuleId.L6, ...)`` print exactly as the
string ``"L6"`` does. ``ENFORCED_BY`` names, for every id, the function(s) that judge it;
``tests/test_rule_ids.py`` checks that every id in use is a member, that each named
function exists and cites its id (docstring or a ``# L6:`` comment), and that a test names
every id. Names, not imports: this module sits at the bottom of the layers, below the
functions it points at. Modules on the post-commit hook's path keep passing the plain
strings (building the enum costs a hook a millisecond or two); the test checks that every
string is a member."""

from __future__ import annotations

from enum import StrEnum


class RuleId(StrEnum):
    L1 = "L1"  # the ball
    L2 = "L2"  # the file map is reference data, never instruction
    L3 = "L3"  # throw, then step out
    L4 = "L4"  # the slice: disjoint scopes
    L5 = "L5"  # waves
    L6 = "L6"  # four rounds, then stop
    L7 = "L7"  # score: derive the truth, never trust a claim
    L7_1 = "L7.1"  # source check
    L7_2 = "L7.2"  # keep-or-revert
    L7_3 = "L7.3"  # blind review across model families
    L7_4 = "L7.4"  # tests and live proof
    L7_5 = "L7.5"  # provenance
    L8 = "L8"  # merge on the spine
    L9 = "L9"  # hard rules
    T1 = "T1"  # eight seats, one lens each
    T2 = "T2"  # routing
    T3 = "T3"  # solo rig
    T4 = "T4"  # the builder is declared; exclusion is structural
    T5 = "T5"  # the envelope
    T6 = "T6"  # the verdict
    T7 = "T7"  # the loop
    T7_1 = "T7.1"  # red first: the failing test, frozen
    T7_6 = "T7.6"  # every finding becomes a new failing test; the builder answers it
    T8 = "T8"  # protocol hygiene
    T9 = "T9"  # hard rules
    S1 = "S1"  # signed records and merges
    S2 = "S2"  # a key valid at the signing time
    S3 = "S3"  # the role a record needs
    S4 = "S4"  # builder and grader apart
    S5 = "S5"  # the integrator's lease
    S6 = "S6"  # the policy, changed only by its admins
    CONFIG = "config"  # .leap/config.yaml must parse: every push is judged by it
    FSCK = "fsck"  # a pushed tree git and leapgit read alike


# "module:function" (or "module:Class.method") of the functions that enforce each rule.
ENFORCED_BY: dict[RuleId, tuple[str, ...]] = {
    RuleId.L1: ("leapgit.slices.check:_ball_shape",),
    RuleId.L2: ("leapgit.slices.scope:normalise", "leapgit.worktrees.check:_check_entry",
                "leapgit.rules.commits:check_scope"),
    RuleId.L3: ("leapgit.rules.ledger:_check_throw", "leapgit.rules.respec:check_respec"),
    RuleId.L4: ("leapgit.slices.check:_stamp_scopes", "leapgit.rules.commits:check_scope",
                "leapgit.rules.respec:_scopes"),
    RuleId.L5: ("leapgit.rules.readiness:_verdict", "leapgit.rules.balls:check_ball_update",
                "leapgit.rules.balls:check_stack"),
    RuleId.L6: ("leapgit.rules.balls:check_round_count", "leapgit.rules.commits:check_trailers",
                "leapgit.rules.episodes:Episode.spent", "leapgit.worktrees.rounds:_record",
                "leapgit.rules.balls:check_red_first"),
    RuleId.L7: ("leapgit.rules.passes:round_problems",),
    RuleId.L7_1: ("leapgit.scoring.source:check_source",),
    RuleId.L7_2: ("leapgit.scoring.keep:keep_or_revert",),
    RuleId.L7_3: ("leapgit.rules.passes:pass_problems", "leapgit.scoring.review:judged"),
    RuleId.L7_4: ("leapgit.scoring.proofrun:prove_candidate",),
    RuleId.L7_5: ("leapgit.rules.passes:pass_problems",),
    RuleId.L8: ("leapgit.rules.passes:standing", "leapgit.rules.ledger:check_ledger_update",
                "leapgit.rules.spine:_candidate_bytes", "leapgit.rules.reopens:check_reopen"),
    RuleId.L9: ("leapgit.rules.commits:check_merge", "leapgit.rules.spine:_check_lease"),
    RuleId.T1: ("leapgit.tribunal.routing:plan",),
    RuleId.T2: ("leapgit.tribunal.routing:plan",),
    RuleId.T3: ("leapgit.tribunal.routing:_seatable",),
    RuleId.T4: ("leapgit.tribunal.routing:exclusion",),
    RuleId.T5: ("leapgit.tribunal.redaction:refuse_leaks",),
    RuleId.T6: ("leapgit.tribunal.verdict:parse",),
    RuleId.T7: ("leapgit.tribunal.mechanical:run_checks",),
    RuleId.T7_6: ("leapgit.rules.ledger:_check_finding_red",
                  "leapgit.rules.episodes:answers_findings"),
    RuleId.T7_1: ("leapgit.rules.commits:check_frozen", "leapgit.rules.ledger:_check_red",
                  "leapgit.rules.ledger:_red_first", "leapgit.rules.passes:red_problems"),
    RuleId.T8: ("leapgit.tribunal.seating:annul", "leapgit.tribunal.seating:walk",
                "leapgit.tribunal.verdict:parse"),
    RuleId.T9: ("leapgit.tribunal.mechanical:unchanged_since_red",
                "leapgit.tribunal.mutants:rerun", "leapgit.tribunal.mutants:invalid"),
    RuleId.S1: ("leapgit.rules.signatures:check_round",),
    RuleId.S2: ("leapgit.rules.signatures:check_round",),
    RuleId.S3: ("leapgit.rules.signatures:check_round",
                "leapgit.rules.signed_ledger:_reopen_role"),
    RuleId.S4: ("leapgit.rules.signatures:check_round",),
    RuleId.S5: ("leapgit.rules.signed_ledger:_release_by_taker",),
    RuleId.S6: ("leapgit.rules.signatures:_round_policy",),
    RuleId.CONFIG: ("leapgit.records.config:_validated", "leapgit.rules.spine:_config_parses"),
    RuleId.FSCK: ("leapgit.rules.trees:check_pushed_trees",),
}
