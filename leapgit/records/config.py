"""`.leap/config.yaml`: read once, validated, turned into a frozen ``Config``."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from leapgit.errors import InvalidRecord, Problem, UsageError
from leapgit.records import yamlio
from leapgit.records.cache import blob_id
from leapgit.records.types import Config

if TYPE_CHECKING:
    from leapgit.records.cache import RecordCache

CONFIG_PATH = Path(".leap") / "config.yaml"


def parse_config(data: bytes, source: str, cache: RecordCache | None = None) -> Config:
    """The config in ``data``; with a cache (the post-commit hook's), bytes found valid once
    are not parsed or checked again."""
    blob = None
    if cache is not None:
        blob = blob_id(data)
        config = _cached(cache.get(blob))
        if config is not None:
            # kept only once every check below passed, by the same code: the cache's folder
            # is stamped with leapgit/records (these checks) and dulwich's version (the ref
            # name check they call), so `leap status` loads no dulwich for them
            return config
    raw = _validated(data, source)
    config = Config.from_dict(raw)
    found = _name_problems(config, source)
    found.extend(builder_problems(raw.get("builder") or {}, source))
    found.extend(identity_problems(config.builder_identity, source, "builder.identity"))
    try:
        config.tribunal  # noqa: B018 -- its rungs are checked here, when the config is read
    except InvalidRecord as exc:
        found.extend(exc.problems)
    if found:  # every problem at once (issue 14)
        raise InvalidRecord(problems=found)
    if cache is not None and blob is not None:
        cache.put(blob, raw)
    return config


def _cached(entry: dict[str, Any] | None) -> Config | None:
    """The config a cache entry holds; None for none, or for an entry damaged from outside
    (a file edited by hand): that costs a parse, never a command."""
    if entry is None:
        return None
    try:
        return Config.from_dict(entry)
    except (KeyError, TypeError, ValueError, AttributeError):
        return None


def _validated(data: bytes, source: str) -> dict[str, Any]:
    try:
        raw = yamlio.loads(data, source)
    except InvalidRecord as exc:
        raise _tagged(exc, source) from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise InvalidRecord(f"is {_KINDS.get(type(raw), 'a value')}, expected a mapping",
                            file=source, field="(top level)", rule="config",
                            hint="write `key: value` lines (version, spine, ledger_ref, ...)")
    from leapgit.records import schema  # only to validate: a cached config skips it

    try:
        schema.validate(raw, "config", source, rule="config")
    except InvalidRecord as exc:  # with the ref rules a schema cannot say, all at once
        named = {p.field for p in exc.problems}
        raise InvalidRecord(problems=[*(_whole(p) for p in exc.problems), *(
            p for p in _raw_ref_problems(raw, source) if p.field not in named)]) from None
    return raw


# what a config written by hand lacks is what `leap init` writes (the dogfooding review: a
# config of a builder's keys alone refused every command, `leap init` too, with no hint)
_INIT_WRITES = ("move the file aside and run `leap init`, which writes a whole one, then "
                "copy your keys into it")


def _whole(problem: Problem) -> Problem:
    """Only the top level's fields are what `leap init` writes (a rung's are not)."""
    top = problem.field in (None, "(top level)")
    if top and problem.message.startswith("missing required field") and not problem.hint:
        return problem._replace(hint=_INIT_WRITES)
    return problem


_KINDS = {list: "a list", str: "text", int: "a number", float: "a number", bool: "a boolean"}


def _tagged(exc: InvalidRecord, source: str) -> InvalidRecord:
    """A config file that cannot be read, with the tag every config problem carries."""
    return InvalidRecord(problems=[p._replace(file=source, rule=p.rule or "config")
                                   for p in exc.problems])


def _raw_ref_problems(raw: dict[str, Any], source: str) -> list[Problem]:
    """``_name_problems`` of a config the schema refused, as far as its names are text."""
    ledger_ref, spine = raw.get("ledger_ref"), raw.get("spine")
    prefix = raw.get("ball_branch_prefix", Config().ball_branch_prefix)
    if not (isinstance(ledger_ref, str) and isinstance(spine, str) and isinstance(prefix, str)):
        return []
    return _name_problems(Config(spine, ledger_ref, ball_branch_prefix=prefix), source)


def _name_problems(config: Config, source: str) -> list[Problem]:
    """The git names of a config: each one git would take, none in another's way."""
    return [*ref_problems(config.ledger_ref, config.spine, source),
            *ball_prefix_problems(config.ball_branch_prefix, config.spine, config.ledger_ref,
                                  source)]


