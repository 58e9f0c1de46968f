"""The job file model: one test per rule, each job written inline under tmp_path."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pytest

from deltainc.errors import ConfigError
from deltainc.pipeline.job.job_config import JobConfig, load_job, resolve_job
from deltainc.pipeline.job.sections import SourceRef, StateConfig, TableRef
from deltainc.pipeline.state.window_row import SettingsChangedError, built_with, changes, check_unchanged, encode

pytestmark = pytest.mark.pure

EXAMPLE = """\
name = "bank_trx"
start_date = 2025-03-01          # first RecDate to process on the very first run
max_window = 0                   # time units per window when catching up; 0 = all pending in one window
[source_a]
path = "data/finance_trx"        # a Delta path, or: table = "db.finance_trx"
[source_b]
path = "data/sepa_trx"
[join]
how = "left"                     # inner | left | left_anti
join_cols = ["TrxId"]
inc_col = "RecDate"
look_back_time = 2
max_waiting_time = 11
include_waiting = true
enforce_sliding_join_window = true
[target]
path = "data/trx_joined"         # or: table = "db.trx_joined"
keys = ["TrxId"]                 # identity of an A record
b_keys = ["SepaId"]              # identity of a B record; needed when one A can match several B rows
[state]
path = "data/_deltainc"          # watermark table and run log (default from settings)
"""

MINIMAL = """\
name = "j"
start_date = 2025-03-01
[source_a]
path = "a"
[source_b]
path = "b"
[join]
how = "left"
join_cols = ["TrxId"]
[target]
path = "t"
keys = ["TrxId"]
"""


def write(tmp_path: Path, text: str, name: str = "job.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def with_lines(base: str, section: str, *lines: str) -> str:
    """`base` with `lines` added at the top of `[section]` ('' = the top level)."""
    if not section:
        return "\n".join(lines) + "\n" + base
    header = f"[{section}]\n"
    return base.replace(header, header + "\n".join(lines) + "\n", 1)


def replace_line(base: str, old: str, new: str) -> str:
    assert base.count(old) == 1
    return base.replace(old, new)


def replaced(old: str, new: str, base: str | None = None) -> str:
    """The job file `base` (default MINIMAL) with its line `old` made `new`."""
    return replace_line(MINIMAL if base is None else base, old, new)


def added(section: str, *lines: str) -> str:
    """MINIMAL with `lines` added at the top of `[section]` ('' = the top level)."""
    return with_lines(MINIMAL, section, *lines)


def test_the_example_job_loads_as_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    job = load_job(write(tmp_path, EXAMPLE))
    assert job.name == "bank_trx"
    assert job.start_date == dt.date(2025, 3, 1)
    assert job.max_window == 0
    assert job.source_a == SourceRef(path=str(tmp_path / "data/finance_trx"))
    assert job.source_b.path == str(tmp_path / "data/sepa_trx")
    assert job.join.how == "left"
    assert job.join.join_cols == ["TrxId"]
    assert job.join.inc_col == "RecDate"
    assert (job.join.look_back_time, job.join.max_waiting_time) == (2, 11)
    assert job.join.include_waiting is True
    assert job.join.enforce_sliding_join_window is True
    assert job.target.path == str(tmp_path / "data/trx_joined")
    assert job.target.keys == ["TrxId"]
    assert job.target.b_keys == ["SepaId"]
    assert job.state.path == str(tmp_path / "data/_deltainc")


def test_defaults_fill_what_a_minimal_job_leaves_out(tmp_path: Path) -> None:
    job = load_job(write(tmp_path, MINIMAL))
    assert job.max_window == 0
    assert job.join.join_cond is None
    assert job.join.inc_col == "RecDate"
    assert (job.join.look_back_time, job.join.max_waiting_time) == (0, 0)
    assert job.join.include_waiting is True
    assert job.join.enforce_sliding_join_window is True
    assert job.join.time_uom == "day"
    assert (job.join.alias_a, job.join.alias_b) == ("A", "B")
    assert job.join.output_select is None
    assert job.target.b_keys == []
    assert job.target.partition_by is None  # the default layout: by the output RecDate
    assert job.target.deletion_vectors is None  # on only where the layout's writes use them (wants_deletion_vectors)
    assert job.target.forward_write == "replace_where"
    assert job.state == StateConfig()


def test_a_loaded_job_is_frozen(tmp_path: Path) -> None:
    job = load_job(write(tmp_path, MINIMAL))
    with pytest.raises(ValueError, match="frozen"):
        job.name = "other"  # type: ignore[misc]
    with pytest.raises(ValueError, match="frozen"):
        job.join.look_back_time = 5  # type: ignore[misc]


def test_state_path_is_the_jobs_own_or_the_default(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    own = load_job(write(tmp_path, EXAMPLE, "own.toml"))
    default = load_job(write(tmp_path, MINIMAL, "default.toml"))
    assert own.state_path(Path("elsewhere")) == str(tmp_path / "data/_deltainc")
    assert default.state_path(Path("data/_state")) == str(tmp_path / "data/_state")


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("data/x", "{cwd}/data/x"),
        ("/abs/x", "/abs/x"),
        ("s3://bucket/x", "s3a://bucket/x"),  # S3 as Spark names it
        ("abfss://c@a.dfs.core.windows.net/x", "abfss://c@a.dfs.core.windows.net/x"),
        ("file:/tmp/x", "file:/tmp/x"),
    ],
)
def test_relative_paths_are_made_absolute_against_the_current_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, given: str, expected: str
) -> None:
    monkeypatch.chdir(tmp_path)
    assert TableRef(path=given).path == expected.format(cwd=tmp_path)


# --- file-level problems --------------------------------------------------------------------------


def test_a_missing_file_names_the_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.toml"
    with pytest.raises(ConfigError, match=rf"{re.escape(str(missing))}: job file not found"):
        load_job(missing)


def test_a_toml_syntax_error_names_the_file_and_the_line(tmp_path: Path) -> None:
    path = write(tmp_path, 'name = "j"\nstart_date = 2025-03-01\nmax_window = \n')
    with pytest.raises(ConfigError, match=rf"{re.escape(str(path))}: invalid TOML: .*line 3"):
        load_job(path)


def test_a_missing_section_is_an_error_naming_it(tmp_path: Path) -> None:
    text = MINIMAL.replace('[target]\npath = "t"\nkeys = ["TrxId"]\n', "")
    with pytest.raises(ConfigError, match=r"job\.toml: target: required key is missing"):
        load_job(write(tmp_path, text))


def test_every_problem_is_reported_one_per_line(tmp_path: Path) -> None:
    text = with_lines(MINIMAL, "join", "look_back_time = -1", "max_waiting_time = -2")
    with pytest.raises(ConfigError) as info:
        load_job(write(tmp_path, text))
    assert str(info.value).splitlines() == [
        f"{tmp_path / 'job.toml'}: join.look_back_time: must be >= 0 (got -1)",
        f"{tmp_path / 'job.toml'}: join.max_waiting_time: must be >= 0 (got -2)",
    ]


# --- job-level rules ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["", "bank trx", "bank.trx", "bank/trx", "bänk"])
def test_name_allows_only_letters_digits_underscore_and_dash(tmp_path: Path, name: str) -> None:
    text = replace_line(MINIMAL, 'name = "j"', f'name = "{name}"')
    with pytest.raises(ConfigError, match=r"job\.toml: name: expected letters, digits, '_' or '-' only"):
        load_job(write(tmp_path, text))


@pytest.mark.parametrize("name", ["bank_trx", "Bank-Trx-2025", "0"])
def test_name_accepts_letters_digits_underscore_and_dash(tmp_path: Path, name: str) -> None:
    text = replace_line(MINIMAL, 'name = "j"', f'name = "{name}"')
    assert load_job(write(tmp_path, text)).name == name


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("start_date = 2025-03-01", dt.date(2025, 3, 1)),
        ('start_date = "2025-03-01"', dt.date(2025, 3, 1)),
    ],
)
def test_start_date_is_a_date(tmp_path: Path, line: str, expected: dt.date) -> None:
    text = replace_line(MINIMAL, "start_date = 2025-03-01", line)
    assert load_job(write(tmp_path, text)).start_date == expected


# --- sources and target: exactly one of path / table ----------------------------------------------


@pytest.mark.parametrize("section", ["source_a", "source_b", "target"])
def test_a_table_needs_exactly_one_of_path_or_table_not_both(tmp_path: Path, section: str) -> None:
    path = write(tmp_path, with_lines(MINIMAL, section, 'table = "db.x"'))
    expected = rf"job\.toml: {section}: give exactly one of 'path' or 'table' \(got both\)"
    with pytest.raises(ConfigError, match=expected):
        load_job(path)


def test_a_table_may_be_a_catalog_name(tmp_path: Path) -> None:
    text = replace_line(MINIMAL, '[source_a]\npath = "a"', '[source_a]\ntable = "db.finance_trx"')
    job = load_job(write(tmp_path, text))
    assert job.source_a.table == "db.finance_trx"
    assert job.source_a.path is None


@pytest.mark.parametrize(
    ("ref", "label"),
    [(TableRef(path="/data/x"), "path /data/x"), (TableRef(table="db.x"), "table db.x")],
)
def test_a_table_has_a_human_label(ref: TableRef, label: str) -> None:
    assert ref.label == label


@pytest.mark.parametrize(
    ("field", "lines"),
    [
        ("keys", 'keys = ["TrxId", "TrxId"]'),
        ("keys", 'keys = ["TrxId", "trxid"]'),
        ("b_keys", 'keys = ["TrxId"]\nb_keys = ["SepaId", "SepaId"]'),
        ("partition_by", 'keys = ["TrxId"]\npartition_by = ["RecDate", "RecDate"]'),
    ],
)
def test_target_column_lists_have_no_duplicates(tmp_path: Path, field: str, lines: str) -> None:
    text = replace_line(MINIMAL, 'keys = ["TrxId"]', lines)
    with pytest.raises(ConfigError, match=rf"job\.toml: target\.{field}: duplicate column"):
        load_job(write(tmp_path, text))


def test_state_path_must_not_be_empty(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL + '[state]\npath = ""\n')
    with pytest.raises(ConfigError, match=r"job\.toml: state\.path: must not be empty"):
        load_job(path)


# --- join -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("how", "canonical"),
    [
        ("inner", "inner"),
        ("INNER", "inner"),
        ("left", "left"),
        ("Left", "left"),
        ("left_outer", "left"),
        ("LEFT_OUTER", "left"),
        ("leftouter", "left"),
        ("left_anti", "left_anti"),
        ("leftanti", "left_anti"),
        ("Left_Anti", "left_anti"),
    ],
)
def test_join_how_is_normalised_to_inner_left_or_left_anti(tmp_path: Path, how: str, canonical: str) -> None:
    text = replace_line(MINIMAL, 'how = "left"', f'how = "{how}"')
    assert load_job(write(tmp_path, text)).join.how == canonical


@pytest.mark.parametrize("how", ["full_outer", "FULL_OUTER", "fullouter", "full", "outer"])
def test_join_how_full_outer_is_accepted_with_b_keys(tmp_path: Path, how: str) -> None:
    text = replace_line(MINIMAL, 'how = "left"', f'how = "{how}"')
    text = with_lines(text, "target", 'b_keys = ["SepaId"]')
    assert load_job(write(tmp_path, text)).join.how == "full_outer"


def test_late_horizon_defaults_to_twice_the_wait_and_must_exceed_it(tmp_path: Path) -> None:
    text = replace_line(MINIMAL, 'how = "left"', 'how = "left"\nmax_waiting_time = 3')
    assert load_job(write(tmp_path, text)).join.horizon == 6
    with pytest.raises(ConfigError, match=r"join: late_horizon: must be 0 \(off\) or more than max_waiting_time"):
        load_job(write(tmp_path, replace_line(text, "max_waiting_time = 3", "max_waiting_time = 3\nlate_horizon = 3")))


def test_an_asof_job_reads_its_strategy_and_asof_col(tmp_path: Path) -> None:
    text = replace_line(MINIMAL, 'how = "left"', 'how = "asof"\nasof_strategy = "nearest"\nasof_col = "EventTime"')
    join = load_job(write(tmp_path, text)).join
    assert (join.how, join.asof_strategy, join.asof_col, join.horizon) == ("asof", "nearest", "EventTime", 0)
    assert load_job(write(tmp_path, replace_line(MINIMAL, 'how = "left"', 'how = "asof"'))).join.asof_strategy == (
        "backward"
    )


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ('how = "left"\nasof_col = "EventTime"', r'join: asof_col: only for how = "asof" \(how is \'left\'\)'),
        ('how = "inner"\nasof_strategy = "forward"', r'join: asof_strategy: only for how = "asof"'),
        ('how = "asof"\nasof_strategy = "closest"', r"join\.asof_strategy: .*'backward', 'forward' or 'nearest'"),
        ('how = "asof"\nenforce_sliding_join_window = false', r"join: an asof job needs enforce_sliding_join_window"),
        ('how = "asof"\nmax_waiting_time = 1\nlate_horizon = 4', r"join: late_horizon: an asof job does not look"),
    ],
)
def test_asof_settings_are_checked(tmp_path: Path, lines: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_job(write(tmp_path, replace_line(MINIMAL, 'how = "left"', lines)))


def test_late_rows_is_a_path_when_it_looks_like_one_else_a_table(tmp_path: Path) -> None:
    text = replace_line(MINIMAL, 'keys = ["TrxId"]', 'keys = ["TrxId"]\nlate_rows = "data/late"')
    assert load_job(write(tmp_path, text)).target.late_rows_ref.path == str(Path("data/late").absolute())
    text = replace_line(MINIMAL, 'keys = ["TrxId"]', 'keys = ["TrxId"]\nlate_rows = "finance.late_payments"')
    assert load_job(write(tmp_path, text)).target.late_rows_ref.table == "finance.late_payments"


def test_join_cond_alone_is_enough(tmp_path: Path) -> None:
    text = replace_line(MINIMAL, 'join_cols = ["TrxId"]', 'join_cond = "A.TrxId = B.RefId"')
    job = load_job(write(tmp_path, text))
    assert job.join.join_cond == "A.TrxId = B.RefId"
    assert job.join.join_cols == []


@pytest.mark.parametrize(
    ("cols", "expected"),
    [
        ('["TrxId", "TrxId"]', r"duplicate column 'TrxId'$"),
        ('["TrxId", "TRXID"]', r"duplicate column 'TRXID' \(same as 'TrxId': Spark column names ignore"),
    ],
)
def test_join_cols_have_no_duplicates_ignoring_case(tmp_path: Path, cols: str, expected: str) -> None:
    text = replace_line(MINIMAL, 'join_cols = ["TrxId"]', f"join_cols = {cols}")
    with pytest.raises(ConfigError, match=rf"join\.join_cols: {expected}"):
        load_job(write(tmp_path, text))


@pytest.mark.parametrize("uom", ["day", "hour", "minute"])
def test_time_uom_accepts_day_hour_and_minute(tmp_path: Path, uom: str) -> None:
    path = write(tmp_path, with_lines(MINIMAL, "join", f'time_uom = "{uom}"'))
    assert load_job(path).join.time_uom == uom


def test_optional_join_settings_load(tmp_path: Path) -> None:
    lines = ('alias_a = "L"', 'alias_b = "R"', 'output_select = "L.*, R.SepaId"', "include_waiting = false")
    join = load_job(write(tmp_path, with_lines(MINIMAL, "join", *lines))).join
    assert (join.alias_a, join.alias_b) == ("L", "R")
    assert join.output_select == "L.*, R.SepaId"
    assert join.include_waiting is False


def test_models_validate_without_a_file() -> None:
    job = JobConfig.model_validate(
        {
            "name": "j",
            "start_date": "2025-03-01",
            "source_a": {"table": "db.a"},
            "source_b": {"table": "db.b"},
            "join": {"how": "leftanti", "join_cols": ["TrxId"]},
            "target": {"table": "db.t", "keys": ["TrxId"]},
        }
    )
    assert job.join.how == "left_anti"


# --- resolve_job ----------------------------------------------------------------------------------


def test_resolve_job_uses_an_existing_toml_path_as_is(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL, "anywhere.toml")
    assert resolve_job(str(path), tmp_path / "jobs") == path


@pytest.mark.parametrize("given", ["bank_trx", "bank_trx.toml"])
def test_resolve_job_finds_a_name_in_the_job_dir(tmp_path: Path, given: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    job_dir = tmp_path / "jobs"
    job_dir.mkdir()
    write(job_dir, MINIMAL, "bank_trx.toml")
    assert resolve_job(given, job_dir) == job_dir / "bank_trx.toml"


def test_resolve_job_unknown_lists_the_available_jobs(tmp_path: Path) -> None:
    job_dir = tmp_path / "jobs"
    job_dir.mkdir()
    write(job_dir, MINIMAL, "sepa.toml")
    write(job_dir, MINIMAL, "bank_trx.toml")
    (job_dir / "notes.txt").write_text("not a job")
    with pytest.raises(ConfigError, match=r"job 'nope': .*\(jobs in .*jobs: bank_trx, sepa\)"):
        resolve_job("nope", job_dir)


def test_resolve_job_with_no_job_dir_says_none_available(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"job 'nope': .*: none\)"):
        resolve_job("nope", tmp_path / "missing")


def test_duplicate_columns_are_caught_in_models_built_from_python() -> None:
    with pytest.raises(ValueError, match=r"join_cols\n.*duplicate column 'TrxId'"):
        JobConfig.model_validate(
            {
                "name": "j",
                "start_date": "2025-03-01",
                "source_a": {"table": "db.a"},
                "source_b": {"table": "db.b"},
                "join": {"how": "left", "join_cols": ["TrxId", "TrxId"]},
                "target": {"table": "db.t", "keys": ["TrxId"]},
            }
        )


# --- feature jobs ([[features]]) -----------------------------------------------------------------

FEATURES = """\
name = "f"
start_date = 2025-03-01
[source_a]
path = "trx"
[[features]]
name = "risk"
path = "scores"
how = "asof"
join_cols = ["CustomerId"]
max_waiting_time = 2
[[features]]
name = "pay"
path = "payments"
how = "left"
join_cols = ["TrxId"]
keys = ["PayId"]
[target]
path = "t"
keys = ["TrxId"]
"""

FEE = '[[features]]\nname = "fee"\npath = "fees"\nhow = "left"\njoin_cols = ["TrxId"]\nkeys = ["FeeId"]\n'


# One rule a row: a job file with one edit (a line replaced, or lines added at the top of a section) fails to load,
# the message naming the field.
@pytest.mark.parametrize(
    ("text", "message"),
    [
        (replaced("start_date = 2025-03-01", 'start_date = "March 1st"'), r"job\.toml: start_date: .*got 'March 1st'"),
        (replaced('path = "a"', 'path = "  "'), r"job\.toml: source_a\.path: must not be empty"),
        (replaced('keys = ["TrxId"]', "keys = []"), r"job\.toml: target\.keys: must list at least one column"),
        (replaced('keys = ["TrxId"]\n', ""), r"job\.toml: target\.keys: required key is missing"),
        (replaced('keys = ["TrxId"]', 'keys = ["TrxId", ""]'), r"job\.toml: target\.keys\[1\]: must not be empty"),
        (replaced('how = "left"', 'how = "full_outer"'), r"target\.b_keys: a full_outer job outputs B rows without"),
        (replaced('how = "left"\n', ""), r"join\.how: required key is missing"),
        (replaced('join_cols = ["TrxId"]\n', ""), r"job\.toml: join: give join_cols or join_cond"),
        (replaced('join_cols = ["TrxId"]', 'join_cond = " "'), r"join\.join_cond: must not be empty"),
        (replaced('join_cols = ["TrxId"]', 'join_cols = ["TrxId", ""]'), r"join\.join_cols\[1\]: must not be empty"),
        (added("join", "lookback_time = 2"), r"join\.lookback_time: unknown key; did you mean 'look_back_time'\?$"),
        (added("", "max_windows = 3"), r"job\.toml: max_windows: unknown key"),
        (added("", "max_window = -1"), r"job\.toml: max_window: must be >= 0 \(got -1\)"),
        (added("", "max_window = true"), r"job\.toml: max_window: Input should be a valid integer"),
        (added("", 'max_window = "3"'), r"job\.toml: max_window: Input should be a valid integer"),
        (added("", "max_window = 3.0"), r"job\.toml: max_window: Input should be a valid integer"),
        (added("join", "look_back_time = -1"), r"job\.toml: join\.look_back_time: must be >= 0 \(got -1\)$"),
        (added("join", "max_waiting_time = -1"), r"job\.toml: join\.max_waiting_time: must be >= 0 \(got -1\)$"),
        (added("join", 'include_waiting = "yes"'), r"join\.include_waiting: Input should be a valid boolean"),
        (added("join", 'enforce_sliding_join_window = "yes"'), r"join\.enforce_sliding_join_window: Input should"),
        (added("join", 'time_uom = "week"'), r"join\.time_uom: .*'day', 'hour' or 'minute' \(got 'week'\)"),
        (added("join", 'alias_a = "x"\nalias_b = "X"'), r"job\.toml: join: alias_a and alias_b must differ"),
        (added("join", 'alias_a = ""'), r"join\.alias_a: expected an identifier"),
        (added("join", 'alias_a = "a b"'), r"join\.alias_a: expected an identifier"),
        (added("join", 'alias_a = "1a"'), r"join\.alias_a: expected an identifier"),
        (added("join", 'alias_a = "a.b"'), r"join\.alias_a: expected an identifier"),
        (
            replaced("[target]", '[source_b]\npath = "b"\n[target]', FEATURES),
            r"either \[source_b\] .* or \[\[features\]\]",
        ),
        (
            replaced("[target]", "[join]\nmax_waiting_time = 3\n[target]", FEATURES),
            r"join\.max_waiting_time: a job with \[\[features\]\] sets it per",
        ),
        (replaced('name = "pay"', 'name = "risk"', FEATURES), r"features\[1\]\.name: 'risk' is used twice"),
        (
            replaced("[target]", FEE + "[target]", FEATURES),
            r"features\[2\]\.keys: only one feature source may match several rows",
        ),
        (
            replaced('how = "left"', 'how = "full_outer"', FEATURES),
            r"features\[1\]\.how: a feature source joins as 'left' or 'asof'",
        ),
        (
            replaced('[source_a]\npath = "a"\n', "[source_a]\n"),
            r"source_a: give exactly one of 'path' or 'table' \(got neither",
        ),
        (
            replaced('[source_b]\npath = "b"\n', "[source_b]\n"),
            r"source_b: give exactly one of 'path' or 'table' \(got neither",
        ),
        (replaced('how = "left"', 'how = "right"'), r"join\.how: expected one of inner, .*asof, got 'right'"),
        (replaced('how = "left"', 'how = "cross"'), r"join\.how: expected one of inner, .*asof, got 'cross'"),
        (replaced('how = "left"', 'how = "semi"'), r"join\.how: expected one of inner, .*asof, got 'semi'"),
        (replaced('how = "left"', 'how = "left-anti"'), r"join\.how: expected one of inner, .*asof, got 'left-anti'"),
        (replaced('how = "left"', 'how = ""'), r"join\.how: expected one of inner, .*asof, got ''"),
        (
            replaced(
                'how = "left"',
                'how = "full_outer"\nenforce_sliding_join_window = false',
                added("target", 'b_keys = ["SepaId"]'),
            ),
            r"join: .*full_outer job needs enforce_sliding_join_window = true",
        ),
        (
            replaced(
                'keys = ["TrxId"]', 'keys = ["TrxId"]\ncorrections = "keep"', replaced('how = "left"', 'how = "asof"')
            ),
            r'target\.corrections: "keep" is not available for asof jobs',
        ),
    ],
    ids=[
        "start_date_that_is_not_a_date_is_an_error",
        "an_empty_path_is_an_error",
        "target_keys_must_not_be_empty",
        "target_keys_are_required",
        "target_column_lists_have_no_empty_names",
        "a_full_outer_job_without_b_keys_is_refused_naming_target_b_keys",
        "join_how_is_required",
        "join_needs_join_cols_or_join_cond",
        "join_cond_must_not_be_empty",
        "join_cols_have_no_empty_names",
        "unknown_key_is_an_error_naming_the_field",
        "unknown_top_level_key_is_an_error",
        "max_window_must_be_non_negative",
        "integers_must_be_written_as_integers[true]",
        "integers_must_be_written_as_integers[string]",
        "integers_must_be_written_as_integers[float]",
        "look_back_time_must_be_non_negative",
        "max_waiting_time_must_be_non_negative",
        "include_waiting_must_be_a_boolean",
        "enforce_sliding_join_window_must_be_a_boolean",
        "time_uom_rejects_anything_but_day_hour_and_minute",
        "aliases_must_differ",
        "aliases_must_be_identifiers[empty]",
        "aliases_must_be_identifiers[space]",
        "aliases_must_be_identifiers[digit_first]",
        "aliases_must_be_identifiers[dot]",
        "a_job_with_both_source_b_and_features_is_refused",
        "a_feature_job_sets_the_join_per_source_not_in_join",
        "a_feature_source_name_used_twice_is_refused_naming_it",
        "only_one_feature_source_may_match_several_rows",
        "a_feature_source_joins_as_left_or_asof",
        "a_table_needs_exactly_one_of_path_or_table_not_neither[source_a]",
        "a_table_needs_exactly_one_of_path_or_table_not_neither[source_b]",
        "join_how_unknown_is_an_error_listing_the_choices[right]",
        "join_how_unknown_is_an_error_listing_the_choices[cross]",
        "join_how_unknown_is_an_error_listing_the_choices[semi]",
        "join_how_unknown_is_an_error_listing_the_choices[left-anti]",
        "join_how_unknown_is_an_error_listing_the_choices[empty]",
        "a_full_outer_job_needs_the_sliding_join_window",
        "corrections_keep_is_refused_for_an_asof_job",
    ],
)
def test_a_job_file_that_breaks_a_rule_is_rejected_naming_the_field(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_job(write(tmp_path, text))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            added("join", "max_wating_time = 3"),
            r"join\.max_wating_time: unknown key; did you mean 'max_waiting_time'\?$",
        ),
        (added("", "start_data = 2025-03-01"), r"job\.toml: start_data: unknown key; did you mean 'start_date'\?$"),
        (added("target", 'bkeys = ["SepaId"]'), r"target\.bkeys: unknown key; did you mean 'b_keys'\?$"),
        (added("source_a", 'were = "x > 0"'), r"source_a\.were: unknown key; did you mean 'where'\?$"),
        (
            replaced("max_waiting_time = 2", "max_wait_time = 2", FEATURES),
            r"features\[0\]\.max_wait_time: unknown key; did you mean 'max_waiting_time'\?$",
        ),
        (added("join", "colour = 3"), r"join\.colour: unknown key$"),
    ],
    ids=["join", "top_level", "target", "source", "a_feature_source", "nothing_close"],
)
def test_an_unknown_key_suggests_the_closest_key_of_its_section(tmp_path: Path, text: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_job(write(tmp_path, text))


def test_a_feature_job_lists_its_sources_and_needs_no_join_section(tmp_path: Path) -> None:
    job = load_job(write(tmp_path, FEATURES))
    assert [(role, ref.path) for role, ref in job.sources] == [
        ("source_a", str(Path.cwd() / "trx")),
        ("features[risk]", str(Path.cwd() / "scores")),
        ("features[pay]", str(Path.cwd() / "payments")),
    ]
    assert job.source_b is None and job.join.how is None and job.features[1].out_prefix == "pay_"


def test_a_feature_sources_settings_are_remembered_and_a_change_is_one(tmp_path: Path) -> None:
    before = built_with(load_job(write(tmp_path, FEATURES)))
    longer = load_job(write(tmp_path, FEATURES.replace("max_waiting_time = 2", "max_waiting_time = 3")))
    assert [c.setting for c in changes(before, built_with(longer))] == ["features[risk]"]
    two_source = load_job(write(tmp_path, MINIMAL))
    assert "join.how" in [c.setting for c in changes(built_with(two_source), before)]


def chain(tmp_path: Path, downstream_a: str, upstream: str = MINIMAL, downstream: str = MINIMAL) -> Path:
    """An upstream job `up` (target at tmp_path/up_target, state at tmp_path/up_state) and a job `down` (the job
    file `downstream`) whose [source_a] is `downstream_a`, as job files side by side; the path of down's file."""
    up = replaced('name = "j"', 'name = "up"', upstream)
    up = replaced('path = "t"', f'path = "{tmp_path / "up_target"}"', up)
    write(tmp_path, up + f'[state]\npath = "{tmp_path / "up_state"}"\n', "up.toml")
    down = replaced(
        'name = "j"', 'name = "down"', replaced('[source_a]\npath = "a"', f"[source_a]\n{downstream_a}", downstream)
    )
    return write(tmp_path, down, "down.toml")


