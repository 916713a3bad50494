"""T6 and T8: reading one juror's answer. Strict JSON, one object, no prose, the literal
lens footer. Everything that is not exactly that fails closed."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from leapgit.records import yamlio
from leapgit.tribunal.envelope import Envelope
from leapgit.tribunal.errors import BadAnswer, OffLens
from leapgit.tribunal.prompt import SEVERITIES

RAW_TAIL = 2000  # T8: a rejected rung keeps a bounded tail of what it said
_TOP_KEYS = {"verdict", "findings", "lens"}
_FINDING_KEYS = {"severity", "claim", "evidence", "file", "mutant"}
MAX_MUTANT = 64 * 1024  # T9: a claimed mutant is a patch to a file, never megabytes
# A seat's findings as the ledger records them: the summary holds those of every seat, two
# a lens (primary and verifier), in one record of at most yamlio.MAX_BYTES (1 MiB), which
# every reader (and the server's pre-receive) refuses past the cap. 16 seats x 48 KiB
# leaves room for the rest of the summary.
MAX_FINDINGS_BYTES = 48 * 1024
_RECORD_OVERHEAD = 512  # a finding's fingerprint, lens, seat, status, a mutant's re-run
_GRAVE = ("blocker", "major")


@dataclass(frozen=True)
class Rerun:
    """T9: what re-running a claimed mutant in an isolated tree showed."""

    status: str  # KILLED | SURVIVED | INVALID
    detail: str
    files: tuple[str, ...] = ()


@dataclass(frozen=True)
class Finding:
    severity: str
    claim: str
    evidence: str
    file: str
    supported: bool  # T9: the quoted evidence occurs in the envelope
    mutant: str | None = None  # T9: a patch the juror says survives the tests
    rerun: Rerun | None = None  # what its re-run showed (tribunal.mutants)


@dataclass(frozen=True)
class Verdict:
    lens: str
    said: str  # what the juror said: pass | refuse
    outcome: str  # after the rules: pass | refuse
    reason: str
    findings: tuple[Finding, ...]

    @property
    def bare(self) -> bool:
        """T6: a pass with no supported finding (evidence quoted from the envelope) is a
        low-information vote, however many empty or unfounded findings it lists."""
        return self.said == "pass" and not any(f.supported for f in self.findings)


def tail(text: str) -> str:
    return text[-RAW_TAIL:]


SHOWN = 80  # what a message quotes of a juror's value: a verdict record is no echo of it


def cut(text: str, bound: int = SHOWN) -> str:
    return text if len(text) <= bound else text[:bound - 3] + "..."


def shown(value: Any) -> str:
    """``value`` as a message names it, at most about SHOWN characters (a juror's 900 KB
    lens, verdict or key, quoted whole in an attempt's detail, made verdict records of
    2.7 MB, past the ledger's 1 MiB cap)."""
    return cut(repr(value))


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        raise ValueError("a key appears twice")
    return dict(pairs)


def _load(text: str) -> dict[str, Any]:
    stripped = text.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        raise BadAnswer("not one bare JSON object (prose, a code fence or garbage around it)",
                        tail(text))
    try:
        data = json.loads(stripped, object_pairs_hook=_no_duplicates)
    except (ValueError, RecursionError) as exc:  # nesting past the decoder's depth is garbage
        raise BadAnswer(f"not valid JSON ({exc})", tail(text)) from None
    return data


def _encodable(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (a "\ud800" escape): no text anywhere
        return False
    return True


def _finding(raw: Any, index: int, envelope: Envelope, text: str) -> Finding:
    where = f"findings[{index}]"
    if not isinstance(raw, dict) or set(raw) - _FINDING_KEYS:
        raise BadAnswer(f"{where} is not a finding object with {sorted(_FINDING_KEYS)}", tail(text))
    severity, claim, evidence = raw.get("severity"), raw.get("claim"), raw.get("evidence", "")
    if severity not in SEVERITIES:
        raise BadAnswer(f"{where}.severity is {shown(severity)}, expected one of {SEVERITIES}",
                        tail(text))
    if not isinstance(claim, str) or not claim.strip() or not isinstance(evidence, str):
        raise BadAnswer(f"{where} needs a non-empty claim and a string evidence", tail(text))
    named: str = raw["file"] if isinstance(raw.get("file"), str) else ""
    mutant = _mutant(raw.get("mutant"), where, text)
    for key, value in (("claim", claim), ("evidence", evidence), ("file", named),
                       ("mutant", mutant or "")):
        if not _encodable(value):
            raise BadAnswer(f"{where}.{key} is not valid Unicode (a lone surrogate)", tail(text))
    located = envelope.locate(evidence)  # T9: only as good as the envelope
    named = _as_path(named, envelope, located)
    return Finding(severity, claim.strip(), evidence, named or located or "", located is not None,
                   mutant)


_LINE_SUFFIX = re.compile(r"(?::L?\d+(?:-L?\d+)?(?::\d+)?|#L\d+(?:-L?\d+)?"
                          r"|[ \t]?\(lines? \d+(?:-\d+)?\))$")


def _as_path(named: str, envelope: Envelope, located: str | None) -> str:
    """The file a juror named, as the envelope names it: jurors write `./src/x.py`,
    `/src/x.py`, `src/x.py:7`, `src/x.py:L7`, `src/x.py#L7`, `src/x.py (line 7)` or `x.py`
    for one file, and a finding is blamed by its path (L8: the aggregate review names the
    ball that owns it). A name that is one envelope file's path, or the tail of exactly
    one, is that path; any other is the file its quoted evidence is found in (T9), and
    stays as written only when the evidence is found in no file (an unsupported finding,
    which blames no ball)."""
    paths = {f.path for f in envelope.files}
    if not named or named in paths:
        return named
    bare = _LINE_SUFFIX.sub("", named.strip()).strip("/").removeprefix("./")
    if bare in paths:
        return bare
    tails = [p for p in paths if p.endswith("/" + bare)]
    if len(tails) == 1:
        return tails[0]
    return located if located in paths else named


def _mutant(value: Any, where: str, text: str) -> str | None:
    """T9: an optional unified diff; empty means none (strict schemas send every field)."""
    if value is None or value == "":
        return None
    if not isinstance(value, str) or len(value) > MAX_MUTANT:
        raise BadAnswer(f"{where}.mutant is not a patch (a string of at most {MAX_MUTANT} "
                        "characters)", tail(text))
    return value


def _recorded_size(findings: tuple[Finding, ...]) -> int:
    """About the bytes ``findings`` take in a ledger record (long text is written as an
    indented literal block, which a JSON length undercounts)."""
    if not findings:
        return 0
    rows = [{"severity": f.severity, "file": f.file, "claim": f.claim, "evidence": f.evidence,
             **({"mutant": {"patch": f.mutant}} if f.mutant else {})} for f in findings]
    return len(yamlio.dumps({"findings": rows})) + _RECORD_OVERHEAD * len(findings)


def _rules(said: str, findings: tuple[Finding, ...]) -> tuple[str, str]:
    grave = [f.severity for f in findings if f.severity in _GRAVE]
    if said == "pass" and grave:
        # T6: a pass listing a blocker or major finding is no pass
        return "refuse", f"a pass that lists a {grave[0]} finding is a refuse (T6)"
    if said == "refuse":
        return "refuse", f"refused with {len(findings)} finding(s)"
    if not any(f.supported for f in findings):
        listed = f" ({len(findings)} finding(s), none with evidence from the envelope)" \
            if findings else ""
        return "pass", f"bare pass: no findings, no evidence{listed} (low-information vote, T6)"
    return "pass", f"pass with {len(findings)} minor/info finding(s)"


def parse(text: str, lens_id: str, envelope: Envelope) -> Verdict:
    """The juror's verdict, or BadAnswer (a refuse) or OffLens (a rejected rung)."""
    data = _load(text)
    if not isinstance(data, dict):
        raise BadAnswer("the JSON is not an object", tail(text))
    answered = data.get("lens")
    if not isinstance(answered, str) or not answered:
        raise BadAnswer('no "lens" footer (T8)', tail(text))
    if answered != lens_id:
        raise OffLens(f"answered for lens {shown(answered)}, seat is {lens_id!r} (T6)",
                      cut(answered), tail(text))
    if set(data) - _TOP_KEYS:
        raise BadAnswer(f"unknown field(s) {shown(sorted(set(data) - _TOP_KEYS))}", tail(text))
    if next(reversed(data)) != "lens":  # T8: the verdict ends with the literal footer
        raise BadAnswer(f'the "lens" footer is not the last field (it ends with '
                        f'{shown(next(reversed(data)))}): the verdict must end with it (T8)',
                        tail(text))
    said, raw_findings = data.get("verdict"), data.get("findings", [])
    if said not in ("pass", "refuse"):
        raise BadAnswer(f'"verdict" is {shown(said)}, expected "pass" or "refuse"', tail(text))
    if not isinstance(raw_findings, list):
        raise BadAnswer('"findings" is not a list', tail(text))
    findings = tuple(_finding(f, i, envelope, text) for i, f in enumerate(raw_findings))
    size = _recorded_size(findings)
    if size > MAX_FINDINGS_BYTES:
        raise BadAnswer(f"the findings take {size} bytes as recorded, more than the "
                        f"{MAX_FINDINGS_BYTES} a verdict keeps (T6: an answer too large to "
                        "record is a bad answer)", tail(text))
    outcome, reason = _rules(said, findings)
    return Verdict(lens_id, said, outcome, reason, findings)
