"""The run level (analysis/runlevel.py): defaults per filesystem class, the access class of a workload, and
what `mountbench calibrate`'s A/A runs estimate from runs whose between-run movement is known."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support.simulate import Scenario, fixed_run

from mountbench.analysis import runlevel
from mountbench.model import RunLevel


def test_defaults_follow_the_filesystem_class():
    assert runlevel.storage_class("tmpfs") == "ram"
    assert runlevel.storage_class("ext4") == "local"
    assert runlevel.storage_class("fuse.sshfs") == runlevel.storage_class("nfs4") == "remote"
    assert runlevel.storage_class("something-new") == "remote"  # unknown: the noisier assumption
    assert runlevel.default_for("tmpfs").source == "default"


def test_a_calibration_recovers_the_run_effect_it_was_given():
    """Twelve A/A runs whose targets move between runs by a known amount: the estimate finds it (paired, per
    target: the pair's between-run variance halved) for reads and writes alike, within sampling error."""
    rng = np.random.default_rng(3)
    runs = [fixed_run(Scenario({"b": 1.0}, cv=0.02, shared=0.3, run_effect=2.0), rng, 6) for _ in range(12)]
    fallback = RunLevel((0.5, 0.5, 0.5), (0.5, 0.5, 0.5), 5, "default", "fallback")
    found = runlevel.estimate(runs, "simulated", fallback)
    truth = runlevel.default_for("tmpfs")
    assert found.workloads[:2] == (2, 4)  # every workload measured, writes too
    assert found.level.source == "calibrated" and found.level.df == 11 * 2
    for index in (0, 1):  # large and small blocks: twice the default's spread was simulated
        assert found.level.paired[index] == pytest.approx(2 * truth.paired[index], rel=0.6)
    assert found.level.paired[2] == fallback.paired[2]  # no tree workload: the fallback's


def test_no_run_effect_is_estimated_near_its_floor():
    rng = np.random.default_rng(4)
    runs = [fixed_run(Scenario({"b": 1.0}, cv=0.02, shared=0.3, run_effect=0.0), rng, 6) for _ in range(12)]
    found = runlevel.estimate(runs, "simulated", runlevel.default_for("tmpfs"))
    assert all(value < 0.01 for value in found.level.paired[:2])
    assert math.isfinite(found.level.df)
