import copy
import json

import pytest

from mountbench.fio.parse import (
    FioOutputError,
    histogram_percentiles,
    job_metrics,
    load_fio_json,
    parse_fio,
    short_jobs,
)


def load(data_dir, name):
    return load_fio_json((data_dir / "fio" / name).read_text())


def test_single_randrw_job_gives_both_directions(data_dir):
    doc = load(data_dir, "randrw-single.json+")
    parsed = parse_fio(doc)
    m = parsed.metrics
    job = doc["jobs"][0]
    assert parsed.version == "fio-3.33"
    assert m["read.iops"] == pytest.approx(job["read"]["iops"])
    assert m["write.bw"] == pytest.approx(job["write"]["bw_bytes"])
    # total latency (lat_percentiles=1), converted to seconds
    assert m["read.lat_p99"] == pytest.approx(job["read"]["lat_ns"]["percentile"]["99.000000"] / 1e9)
    assert m["read.lat_p99.9"] == pytest.approx(job["read"]["lat_ns"]["percentile"]["99.900000"] / 1e9)
    assert m["read.lat_mean"] == pytest.approx(job["read"]["lat_ns"]["mean"] / 1e9)
    assert "trim.iops" not in m  # no trim I/O, no trim metrics
    assert m["cpu.usr"] == pytest.approx(job["usr_cpu"])
    assert not parsed.errors


def test_two_job_entries_are_summed_and_percentiles_merged_from_histograms(data_dir):
    doc = load(data_dir, "randread-2jobs.json+")
    assert len(doc["jobs"]) == 2
    m = parse_fio(doc).metrics
    assert m["read.iops"] == pytest.approx(sum(j["read"]["iops"] for j in doc["jobs"]))
    # clat (no lat_percentiles): merged p50 lies between the two jobs' own p50s (inclusive)
    p50s = [j["read"]["clat_ns"]["percentile"]["50.000000"] / 1e9 for j in doc["jobs"]]
    assert min(p50s) * 0.9 <= m["read.lat_p50"] <= max(p50s) * 1.1
    n = [j["read"]["clat_ns"]["N"] for j in doc["jobs"]]
    means = [j["read"]["clat_ns"]["mean"] for j in doc["jobs"]]
    assert m["read.lat_mean"] == pytest.approx((n[0] * means[0] + n[1] * means[1]) / sum(n) / 1e9)


def test_group_reporting_plain_json(data_dir):
    doc = load(data_dir, "seqwrite-grouped.json")
    m = parse_fio(doc).metrics
    assert m["write.bw"] == pytest.approx(doc["jobs"][0]["write"]["bw_bytes"])
    assert "read.bw" not in m


def test_enospc_is_reported_as_a_job_error(data_dir):
    parsed = parse_fio(load(data_dir, "enospc.json+"))
    assert parsed.errors == ("enospc: error 28",)


def test_histogram_percentiles():
    bins = {10: 50, 20: 40, 1000: 10}
    assert histogram_percentiles(bins, [50, 90, 95, 100]) == {50: 10.0, 90: 20.0, 95: 1000.0, 100: 1000.0}


def test_notice_lines_before_json_are_skipped():
    assert load_fio_json('fio: note\n{"jobs": []}') == {"jobs": []}


@pytest.mark.parametrize("text", ["", "fio: failed", '{"jobs": [', json.dumps({"jobs": []})])
def test_unusable_output_raises(text):
    with pytest.raises(FioOutputError):
        parse_fio(load_fio_json(text))


def test_files_per_s_from_nrfiles_with_suffix_and_bad_shapes():
    doc = {
        "jobs": [
            {
                "jobname": "c",
                "job options": {"nrfiles": "1k"},
                "job_runtime": 500,
                "error": 0,
                "write": {"io_bytes": 4096, "iops": 1.0, "bw_bytes": 1.0},
            }
        ]
    }
    assert parse_fio(doc).metrics["files_per_s"] == pytest.approx(2048.0)
    with pytest.raises(FioOutputError, match="unexpected shape"):
        parse_fio({"jobs": [{"read": {"io_bytes": "lots"}}]})


