"""Untrusted text on the pusher's terminal (issue 18 F9): paths, ref names and record text
are printed with their control characters escaped, so a newline cannot forge a
``remote: leap pre-receive: ...`` line and an ANSI escape never reaches the terminal; a ball
ref that is not UTF-8 is refused with one clear line, never a crash."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from leapgit.errors import printable
from tests.hooks.world import SLICE, World, commit, remote_refs, round_message
from tests.support import git

FORGED = "x\nremote: leap pre-receive: all checks passed\x1b[2K\r\x1b[32mok\x1b[0m"


@pytest.fixture
def w(world: World) -> Iterator[World]:
    before = remote_refs(world.bare)
    yield world
    assert remote_refs(world.bare) == before, "a refused push changed the remote"
    git("checkout", "-q", "-f", "main", cwd=world.work)
    git("reset", "-q", "--hard", world.base, cwd=world.work)
    world.reset_ledger()


def test_printable_leaves_alone_only_text_with_nothing_to_escape() -> None:
    """``printable`` skips its pattern for text ``str.isprintable`` passes: that is right only
    if no character the pattern escapes is one isprintable() passes. Every code point."""
    import re

    from leapgit.errors import _UNSAFE

    unsafe = re.compile(_UNSAFE)
    passed = [hex(c) for c in range(0x110000) if unsafe.match(chr(c)) and chr(c).isprintable()]
    assert passed == []
    assert printable("\u202e") == "\\u202e" and printable("caf\u00e9") == "caf\u00e9"


@pytest.mark.parametrize(("text", "shown"), [
    ("plain text, tabs\tand all", "plain text, tabs\\tand all"),
    ("a\nb\r\x1b[31m", "a\\nb\\r\\x1b[31m"),
    ("\x00\x07\x7f\x9b", "\\x00\\x07\\x7f\\x9b"),  # C0, DEL, C1 (a CSI on some terminals)
    ("bad\udcff.txt", "bad\\xff.txt"),  # a byte that is not UTF-8, as surrogateescape reads it
    ("rtl\u202e\u2066\u2028", "rtl\\u202e\\u2066\\u2028"),  # bidi overrides, line separator
    ("caf\u00e9 \u2603 \\n", "caf\u00e9 \u2603 \\n"),  # printable text and a literal \\n stay
])
def test_printable_escapes_what_a_terminal_would_obey(text: str, shown: str) -> None:
    assert printable(text) == shown
    assert printable(shown) == shown  # idempotent on its own output
    printable(text).encode("utf-8")  # always encodable


def test_a_path_cannot_forge_a_hook_line_or_reach_the_terminal(w: World) -> None:
    git("checkout", "-q", "-B", f"leap/ball/{SLICE}/a", w.base, cwd=w.work)
    commit(w.work, {"src/a.py": "A = 10\n", FORGED: "evil\n"}, round_message("a", 1))
    result = w.push(f"leap/ball/{SLICE}/a")
    assert result.returncode != 0, result.stderr
    assert "\x1b" not in result.stderr and "\r" not in result.stderr
    lines = result.stderr.splitlines()
    assert not any(line.startswith("remote: leap pre-receive: all checks passed")
                   for line in lines), result.stderr
    shown = printable(FORGED)
    assert any(f"{shown}: outside the scope of ball s1/a" in line and "[L4]" in line
               for line in lines), result.stderr


def test_a_ball_ref_that_is_not_utf8_is_refused_with_one_clear_line(w: World) -> None:
    name = f"refs/heads/leap/ball/{SLICE}/a".encode() + b"\xff"
    head = git("rev-parse", "main", cwd=w.work).encode()
    subprocess.run([b"git", b"update-ref", name, head], cwd=w.work, check=True)
    try:
        result = subprocess.run([b"git", b"push", b"--no-verify", str(w.bare).encode(),
                                 name + b":" + name], cwd=w.work, capture_output=True)
    finally:
        subprocess.run([b"git", b"update-ref", b"-d", name], cwd=w.work, check=True)
    err = result.stderr.decode("utf-8", "replace")
    assert result.returncode != 0, err
    assert "internal error" not in err and "Traceback" not in err, err
    assert f"refs/heads/leap/ball/{SLICE}/a\\xff" in err, err
    assert "[L4]" in err, err


def test_the_cli_error_printer_escapes_what_it_names(tmp_path: Path) -> None:
    from tests.support import leap, make_repo

    repo = make_repo(tmp_path / "r", {"a.txt": "a\n"})
    assert leap("init", cwd=repo).code == 0
    bad = "draft\x1b[2J\nleap: all good.yaml"
    result = leap("slice", "check", bad, cwd=repo, subprocess=True)
    assert result.code == 2, result
    assert "\x1b" not in result.err and "\nleap: all good" not in result.err, result.err
    assert "draft\\x1b[2J\\nleap: all good.yaml" in result.err, result.err


def test_record_text_the_cli_prints_is_escaped(w: World) -> None:
    from tests.hooks.world import forge_ledger_commit
    from tests.support import leap

    forge_ledger_commit(w, {"notes/x.yaml": b"kind: note\n"}, "evil\x1b]0;owned\x07 subject")
    result = leap("log", "-n", "1", cwd=w.work, subprocess=True)
    assert result.code == 0, result
    assert "\x1b" not in result.out and "\x07" not in result.out, result.out
    assert "evil\\x1b]0;owned\\x07 subject" in result.out, result.out


def test_the_shadow_refusal_prints_the_name_escaped_never_as_a_repr(w: World) -> None:
    """Blind review r2: the short name a masking tag shadows was printed as Python's repr
    ('...\\udcff' for a byte that is not UTF-8, quotes and all); it is printed as the
    printable name, the byte as itself."""
    name = b"refs/tags/leap/x\xc2\x9b31m\xff"  # a C1 CSI and a byte that is not UTF-8
    head = git("rev-parse", "main", cwd=w.work).encode()
    subprocess.run([b"git", b"update-ref", name, head], cwd=w.work, check=True)
    try:
        result = subprocess.run([b"git", b"push", b"--no-verify", str(w.bare).encode(),
                                 name + b":" + name], cwd=w.work, capture_output=True)
    finally:
        subprocess.run([b"git", b"update-ref", b"-d", name], cwd=w.work, check=True)
    err = result.stderr.decode("utf-8", "replace")
    assert result.returncode != 0, err
    ours = "\n".join(line for line in err.splitlines() if line.startswith("remote:"))
    assert "\x9b" not in ours and "udcff" not in ours, err  # git's own lines are git's
    assert "[L8] refs/tags/leap/x\\x9b31m\\xff" in err, err
    assert "its short name `leap/x\\x9b31m\\xff` shadows" in err, err
