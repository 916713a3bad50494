"""The signer policy: ``.leap/allowed_signers`` parsed into keys, roles and lifetimes.

One line per key, exactly as OpenSSH reads it (``ssh-keygen(1)``, ALLOWED SIGNERS)::

    builder:alice,admin:alice valid-after="20240101Z" ssh-ed25519 AAAAC3... alice@laptop

Principals of the form ``<role>:<name>`` give the key a role; other principals (an email
for git's own use) are kept and give none. ``valid-after``/``valid-before`` take
``YYYYMMDD[Z]`` or ``YYYYMMDDHHMM[SS][Z]`` (``Z``: UTC, else the local time, as
ssh-keygen reads them). ``namespaces`` is honoured (a key must allow ``git``);
``cert-authority`` lines are refused: leapgit binds roles to keys, not to certificates.
"""

from __future__ import annotations

import base64
import calendar
import hashlib
import time
from dataclasses import dataclass

from leapgit.errors import InvalidRecord

ROLES = ("builder", "scorer", "integrator", "admin")
NAMESPACE = "git"


def fingerprint(key_blob: bytes) -> str:
    """OpenSSH's SHA256 fingerprint of a public key blob."""
    digest = base64.b64encode(hashlib.sha256(key_blob).digest()).decode()
    return "SHA256:" + digest.rstrip("=")


@dataclass(frozen=True)
class SignerKey:
    line: int
    principals: tuple[str, ...]
    key_type: str
    key_blob: bytes
    valid_after: int | None = None
    valid_before: int | None = None
    namespaces: tuple[str, ...] | None = None

    @property
    def fingerprint(self) -> str:
        return fingerprint(self.key_blob)

    @property
    def roles(self) -> frozenset[str]:
        return frozenset(p.split(":", 1)[0] for p in self.principals if ":" in p)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(sorted({p.split(":", 1)[1] for p in self.principals if ":" in p}))

    def valid_at(self, when: int) -> bool:
        if self.namespaces is not None and NAMESPACE not in self.namespaces:
            return False
        if self.valid_after is not None and when < self.valid_after:
            return False
        return self.valid_before is None or when < self.valid_before


@dataclass(frozen=True)
class Standing:
    """What the policy grants one key at one time."""

    fingerprint: str
    roles: frozenset[str]
    names: tuple[str, ...]

    def who(self) -> str:
        names = ",".join(self.names) or "no name"
        return f"key {self.fingerprint} ({names})"


@dataclass(frozen=True)
class Policy:
    keys: tuple[SignerKey, ...] = ()
    source: str = ".leap/allowed_signers"

    def entries(self, fp: str) -> tuple[SignerKey, ...]:
        return tuple(k for k in self.keys if k.fingerprint == fp)

    def knows(self, fp: str) -> bool:
        return bool(self.entries(fp))

    def standing(self, fp: str, when: int) -> Standing | None:
        """The roles ``fp`` holds at ``when``; None if no line of it is valid then."""
        valid = [k for k in self.entries(fp) if k.valid_at(when)]
        if not valid:
            return None
        roles = frozenset().union(*(k.roles for k in valid))
        names = tuple(sorted({n for k in valid for n in k.names}))
        return Standing(fp, roles, names)

    def holders(self, role: str, when: int) -> list[str]:
        return sorted({k.fingerprint for k in self.keys if role in k.roles and k.valid_at(when)})


def parse_time(value: str, source: str, line: int) -> int:
    """ssh-keygen's time syntax, to seconds since the epoch."""
    utc = value.endswith(("Z", "z"))
    digits = value[:-1] if utc else value
    formats = {8: "%Y%m%d", 12: "%Y%m%d%H%M", 14: "%Y%m%d%H%M%S"}
    fmt = formats.get(len(digits))
    try:
        if fmt is None or not digits.isdigit():
            raise ValueError(value)
        parsed = time.strptime(digits, fmt)
    except ValueError:
        raise InvalidRecord(f"line {line}: {value!r} is not a time ssh-keygen reads",
                            file=source, field="valid-after/valid-before",
                            hint="write YYYYMMDD[Z] or YYYYMMDDHHMM[SS][Z]") from None
    return calendar.timegm(parsed) if utc else int(time.mktime(parsed))


def _split(text: str) -> list[str]:
    """Split on blanks outside double quotes (the allowed-signers field syntax)."""
    fields, current, quoted = [], "", False
    for char in text:
        if char == '"':
            quoted = not quoted
            current += char
        elif char in " \t" and not quoted:
            if current:
                fields.append(current)
            current = ""
        else:
            current += char
    if current:
        fields.append(current)
    return fields


def _split_commas(text: str) -> list[str]:
    parts, current, quoted = [], "", False
    for char in text:
        if char == '"':
            quoted = not quoted
        elif char == "," and not quoted:
            parts.append(current)
            current = ""
            continue
        current += char
    parts.append(current)
    return [p for p in parts if p]


def _unquote(value: str) -> str:
    return value[1:-1] if len(value) >= 2 and value[0] == value[-1] == '"' else value


def _parse_line(text: str, number: int, source: str) -> SignerKey:
    fields = _split(text)

    def bad(why: str) -> InvalidRecord:
        return InvalidRecord(f"line {number}: {why}", file=source, rule="S2",
                             hint="one key a line: principals [options] keytype base64-key")

    if len(fields) < 3:
        raise bad("expected principals, optional options, key type and key")
    principals = tuple(_unquote(p) for p in _split_commas(_unquote(fields[0])))
    options: dict[str, str] = {}
    rest = fields[1:]
    if not (rest[0].startswith(("ssh-", "ecdsa-", "sk-"))):
        for option in _split_commas(rest[0]):
            name, _, value = option.partition("=")
            options[name.lower()] = _unquote(value)
        rest = rest[1:]
    if len(rest) < 2:
        raise bad("no key after the options")
    key_type, key_b64 = rest[0], rest[1]
    if "cert-authority" in options:
        raise bad("cert-authority lines are not supported: name each key")
    try:
        blob = base64.b64decode(key_b64, validate=True)
    except ValueError:
        raise bad("the key is not base64") from None
    for principal in principals:
        role = principal.split(":", 1)[0] if ":" in principal else None
        if role is not None and role not in ROLES:
            raise bad(f"unknown role {role!r} in principal {principal!r} "
                      f"(roles: {', '.join(ROLES)})")
    after, before = options.get("valid-after"), options.get("valid-before")
    spaces = options.get("namespaces")
    return SignerKey(
        line=number, principals=principals, key_type=key_type, key_blob=blob,
        valid_after=parse_time(after, source, number) if after else None,
        valid_before=parse_time(before, source, number) if before else None,
        namespaces=tuple(_split_commas(spaces)) if spaces is not None else None,
    )


def parse_policy(data: bytes, source: str = ".leap/allowed_signers") -> Policy:
    keys = []
    for number, raw in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
        text = raw.strip()
        if text and not text.startswith("#"):
            keys.append(_parse_line(text, number, source))
    return Policy(tuple(keys), source)


def key_line(principals: list[str], public_key: str, *, valid_after: str | None = None,
             valid_before: str | None = None) -> str:
    """One policy line for ``public_key`` (the text of a ``.pub`` file)."""
    options = [f'{name}="{value}"' for name, value in
               (("valid-after", valid_after), ("valid-before", valid_before)) if value]
    key = " ".join(public_key.split()[:2])
    return " ".join([",".join(principals), *([",".join(options)] if options else []), key])
