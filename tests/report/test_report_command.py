"""`deltainc report` and `status`'s trend over run logs written by the state layer's own writer (delta-rs): no Spark.

Each test builds the job's run log with `append_run`, runs the command in-process through `main`, and reads what it
wrote: the page's numbers (its JSON, the same the charts and tables show), the images, or its one line of error.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest
from cli_jobs import D1, job_toml, settings_env

from deltainc.cli.app import main
from deltainc.pipeline.state import RunRecord, append_run, state_paths
from deltainc.pipeline.state.lock import acquire
from deltainc.pipeline.state.store import ensure_state_tables
from deltainc.time_units import to_index

pytestmark = pytest.mark.pure

FIXTURE_STATE = Path(__file__).resolve().parents[1] / "fixtures" / "spark35_job" / "state"  # a run log of 0.1's columns


@pytest.fixture()
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A job `trx` whose sources were never created (the report reads only its state), its settings under tmp_path."""
    for name, value in settings_env(tmp_path).items():
        monkeypatch.setenv(name, value)
    jobs = tmp_path / "jobs"
    jobs.mkdir()
    (jobs / "trx.toml").write_text(job_toml("trx", str(tmp_path / "a"), str(tmp_path / "b"), str(tmp_path / "t"), D1))
    return tmp_path


def record(day: int, **values: object) -> RunRecord:
    """The run-log row of the daily window D1 + day, run the morning after; `values` override."""
    label = (D1 + dt.timedelta(days=day)).isoformat()
    fields: dict[str, object] = {
        "rows_same_time": 10 + day,
        "rows_a_waiting": day,
        "rows_a_timed_out": 1,
        "files_read_a": 1 + day,
        "watermark": label,
        "watermark_unit": day,
        "releases_lock": True,
        "spark_start_s": 9.0,
        "join_s": 2.0,
        "write_s": 1.0,
        "bookkeeping_s": 0.5,
        "source_latest": json.dumps({"source_a": label, "source_b": label}),
        **values,
    }
    status, error = str(fields.pop("status", "succeeded")), fields.pop("error", None)
    end = str(fields.pop("window_end", label))
    started = dt.datetime.combine(D1, dt.time(6)) + dt.timedelta(days=day + 1)
    return RunRecord("trx", f"run-{day}", "run", label, end, status, error, started, 12.5, **fields)  # type: ignore[arg-type]


def write_runs(root: Path, *records: RunRecord) -> None:
    for item in records:
        append_run(state_paths(str(root / "state")), item)


def page_data(path: Path) -> dict[str, object]:
    """The numbers the page holds (its JSON element)."""
    found = re.search(r'<script type="application/json" id="deltainc-report">(.*?)</script>', path.read_text(), re.S)
    assert found is not None
    return dict(json.loads(found.group(1).replace("<\\/", "</")))


