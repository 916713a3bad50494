"""T5: the envelope. The whole current files (at head) of every touched file plus their test
files, and the review contract; no diff hunks, commit messages, branch or author names. It is
rendered once to text, hashed, and the hash goes into every verdict."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from leapgit.errors import UsageError
from leapgit.records.tribunal_config import TestMapping
from leapgit.tribunal import changes, testmap
from leapgit.tribunal.redaction import Identities, refuse_leaks

CHARS_PER_TOKEN = 3  # cautious end for code (FIELD-NOTES): over-estimates the tokens
_BINARY_SNIFF = 8192
_LINK, _GITLINK = "120000", "160000"


@dataclass(frozen=True)
class Contract:
    intent: str
    criteria: str


@dataclass(frozen=True)
class EnvelopeFile:
    path: str
    role: str  # changed | test
    status: str  # text | binary | deleted | symlink | submodule
    blob: str | None
    size: int
    text: str | None = None


@dataclass(frozen=True)
class Envelope:
    base: str
    candidate: str
    tree: str
    contract: Contract
    files: tuple[EnvelopeFile, ...]
    body: str
    hash: str

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.body)

    @cached_property
    def _squashed(self) -> tuple[tuple[str, str], ...]:
        found = [(f.path, _squash(f.text)) for f in self.files if f.text is not None]
        found.append(("(contract)", _squash(self.contract.intent + " " + self.contract.criteria)))
        return tuple(found)

    def locate(self, evidence: str) -> str | None:
        """The file whose text holds ``evidence`` (whitespace-normalised), if any (T9)."""
        needle = _squash(evidence)
        if not needle:
            return None
        return next((path for path, text in self._squashed if needle in text), None)


def estimate_tokens(text: str) -> int:
    return len(text) // CHARS_PER_TOKEN + 1


def _squash(text: str) -> str:
    return " ".join(text.split())


def check_contract(intent: str, criteria: str) -> Contract:
    intent = intent.strip()
    if not intent or "\n" in intent:
        raise UsageError("the intent is one non-empty line", field="--intent", rule="T5")
    if not criteria.strip():
        raise UsageError("the pass criteria are empty", field="--criteria", rule="T5")
    return Contract(intent, criteria.strip())


def _decode(data: bytes) -> str | None:
    if b"\0" in data[:_BINARY_SNIFF]:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _file(path: str, role: str, entry: changes.TreeEntry | None,
          data: bytes | None) -> EnvelopeFile:
    if entry is None:
        return EnvelopeFile(path, role, "deleted", None, 0)
    if entry.mode == _GITLINK:
        return EnvelopeFile(path, role, "submodule", entry.blob, 0)
    if entry.mode == _LINK:
        return EnvelopeFile(path, role, "symlink", entry.blob, len(data or b""))
    text = _decode(data or b"")
    status = "text" if text is not None else "binary"
    return EnvelopeFile(path, role, status, entry.blob, len(data or b""), text)


def collect_files(root: Path, change: changes.Change,
                  mappings: tuple[TestMapping, ...]) -> tuple[EnvelopeFile, ...]:
    tests = testmap.find_tests(change.touched, change.entries, mappings)
    wanted = [(p, "changed") for p in change.touched] + [(p, "test") for p in tests]
    bad = changes.not_utf8([p for p, _ in wanted])
    if bad:
        raise UsageError(f"the envelope would carry path(s) that are not UTF-8: "
                         f"{', '.join(bad)}", field="--head", rule="T5",
                         hint="rename them to UTF-8 names and commit; jurors read paths as text")
    blobs = [e.blob for p, _ in wanted if (e := change.entries.get(p)) and e.mode != _GITLINK]
    data = changes.read_blobs(root, blobs)
    out = []
    for path, role in wanted:
        entry = change.entries.get(path)
        out.append(_file(path, role, entry, data.get(entry.blob) if entry else None))
    return tuple(out)


def render(contract: Contract, files: tuple[EnvelopeFile, ...]) -> str:
    parts = ["# Review envelope", "", "## Review contract", f"Intent: {contract.intent}",
             "Pass criteria:", contract.criteria, "",
             "## Files (whole current files of the candidate; no diff, no history)", ""]
    for f in files:
        label = "touched by the change" if f.role == "changed" else "test file of a touched file"
        if f.status == "text":
            parts += [f"----- BEGIN FILE {f.path} ({label}) -----", f.text or "",
                      f"----- END FILE {f.path} -----", ""]
        elif f.status == "deleted":
            parts += [f"----- DELETED FILE {f.path} (the change removes it) -----", ""]
        else:
            parts += [f"----- {f.status.upper()} FILE {f.path} ({f.size} bytes, "
                      f"listed, not inlined) -----", ""]
    return "\n".join(parts)


def build(root: Path, change: changes.Change, contract: Contract, identities: Identities,
          mappings: tuple[TestMapping, ...] = ()) -> Envelope:
    files = collect_files(root, change, mappings)
    texts = [(f.path, f.text) for f in files if f.text is not None]
    texts += [("--intent", contract.intent), ("--criteria", contract.criteria),
              ("(the list of file paths)", "\n".join(f.path for f in files))]
    refuse_leaks(texts, identities)  # T5: before anything is rendered or sent
    body = render(contract, files)
    digest = hashlib.sha256(body.encode("utf-8")).hexdigest()
    return Envelope(change.base, change.head, change.tree, contract, files, body, digest)
