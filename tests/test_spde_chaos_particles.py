"""A wrong particle field against the right density, and the interaction part of the W_2 error (THEORY sections
4-5; docs/spde.md section 9): clouds driven with the density on one noise path, each with its own field and
drift (``chaos_particles.CloudRoles``)."""

import json
import math
from types import SimpleNamespace

import numpy as np
import torch

from sdeformer.checks._power import Plan
from sdeformer.checks._spde.chaos import DEGREE, _solver
from sdeformer.checks._spde.chaos_particles import CloudRoles, _coupling, particle_field_check
from sdeformer.core._rng import Streams
from sdeformer.experiments._spde.study import check_records
from sdeformer.experiments._spde.tables import particle_field_table
from sdeformer.io._report import _table_html
from sdeformer.spde._initial import sample_vmf, von_mises_fisher


def test_roles_leave_the_right_cloud_and_density_unchanged_and_the_limit_flow_is_the_density_map(one_thread):
    """An interacting cloud of the right field is the plain solver's cloud to the bit, the density too; the
    limit-flow cloud (the density's attention) differs from it by O(1/N) in the coupling distance, and a cloud of
    the field x 1.2 moves farther from the right one than that."""
    right = _solver()
    c0 = von_mises_fisher(right.basis, 1.0).expand(2, -1).clone()
    cloud = sample_vmf(2, 2000, 1.0, Streams(3, (2,)))  # (2, 2000, 2)
    plain = right.run(c0, seed=5, saveat=10, particles=(cloud,))
    roles = [(right.field, True), (right.field, False), (_solver(1.2).field, True)]
    roled = CloudRoles(roles, right.field, DEGREE, right.steps, right.horizon, beta=2.0)
    x, limit, wrong = roled.run(c0, seed=5, saveat=10, particles=(cloud, cloud, cloud)).x[1:]
    assert torch.equal(x, plain.x[1])
    own = _coupling(x, limit)  # (runs,)
    assert np.all(own > 1e-7) and np.all(own < 5.0 / 2000), own  # about 0.1 / N
    assert np.all(_coupling(x, wrong) > 3 * own), (_coupling(x, wrong), own)


def test_the_particle_field_record_counts_its_catches_and_splits_the_error(one_thread):
    """Quick size, K = 2 seeds of 16 paths: i.i.d. clouds of the field x 0.8 / x 1.2 stand farther from the right
    density than the right cloud (mean z over the seeds and signs > 1); the twin (the right model re-sampled)
    gives a false alarm rate; the coupling part falls about like 1/N and is far below the carried initial
    error; the records go into checks.json and the report's table."""
    found = particle_field_check(quick=True, runs=16, plan=Plan(seeds=2))
    iid, qmc = found["records"]
    assert iid["catch_seeds"] == 2 and set(iid["catch_rate"]) == {"0.1", "0.2", "-0.1", "-0.2"}
    assert iid["false_alarm_rate"] is not None and qmc["false_alarm_rate"] is None
    z = iid["paired_z_per_seed"]["0.2"] + iid["paired_z_per_seed"]["-0.2"]
    assert np.mean(z) > 1, iid["paired_z_per_seed"]
    assert qmc["catch_rate"]["0.2"] == 1.0 and qmc["catch_rate"]["-0.2"] == 1.0  # QMC: no sampling noise
    part = found["interaction"][0]
    assert part["particles"] == "iid" and part["paths"] == 32
    assert -1.4 < part["coupling_slope"] < -0.6, part
    assert all(c < a / 5 for c, a in zip(part["coupling"], part["carried"])), part
    assert math.isfinite(part["excess"][0])
    records = check_records(SimpleNamespace(rates=[{"rel_error": 0.0}], moments=[{"z_max": 1, "passes": True}],
                                            chaos={"particle_field": found}))  # fmt: skip
    assert [r["particles"] for r in records if r["check"].endswith("particle_field")] == ["iid", "qmc"]
    json.dumps(records)
    html = _table_html(particle_field_table(SimpleNamespace(chaos={"particle_field": found})))
    assert html.count("<tr>") == 1 + 2 * 2  # the head, two kinds at two sizes