def check_refs(config: Config, source: str) -> None:
    found = ref_problems(config.ledger_ref, config.spine, source)
    if found:
        raise InvalidRecord(problems=found)


def ledger_ref_problem(ledger_ref: str, source: str, said: str = "",
                       hint: str = "use a name like refs/heads/leap/ledger") -> Problem | None:
    """Whether git takes ``ledger_ref`` as a ref name at all (``said``: where it was read,
    when not plainly in ``source``)."""
    from dulwich.refs import check_ref_format  # only to validate: a cached config skips it

    from leapgit.gitobj import refname
    from leapgit.records import schema

    # as the config's schema says it (a copy kept of a config is not checked again), then
    # as git does
    pattern = schema.schema("config")["properties"]["ledger_ref"]["pattern"]
    if isinstance(ledger_ref, str) and re.search(pattern, ledger_ref) and \
            check_ref_format(refname(ledger_ref)):
        return None
    return Problem(f"{ledger_ref!r} is not a valid git ref name{said}", source, "ledger_ref",
                   "config", hint)


def ref_problems(ledger_ref: str, spine: str, source: str) -> list[Problem]:
    bad_name = ledger_ref_problem(ledger_ref, source)
    found: list[Problem] = [bad_name] if bad_name is not None else []
    ledger = ledger_ref.removeprefix("refs/heads/") if ledger_ref.startswith("refs/heads/") \
        else None
    if ledger == spine:
        found.append(Problem("the ledger cannot live on the spine branch", source,
                             "ledger_ref", "config", "the ledger is an orphan branch of its own"))
    elif ledger is not None and _nested(spine, ledger):
        found.append(Problem(f"the ledger's branch {ledger!r} and the spine {spine!r} would "
                             "collide: git keeps no branch both as a name and as a folder of "
                             "names", source, "ledger_ref", "config",
                             "give the ledger a branch of its own, e.g. leap/ledger"))
    found.extend(branch_problems(spine, source, "spine"))
    return found


def spine_problems(spine: str, field: str = "--spine") -> list[Problem]:
    """A spine given on its own (`leap init --spine`), with the default ledger branch and
    ball prefix: every problem the names have is the spine's, said at ``field``; the first
    is said, since another name mends them all."""
    return [p._replace(file=None, field=field, hint=p.hint if p.field == "spine" else
                       "choose another spine name")
            for p in _name_problems(Config(spine=spine), field)][:1]


def branch_problems(name: str, source: str | None, field: str) -> list[Problem]:
    """A name git refuses as a branch's (`git check-ref-format --branch`), said without
    running git: before anything is written, not as git's error much later."""
    from dulwich.refs import check_ref_format

    from leapgit.gitobj import refname

    # dulwich checks a full ref name; a branch may also not start with '-' nor be HEAD
    if check_ref_format(refname(f"refs/heads/{name}")) and name[:1] != "-" and name != "HEAD":
        return []
    return [Problem(f"{name!r} is not a valid git branch name", source, field, "config",
                    "git refuses spaces, '..', any of ~^:?*[\\, a part that starts with "
                    "'.' or ends in '.lock', a leading '-', a trailing '/', and HEAD")]


def ball_prefix_problems(prefix: str, spine: str, ledger_ref: str, source: str
                         ) -> list[Problem]:
    """Ball branches are <prefix>/<slice>/<ball>: git keeps no branch both as a name and as
    a folder of names, so the prefix stays clear of the spine and the ledger's branch."""
    found = branch_problems(prefix, source, "ball_branch_prefix")
    ledger = ledger_ref.removeprefix("refs/heads/") if ledger_ref.startswith("refs/heads/") \
        else None
    for name, what in ((spine, "the spine"), (ledger, "the ledger")):
        # <prefix>/<slice>/<ball> needs <prefix> and every folder above it as folders; a
        # branch deeper under the prefix clashes only with a slice or ball of its name
        if name is not None and (prefix == name or prefix.startswith(f"{name}/")):
            found.append(Problem(f"ball branches {prefix}/<slice>/<ball> would collide with "
                                 f"{what}'s branch {name!r}", source, "ball_branch_prefix",
                                 "config", "choose a prefix of their own, e.g. leap/ball"))
    if spine.startswith(f"{prefix}/"):  # e.g. `leap init` run in a ball's worktree
        found.append(Problem(f"the spine {spine!r} is under the ball branches' prefix "
                             f"{prefix}/: it would be taken for a ball's branch", source,
                             "spine", "config", "name the protected branch, e.g. main"))
    return found


