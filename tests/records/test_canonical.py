"""records.canonical, the fast reader of leapgit's own records (issue 13 item 7): it reads
exactly what ``yamlio.dumps`` writes, as YAML reads it, and nothing else."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leapgit.errors import InvalidRecord
from leapgit.records import canonical, yamlio

_scalars = (st.none() | st.booleans() | st.integers(-(2**63), 2**63)
            | st.floats(allow_nan=False, allow_infinity=False) | st.text()
            | st.sampled_from(["yes", "no", "null", "1.0", "- a", "a: b", "|", "\"q\": 1",
                               "line\n  two\n", "\n\n y\n", "a\n\nb\n", "x\n", "\u2028"]))
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=24,
)


@settings(max_examples=400, deadline=None)
@given(_values)
def test_what_dumps_writes_both_readers_read_back_the_same(value: object) -> None:
    text = yamlio.dumps(value).decode()
    assert yamlio.load_yaml(text, "f") == value  # YAML's reading of the emitter's text
    ok, read = canonical.read(text)
    assert ok and read == value and type(read) is type(value)


_EDITS = st.sampled_from([" ", "-", ":", "\"", "|", "\n", "#", "'", "&", "*", "x", "1", "\\"])


@settings(max_examples=600, deadline=None)
@given(_values, st.data())
def test_an_edited_record_is_read_as_yaml_reads_it_or_left_to_the_yaml_loader(
        value: object, data: st.DataObject) -> None:
    """Bytes that are not exactly ``dumps``' output of what was read never pass: a forged or
    hand-edited record cannot mean one thing to this reader and another to YAML."""
    text = yamlio.dumps(value).decode()
    at = data.draw(st.integers(0, len(text)))
    how = data.draw(st.sampled_from(["insert", "delete", "replace"]))
    char = data.draw(_EDITS)
    edited = {"insert": text[:at] + char + text[at:],
              "delete": text[:at] + text[at + 1:],
              "replace": text[:at] + char + text[at + 1:]}[how]
    ok, read = canonical.read(edited)
    if not ok:
        assert read is None
        return
    assert yamlio.load_yaml(edited, "f") == read


@pytest.mark.parametrize("text", [
    "slice: s  # a comment\n",
    "name: 'single quoted'\n",
    "spine: main\nballs:\n  - id: a\n",  # an indented sequence
    "a: plain words\n",
    "a: {b: 1}\n",
    "a: 1\na: 2\n",
    "a: 0x1f\n",
    "a: &x 1\nb: *x\n",
    "a:   \"x\"\n",
    "a: \"x\"\n\n",
    "\ufeffa: \"x\"\n",
    "a: |\n  one\n  two\n\n",
])
def test_text_leapgit_would_not_write_goes_to_the_yaml_loader(text: str) -> None:
    assert canonical.read(text) == (False, None)


def test_a_hand_written_draft_still_loads_through_the_full_loader_and_its_guards() -> None:
    assert yamlio.loads(b"slice: s  # cut by hand\nballs: [a, b]\n", "d.yaml") == {
        "slice": "s", "balls": ["a", "b"]}
    with pytest.raises(InvalidRecord, match="duplicate key"):
        yamlio.loads(b"a: \"x\"\na: \"y\"\n", "d.yaml")
    with pytest.raises(InvalidRecord, match="aliases"):
        yamlio.loads(b"a: &x \"1\"\nb: *x\n", "d.yaml")


def test_a_canonical_record_nested_past_the_cap_is_refused_as_before() -> None:
    deep: object = "leaf"
    for _ in range(yamlio.MAX_DEPTH + 2):
        deep = {"k": deep}
    with pytest.raises(InvalidRecord, match="nested deeper than"):
        yamlio.loads(yamlio.dumps(deep), "deep.yaml")


# blind review (d1c7976): where the two readers could still disagree

def _nest(n: int, leaf: object) -> object:
    for _ in range(n):
        leaf = {"k": leaf}
    return leaf


@pytest.mark.parametrize("text", [
    "k" * 1025 + ": 1\n",  # YAML caps an implicit key at 1024 characters
    "a:\n  " + "k" * 1100 + ": 1\n",
    "- " + "k" * 1100 + ": 1\n",
    '"' + " " * 1023 + '": 1\n',
    'a: "\\ud800"\n',  # an escaped lone surrogate: no text, and dumps cannot write it
    '"\\udc00": 1\n',
    '- "\\udc00"\n',
])
def test_text_yaml_refuses_is_refused_by_loads_and_never_read_fast(text: str) -> None:
    assert canonical.read(text) == (False, None)
    with pytest.raises(InvalidRecord):
        yamlio.load_yaml(text, "f")
    with pytest.raises(InvalidRecord):
        yamlio.loads(text.encode(), "f")


def test_a_key_yaml_cannot_read_back_is_never_written() -> None:
    with pytest.raises(InvalidRecord, match="1024"):
        yamlio.dumps({"k" * 1025: 1})
    with pytest.raises(InvalidRecord, match="1024"):
        yamlio.dumps({"a": [{"\u0085" * 200: 1}]})  # its escapes count
    assert yamlio.loads(yamlio.dumps({"k" * 1020: 1}), "f") == {"k" * 1020: 1}
    # the one line names the record and the field the key sits under
    with pytest.raises(InvalidRecord, match=r"^a red record's field tests\[1\]\.extra: a key "):
        yamlio.dumps({"kind": "red", "tests": [{}, {"extra": {"k" * 1025: 1}}]})


@pytest.mark.parametrize("leaf", [{}, []])
@pytest.mark.parametrize("pad", ["*", "x" * 9000])  # the YAML loader's pre-scan runs on both
def test_an_empty_container_at_the_depth_cap_is_refused_by_both_readers(
        leaf: object, pad: str) -> None:
    text = yamlio.dumps({"s": pad, "k": _nest(yamlio.MAX_DEPTH - 1, leaf)})
    assert canonical.read(text.decode())[0]
    for read in (lambda: yamlio.load_yaml(text.decode(), "f"),
                 lambda: yamlio.loads(text, "f")):
        with pytest.raises(InvalidRecord, match="nested deeper than"):
            read()
    shallower = yamlio.dumps({"s": pad, "k": _nest(yamlio.MAX_DEPTH - 2, leaf)})
    assert yamlio.loads(shallower, "f") == yamlio.load_yaml(shallower.decode(), "f")


@pytest.mark.parametrize("value", ["\n0\n", "a\nb\n", ["\n0\n"], {"k": "\n\nx\n"}])
def test_literal_blocks_anywhere_are_read_fast(value: object) -> None:
    # found by the property test: a document that is one literal block, or one that starts
    # with blank lines, was written with a blank line too many or left to the slow reader
    text = yamlio.dumps(value).decode()
    assert canonical.read(text) == (True, value)
    assert yamlio.load_yaml(text, "f") == value
