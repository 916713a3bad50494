from __future__ import annotations

import json
from pathlib import Path

import pytest

from leapgit.errors import InvalidRecord
from leapgit.ledger import layout
from leapgit.records import schema
from leapgit.records.config import load_config
from leapgit.records.types import (
    BallRecord,
    Checkpoint,
    Receipt,
    SliceRecord,
    StampedScope,
    ThrowRecord,
)
from tests.support import ROOT

SHA = "a" * 40


def test_every_schema_file_is_valid_json_with_an_id() -> None:
    files = list((ROOT / "schemas").rglob("*.schema.json"))
    assert len(files) >= 11
    for path in files:
        data = json.loads(path.read_text())
        assert data["$schema"].startswith("http://json-schema.org/")
        assert data["$id"].startswith("leapgit:")


def test_the_schemas_read_are_the_packaged_files() -> None:
    """schema_text finds the files by path (issue 13 (7): no importlib.resources at start-up);
    they are the ones the package ships as leapgit._schemas, and the ones the record cache
    stamps."""
    from importlib import resources

    from leapgit.records.cache import schemas_dir

    packaged = resources.files("leapgit._schemas")
    assert schemas_dir() is not None and Path(str(packaged)) == Path(schemas_dir() or "")
    for name in ("slice", "config", *(f"records/{k}" for k in schema.RECORD_KINDS)):
        text = packaged.joinpath(f"{name}.schema.json").read_text("utf-8")
        assert schema.schema_text(name) == text, name


def test_every_record_kind_has_a_schema() -> None:
    for kind in schema.RECORD_KINDS:
        assert schema.schema(f"records/{kind}")["properties"]["kind"]["const"] == kind


RECORDS = [
    SliceRecord("s", "integrator", SHA, ("a", "b"), (("a",), ("b",)), "2026-01-01T00:00:00Z"),
    BallRecord("s", "a", 1, "g", "spec\n", (StampedScope("x.py", "absent"),), "true",
               "restore-scope"),
    BallRecord("s", "a", 2, "g", "spec\n", (StampedScope("x.py", SHA, "y.py"),), "true",
               "restore-scope", reason="respec"),
    ThrowRecord("s", "a", 1, 1, SHA, "leap/ball/s/a", "t", "/w", 0),
    Receipt("s", "a", 1, 3, 0, "evidence", "t", commit=SHA, candidate=SHA),
    Checkpoint("s", "a", 1, 4, ("x", "y"), "y", "t", SHA, SHA, "limit"),
]


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: type(r).__name__)
def test_records_validate_round_trip_and_know_their_path(record: object) -> None:
    data = record.to_dict()  # type: ignore[attr-defined]
    assert schema.validate_record(data, "r") == data["kind"]
    assert type(record).from_dict(data) == record  # type: ignore[attr-defined]
    path = layout.path_for(data)
    assert path.startswith("slices/s/") and path.endswith(".yaml")


def test_a_fifth_round_is_refused_by_the_receipt_schema() -> None:
    data = Receipt("s", "a", 1, 4, 0, "e", "t").to_dict() | {"round": 5}
    with pytest.raises(InvalidRecord, match=r"round: must be smaller than or equal to 4"):
        schema.validate_record(data, "r.yaml")


def test_unknown_kind_and_non_mapping_records() -> None:
    with pytest.raises(InvalidRecord, match="unknown record kind"):
        schema.validate_record({"kind": "gossip"}, "r")
    with pytest.raises(InvalidRecord, match="mapping"):
        schema.validate_record(["kind"], "r")


def test_the_projects_own_config_is_valid() -> None:
    config = load_config(Path(ROOT))
    assert config.spine == "main" and config.round_limit == 4


def test_a_config_with_a_tribunal_hashes_as_one_without() -> None:
    """Config is a value: equal configs hash alike, and the validated ``tribunal:`` mapping
    (a dict) is no part of its hash, as when it was a dataclass (review of the NamedTuple
    records, F1)."""
    from leapgit.records.types import Config

    with_tribunal = Config(tribunal_source={"rungs": []})
    assert hash(with_tribunal) == hash(Config())
    assert {with_tribunal: 1}[Config(tribunal_source={"rungs": []})] == 1
    assert Config(spine="trunk") != Config() and hash(Config(spine="trunk")) != hash(Config())


def test_every_record_kind_reads_into_one_type_that_writes_that_kind() -> None:
    """The load boundary's table (``records.kinds``): each kind names one record type, whose
    records say that kind (issue 13: no record travels as a raw mapping)."""
    import importlib

    from leapgit.records.kinds import TYPE_OF_KIND, kind_of

    assert set(TYPE_OF_KIND) == set(schema.RECORD_KINDS)
    for kind, name in TYPE_OF_KIND.items():
        module, _, cls = name.partition(":")
        record_type = getattr(importlib.import_module(module), cls)
        assert kind_of(record_type) == kind and hasattr(record_type, "from_dict")
    assert kind_of(ThrowRecord) == "throw" and kind_of(Receipt) == "receipt"


