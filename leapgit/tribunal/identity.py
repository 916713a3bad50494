"""T4: the builder is declared: ``--builder model=ID,family=F,session=S``. And what names a
family goes by (T5, issue 18 F4): "written by an Anthropic model" and "Claude wrote this"
name the builder as surely as its model id does."""

from __future__ import annotations

import re
from dataclasses import dataclass

from leapgit.records.config import parse_identity

# The names each family's models and products go by, as regular expressions (lower case).
# A family named by a common word (``meta``, ``google``) is matched only inside authorship
# phrases ("written by a Google model"), never alone: ``class Meta:`` names nobody.
FAMILY_NAMES: dict[str, tuple[str, ...]] = {
    "anthropic": ("anthropic", "claude"),
    "openai": ("openai", "chatgpt", r"gpt-?[0-9][a-z0-9.]*", "codex", "dall-e"),
    "google": ("gemini", "bard", "gemma", "deepmind"),
    "meta": ("llama",),
    "mistral": ("mistral", "mixtral", "codestral"),
    "deepseek": ("deepseek",),
    "alibaba": ("qwen", "tongyi"),
    "qwen": ("qwen",),
    "xai": ("xai", "grok"),
    "microsoft": ("copilot",),
    "github": ("copilot",),
    "cohere": ("cohere",),
}
COMMON_WORD_FAMILIES = frozenset({"meta", "google", "microsoft", "github", "amazon", "apple"})
# Coding agents and assistants: named in an authorship phrase they say who built the file.
AGENT_NAMES = ("cursor", "aider", "devin", "windsurf", "cline", "tabnine", "codeium", "cody",
               "copilot", "claude code", "codex")


def family_names(family: str) -> tuple[str, ...]:
    """Regular expressions for every name the builder's family goes by (T5): its products,
    and the family itself unless that is a common word."""
    key = family.strip().lower()
    own = () if key in COMMON_WORD_FAMILIES else (re.escape(key),)
    return tuple(dict.fromkeys(own + FAMILY_NAMES.get(key, ())))


def product_names() -> tuple[str, ...]:
    """Every family's product names and the coding agents' (regular expressions)."""
    names = [n for names in FAMILY_NAMES.values() for n in names]
    return tuple(dict.fromkeys(names + [re.escape(a) for a in AGENT_NAMES]))


@dataclass(frozen=True)
class Builder:
    model: str
    family: str
    session: str

    def to_dict(self) -> dict[str, str]:
        return {"model": self.model, "family": self.family, "session": self.session}


def parse_builder(text: str) -> Builder:
    """T4: ``--builder model=ID,family=FAMILY,session=SESSION`` (the one reading of a
    declared builder: ``records.config.parse_identity``, which the config's is read by)."""
    return Builder(**parse_identity(text))
