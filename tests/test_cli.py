"""The click layer loads a command only when it runs (issue 13): `leap --version` and
`leap status` start without the modules other commands need, and `leap --help` still lists
every command with the short help click would derive from the command itself."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

import click
import pytest

from tests.slices.drafts import base_draft, write
from tests.support import ROOT, leap

HEAVY = ("dulwich", "httpx", "ruamel", "fastjsonschema", "importlib.metadata")


def imported(*args: str, cwd: Path) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    """Every module the `leap ARGS` process imports (`python -X importtime -m leapgit`)."""
    proc = subprocess.run([sys.executable, "-X", "importtime", "-m", "leapgit", *args],
                          cwd=cwd, capture_output=True, text=True)
    names = {line.rsplit("|", 1)[1].strip() for line in proc.stderr.splitlines()
             if line.startswith("import time:") and "|" in line}
    return names, proc


def under(names: set[str], package: str) -> set[str]:
    return {n for n in names if n == package or n.startswith(package + ".")}


def command_modules(names: set[str]) -> set[str]:
    """``names`` without the commands package and its console (what every command prints
    and ends through): no command's module."""
    return names - {"leapgit.commands", "leapgit.commands.console"}


def test_version_imports_no_command_and_no_heavy_library(tmp_path: Path) -> None:
    names, proc = imported("--version", cwd=tmp_path)
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert proc.returncode == 0 and proc.stdout == f"leap, version {version}\n"
    assert not under(names, "click"), "leap --version is answered without click (launch)"
    for package in (*HEAVY, "leapgit.commands", "leapgit.records", "json", "tempfile"):
        found = command_modules(under(names, package))
        assert not found, f"leap --version imports {sorted(found)}"


def test_help_lists_every_command_without_building_one(tmp_path: Path) -> None:
    names, proc = imported("--help", cwd=tmp_path)
    assert proc.returncode == 0
    assert not command_modules(under(names, "leapgit.commands")) and not under(names, "dulwich")
    listed = [line.split()[0] for line in proc.stdout.split("Commands:\n")[1].splitlines()]
    assert listed == ["audit", "audit-signatures", "ball", "hooks", "init", "lease", "log",
                      "merge", "presets", "quickstart", "red", "round", "run", "score",
                      "slice", "status", "sync", "throw", "tribunal", "worker", "worktree"]


def test_status_imports_only_what_status_needs(repo: Path) -> None:
    assert leap("init", cwd=repo).code == 0
    assert leap("slice", "cut", str(write(repo.parent / "s.yaml", base_draft())),
                cwd=repo).code == 0
    names, proc = imported("status", cwd=repo)
    assert proc.returncode == 0 and "wave 0" in proc.stdout, proc.stderr[-2000:]
    for package in ("httpx", "importlib.metadata", "dulwich.porcelain", "leapgit.tribunal",
                    "leapgit.worktrees.throw", "leapgit.scoring.merge", "leapgit.hookimpl",
                    # the schemas are found by path (records.schema.schema_text)
                    "importlib.resources", "tempfile", "zipfile", "bz2", "lzma"):
        assert not under(names, package), f"leap status imports {sorted(under(names, package))}"
    # issue 13 (7): once the records were read, the record cache answers for them; and for a
    # slice never thrown nor merged no scoring record, pass rule or signature policy is built
    warm, again = imported("status", cwd=repo)
    assert again.returncode == 0 and again.stdout == proc.stdout, again.stderr[-2000:]
    for package in ("ruamel", "fastjsonschema", "decimal", "leapgit.records.tribunal_config",
                    "leapgit.records.scoring", "leapgit.rules.passes", "leapgit.signing",
                    "leapgit.rules.signing_history", "leapgit.audit.signatures",
                    "dulwich.walk", "dulwich.diff_tree", "dulwich.repo"):
        assert not under(warm, package), f"leap status imports {sorted(under(warm, package))}"


