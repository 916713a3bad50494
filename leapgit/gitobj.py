"""Typed views of dulwich's object ids and ref names (dulwich types them as NewTypes over
bytes); one boundary for the conversion instead of casts scattered through the code."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from dulwich.objects import ObjectID
    from dulwich.refs import Ref


def oid(value: bytes | str) -> ObjectID:
    return cast("ObjectID", value.encode() if isinstance(value, str) else value)


def refname(value: bytes | str) -> Ref:
    return cast("Ref", value.encode() if isinstance(value, str) else value)
