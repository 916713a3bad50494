"""Who is pushing, when the transport says so.

Honoured, in this order (the first one present wins):

1. a signed push (``git push --signed``): ``GIT_PUSH_CERT_SIGNER`` when
   ``GIT_PUSH_CERT_STATUS`` is ``G`` (a good signature) and, if git checked a nonce,
   ``GIT_PUSH_CERT_NONCE_STATUS`` is ``OK``; a certificate in any other state is refused;
2. ``REMOTE_USER`` (the authenticated user of ``git http-backend`` behind a web server);
3. ``GL_USERNAME`` (GitLab);
4. ``GITEA_PUSHER_NAME`` (Gitea, Forgejo).

Plain ``git daemon`` and bare ssh name nobody: the lease is still required, the holder
cannot be checked.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

PLAIN_SOURCES = ("REMOTE_USER", "GL_USERNAME", "GITEA_PUSHER_NAME")


@dataclass(frozen=True)
class Pusher:
    name: str
    source: str


class BadPushCertificate(Exception):
    """A signed push whose signature or nonce git did not accept."""


def pusher_from_env(env: Mapping[str, str]) -> Pusher | None:
    if env.get("GIT_PUSH_CERT"):
        status = env.get("GIT_PUSH_CERT_STATUS", "")
        nonce = env.get("GIT_PUSH_CERT_NONCE_STATUS")
        signer = env.get("GIT_PUSH_CERT_SIGNER", "")
        if status != "G" or (nonce is not None and nonce != "OK") or not signer:
            raise BadPushCertificate(
                f"push certificate status {status or '?'}, nonce {nonce or 'unchecked'}"
            )
        return Pusher(signer, "GIT_PUSH_CERT_SIGNER")
    for source in PLAIN_SOURCES:
        if env.get(source):
            return Pusher(env[source], source)
    return None
