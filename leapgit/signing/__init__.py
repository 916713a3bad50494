"""Roles bound to keys: who may sign what, signing, verification and the signature audit.

The policy is ``.leap/allowed_signers`` on the spine, in OpenSSH's allowed-signers format
(the file git reads for ``gpg.ssh.allowedSignersFile``). A key's roles are written as
principals ``<role>:<name>``, e.g. ``builder:alice,admin:alice``; the roles are ``builder``,
``scorer``, ``integrator`` and ``admin``. ``valid-after``/``valid-before`` retire a key.

Server rules (``rules/signatures.py``), enforced when the spine's config says
``signing: {require: true}``:

- **S1 signed**: every new ledger commit, spine merge and ball round carries a good SSH
  signature over its exact bytes (unsigned, bad signature, content altered: refused).
- **S2 known key**: the key is in the policy and valid at the commit's time and at the push.
- **S3 role**: the key holds the role the record kind needs (``roles.RECORD_ROLES``).
- **S4 the builder never grades itself** (L7, L9, T4; L3 the thrower never grades): a
  grading record for a ball signed by a key that signed one of its rounds or its throw,
  or by another key of the same person (the same principal name); re-derived at the spine
  for every commit a merge's candidate brings (two pushes racing on two refs both land).
- **S5 one integrator key** (L9): the lease and every spine merge under it, one key.
- **S6 admin changes the policy**: new bytes of ``.leap/allowed_signers`` or
  ``.leap/config.yaml`` on the spine were signed by an admin key.

``leap audit-signatures`` replays the history through the same rules (``replay``), each
commit under the policy in force where it landed, read from the topology (``timeline``).
"""

from __future__ import annotations

POLICY_PATH = ".leap/allowed_signers"