def listing(group: click.Group, width: int) -> str:
    formatter = click.HelpFormatter(width=width)
    group.format_commands(click.Context(group, info_name="leap"), formatter)
    return formatter.getvalue()


@pytest.mark.parametrize("width", [30, 50, 80, 120, 200])
def test_the_lazy_listing_is_what_click_renders_from_the_built_commands(width: int) -> None:
    from leapgit.cli import LazyGroup, cli

    fresh = LazyGroup("leap", table=cli.table)
    lazy = listing(fresh, width)
    assert not fresh.commands, "the listing built a command"
    built = click.Group("leap", commands={name: entry.build()
                                          for name, entry in cli.table.items()})
    assert lazy == listing(built, width) and "  status  " in lazy


def test_every_table_entry_names_its_command_and_its_short_help() -> None:
    from leapgit.cli import cli

    ctx = click.Context(cli, info_name="leap")
    for name in cli.list_commands(ctx):
        command = cli.get_command(ctx, name)
        assert command is not None and command.name == name
        stub = click.Command(name, help=cli.table[name].help)
        for limit in range(3, 160):
            assert stub.get_short_help_str(limit) == command.get_short_help_str(limit), name


def test_a_mistyped_command_is_still_told_the_near_name(tmp_path: Path) -> None:
    typo = leap("stauts", cwd=tmp_path)
    assert typo.code == 2 and "No such command 'stauts'. Did you mean 'status'?" in typo.err
    nested = leap("slice", "chek", cwd=tmp_path)
    assert nested.code == 2 and "Did you mean 'check'?" in nested.err


@pytest.mark.parametrize("closed", [">&-", "2>&-"])
def test_audit_started_with_a_stream_closed_keeps_its_exit_code(tmp_path: Path,
                                                                 closed: str) -> None:
    """Blind review (75955da): `leap audit` leaves through ``os._exit``; started with stdout
    or stderr closed (cron, a daemon), flushing the missing stream raised, and the audit's
    exit 2 (no repository here) became a traceback and exit 1."""
    done = subprocess.run(["sh", "-c", f'exec "$0" -m leapgit audit {closed}', sys.executable],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                               "GIT_CEILING_DIRECTORIES": str(tmp_path.parent)})
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr + done.stdout


@pytest.mark.parametrize(("args", "plain"), [
    (["status"], (None, False)),
    (["status", "--json"], (None, True)),
    (["status", "s1"], ("s1", False)),
    (["status", "s1", "--json"], ("s1", True)),
    (["status", "--json", "s1"], ("s1", True)),
    (["status", "--json", "--json"], None),  # click's to read, as every other line
    (["status", "s1", "s2"], None),
    (["status", "--help"], None),
    (["status", "-h"], None),
    (["status", "--", "s1"], None),
    (["status", "--jso"], None),
    (["log"], None),
    ([], None),
])
def test_only_a_plain_status_line_skips_click(args: list[str],
                                              plain: tuple[str | None, bool] | None) -> None:
    from leapgit.launch import plain_status

    assert plain_status(args) == plain


def test_status_is_answered_without_click(repo: Path) -> None:
    """Issue 13 (7): `leap status` starts without click, a fifth of its start-up; its help
    and its mistakes are still click's."""
    assert leap("init", cwd=repo).code == 0
    assert leap("slice", "cut", str(write(repo.parent / "s.yaml", base_draft())),
                cwd=repo).code == 0
    for args in (["status"], ["status", "--json"], ["status", "--json", "s1"]):
        names, proc = imported(*args, cwd=repo)
        shown = "slice s1 " in proc.stdout or '"slice": "s1"' in proc.stdout
        assert proc.returncode == 0 and shown, proc.stderr[-2000:]
        assert not under(names, "click"), f"leap {' '.join(args)} imports click"
    names, proc = imported("status", "--help", cwd=repo)
    assert proc.returncode == 0 and "Usage: leap status [OPTIONS] [SLICE]" in proc.stdout
    assert under(names, "click")