def _nested(a: str, b: str) -> bool:
    return a == b or a.startswith(f"{b}/") or b.startswith(f"{a}/")


def builder_problems(builder: dict[str, Any], source: str) -> list[Problem]:
    """Issue 17: a builder preset names a known one, and stands instead of a command."""
    from leapgit.records import presets

    name = builder.get("preset")
    if name is None:
        return []
    if builder.get("command"):
        return [Problem("names both a preset and a command", source, "builder.preset",
                        "config", "keep one of them")]
    if presets.preset(name, "builder") is None:
        return [Problem(f"unknown builder preset {name!r}", source, "builder.preset", "config",
                        f"builder presets: {', '.join(presets.names('builder'))} "
                        "(`leap presets` lists them)")]
    return []


_IDENTITY_KEYS = ("model", "family", "session")


def parse_identity(text: str, *, file: str | None = None, field: str = "--builder"
                   ) -> dict[str, str]:
    """T4: a declared builder, ``model=ID,family=FAMILY,session=SESSION``; what is wrong
    with it is said at the ``field`` of the ``file`` it came from."""
    values: dict[str, str] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        key, sep, value = (s.strip() for s in part.partition("="))
        if not sep or key not in _IDENTITY_KEYS or not value:
            raise UsageError(f"cannot read {part!r}", file=file, field=field, rule="T4",
                             hint="write model=ID,family=FAMILY,session=SESSION")
        values[key] = value
    missing = [k for k in _IDENTITY_KEYS if k not in values]
    if missing:
        raise UsageError(f"missing {', '.join(missing)}", file=file, field=field, rule="T4",
                         hint="the builder is declared in full: "
                              "model=ID,family=FAMILY,session=SESSION")
    return values


def identity_problems(text: str | None, source: str, field: str) -> list[Problem]:
    """T4 at load: a config's declared builder is read when the config is, so a later
    command never blames a flag that was not passed."""
    if not text:
        return []
    try:
        parse_identity(text, file=source, field=field)
    except UsageError as exc:
        return list(exc.problems)
    return []


def load_config(root: Path | None, cache: RecordCache | None = None) -> Config:
    """The repository's config, or the defaults when it has none (a bare server repo, say)."""
    if root is None:
        return Config()
    path = root / CONFIG_PATH
    folder = CONFIG_PATH.parent
    for link, what in ((folder, "the folder that holds config.yaml"), (CONFIG_PATH, "the config")):
        if (root / link).is_symlink() and not (root / link).exists():  # never the defaults
            raise InvalidRecord(  # in silence, the folder's link or the file's
                f"is a symlink to {os.readlink(root / link)!r}, which is not there",
                file=str(link), field="(file)", rule="config",
                hint=f"point it at {what}, or remove it and run `leap init`")
    if (root / folder).exists() and not (root / folder).is_dir():  # nor a file in its place
        raise InvalidRecord("is not a folder: the config goes in .leap/config.yaml",
                            file=str(folder), field="(file)", rule="config",
                            hint="move it aside and run `leap init`")
    if not path.exists():
        return Config()
    try:
        data = yamlio.read_bytes(path)
    except InvalidRecord as exc:
        raise _tagged(exc, str(CONFIG_PATH)) from None
    return parse_config(data, str(CONFIG_PATH), cache)


def first_init(root: Path, hint: str) -> str:
    """``hint`` for a config key, led by `leap init` where no config file is there yet: it
    writes the file the key goes in (the dogfooding review: "set builder.command" named a
    file that did not exist)."""
    if (root / CONFIG_PATH).exists():
        return hint
    return f"run `leap init` first (it writes {CONFIG_PATH.as_posix()}), then {hint}"
