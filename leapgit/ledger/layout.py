"""Where each record lives on the ledger branch. A record's path follows from its content,
so a reader (and ``pre-receive``) can check that a record sits where it claims to.

    LEDGER.yaml
    slices/<slice>/slice.yaml
    slices/<slice>/merge.yaml                                   slice pass record 1 (L8)
    slices/<slice>/merges/<n>.yaml                              re-merge n > 1 after a reopen
    slices/<slice>/abandon.yaml                                 the slice given up (L3, L4)
    slices/<slice>/live/<n>.yaml                                merge n's live proof (T9)
    slices/<slice>/live/<n>-<a>.yaml                            its attempt a > 1, after a fix
    slices/<slice>/runs/<n>/take.yaml                           run lease n: one `leap run` (L3)
    slices/<slice>/runs/<n>/release.yaml                        its release
    slices/<slice>/balls/<ball>/ball.yaml                       spec version 1
    slices/<slice>/balls/<ball>/specs/<v>.yaml                  spec version v > 1 (L3)
    slices/<slice>/balls/<ball>/episodes/<e>/throw.yaml          base, spec version, worktree
    slices/<slice>/balls/<ball>/episodes/<e>/receipts/<r>.yaml  one per round (L6)
    slices/<slice>/balls/<ball>/episodes/<e>/checkpoint.yaml
    slices/<slice>/balls/<ball>/episodes/<e>/claims/<n>/take.yaml     a worker's claim (L9)
    slices/<slice>/balls/<ball>/episodes/<e>/claims/<n>/renew-<k>.yaml  its lease renewed
    slices/<slice>/balls/<ball>/episodes/<e>/claims/<n>/release.yaml  given back
    slices/<slice>/balls/<ball>/tribunal/<run>/<kind>.yaml      envelope, routing, summary
    slices/<slice>/balls/<ball>/tribunal/<run>/verdicts/<lens>.yaml
    slices/<slice>/balls/<ball>/reds/<n>.yaml                   red commit, frozen tests (T7.1)
    slices/<slice>/balls/<ball>/scores/<n>.yaml                 a scoring; outcome 1 = pass (L7)
    slices/<slice>/balls/<ball>/reopens/<n>.yaml                a pass voided by a byte change (L8)
    tribunal/<run>/...                                          a change that is no ball
    tribunal/probes/<probe>.yaml                                one canary per rung (issue 17)
    spines/<spine>/leases/<n>/take.yaml                         integrator lease n (L9)
    spines/<spine>/leases/<n>/release.yaml                      its release
"""

from __future__ import annotations

from typing import Any

from leapgit.errors import InvalidRecord

ROOT_RECORD = "LEDGER.yaml"
# L8: the records one ledger commit may add, ten times what leapgit writes at most (a cut:
# the slice and each ball; a worker's renewals, replayed by `leap sync`). The server counts
# a commit's additions before it parses one (~1 ms each): a commit of 10^5 records is one
# line in a second, never 95 s of parsing and 10^5 refusals
MAX_RECORDS = 10_000


def slice_dir(slice_id: str) -> str:
    return f"slices/{slice_id}"


def slice_path(slice_id: str) -> str:
    return f"{slice_dir(slice_id)}/slice.yaml"


def abandon_path(slice_id: str) -> str:
    return f"{slice_dir(slice_id)}/abandon.yaml"


def ball_dir(slice_id: str, ball_id: str) -> str:
    return f"{slice_dir(slice_id)}/balls/{ball_id}"


def ball_path(slice_id: str, ball_id: str, spec_version: int = 1) -> str:
    if spec_version == 1:
        return f"{ball_dir(slice_id, ball_id)}/ball.yaml"
    return f"{ball_dir(slice_id, ball_id)}/specs/{spec_version}.yaml"


def episode_dir(slice_id: str, ball_id: str, episode: int) -> str:
    return f"{ball_dir(slice_id, ball_id)}/episodes/{episode}"


def throw_path(slice_id: str, ball_id: str, episode: int) -> str:
    return f"{episode_dir(slice_id, ball_id, episode)}/throw.yaml"


def receipt_path(slice_id: str, ball_id: str, episode: int, round_no: int) -> str:
    return f"{episode_dir(slice_id, ball_id, episode)}/receipts/{round_no}.yaml"


def checkpoint_path(slice_id: str, ball_id: str, episode: int) -> str:
    return f"{episode_dir(slice_id, ball_id, episode)}/checkpoint.yaml"