CLICK_ONLY = ("import sys; from leapgit.cli import cli, run; run(cli, sys.argv[1:])")


@pytest.mark.parametrize("args", [["status"], ["status", "--json"], ["status", "s1"],
                                  ["status", "--json", "s1"], ["status", "nope"],
                                  ["status", "--json", "nope"]])
def test_a_plain_status_says_what_click_says(repo: Path, args: list[str]) -> None:
    """The fast path and click's parse of the same line print the same, byte for byte,
    and exit the same: a known slice, all slices, and an unknown slice's refusal."""
    assert leap("init", cwd=repo).code == 0
    assert leap("slice", "cut", str(write(repo.parent / "s.yaml", base_draft())),
                cwd=repo).code == 0
    fast = subprocess.run([sys.executable, "-m", "leapgit", *args], cwd=repo,
                          capture_output=True, text=True, timeout=60)
    slow = subprocess.run([sys.executable, "-c", CLICK_ONLY, *args], cwd=repo,
                          capture_output=True, text=True, timeout=60)
    assert (fast.returncode, fast.stdout, fast.stderr) == (slow.returncode, slow.stdout,
                                                           slow.stderr)
    assert fast.returncode == (2 if "nope" in args else 0), fast.stderr
    assert "s1" in fast.stdout + fast.stderr and "Traceback" not in fast.stderr


def test_status_outside_a_repository_fails_as_click_did(tmp_path: Path) -> None:
    fast = subprocess.run([sys.executable, "-m", "leapgit", "status"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path),
                               "GIT_CEILING_DIRECTORIES": str(tmp_path.parent)})
    assert fast.returncode == 2 and fast.stderr.startswith("leap: "), fast.stderr
    assert fast.stdout == "" and "Traceback" not in fast.stderr


def _cut(repo: Path) -> None:
    assert leap("init", cwd=repo).code == 0
    assert leap("slice", "cut", str(write(repo.parent / "s.yaml", base_draft())),
                cwd=repo).code == 0


@pytest.mark.parametrize("args", [["status"], ["log"]])
def test_a_reader_that_goes_away_ends_the_command_quietly(repo: Path, args: list[str]
                                                          ) -> None:
    """Blind review (ba2658b): `leap status | true` reported an internal error and wrote a
    crash log (the fast path never met click, which exits 1 without a word on a broken
    pipe); both ways out of a command now end as click ended it."""
    _cut(repo)
    done = subprocess.run(["bash", "-c", f'"$0" -m leapgit {" ".join(args)} | true; '
                           'echo "exit ${PIPESTATUS[0]}" >&2', sys.executable], cwd=repo,
                          capture_output=True, text=True, timeout=60)
    assert done.stderr == "exit 1\n", done.stderr


BROKEN_DULWICH = """\
import sys
class Broken:
    def find_spec(self, name, path=None, target=None):
        if name == "dulwich.object_store":
            raise ImportError("dulwich is broken here")
sys.meta_path.insert(0, Broken())
sys.argv = ["leap", *sys.argv[1:]]
from leapgit.launch import main
main()
"""


