from __future__ import annotations

import time
import tracemalloc

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leapgit.errors import InvalidRecord
from leapgit.records import yamlio

BOMB = "\n".join(
    ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    + [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 9)]
) + "\n"


def test_billion_laughs_is_refused_quickly_in_bounded_memory() -> None:
    tracemalloc.start()
    start = time.perf_counter()
    with pytest.raises(InvalidRecord, match="aliases"):
        yamlio.loads(BOMB.encode(), "bomb.yaml")
    elapsed = time.perf_counter() - start
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    assert elapsed < 1.0
    assert peak < 20 * 1024 * 1024


def test_a_single_anchor_without_alias_is_fine_but_any_alias_is_refused() -> None:
    assert yamlio.loads(b"a: &x 1\n", "f") == {"a": 1}
    with pytest.raises(InvalidRecord, match="line 2"):
        yamlio.loads(b"a: &x 1\nb: *x\n", "f")


def test_text_with_stars_and_ampersands_in_strings_loads() -> None:
    assert yamlio.loads(b"spec: 'a * b & c'\n", "f") == {"spec": "a * b & c"}


@pytest.mark.parametrize(("data", "needle"), [
    (b"a: 1\na: 2\n", "duplicate key"),
    (b"\xc3\x28", "not UTF-8"),
    (b"a\x00b", "binary"),
    (b"x" * (yamlio.MAX_BYTES + 1), "cap"),
    (b"a: !!set {x}\n", "set"),
    (b"a: 2026-11-30\n", "date"),
    (b"{[1]: 2}\n", "not a string"),
    (b"a: 1\n---\nb: 2\n", "single document"),
    (b"a: " + b"1" * 5000 + b"\n", "unreadable"),
])
def test_guards(data: bytes, needle: str) -> None:
    with pytest.raises(InvalidRecord, match=needle):
        yamlio.loads(data, "f.yaml")


def test_an_integer_too_long_to_read_is_said_without_pythons_own_advice() -> None:
    """A bad-input hunt: `round_limit: 999...` (5,000 digits) was said with Python's
    "use sys.set_int_max_str_digits() to increase the limit", no user's way on."""
    with pytest.raises(InvalidRecord) as got:
        yamlio.loads(b"round_limit: " + b"9" * 5000 + b"\n", ".leap/config.yaml")
    line = got.value.lines()[0]
    assert "an integer of more than 4,300 digits" in line, line
    assert "sys." not in line and "set_int_max_str_digits" not in line, line


def test_read_bytes_reads_at_most_the_cap(tmp_path) -> None:  # type: ignore[no-untyped-def]
    big = tmp_path / "big.yaml"
    big.write_bytes(b"#" * (5 * yamlio.MAX_BYTES))
    with pytest.raises(InvalidRecord, match="larger than"):
        yamlio.read_bytes(big)


def test_dump_and_load_round_trip_in_order() -> None:
    value = {"z": 1, "a": [1, {"text": "two\nlines"}], "yes": "no", "empty": None}
    data = yamlio.dumps(value)
    assert list(yamlio.loads(data, "f")) == ["z", "a", "yes", "empty"]
    assert yamlio.loads(data, "f") == value


_scalars = (st.none() | st.booleans() | st.integers(-(2**63), 2**63) | st.text()
            | st.sampled_from(["yes", "no", "null", "~", "1.0", "0x1f", "- a", "a: b", "#x",
                               "\n  x\ny\n", "\n\n y\n", " a\nb\n",
                               "line\n  two\n", "|\n", "\u2028", "\x85", " lead", "trail \n"]))
_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(), _values, max_size=6))
def test_dumps_then_loads_gives_back_exactly_what_was_dumped(value: dict) -> None:  # type: ignore[type-arg]
    assert yamlio.loads(yamlio.dumps(value), "f") == value


def test_multi_line_text_is_a_readable_literal_block() -> None:
    text = yamlio.dumps({"spec": "first line\n  indented\n\nlast\n"}).decode()
    assert text == "spec: |\n  first line\n    indented\n\n  last\n"