def claims_dir(slice_id: str, ball_id: str, episode: int) -> str:
    return f"{episode_dir(slice_id, ball_id, episode)}/claims"


def claim_path(slice_id: str, ball_id: str, episode: int, claim: int, action: str,
               renewal: int | None = None) -> str:
    name = f"renew-{renewal}" if action == "renew" else action
    return f"{claims_dir(slice_id, ball_id, episode)}/{claim}/{name}.yaml"


def tribunal_dir(run_id: str, slice_id: str | None = None, ball_id: str | None = None) -> str:
    if slice_id and ball_id:
        return f"{ball_dir(slice_id, ball_id)}/tribunal/{run_id}"
    if slice_id:
        return f"{slice_dir(slice_id)}/tribunal/{run_id}"
    return f"tribunal/{run_id}"


PROBES_DIR = "tribunal/probes"


def probe_path(probe_id: str) -> str:
    return f"{PROBES_DIR}/{probe_id}.yaml"


def red_path(slice_id: str, ball_id: str, number: int) -> str:
    return f"{ball_dir(slice_id, ball_id)}/reds/{number}.yaml"


def score_path(slice_id: str, ball_id: str, number: int) -> str:
    return f"{ball_dir(slice_id, ball_id)}/scores/{number}.yaml"


def reopen_path(slice_id: str, ball_id: str, number: int) -> str:
    return f"{ball_dir(slice_id, ball_id)}/reopens/{number}.yaml"


def merge_path(slice_id: str, number: int = 1) -> str:
    if number == 1:
        return f"{slice_dir(slice_id)}/merge.yaml"
    return f"{slice_dir(slice_id)}/merges/{number}.yaml"


def live_path(slice_id: str, merge: int, attempt: int = 1) -> str:
    name = f"{merge}" if attempt == 1 else f"{merge}-{attempt}"
    return f"{slice_dir(slice_id)}/live/{name}.yaml"


def runs_dir(slice_id: str) -> str:
    return f"{slice_dir(slice_id)}/runs"


def run_path(slice_id: str, run: int, action: str) -> str:
    return f"{runs_dir(slice_id)}/{run}/{action}.yaml"


def leases_dir(spine: str) -> str:
    return f"spines/{spine}/leases"


def lease_path(spine: str, lease: int, action: str) -> str:
    return f"{leases_dir(spine)}/{lease}/{action}.yaml"


def path_for(record: dict[str, Any], source: str = "record") -> str:
    """The one path a validated record may occupy."""
    kind = record["kind"]
    s, b = record.get("slice"), record.get("ball")
    if kind == "ledger":
        return ROOT_RECORD
    if kind == "slice":
        return slice_path(record["slice"])
    if kind == "abandon":
        return abandon_path(record["slice"])
    if kind == "ball":
        return ball_path(record["slice"], record["ball"], record["spec_version"])
    if kind == "throw":
        return throw_path(record["slice"], record["ball"], record["episode"])
    if kind == "receipt":
        return receipt_path(record["slice"], record["ball"], record["episode"], record["round"])
    if kind == "checkpoint":
        return checkpoint_path(record["slice"], record["ball"], record["episode"])
    if kind == "claim":
        if (record["action"] == "renew") != (record.get("renewal") is not None):
            raise InvalidRecord("a claim's renewal number belongs to a renew record, and "
                                "only to one", file=source, field="renewal")
        return claim_path(record["slice"], record["ball"], record["episode"],
                          record["claim"], record["action"], record.get("renewal"))
    if kind == "lease":
        return lease_path(record["spine"], record["lease"], record["action"])
    if kind == "run":
        return run_path(record["slice"], record["run"], record["action"])
    if kind == "red":
        return red_path(record["slice"], record["ball"], record["red"])
    if kind == "score":
        return score_path(record["slice"], record["ball"], record["score"])
    if kind == "reopen":
        return reopen_path(record["slice"], record["ball"], record["reopen"])
    if kind == "live_proof":
        return live_path(record["slice"], record["merge"], record.get("attempt", 1))
    if kind == "probe":
        return probe_path(record["probe"])
    if kind == "merge" and s:
        return merge_path(s, record.get("merge", 1))
    if kind in ("envelope", "routing", "summary") and record.get("run_id"):
        return f"{tribunal_dir(record['run_id'], s, b)}/{kind}.yaml"
    if kind == "verdict" and record.get("run_id") and record.get("lens"):
        return f"{tribunal_dir(record['run_id'], s, b)}/verdicts/{record['lens']}.yaml"
    raise InvalidRecord(f"a {kind} record does not say where it belongs", file=source, field="kind")
