"""T4: the builder is declared: ``--builder model=ID,family=F,session=S``."""

from __future__ import annotations

from dataclasses import dataclass

from leapgit.errors import UsageError

_KEYS = ("model", "family", "session")


@dataclass(frozen=True)
class Builder:
    model: str
    family: str
    session: str

    def to_dict(self) -> dict[str, str]:
        return {"model": self.model, "family": self.family, "session": self.session}


def parse_builder(text: str) -> Builder:
    values: dict[str, str] = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        key, sep, value = part.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or key not in _KEYS or not value:
            raise UsageError(
                f"cannot read {part!r}", field="--builder", rule="T4",
                hint="write --builder model=ID,family=FAMILY,session=SESSION",
            )
        values[key] = value
    missing = [k for k in _KEYS if k not in values]
    if missing:
        raise UsageError(
            f"missing {', '.join(missing)}", field="--builder", rule="T4",
            hint="the builder is declared in full: model=ID,family=FAMILY,session=SESSION",
        )
    return Builder(**values)
