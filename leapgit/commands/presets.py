"""`leap presets`: what each preset (issue 17) expands to, exactly as leapgit runs it."""

from __future__ import annotations

import shlex
import shutil
from typing import Any

from leapgit.records.presets import PRESETS, Preset

MODEL = "MODEL"  # how a preset's optional model is shown


def expansion(p: Preset) -> str:
    """The builder's `sh -c` line, or the juror's argv as a shell would quote it."""
    if p.kind == "builder":
        return p.command(MODEL if p.needs_model else None)
    return shlex.join(p.argv(MODEL if p.needs_model else None))


def _model(p: Preset) -> str:
    flag = " ".join(w.format(model=MODEL) for w in p.model_flag)
    return flag if p.needs_model else f"[{flag}]"


def listing() -> list[dict[str, Any]]:
    return [{"name": p.name, "kind": p.kind, "program": p.program,
             "installed": shutil.which(p.program) is not None, "expansion": expansion(p),
             "model": _model(p), "model_required": p.needs_model, "env": dict(p.env),
             "stdin": p.stdin, "why": p.why,
             "config": (f"builder: {{preset: {p.name}}}" if p.kind == "builder" else
                        f"rung: {{provider: command, preset: {p.name}}}")}
            for p in PRESETS]


def lines() -> list[str]:
    out: list[str] = []
    for item in listing():
        where = "on PATH" if item["installed"] else "not on PATH"
        out.append(f"{item['kind']} {item['name']}  ({item['config']}; {item['program']} "
                   f"{where})")
        out.append(f"  runs:  {item['expansion']}")
        out.append(f"  model: {item['model']}  stdin: {item['stdin']}")
        out.append(f"  why:   {item['why']}")
    return out
