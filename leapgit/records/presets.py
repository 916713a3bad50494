"""Presets (issue 17 item 2): one name in `.leap/config.yaml` for the command line and
environment a common agent or LLM CLI needs to run unattended under leapgit.

``builder: {preset: NAME}`` expands to a ``builder.command`` (run by ``sh -c`` in the ball's
worktree, stdin /dev/null); a rung ``provider: command, preset: NAME`` expands to the
juror's argv (the prompt on stdin, one bare JSON verdict on stdout). Each preset's flags make
its CLI non-interactive, keep it from committing on its own or leaving state files in the
worktree, and, for jurors, keep its answer to the bare verdict. This table is the one home
of those flags: `leap presets` prints it, the README documents it, the tests run each
expansion against a stand-in program of the same name.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass
from typing import Literal

Kind = Literal["builder", "juror"]
# how a juror CLI's stdout holds the verdict: ``bare``, the verdict itself; ``claude-json``,
# Claude Code's one JSON result object (``--output-format json``): the verdict is its
# ``structured_output`` (with ``--json-schema``) or else its ``result`` text, ``is_error``
# says it never answered, ``usage`` holds the tokens
Reply = Literal["bare", "claude-json"]

# The builder's task, expanded by the shell from the handoff's variables (L2, L3). Only
# ${LEAP_...} references and plain characters: safe inside one pair of double quotes.
BUILDER_PROMPT = (
    "You build one leapgit ball. Its handoff is the YAML file ${LEAP_HANDOFF}: goal, spec, "
    "scope, proof, and the findings to answer when the tribunal refused the last round. "
    "Change only the files in its scope, run its proof, then write your report as YAML to "
    "${LEAP_REPORT}: outcome (-1, 0 or 1) and evidence (what you ran and saw). Do not "
    "commit, push or switch branches: leapgit records the round."
)

# T6: what a CLI with a schema option is held to; the lens is checked after, by the rules
VERDICT_SCHEMA = json.dumps({
    "type": "object", "additionalProperties": False,
    "required": ["verdict", "findings", "lens"],
    "properties": {
        "verdict": {"type": "string", "enum": ["pass", "refuse"]},
        "findings": {"type": "array", "items": {
            "type": "object", "required": ["severity", "file", "claim", "evidence"],
            "properties": {"severity": {"type": "string",
                                        "enum": ["blocker", "major", "minor", "info"]},
                           "file": {"type": "string"}, "claim": {"type": "string"},
                           "evidence": {"type": "string"}, "mutant": {"type": "string"}}}},
        "lens": {"type": "string"},
    },
}, separators=(",", ":"))

PROMPT = "{prompt}"  # where the builder's prompt goes among a builder preset's words


@dataclass(frozen=True)
class Preset:
    name: str
    kind: Kind
    program: str
    words: tuple[str, ...]  # after the program; PROMPT marks the builder's prompt
    model_flag: tuple[str, ...] = ()  # put before the words when a model is named
    lead: tuple[str, ...] = ()  # the subcommand, before the model flag (`codex exec -m M`)
    env: tuple[tuple[str, str], ...] = ()
    needs_model: bool = False
    trailing: str = ""  # shell text after the words (unquoted, so the shell expands it)
    reply: Reply = "bare"  # a juror's: where its stdout holds the verdict
    why: str = ""  # what the flags are for, in one line

    def argv(self, model: str | None = None) -> tuple[str, ...]:
        """A juror's argv; a builder's words with the prompt still a marker."""
        flag = tuple(w.format(model=model) for w in self.model_flag) if model else ()
        return (self.program, *self.lead, *flag, *self.words)

    def command(self, model: str | None = None) -> str:
        """A builder's ``builder.command``: the env prefixes, then the words quoted for
        ``sh -c``; the prompt in double quotes, so the shell fills in its variables."""
        env = [f"{k}={shlex.quote(v)}" for k, v in self.env]
        words = [f'"{BUILDER_PROMPT}"' if w == PROMPT else shlex.quote(w)
                 for w in self.argv(model)]
        return " ".join([*env, *words, *([self.trailing] if self.trailing else [])])

    @property
    def stdin(self) -> str:
        return "/dev/null" if self.kind == "builder" else "the prompt (system and envelope)"


_NO_GIT = "Bash(git commit:*),Bash(git push:*),Bash(git checkout:*),Bash(git switch:*)"

PRESETS: tuple[Preset, ...] = (
    Preset("claude", "builder", "claude",
           ("-p", PROMPT, "--output-format", "text", "--permission-mode", "acceptEdits",
            "--allowedTools", "Bash,Read,Edit,Write,Glob,Grep", "--disallowedTools", _NO_GIT),
           model_flag=("--model", "{model}"), env=(("DISABLE_AUTOUPDATER", "1"),),
           why="Claude Code headless (-p): edits accepted, shell allowed, git commit/push/"
               "checkout denied; its sessions stay under ~/.claude"),
    Preset("codex", "builder", "codex",
           ("--full-auto", "--ephemeral", PROMPT), lead=("exec",), model_flag=("-m", "{model}"),
           why="codex exec: workspace-write sandbox (the worktree's git dir is outside it, "
               "so it cannot commit), no approvals, --ephemeral: no session files"),
    Preset("aider", "builder", "aider",
           ("--message", PROMPT, "--yes-always", "--no-auto-commits", "--no-dirty-commits",
            "--no-gitignore", "--map-tokens", "0", "--chat-history-file", "/dev/null",
            "--input-history-file", "/dev/null", "--no-check-update", "--no-analytics",
            "--no-pretty", "--no-stream"),
           model_flag=("--model", "{model}"), trailing="$LEAP_SCOPE",
           why="aider --message: one instruction then exit, every question answered yes, no "
               "commits, no .gitignore edit, no history files or repo-map cache in the "
               "worktree; the scope's files are added to its chat"),
    Preset("gemini", "builder", "gemini",
           ("-p", PROMPT, "--approval-mode", "yolo"), model_flag=("-m", "{model}"),
           why="Gemini CLI headless (-p): tool calls approved (--approval-mode yolo); the "
               "prompt forbids commits (the CLI has no switch for it)"),
    Preset("opencode", "builder", "opencode",
           (PROMPT,), lead=("run",), model_flag=("-m", "{model}"),
           why="opencode run: one message, non-interactive; the prompt forbids commits; its "
               "state stays under ~/.local/share/opencode"),
    Preset("llm", "juror", "llm",
           ("--no-stream", "--no-log", "--schema", VERDICT_SCHEMA),
           model_flag=("-m", "{model}"),
           why="llm: the prompt from stdin, no streaming, nothing logged to its database, "
               "the answer held to the verdict's JSON schema"),
    Preset("ollama", "juror", "ollama", ("--format", "json"), lead=("run",),
           model_flag=("{model}",), needs_model=True,
           why="ollama run MODEL --format json: the prompt from stdin, JSON-constrained "
               "output; it cannot size num_ctx, so set context_tokens to the server's "
               "context length (T2)"),
    Preset("claude", "juror", "claude",
           ("-p", "--output-format", "json", "--json-schema", VERDICT_SCHEMA,
            "--allowedTools", "Read,Grep,Glob",
            "--disallowedTools", "Bash,Edit,Write,NotebookEdit,WebFetch,WebSearch"),
           model_flag=("--model", "{model}"), env=(("DISABLE_AUTOUPDATER", "1"),),
           reply="claude-json",
           why="claude -p: the prompt from stdin, the answer held to the verdict's JSON "
               "schema (--json-schema) inside Claude Code's JSON result, which leapgit "
               "unwraps (its usage counted); read-only tools in the read-only export, no "
               "shell, edits or web"),
)

_BY_KEY = {(p.kind, p.name): p for p in PRESETS}  # a builder and a juror may share a name


def names(kind: Kind) -> tuple[str, ...]:
    return tuple(p.name for p in PRESETS if p.kind == kind)


def preset(name: str, kind: Kind) -> Preset | None:
    return _BY_KEY.get((kind, name))
