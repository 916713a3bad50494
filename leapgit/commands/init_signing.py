"""`leap init --signing`: choose or create an SSH key, put it in `.leap/allowed_signers` with
its roles, make it leapgit's acting key (git config ``leap.signingKey``), and, if asked,
write ``signing: {require: true}`` into the config. Every step is idempotent."""

from __future__ import annotations

import base64
import subprocess
from dataclasses import dataclass
from pathlib import Path

from leapgit import git
from leapgit.errors import UsageError
from leapgit.records.config import CONFIG_PATH, parse_config
from leapgit.signing import POLICY_PATH
from leapgit.signing.policy import ROLES, fingerprint, key_line, parse_policy


@dataclass(frozen=True)
class SigningSetup:
    key: Path
    fingerprint: str
    key_created: bool
    policy_path: Path
    line_added: bool
    principals: tuple[str, ...]
    require: bool | None  # None: the config was left as it was


@dataclass(frozen=True)
class SigningKey:
    """The key ``leap init --signing`` will bind, checked before anything is written."""

    key: Path
    public: str  # the .pub line: TYPE BASE64 [COMMENT]
    fingerprint: str
    created: bool


def _public(key: Path, field: str) -> tuple[str, str]:
    """The public key beside ``key`` and its fingerprint; one line of bad input when the
    .pub is missing, unreadable or no SSH public key (a bad-input hunt: a folder, an empty
    file, one word, bad base64 or non-UTF-8 there were each an internal error, exit 70)."""
    pub = key.with_name(key.name + ".pub")
    hint = "pass the private key whose .pub sits next to it"
    try:
        data = pub.read_bytes()
    except FileNotFoundError:
        raise UsageError(f"no public key {pub} beside {key}", field=field, hint=hint) from None
    except OSError as exc:
        raise UsageError(f"cannot read the public key {pub}: {exc.strerror}", field=field,
                         hint=hint) from None
    try:
        text = data.decode("utf-8").strip()
        words = text.split()
        kind, blob = words[0], base64.b64decode(words[1], validate=True)
    except (UnicodeDecodeError, IndexError, ValueError):  # binascii.Error is a ValueError
        kind, blob = "", b""
    # the key blob opens with its type, length-prefixed (RFC 4253, 6.6)
    if not kind or "\n" in text or blob[:4] != len(kind).to_bytes(4, "big") or \
            blob[4:4 + len(kind)] != kind.encode():
        raise UsageError(f"{pub} holds no SSH public key (one line: TYPE BASE64 [COMMENT])",
                         field=field, hint=hint)
    return text, fingerprint(blob)


def _create(key: Path, name: str, field: str) -> None:
    try:
        key.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UsageError(f"cannot make the folder {key.parent}: {exc.strerror}", field=field,
                         hint="pick a key path in a folder you can write") from None
    proc = subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f",
                           str(key)], capture_output=True, check=False)
    if proc.returncode != 0:
        raise UsageError(f"ssh-keygen could not create {key}: "
                         f"{proc.stderr.decode('utf-8', 'replace').strip()}", field=field)


def signing_key(*, key: Path, create: bool, name: str, roles: tuple[str, ...]) -> SigningKey:
    """The roles and the key checked (the key created first, when asked and absent), before
    ``leap init`` writes its config: a refused key leaves the repository as it was."""
    bad = [r for r in roles if r not in ROLES]
    if bad or not roles:
        raise UsageError(f"unknown role(s) {', '.join(bad) or '(none given)'}",
                         hint=f"choose from {', '.join(ROLES)}")
    field = "--new-key" if create else "--key"
    try:
        key = key.expanduser().resolve()
        exists = key.exists()
    except (OSError, RuntimeError) as exc:  # a name too long, a symlink loop
        said = exc.strerror if isinstance(exc, OSError) else str(exc)
        raise UsageError(f"cannot use {key} as a key: {said}", field=field,
                         hint="pass the path of an SSH private key") from None
    if not exists:
        if not create:
            raise UsageError(f"no key at {key}", hint="pass --new-key PATH to create one")
        _create(key, name, field)
    public, fp = _public(key, field)
    return SigningKey(key, public, fp, not exists)


def setup_signing(root: Path, *, chosen: SigningKey, name: str, roles: tuple[str, ...],
                  require: bool | None) -> SigningSetup:
    key, public, fp, created = chosen.key, chosen.public, chosen.fingerprint, chosen.created
    principals = tuple(f"{role}:{name}" for role in roles)
    policy_path = root / POLICY_PATH
    text = policy_path.read_text(encoding="utf-8") if policy_path.exists() else ""
    added = not parse_policy(text.encode(), POLICY_PATH).knows(fp)
    if added:
        policy_path.parent.mkdir(parents=True, exist_ok=True)
        head = "" if text else ("# leapgit signer policy (OpenSSH allowed-signers format): "
                                "principals are <role>:<name>,\n# roles builder, scorer, "
                                "integrator, admin. See README \"Roles and signatures\".\n")
        sep = "\n" if text and not text.endswith("\n") else ""
        policy_path.write_text(text + sep + head + key_line(list(principals), public) + "\n",
                               encoding="utf-8")
    git.run(["config", "--local", "leap.signingKey", str(key)], root)
    return SigningSetup(key, fp, created, policy_path, added, principals,
                        _write_require(root, require))


def _write_require(root: Path, require: bool | None) -> bool | None:
    if require is None:
        return None
    path = root / CONFIG_PATH
    text = path.read_text(encoding="utf-8")
    if parse_config(text.encode(), str(CONFIG_PATH)).signing_required == require:
        return require
    if "\nsigning:" in "\n" + text:
        raise UsageError(f"{CONFIG_PATH} already has a signing section",
                         file=str(CONFIG_PATH), field="signing.require",
                         hint=f"set `require: {str(require).lower()}` there by hand")
    new = text.rstrip("\n") + ("\n\n# Roles bound to keys (README \"Roles and signatures\"): "
                               "the server refuses\n# unsigned or wrongly signed records when "
                               f"true.\nsigning:\n  require: {str(require).lower()}\n")
    parse_config(new.encode(), str(CONFIG_PATH))
    path.write_text(new, encoding="utf-8")
    return require