@pytest.mark.parametrize("key", ["A\n", "a b", "", "yes", "1", "-x", "&", "*", "k:"])
def test_awkward_keys_round_trip(key: str) -> None:
    # found by the property test: a plain-looking key with a trailing newline
    assert yamlio.loads(yamlio.dumps({key: None}), "f") == {key: None}


@pytest.mark.parametrize("text", [
    "[" * 100_000 + "]" * 100_000,
    "- " * 60_000 + "x",
    "a:\n" + "".join("  " * i + f"k{i}:\n" for i in range(1, 700)) + "  " * 700 + "v\n",
])
def test_deep_nesting_is_refused_before_it_can_crash_the_parser(text: str) -> None:
    # found in review: the C composer segfaulted at ~30,000 levels (exit 139, no message)
    with pytest.raises(InvalidRecord, match="nested deeper than"):
        yamlio.loads(text.encode(), "deep.yaml")


@pytest.mark.parametrize("text", [
    "\n  indented example\nthen prose\n",
    "\n\n    deeper\n  less\nnone\n",
    "a\n\n  b\n",
])
def test_literal_blocks_with_leading_blank_or_indented_lines_round_trip(text: str) -> None:
    # found in review: a leading blank line then an indented line made an unreadable block
    for value in ({"spec": text}, {"l": [text]}, {"m": [{"spec": text, "k": 1}]}):
        assert yamlio.loads(yamlio.dumps(value), "f") == value


@pytest.mark.parametrize("text", ["done: !!bool maybe\n", "n: !!int ''\n", "f: !!float ''\n"])
def test_a_value_the_loader_chokes_on_is_an_invalid_record(text: str) -> None:
    with pytest.raises(InvalidRecord, match="unreadable value"):
        yamlio.loads(text.encode(), "x.yaml")


def test_text_that_is_not_unicode_is_never_written() -> None:
    bad = "bad\udcff.txt"  # a file name that is not UTF-8, as surrogateescape reads it
    assert not yamlio.all_quoted({"evidence": bad})
    with pytest.raises(InvalidRecord, match="lone surrogate"):
        yamlio.dumps({"evidence": bad})


# issue 18 F9: one meaning for every record. A merge key folds another mapping in and can
# hide a duplicate key (``a: 1`` then ``<<: {a: 2}`` loads as a = 1 with no complaint);
# non-decimal integers read differently across YAML versions and tools.
@pytest.mark.parametrize("text", [
    "a: 1\n<<: {a: 2}\n",
    "<<: {a: 2}\nb: 1\n",
    "x:\n  - <<: {k: v}\n",
    "? <<\n: {a: 1}\n",
    "!!merge <<: {a: 1}\n",
    "<< : {a: 1}\n",
])
def test_merge_keys_are_refused(text: str) -> None:
    with pytest.raises(InvalidRecord, match=r"x\.yaml: line \d+, column \d+: .*merge key"):
        yamlio.loads(text.encode(), "x.yaml")


def test_a_quoted_merge_key_is_a_plain_key() -> None:
    assert yamlio.loads(b'"<<": 1\nk: "<<"\n', "x.yaml") == {"<<": 1, "k": "<<"}
    assert yamlio.loads(yamlio.dumps({"<<": {"a": 2}}), "x.yaml") == {"<<": {"a": 2}}


@pytest.mark.parametrize("value", ["0o1", "0x1", "0b1", "-0o7", "+0x1", "0x_1", "1_000",
                                   "1__0", "012", "00", "!!int 0x10"])
def test_non_decimal_integers_are_refused(value: str) -> None:
    with pytest.raises(InvalidRecord, match=r"x\.yaml: line 1, column 4: the integer "
                       r".* is not written in decimal"):
        yamlio.loads(f"a: {value}\n".encode(), "x.yaml")


@pytest.mark.parametrize(("value", "number"), [("0", 0), ("-0", 0), ("7", 7), ("+1", 1),
                                               ("-12", -12), ("4096", 4096)])
def test_decimal_integers_load(value: str, number: int) -> None:
    assert yamlio.loads(f"a: {value}\n".encode(), "x.yaml") == {"a": number}
    assert yamlio.loads(b'a: "0x1"\nb: 0O1\n', "x.yaml") == {"a": "0x1", "b": "0O1"}
