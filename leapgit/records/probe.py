"""The frozen type of a probe record (``tribunal/probes/<probe>.yaml``, issue 17): one small
canary convening per rung, what each rung did with it (T2: routing reads measured
availability and cost from the latest probe of a rung; T8: capacity is measured, never
assumed). Written with ``to_dict`` key for key as ``schemas/records/probe.schema.json``
orders them."""

from __future__ import annotations

from typing import Any, NamedTuple

from leapgit.records.usage import Usage


class RungProbe(NamedTuple):
    """One rung's canary: did it answer, in the verdict's shape, with the literal lens
    footer, how fast, with what context and at what cost."""

    rung: str
    provider: str
    family: str
    route: str  # who answers (provider, endpoint, model or command): a changed rung is new
    live: bool  # the probe passed: routing may seat the rung
    # answered | bad_answer | never_answered | capacity | off_lens | annulled | exhausted
    result: str
    detail: str
    seconds: float
    json: bool = False  # the answer was one bare JSON object
    footer: bool = False  # the footer named the canary's lens literally (T8)
    said: str | None = None  # pass | refuse, when the verdict was valid
    caught: bool | None = None  # it refused naming the canary's planted defect
    server_context: int | None = None  # the context the server reports (Ollama /api/show)
    num_ctx: int | None = None  # the num_ctx sent (Ollama)
    usage: Usage | None = None
    raw_tail: str | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rung": self.rung, "provider": self.provider, "family": self.family,
            "route": self.route, "live": self.live, "result": self.result,
            "detail": self.detail, "seconds": self.seconds, "json": self.json,
            "footer": self.footer, "said": self.said, "caught": self.caught,
            "server_context": self.server_context, "num_ctx": self.num_ctx,
            "usage": self.usage.to_dict() if self.usage else None,
        }
        if self.raw_tail:
            out["raw_tail"] = self.raw_tail
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> RungProbe:
        usage = raw.get("usage")
        return cls(raw["rung"], raw["provider"], raw["family"], raw["route"], raw["live"],
                   raw["result"], raw["detail"], raw["seconds"], raw["json"], raw["footer"],
                   raw.get("said"), raw.get("caught"), raw.get("server_context"),
                   raw.get("num_ctx"), Usage.from_dict(usage) if usage else None,
                   raw.get("raw_tail"))


class ProbeRecord(NamedTuple):
    """Every configured rung's canary, from one ``leap tribunal rungs --probe``."""

    probe: str  # the probe's id: its UTC time first, so names sort by time
    recorded_at: str
    lens: str  # the canary's lens
    rungs: tuple[RungProbe, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"kind": "probe", "format": 1, "probe": self.probe, "lens": self.lens,
                "rungs": [r.to_dict() for r in self.rungs], "recorded_at": self.recorded_at}

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> ProbeRecord:
        return cls(raw["probe"], raw["recorded_at"], raw["lens"],
                   tuple(RungProbe.from_dict(r) for r in raw["rungs"]))