def test_a_summary_says_its_mechanical_checks_in_their_shape() -> None:
    """A summary's ``mechanical`` is null or the checks as the tribunal writes them: the
    typed summary reads nothing the schema did not check (issue 13)."""
    head = {"kind": "summary", "format": 1, "run_id": "t-1", "round": 1, "candidate": SHA,
            "tree": SHA, "envelope_hash": "0" * 64, "series": "x", "base": SHA,
            "builder_family": "f", "outcome": "pass", "reason": "r", "lenses": {},
            "findings": [], "new_count": 0, "recorded_at": "t"}
    checks = {"outcome": "pass", "invalid": False,
              "checks": [{"name": "new tests", "result": "ok", "detail": "d"}]}
    for mechanical in (None, checks):
        schema.validate_record({**head, "mechanical": mechanical}, "s.yaml")
    with pytest.raises(InvalidRecord, match=r"mechanical: missing required field"):
        schema.validate_record({**head, "mechanical": {}}, "s.yaml")
    with pytest.raises(InvalidRecord, match=r"mechanical.checks\[0\].result"):
        bad = {**checks, "checks": [{"name": "n", "result": "maybe", "detail": "d"}]}
        schema.validate_record({**head, "mechanical": bad}, "s.yaml")


def test_a_score_says_its_metric_outcome_in_its_shape() -> None:
    """L7.2: a score's ``metric`` is the keep-or-revert outcome, typed (``MetricOutcome``)
    and checked by the schema in that shape; it was any mapping (issue 13)."""
    from leapgit.records.scoring import MetricOutcome, ScoreRecord, Step

    outcome = MetricOutcome(False, "p95_ms regresses: 10 -> 11 (lower is better)",
                            {"p95_ms": 10.0}, {"p95_ms": 11.5})
    rec = ScoreRecord("s", "a", 1, 1, 1, 1, -1, "revert", SHA, SHA, SHA,
                      (Step("metric", "fail", "revert", "L7.2"),), "t", metric=outcome)
    data = rec.to_dict()
    path = layout.score_path("s", "a", 1)
    assert schema.validate_record(data, path) == "score"
    assert ScoreRecord.from_dict(data) == rec and data["metric"]["champion"] == {"p95_ms": 10.0}
    with pytest.raises(InvalidRecord, match=r"metric: missing required field"):
        schema.validate_record({**data, "metric": {"p95_ms": 10}}, path)
    with pytest.raises(InvalidRecord, match=r"metric.candidate.p95_ms"):
        bad = {**data["metric"], "candidate": {"p95_ms": "fast"}}
        schema.validate_record({**data, "metric": bad}, path)


_VALIDATE = """
import sys
from leapgit.errors import InvalidRecord
from leapgit.records import schema
record = {"slice": "s1", "ball": "a", "episode": 1, "round": 1, "outcome": "sideways"}
try:
    schema.validate(record, "records/receipt", "r.yaml")
except InvalidRecord as exc:
    print("refused:", exc.lines()[0])
print("package:", "fastjsonschema" in sys.modules)
if len(sys.argv) > 1:  # then the package, and a schema no earlier run compiled: one class
    import fastjsonschema
    try:
        schema.validate({"slice": 7}, "records/slice", "s.yaml")
    except InvalidRecord as exc:
        print("refused again:", exc.lines()[0])
    print("one class:", fastjsonschema.JsonSchemaValueException is
          schema.exceptions().JsonSchemaValueException)
"""


def test_a_validator_compiled_earlier_refuses_without_loading_the_compiler(
        tmp_path: Path) -> None:
    """A hook run whose validators are cached loads fastjsonschema's exceptions alone, not
    its package with the four code generators (~4 ms of every pre-receive); a bad record
    is still refused field by field, and the package, imported later, raises the same
    exception class the cached validators raise."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}

    def run(*args: str) -> str:
        done = subprocess.run([sys.executable, "-c", _VALIDATE, *args], env=env,
                              capture_output=True, text=True, check=True)
        return done.stdout

    first = run()  # compiles the receipt's schema: the package is loaded
    assert "package: True" in first and "refused:" in first, first
    warm = run()
    assert "package: False" in warm, warm
    assert warm.splitlines()[0] == first.splitlines()[0], (first, warm)
    assert "missing required field(s): kind" in warm.splitlines()[0], warm
    both = run("then-the-package")
    assert "refused again:" in both and "one class: True" in both, both


_RACE = """
import sys, threading
from leapgit.errors import InvalidRecord
from leapgit.records import schema
kinds = ["records/receipt", "records/slice", "records/ball", "records/throw",
         "records/score", "records/red", "records/merge", "records/lease"]
start = threading.Barrier(len(kinds))
said = []
def validate(kind):
    start.wait()
    try:
        schema.validate({"kind": 7}, kind, "r.yaml")
    except InvalidRecord:
        said.append("refused")
    except BaseException as exc:
        said.append(repr(exc))
threads = [threading.Thread(target=validate, args=(k,)) for k in kinds]
for t in threads: t.start()
for t in threads: t.join()
print(sorted(set(said)), schema.exceptions() is sys.modules["fastjsonschema.exceptions"])
"""


def test_threads_that_load_their_first_validators_at_once_all_refuse_cleanly(
        tmp_path: Path) -> None:
    """A blind review raced threads through ``schema.exceptions``: the module was put in
    ``sys.modules`` before it had run, and a thread found it half run (AttributeError,
    ImportError, an exception no `except` caught). Eight threads, each loading a validator
    compiled earlier, all get the InvalidRecord, in each of 30 fresh processes."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    subprocess.run([sys.executable, "-c", _RACE], env=env, check=True, capture_output=True)
    for _ in range(30):  # warm now: each process loads the exceptions module on its own
        out = subprocess.run([sys.executable, "-c", _RACE], env=env, capture_output=True,
                             text=True, check=True).stdout
        assert out.strip() == "['refused'] True", out
