"""A multi-client sample's start skew and overlap, read back from its stored client results."""

import pytest

from mountbench.analysis.multiclient import ACTIVE, START_OFFSET, overlap, overlap_of
from mountbench.model import ClientResult


def test_overlap_is_the_share_of_the_sample_every_client_ran_at_once():
    assert overlap({"a": (0.0, 10.0), "b": (2.0, 10.0)}) == pytest.approx(0.8)
    assert overlap({"a": (0.0, 4.0), "b": (5.0, 10.0)}) == 0.0
    assert overlap({"a": (0.0, 10.0)}) is None


def test_overlap_of_stored_results_uses_each_clients_start_offset_and_active_time():
    results = [
        ClientResult("a", {START_OFFSET: 0.0, ACTIVE: 10.0}, ""),
        ClientResult("b", {START_OFFSET: 1.0, ACTIVE: 9.0}, ""),
        ClientResult("c", {"write.bw": 1.0}, ""),  # no timing: left out
    ]
    skew, together = overlap_of(results)
    assert skew == 1.0 and together == pytest.approx(0.9)
    assert overlap_of(results[:1]) == (None, None)