def test_each_jobs_own_figures_are_kept_beside_the_sum(data_dir):
    doc = load(data_dir, "randread-2jobs.json+")
    jobs = job_metrics(doc)
    names = [j["jobname"] for j in doc["jobs"]]
    second = names[1] if names[0] != names[1] else f"{names[1]}#2"  # a clone's entry is numbered
    assert jobs[f"{names[0]}/read.iops"] == pytest.approx(doc["jobs"][0]["read"]["iops"])
    assert jobs[f"{second}/read.iops"] == pytest.approx(doc["jobs"][1]["read"]["iops"])


def test_phases_that_move_one_direction_one_after_another_are_not_added_up(data_dir):
    """Two stonewalled phases (two of fio's groups) that both read: the figure is all their I/Os
    over their summed time, not the sum of two rates that never ran at once."""
    doc = copy.deepcopy(load(data_dir, "randread-2jobs.json+"))
    doc["jobs"][1]["groupid"] = doc["jobs"][0].get("groupid", 0) + 1
    m = parse_fio(doc).metrics
    ios = sum(j["read"]["total_ios"] for j in doc["jobs"])
    seconds = sum(j["job_runtime"] for j in doc["jobs"]) / 1000
    assert m["read.iops"] == pytest.approx(ios / seconds)


def test_a_job_within_fios_millisecond_tick_is_named(data_dir):
    doc = copy.deepcopy(load(data_dir, "randread-2jobs.json+"))
    assert short_jobs(doc) == []
    doc["jobs"][0]["job_runtime"] = 0
    assert short_jobs(doc) == [doc["jobs"][0]["jobname"]]


def test_a_groups_figure_is_its_io_over_its_longest_job_as_group_reporting_gives(data_dir):
    """Jobs of one group that end at different times (not time-based): fio's group_reporting divides all
    the group's I/O by its longest job's runtime (stat.c: sum_thread_stats keeps the largest runtime);
    adding the jobs' own rates counts the shorter job's rate over time it did not run (issue 49: 7-41 %
    higher on tiobench's sections). Each job's own figures stay beside it."""
    doc = copy.deepcopy(load(data_dir, "randread-2jobs.json+"))
    short, long = doc["jobs"]
    short["read"]["runtime"] = short["job_runtime"] = 400  # the first job ended after 0.4 s of the group's 1 s
    short["read"]["iops"] = 1000.0 * short["read"]["total_ios"] / 400  # its own rate, as fio gives it
    parsed = parse_fio(doc, as_groups=True).metrics
    ios = short["read"]["total_ios"] + long["read"]["total_ios"]
    moved = short["read"]["io_bytes"] + long["read"]["io_bytes"]
    assert parsed["read.iops"] == 1000.0 * ios / long["read"]["runtime"]  # fio's own arithmetic, to the bit
    assert parsed["read.bw"] == 1000 * moved // long["read"]["runtime"]  # fio's bw_bytes: whole bytes per second
    assert parsed["read.bytes"] == moved
    assert parsed["read.iops"] < short["read"]["iops"] + long["read"]["iops"]
    apart = job_metrics(doc)  # the per-job figures are each job's own, as fio gives them
    assert sorted(apart[key] for key in apart if key.endswith("/read.iops")) == sorted(
        [short["read"]["iops"], long["read"]["iops"]]
    )


def test_group_rates_over_phases_add_the_phases_times(data_dir):
    """Two groups one after another (stonewall): all the I/O over the sum of each group's longest runtime."""
    doc = copy.deepcopy(load(data_dir, "randread-2jobs.json+"))
    first, second = doc["jobs"]
    second["groupid"] = first.get("groupid", 0) + 1
    second["read"]["runtime"] = 700
    parsed = parse_fio(doc, as_groups=True).metrics
    ios = first["read"]["total_ios"] + second["read"]["total_ios"]
    assert parsed["read.iops"] == pytest.approx(1000.0 * ios / (first["read"]["runtime"] + 700))


def test_fio_group_reporting_output_is_read_as_it_is(data_dir):
    """With group_reporting fio gives the group's figure itself: the same figure is read back."""
    doc = load(data_dir, "seqwrite-grouped.json")
    (entry,) = doc["jobs"]
    parsed = parse_fio(doc, as_groups=True).metrics
    assert parsed["write.bw"] == entry["write"]["bw_bytes"]
    assert parsed["write.iops"] == pytest.approx(entry["write"]["iops"], abs=1e-6)  # fio prints 6 decimals