def test_a_failure_while_status_loads_is_handled_as_every_commands(repo: Path) -> None:
    """Blind review (ba2658b): the fast path imported the ledger's modules before the error
    handler was entered, so a broken install (or a Ctrl-C then) printed a traceback."""
    _cut(repo)
    done = subprocess.run([sys.executable, "-c", BROKEN_DULWICH, "status"], cwd=repo,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 70, done.stderr
    assert done.stderr.startswith("leap: internal error: ImportError: dulwich is broken")
    assert "Traceback" not in done.stderr


def test_output_to_a_stream_that_declares_ascii_is_written_as_utf8(repo: Path) -> None:
    """Blind review (ba2658b): click.echo writes UTF-8 to a stream that declares ASCII
    (PYTHONIOENCODING=ascii); the printer every command uses now does too, instead of an
    internal error on the first character past ASCII."""
    _cut(repo)
    assert leap("slice", "abandon", "s1", "--reason", "café closed — for now",
                cwd=repo).code == 0
    for args in (["status"], ["log"]):
        done = subprocess.run([sys.executable, "-m", "leapgit", *args], cwd=repo,
                              capture_output=True, timeout=60,
                              env={**os.environ, "PYTHONIOENCODING": "ascii"})
        assert done.returncode == 0, done.stderr
        assert "café closed — for now".encode() in done.stdout, done.stdout


def test_an_interrupt_ends_the_line_the_terminals_ctrl_c_began(repo: Path) -> None:
    """Blind review (ba2658b): click writes a line break before its "interrupted" (the
    terminal's ^C has no line of its own); the fast path now does too."""
    _cut(repo)
    code = ("import sys; import leapgit.commands.status as s\n"
            "def stop(*a, **k): raise KeyboardInterrupt\n"
            "s.status = stop; sys.argv = ['leap', *sys.argv[1:]]\n"
            "from leapgit.launch import main; main()")
    for args in (["status"], ["status", "--json"]):
        done = subprocess.run([sys.executable, "-c", code, *args], cwd=repo,
                              capture_output=True, text=True, timeout=60)
        assert (done.returncode, done.stderr) == (130, "\nleap: interrupted\n"), done


def _float_options() -> list[tuple[str, str]]:
    """Every float option of every command, built from the table."""
    from leapgit.cli import COMMANDS

    found = []
    for name, lazy in COMMANDS.items():
        for param in lazy.build().params:
            if isinstance(param, click.Option) and isinstance(param.type, click.FloatRange):
                found.append((name, param.opts[0]))
    return found


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e999"])
def test_no_float_option_takes_a_number_that_is_not_finite(tmp_path: Path,
                                                           value: str) -> None:
    """README: NaN and infinity are refused wherever a number goes. NaN compares false with
    every bound, so `leap run S --max-minutes nan` passed its range and set no limit at
    all (a bad-input hunt)."""
    options = _float_options()
    assert ("run", "--max-minutes") in options and ("worker", "--poll") in options, options
    for command, option in options:
        extra = ["--remote", "origin"] if command == "worker" else []
        r = leap(command, "s1", *extra, option, value, cwd=tmp_path)
        assert r.code == 2, (command, option, r)
        assert f"Invalid value for '{option}'" in r.err, (command, option, r.err)
        # an infinity is past every range's floor or ceiling, which click names first
        assert "not a finite number" in r.err or (value != "nan" and "not in the range"
                                                  in r.err), (command, option, r.err)


def test_every_float_option_has_a_ceiling(tmp_path: Path) -> None:
    """A blind review: `leap run S --remote R --poll 1e10` was finite, so taken, and the
    first sleep on it ended the run with an internal error (exit 70). Each float option
    now names its range, as click does for any number outside it: exit 2."""
    for command, option in _float_options():
        extra = ["--remote", "origin"] if command == "worker" else []
        r = leap(command, "s1", *extra, option, "1e10", cwd=tmp_path)
        assert r.code == 2 and "is not in the range" in r.err, (command, option, r)


def test_an_interrupt_while_the_click_layer_loads_ends_as_any_interrupt(repo: Path) -> None:
    """A kill-anywhere soak: a Ctrl-C in the first fraction of a second of `leap run`, while
    its click layer was still loading, ended in a raw KeyboardInterrupt traceback and a
    death by SIGINT (exit -2), no line of leap's own."""
    code = ("import sys\n"
            "class Stop:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        if name == 'leapgit.cli': raise KeyboardInterrupt\n"
            "sys.meta_path.insert(0, Stop()); sys.argv = ['leap', *sys.argv[1:]]\n"
            "from leapgit.launch import main; main()")
    done = subprocess.run([sys.executable, "-c", code, "run", "s1"], cwd=repo,
                          capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stderr.strip()) == (130, "leap: interrupted"), done
