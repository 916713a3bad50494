"""What jurors' calls cost (issue 15 item 9): the tokens each provider reported and, where
the rung declares its prices, the dollars. A count the provider did not report is absent,
never 0 as if measured; a cost without both prices, or over a call nobody measured, is
unknown (``usd`` None), never 0."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

_USD_DIGITS = 9  # a micro-dollar is 1e-6; keep three digits below it, drop float noise


class Usage(NamedTuple):
    """Tokens in and out of one call, or a sum of calls; ``unmeasured`` counts the calls in
    the sum that answered without reported counts (a command rung): their cost is unknown,
    so the sum's ``usd`` is too."""

    tokens_in: int
    tokens_out: int
    usd: float | None = None
    unmeasured: int = 0

    def plus(self, other: Usage) -> Usage:
        usd = None if self.usd is None or other.usd is None else self.usd + other.usd
        return Usage(self.tokens_in + other.tokens_in, self.tokens_out + other.tokens_out,
                     usd, self.unmeasured + other.unmeasured)

    def priced(self, usd_per_mtok_in: float | None, usd_per_mtok_out: float | None) -> Usage:
        """The cost of measured tokens at a rung's declared prices (per million tokens)."""
        if usd_per_mtok_in is None or usd_per_mtok_out is None or self.unmeasured:
            return self._replace(usd=None)
        cost = (self.tokens_in * usd_per_mtok_in + self.tokens_out * usd_per_mtok_out) / 1e6
        return self._replace(usd=round(cost, _USD_DIGITS))

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tokens_in": self.tokens_in, "tokens_out": self.tokens_out,
                               "usd": None if self.usd is None else round(self.usd,
                                                                         _USD_DIGITS)}
        if self.unmeasured:
            out["unmeasured"] = self.unmeasured
        return out

    @classmethod
    def from_dict(cls, raw: dict[str, Any]) -> Usage:
        return cls(raw["tokens_in"], raw["tokens_out"], raw.get("usd"),
                   raw.get("unmeasured", 0))


UNMEASURED = Usage(0, 0, None, 1)  # one call that answered with no counts reported
NOTHING = Usage(0, 0, 0.0)  # no call was made: nothing was spent, and that is known


def total(usages: Iterable[Usage | None]) -> Usage | None:
    """The sum of the known usages; None when there is none (nothing was spent, or nothing
    was recorded), never a measured 0."""
    out: Usage | None = None
    for usage in usages:
        if usage is not None:
            out = usage if out is None else out.plus(usage)
    return out


def counted(tokens_in: object, tokens_out: object) -> Usage | None:
    """A provider's reported counts, when it reported both as whole numbers."""
    ok = all(isinstance(n, int) and not isinstance(n, bool) and n >= 0
             for n in (tokens_in, tokens_out))
    return Usage(tokens_in, tokens_out) if ok else None  # type: ignore[arg-type]


def show(usage: Usage | None) -> str:
    """``1234 in, 56 out, $0.001234`` for people (``$?``: unknown); ``-``: none recorded."""
    if usage is None:
        return "-"
    cost = "$?" if usage.usd is None else f"${usage.usd:.6f}"
    extra = f", {usage.unmeasured} unmeasured" if usage.unmeasured else ""
    return f"{usage.tokens_in} in, {usage.tokens_out} out, {cost}{extra}"