def test_the_page_holds_the_numbers_status_json_shows(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    failed = record(3, status="failed", error="ValueError: boom", watermark=None, watermark_unit=None)
    write_runs(root, record(0), record(1), record(2), failed)
    assert main(["status", "trx", "--json", "--runs", "10"]) == 0
    status = json.loads(capsys.readouterr().out)
    page = root / "trx.html"
    assert main(["report", "trx", "--out", str(page)]) == 0
    assert capsys.readouterr().out.startswith("trx: report of 4 run(s), 3 window(s): ")
    data = page_data(page)
    runs = data["runs"]
    assert isinstance(runs, list) and isinstance(data["charts"], dict)
    assert [(r["run_id"], r["status"], r["duration_s"], r["error"]) for r in runs] == [
        (r["run_id"], r["status"], r["duration_s"], r["error"]) for r in status["runs"]
    ]
    succeeded = [r for r in reversed(status["runs"]) if r["status"] == "succeeded"]
    outcomes = data["charts"]["outcomes"]
    assert outcomes["x"] == [r["window_start"] for r in succeeded]
    assert outcomes["series"]["same_time"] == [r["rows_same_time"] for r in succeeded]
    assert data["charts"]["backlog"]["series"]["a_waiting"] == [r["rows_a_waiting"] for r in succeeded]
    assert data["charts"]["durations"]["series"]["Spark's start"] == [
        r["spark_start_s"] for r in reversed(status["runs"])
    ]
    html = page.read_text()
    assert 'class="failed"' in html and "ValueError: boom" in html  # the failed run and its message, in the table
    assert "<link" not in html and "src=" not in html and "http" not in html  # nothing fetched from anywhere


def test_the_page_of_a_job_that_reads_another_names_that_job_its_watermark_and_how_far_behind_it_is(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (root / "jobs" / "trx_scored.toml").write_text(
        f'name = "trx_scored"\nstart_date = {D1}\n[source_a]\njob = "trx"\n[source_b]\npath = "{root / "c"}"\n'
        '[join]\nhow = "left"\njoin_cols = ["TrxId"]\nalias_a = "T"\nalias_b = "C"\n'
        f'[target]\npath = "{root / "t2"}"\nkeys = ["TrxId"]\n'
    )
    days = [record(day, watermark_unit=to_index(D1) + day) for day in range(3)]  # the units since 1970 as a run's
    write_runs(root, *days, replace(days[0], job="trx_scored"))
    page = root / "trx_scored.html"
    assert main(["report", "trx_scored", "--out", str(page)]) == 0
    text = re.sub(r"<[^>]+>", " ", page.read_text())
    upstream = f"trx: watermark {D1 + dt.timedelta(days=2)}; this job is 2 day(s) behind it"
    assert re.search(rf"upstream job\s+{re.escape(upstream)}", text)


def test_a_job_that_never_ran_has_no_runs_yet_and_nothing_is_written(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["report", "trx", "--out", str(root / "trx.html")]) == 0
    assert capsys.readouterr().out == "trx: no runs yet: nothing to report (run the job first: deltainc run trx)\n"
    assert not (root / "trx.html").exists()


def test_since_after_the_last_run_is_refused_naming_it(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_runs(root, record(0))
    assert main(["report", "trx", "--since", "2030-01-01", "--out", str(root / "trx.html")]) == 2
    assert capsys.readouterr().err == (
        "deltainc: error: --since 2030-01-01: trx has no run since then (its last run started 2025-03-02)\n"
    )
    assert not (root / "trx.html").exists()


def test_an_unreadable_run_log_is_refused_naming_state_dir(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_runs(root, record(0))
    for commit in (root / "state" / "runs" / "_delta_log").glob("*.json"):
        commit.write_text("not a Delta commit")
    assert main(["report", "trx", "--out", str(root / "trx.html")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("deltainc: error: state_dir: ") and len(err.strip().splitlines()) == 1
    assert not (root / "trx.html").exists()


def test_an_old_run_log_without_phases_reads_them_as_unknown(
    root: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DELTAINC_STATE_DIR", str(FIXTURE_STATE))
    assert main(["report", "trx", "--out", str(root / "trx.html")]) == 0
    durations = page_data(root / "trx.html")["charts"]["durations"]  # type: ignore[index]
    assert set(durations["series"]["join"]) == {None}
    assert all(value > 0 for value in durations["series"]["unrecorded"])


def test_last_and_since_choose_the_runs_shown(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_runs(root, record(0), record(1), record(2))
    assert main(["report", "trx", "--last", "2", "--out", str(root / "last.html")]) == 0
    assert [r["run_id"] for r in page_data(root / "last.html")["runs"]] == ["run-2", "run-1"]  # type: ignore[union-attr]
    assert main(["report", "trx", "--since", "2025-03-03", "--out", str(root / "since.html")]) == 0
    assert [r["run_id"] for r in page_data(root / "since.html")["runs"]] == ["run-2", "run-1"]  # type: ignore[union-attr]


def test_png_writes_each_chart_as_an_image(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_runs(root, record(0), record(1))
    assert main(["report", "trx", "--out", str(root / "trx.html"), "--png", str(root / "images")]) == 0
    images = sorted(p.name for p in (root / "images").iterdir())
    assert "trx-outcomes.png" in images and "trx-durations.png" in images and "trx-lag.png" in images
    assert all((root / "images" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for name in images)


def test_status_shows_the_trend_of_the_last_runs(root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_runs(root, record(0), record(1), record(2))
    assert main(["status", "trx"]) == 0
    out = capsys.readouterr().out
    assert "  trend of the last 3 runs, oldest to newest (deltainc report trx: charts):" in out
    assert "    backlog        ▁▅█  0 -> 2" in out
    assert "    same_time      ▁▅█  10 -> 12" in out


def test_a_catch_up_window_shows_its_days_from_the_target_and_its_open_rows_as_backlog(
    root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import pyarrow as pa
    from deltalake import write_deltalake

    d3 = D1 + dt.timedelta(days=2)
    target = pa.table(
        {
            "TrxId": [1, 2, 3, 4, 5],
            "JoinType": pa.array([1, 1, 1, 4, 5], pa.int32()),  # 5: a waiting row, counted from the run log
            "RecDate": pa.array([D1, D1, d3, d3, d3], pa.date32()),
        }
    )
    write_deltalake(str(root / "t"), target, partition_by=["RecDate"])
    write_runs(root, record(0, window_end=d3.isoformat(), rows_same_time=3, rows_a_timed_out=1, rows_a_waiting=2))
    assert main(["report", "trx", "--out", str(root / "trx.html")]) == 0
    outcomes = page_data(root / "trx.html")["charts"]["outcomes"]  # type: ignore[index]
    assert outcomes["x"] == [D1.isoformat(), (D1 + dt.timedelta(days=1)).isoformat(), d3.isoformat()]
    assert outcomes["series"] == {"same_time": [2, 0, 1], "a_timed_out": [0, 0, 1]}
    assert page_data(root / "trx.html")["charts"]["backlog"]["series"] == {"a_waiting": [2]}  # type: ignore[index]


H1 = dt.datetime(2025, 3, 1)  # the hour job's first hour


@pytest.fixture()
def hourly(root: Path) -> Path:
    """The job `trx` as an hour job, its target partitioned by IsFinal alone (the hour job's default)."""
    job = root / "jobs" / "trx.toml"
    text = job.read_text()
    job.write_text(text.replace('how = "left"', 'how = "left"\ntime_uom = "hour"'))
    return root


def hour_record(first: int, last: int | None = None, minute: int = 5, **values: object) -> RunRecord:
    """The run-log row of the hour job's window [H1 + first, H1 + last] hours, run `minute` after its end."""
    start, end = (H1 + dt.timedelta(hours=h) for h in (first, first if last is None else last))
    label = end.isoformat()
    fields: dict[str, object] = {
        "rows_same_time": 2,
        "rows_a_timed_out": 1,
        "rows_a_waiting": 3,
        "files_read_a": 2,
        "watermark": label,
        "watermark_unit": int((end - dt.datetime(1970, 1, 1)).total_seconds() // 3600),
        "releases_lock": True,
        "time_uom": "hour",
        **values,
    }
    status, error = str(fields.pop("status", "succeeded")), fields.pop("error", None)
    started = end + dt.timedelta(hours=1, minutes=minute)
    run_id = f"run-{first}-{minute}"
    return RunRecord("trx", run_id, "run", start.isoformat(), label, status, error, started, 12.5, **fields)  # type: ignore[arg-type]


def write_hour_target(root: Path, hours: int) -> None:
    """The hour job's target as its runs left it: per hour two same_time rows and one timed out (final), and the
    open rows of the last hour, partitioned by IsFinal."""
    import pyarrow as pa
    from deltalake import write_deltalake

    final = [(H1 + dt.timedelta(hours=h), code) for h in range(hours) for code in (1, 1, 4)]
    rows = [*final, *[(H1 + dt.timedelta(hours=hours - 1), 5)] * 3]
    target = pa.table(
        {
            "TrxId": list(range(len(rows))),
            "JoinType": pa.array([code for _, code in rows], pa.int32()),
            "RecDate": pa.array([stamp for stamp, _ in rows], pa.timestamp("us", tz="UTC")),
            "IsFinal": [code != 5 for _, code in rows],
        }
    )
    write_deltalake(str(root / "t"), target, partition_by=["IsFinal"])


def test_the_header_says_the_layout_the_targets_log_holds(hourly: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_hour_target(hourly, 1)
    write_runs(hourly, hour_record(0))
    assert main(["report", "trx", "--out", str(hourly / "trx.html")]) == 0
    header = re.search(r"<th>layout</th><td[^>]*>(.*?)</td>", (hourly / "trx.html").read_text())
    assert header is not None and header.group(1) == "partitioned by IsFinal (the target&#x27;s Delta log)"


def test_an_hour_jobs_catch_up_is_drawn_hour_by_hour_and_kept_out_of_the_lines(
    hourly: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_hour_target(hourly, 7)
    catch_up = hour_record(0, 3, rows_same_time=8, rows_a_timed_out=4, files_read_a=9, rows_a_waiting=3)
    write_runs(hourly, catch_up, hour_record(4), hour_record(5), hour_record(6))
    assert main(["report", "trx", "--out", str(hourly / "trx.html")]) == 0
    data = page_data(hourly / "trx.html")
    charts = data["charts"]
    hours = [(H1 + dt.timedelta(hours=h)).isoformat() for h in range(7)]
    assert charts["outcomes"]["x"] == hours  # type: ignore[index]
    assert charts["outcomes"]["series"] == {"same_time": [2.0] * 7, "a_timed_out": [1.0] * 7}  # type: ignore[index]
    for key in ("late", "files", "bytes"):
        assert charts[key]["x"] == hours[4:], key  # type: ignore[index]
        assert "1 catch-up window(s) shown apart" in charts[key]["note"], key  # type: ignore[index]
    [apart] = data["catch_ups"]  # type: ignore[misc]
    assert (apart["window"], apart["hours"], apart["final rows"], apart["a_timed_out"], apart["files read"]) == (
        f"{hours[0]}..{hours[3]}",
        4,
        12,
        4,
        9,
    )


def test_failed_runs_and_takeovers_are_marked_on_every_chart(hourly: Path, capsys: pytest.CaptureFixture[str]) -> None:
    failed = hour_record(1, status="failed", error="SchemaError: boom", watermark=None, watermark_unit=None)
    took_over = hour_record(2, took_over="run-2-0 (host): its processes are gone")
    write_runs(hourly, hour_record(0), failed, hour_record(1, minute=20), took_over, hour_record(3))
    assert main(["report", "trx", "--out", str(hourly / "trx.html")]) == 0
    charts = page_data(hourly / "trx.html")["charts"]
    for key in ("outcomes", "backlog", "late", "files", "bytes"):  # one point a window
        assert charts[key]["marks"] == [None, "failed", "took over", None], key  # type: ignore[index]
    assert charts["durations"]["marks"] == [None, "failed", None, "took over", None]  # type: ignore[index]
    html = (hourly / "trx.html").read_text()
    assert html.count('<g class="mark"') == 5 * 2 + 2


def test_the_page_opens_with_a_health_line(hourly: Path, capsys: pytest.CaptureFixture[str]) -> None:
    failed = hour_record(1, status="failed", error="SchemaError: boom", watermark=None, watermark_unit=None)
    write_runs(hourly, hour_record(0, rows_a_waiting=3), failed, hour_record(1, minute=20, rows_a_waiting=5))
    assert main(["report", "trx", "--out", str(hourly / "trx.html")]) == 0
    html = (hourly / "trx.html").read_text()
    health = page_data(hourly / "trx.html")["health"]
    assert html.index(f'<p class="health">{health}</p>') < html.index('<table class="header">')
    assert str(health).startswith("last run ")
    assert "backlog 5 open rows, rising (from 3 over the last 2 windows); 1 failed in the last 3 runs" in str(health)


def test_the_health_line_says_a_run_holds_the_lock_while_it_runs(root: Path) -> None:
    write_runs(root, record(0), record(1))
    paths = state_paths(str(root / "state"))
    ensure_state_tables(paths)
    acquire(paths, "trx", "rerun-2", 360)  # held by this process: a live run
    assert main(["report", "trx", "--out", str(root / "trx.html")]) == 0
    assert str(page_data(root / "trx.html")["health"]).startswith("run rerun-2 in progress, started ")
