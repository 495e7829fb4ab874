"""Which tests are `timing` tests, and which run `alone` for another reason (tests/conftest.py marks them;
scripts/test.sh runs both last, on one worker)."""

# Tests whose assertions depend on how fast something ran, marked `timing`: a throttled target's
# drift, round 1 against the rest, CPU seconds of a burner, visibility delays, a clock matched to
# within 50 ms, a hang cut within a second or two of its timeout. scripts/test.sh runs them after
# the rest, on one worker, so no other test's load can decide them. (A bound that only tells a hang
# from a normal end, e.g. "stopped within 20 s" of a 60 s run, is not a timing assertion.)
TIMING = (
    "kinds/test_fio_files.py::test_round_1_of_a_random_write_no_longer_differs_from_the_rest",
    "kinds/test_fio_series.py::test_a_sample_slowed_halfway_says_it_was_not_steady",
    "kinds/test_fio_series.py::test_fio_steadystate_that_is_not_met_is_said",
    "host/test_watch.py",
    "analysis/test_sequential.py::test_a_budget_stops_the_run_and_says_so",
    "engine/test_default_run_evidence.py::test_under_two_cpu_hogs_the_far_pair_names_the_noise_and_is_never_confidently_wrong",
    "cli/test_drift_real.py",
    "clients/test_serve.py::test_the_probe_session_runs_steps_only_in_probe_scratch_directories",
    "clients/test_ssh_setup_time.py",
    "probe/test_probe_coherence.py",
    "probe/test_probe_agent.py::test_the_clock_is_matched_to_within_half_a_round_trip",
    "probe/test_probe_agent.py::test_a_directory_seen_from_both_sides_of_the_channel_is_coherent",
    "probe/test_probe_safety.py::test_injected_hang_is_reported_in_time_and_probing_goes_on",
    "probe/test_probe_safety.py::test_frozen_fuse_server_before_probing",
    "probe/test_probe_safety.py::test_fuse_server_freezing_mid_probe",
    "probe/test_probe_sandbox.py::test_hang_is_cut_at_the_timeout_and_kills_helpers",
    "probe/test_probe_sandbox.py::test_death_is_seen_even_while_a_helper_holds_the_pipe",
    "labs/cloud/test_cloudlab_remote_reads.py::test_sigterm_stops_the_lab_within_five_seconds",
    "report/test_report_speed.py::test_reports_of_a_three_target_default_run_are_fast",
)

# Tests that need the page cache left alone while they run, marked `alone`: on the two workers,
# another test may drop it or sync at any time (tests/support/groups.py: group "clients" runs
# alongside group "host"). fio's mmap engine serves direct reads from the page cache, and the
# run flags them only while the cache holds the file; a drop mid-sample sends them to the device.
ALONE = ("kinds/test_fio_files.py::test_direct_reads_a_cache_served_are_flagged_and_true_ones_are_not",)
