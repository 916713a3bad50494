"""The policy parser: role principals, lifetimes, namespaces, refusals of what it cannot
honour."""

from __future__ import annotations

import calendar
import time

import pytest

from leapgit.errors import InvalidRecord
from leapgit.signing.policy import parse_policy

KEY = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIr8uowykd2zpfRhnVAcFhBmLztfSzvFTC9snLXzJcV/"
T2020 = calendar.timegm(time.strptime("20200101", "%Y%m%d"))


def test_roles_names_and_lifetimes() -> None:
    policy = parse_policy(
        f'# comment\nbuilder:alice,"scorer:alice",alice@example.org '
        f'valid-after="20190101Z",valid-before="20200101Z" {KEY} alice\n'.encode())
    (key,) = policy.keys
    assert key.roles == {"builder", "scorer"} and key.names == ("alice",)
    assert policy.standing(key.fingerprint, T2020 - 1) is not None
    assert policy.standing(key.fingerprint, T2020) is None  # valid-before is exclusive
    assert policy.standing(key.fingerprint, T2020 - 366 * 86400) is None


def test_namespaces_must_allow_git() -> None:
    policy = parse_policy(f'admin:root namespaces="file" {KEY}\n'.encode())
    assert policy.standing(policy.keys[0].fingerprint, T2020) is None


@pytest.mark.parametrize(("line", "why"), [
    (f"wizard:x {KEY}", "unknown role 'wizard'"),
    (f"admin:x cert-authority {KEY}", "cert-authority lines are not supported"),
    (f'admin:x valid-before="2020-01-01" {KEY}', "is not a time ssh-keygen reads"),
    ("admin:x ssh-ed25519", "expected principals"),
])
def test_refused_lines(line: str, why: str) -> None:
    with pytest.raises(InvalidRecord, match=why):
        parse_policy(line.encode())