def test_a_source_named_by_job_is_that_jobs_targets_final_rows_up_to_its_watermark(tmp_path: Path) -> None:
    source = load_job(chain(tmp_path, 'job = "up"')).source_a
    assert (source.path, source.where) == (str(tmp_path / "up_target"), "IsFinal")
    assert (source.job, source.job_state) == ("up", str(tmp_path / "up_state"))  # where its watermark is read
    own = load_job(chain(tmp_path, 'job = "up"\nwhere = "TrxId > 0"')).source_a
    assert own.where == "IsFinal AND (TrxId > 0)"


def test_a_source_naming_a_job_that_is_not_beside_it_is_refused_listing_the_jobs_there(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"source_a\.job: no job 'upp' in .* \(jobs there: down, up\)"):
        load_job(chain(tmp_path, 'job = "upp"'))


def test_jobs_that_read_each_other_in_a_cycle_are_refused_naming_the_cycle(tmp_path: Path) -> None:
    up = replaced('[source_b]\npath = "b"', '[source_b]\njob = "down"')
    with pytest.raises(ConfigError, match=r"source_b\.job: the jobs read each other in a cycle: down -> up -> down"):
        load_job(chain(tmp_path, 'job = "up"', upstream=up))


@pytest.mark.parametrize("other", ['path = "a"', 'table = "db.a"', 'job_state = "s"', 'upstream = "x"'])
def test_a_source_gives_a_job_or_a_table_not_both(tmp_path: Path, other: str) -> None:
    key = other.split(" ")[0]
    with pytest.raises(ConfigError, match=rf"source_a: give job or {key}, not both"):
        load_job(chain(tmp_path, f'job = "up"\n{other}'))


