"""Blind review (7e5e012): `leap status`'s signature count, read from git's log of the
ledger (``audit.presence``), says what the commit objects say, as dulwich reads them: an
empty ``gpgsig`` header is no signature, a name that is not UTF-8 keeps its bytes, the
ledger ref is that very ref, and a graft never makes a kept count count a commit twice."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from leapgit.audit.presence import presence_cache, signature_presence

REF = "refs/heads/leap/ledger"
WHEN = "1700000000 +0000"


def g(repo: Path, *args: str, data: bytes | None = None) -> str:
    return subprocess.run(["git", *args], cwd=repo, input=data, capture_output=True,
                          check=True).stdout.decode("utf-8", "surrogateescape").strip()


def tree(repo: Path, files: dict[bytes, bytes]) -> str:
    out = b""
    for name, data in sorted(files.items()):
        sha = g(repo, "hash-object", "-w", "--stdin", data=data)
        out += b"100644 " + name + b"\0" + bytes.fromhex(sha)
    return g(repo, "hash-object", "-w", "-t", "tree", "--stdin", data=out)


def commit(repo: Path, files: dict[bytes, bytes], parents: tuple[str, ...] = (),
           header: bytes = b"", message: bytes = b"m") -> str:
    body = b"tree " + tree(repo, files).encode() + b"\n"
    body += b"".join(b"parent " + p.encode() + b"\n" for p in parents)
    body += f"author a <a@x> {WHEN}\ncommitter a <a@x> {WHEN}\n".encode() + header
    return g(repo, "hash-object", "-w", "-t", "commit", "--stdin", data=body + b"\n" +
             message + b"\n")


def repo_at(tmp_path: Path) -> Path:
    repo = tmp_path / "r"
    repo.mkdir()
    g(repo, "init", "-q")
    return repo


SIGNED = b"gpgsig -----BEGIN PGP SIGNATURE-----\n \n abc\n -----END PGP SIGNATURE-----\n"


def test_an_empty_signature_header_is_no_signature(tmp_path: Path) -> None:
    repo = repo_at(tmp_path)
    a = commit(repo, {b"a.yaml": b"a\n"}, header=SIGNED)
    b = commit(repo, {b"a.yaml": b"a\n", b"b.yaml": b"b\n"}, (a,), header=b"gpgsig \n")
    c = commit(repo, {b"a.yaml": b"a\n", b"b.yaml": b"b\n", b"c.yaml": b"c\n"}, (b,),
               message=b"gpgsig in a message is no header")
    g(repo, "update-ref", REF, c)
    found = signature_presence(repo / ".git", REF)
    assert (found.commits, found.unsigned_commits, found.unsigned_records) == \
        (3, 2, ("b.yaml", "c.yaml"))


def test_a_name_that_is_not_utf8_keeps_its_bytes(tmp_path: Path) -> None:
    repo = repo_at(tmp_path)
    g(repo, "update-ref", REF, commit(repo, {b"\xff\xfe.yaml": b"x\n"}))
    found = signature_presence(repo / ".git", REF)
    assert found.unsigned_records == (b"\xff\xfe.yaml".decode("utf-8", "surrogateescape"),)


def test_the_ledger_ref_is_that_ref_and_no_name_git_would_guess_for_it(
        tmp_path: Path) -> None:
    repo = repo_at(tmp_path)
    g(repo, "update-ref", f"refs/heads/{REF}", commit(repo, {b"a.yaml": b"a\n"}))
    assert signature_presence(repo / ".git", REF).commits == 0  # REF itself is not there


def test_a_graft_never_makes_a_kept_count_count_a_dropped_commit(tmp_path: Path) -> None:
    repo = repo_at(tmp_path)
    a = commit(repo, {b"a.yaml": b"a\n"})
    b = commit(repo, {b"a.yaml": b"a\n", b"b.yaml": b"b\n"}, (a,))
    g(repo, "update-ref", REF, b)
    kept = presence_cache(repo / ".git")
    assert signature_presence(repo / ".git", REF, cache=kept).commits == 2
    t = commit(repo, {b"a.yaml": b"a\n", b"c.yaml": b"c\n"}, (a,))  # the ledger rewritten
    g(repo, "update-ref", REF, t)
    os.makedirs(repo / ".git" / "info", exist_ok=True)
    (repo / ".git" / "info" / "grafts").write_text(f"{t} {b}\n")  # a local hack
    counted = signature_presence(repo / ".git", REF, cache=kept)
    assert counted == signature_presence(repo / ".git", REF)
    assert (counted.commits, counted.unsigned_records) == (2, ("a.yaml", "c.yaml"))
