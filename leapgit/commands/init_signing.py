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


def _public(key: Path) -> str:
    pub = key.with_name(key.name + ".pub")
    if not pub.exists():
        raise UsageError(f"no public key {pub} beside {key}",
                         hint="pass the private key whose .pub sits next to it")
    return pub.read_text(encoding="utf-8").strip()


def _create(key: Path, name: str) -> None:
    key.parent.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", name, "-f",
                           str(key)], capture_output=True, check=False)
    if proc.returncode != 0:
        raise UsageError(f"ssh-keygen could not create {key}: "
                         f"{proc.stderr.decode('utf-8', 'replace').strip()}")


def setup_signing(root: Path, *, key: Path, create: bool, name: str, roles: tuple[str, ...],
                  require: bool | None) -> SigningSetup:
    bad = [r for r in roles if r not in ROLES]
    if bad or not roles:
        raise UsageError(f"unknown role(s) {', '.join(bad) or '(none given)'}",
                         hint=f"choose from {', '.join(ROLES)}")
    key = key.expanduser().resolve()
    created = False
    if not key.exists():
        if not create:
            raise UsageError(f"no key at {key}", hint="pass --new-key PATH to create one")
        _create(key, name)
        created = True
    public = _public(key)
    fp = fingerprint(base64.b64decode(public.split()[1]))
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