def test_a_source_named_by_job_is_dated_as_this_job_is_or_refused_naming_inc_col_and_time_uom(tmp_path: Path) -> None:
    other = with_lines(MINIMAL, "join", 'inc_col = "LoadDate"')
    message = r"source_a\.job: up's target is dated by LoadDate in days; join\.inc_col and join\.time_uom must be"
    with pytest.raises(ConfigError, match=message):
        load_job(chain(tmp_path, 'job = "up"', upstream=other))


@pytest.mark.parametrize("unit", ["hour", "minute"])
def test_a_day_job_may_read_an_hour_or_minute_jobs_target(tmp_path: Path, unit: str) -> None:
    finer = with_lines(MINIMAL, "join", f'time_uom = "{unit}"')
    job = load_job(chain(tmp_path, 'job = "up"', upstream=finer))
    assert (job.join.time_uom.value, job.source_a.upstream.join.time_uom.value) == ("day", unit)


def test_an_hour_job_on_a_day_jobs_target_is_refused_naming_the_source_and_why(tmp_path: Path) -> None:
    hourly = with_lines(MINIMAL, "join", 'time_uom = "hour"')
    message = (
        r"down\.toml: source_a\.job: up's target is dated by RecDate in days(.|\n)*a job of hours cannot read a job "
        r"of days, whose RecDate is a DATE that names no hour \(set time_uom = 'day' here, or make up a job of hours\)"
    )
    with pytest.raises(ConfigError, match=message):
        load_job(chain(tmp_path, 'job = "up"', downstream=hourly))


def test_job_state_is_set_from_the_upstreams_job_file_only() -> None:
    with pytest.raises(ValueError, match="job_state: only with job"):
        SourceRef(path="a", job_state="/s")


def test_a_job_remembers_the_settings_of_the_job_whose_target_it_reads_and_is_refused_when_they_change(
    tmp_path: Path,
) -> None:
    down = chain(tmp_path, 'job = "up"')
    recorded = json.loads(encode(built_with(load_job(down))))  # as its run log keeps them
    assert recorded["source_a.job.join.how"] == "left" and recorded["source_a.job.target.keys"] == ["TrxId"]
    up = tmp_path / "up.toml"
    up.write_text(up.read_text().replace('how = "left"', 'how = "left"\nmax_waiting_time = 2'))
    message = r"changed since its target was built(.|\n)*\nsource_a\.job\.join\.max_waiting_time: 0 -> 2\n"
    with pytest.raises(SettingsChangedError, match=message):
        check_unchanged(load_job(down), recorded, "run")


def test_the_settings_of_an_upstreams_upstream_are_remembered_too(tmp_path: Path) -> None:
    down = chain(tmp_path, 'job = "up"')  # up reads top, a third job file beside them
    up = tmp_path / "up.toml"
    up.write_text(up.read_text().replace('[source_a]\npath = "a"', '[source_a]\njob = "top"'))
    top = replaced('path = "t"', f'path = "{tmp_path / "top_target"}"', replaced('name = "j"', 'name = "top"'))
    write(tmp_path, top, "top.toml")
    assert built_with(load_job(down))["source_a.job.source_a.job.join.how"] == "left"
