"""Listing 1 of the Deequ paper (unit tests for video-session logs) in our API, on a generated
dataset; the report reads like its Listing 2, and every constraint's status and value is checked
against a pandas computation."""

from __future__ import annotations

import pytest

from checkers.metrics import Check, CheckLevel, CheckStatus, ConstraintStatus, VerificationSuite
from examples.video_sessions import video_sessions

NUM_TITLES = 120  # what the catalogue service would answer
MAX_PHONE_RATIO = 0.5


@pytest.fixture(scope="module")
def sessions():
    return video_sessions(5000)


@pytest.fixture(scope="module")
def result(spark, sessions):
    frame = spark.createDataFrame(sessions.astype(object).where(sessions.notna(), None))
    checks = [
        Check(CheckLevel.ERROR, "completeness and identity")
        .are_complete(
            [
                "customer_id",
                "title",
                "impression_start",
                "impression_end",
                "device_type",
                "priority",
            ]
        )
        .is_unique(["customer_id", "country_residence", "device_type", "title"])
        .has_count_distinct("title", lambda n: n <= NUM_TITLES)
        .has_histogram_values("device_type", lambda h: h["phone"]["ratio"] <= MAX_PHONE_RATIO),
        Check(CheckLevel.ERROR, "semantics")
        .is_non_negative("count")
        .is_less_than("impression_start", "impression_end")
        .is_contained_in("priority", ["hi", "lo"]),
        Check(CheckLevel.WARNING, "German addresses")
        .is_complete("zip_code")
        .where("country_residence = 'DE'")
        .has_approx_quantile("count", 0.5, lambda v: 10 <= v <= 30),
    ]
    return VerificationSuite(frame).add_checks(checks).run()


def by_name(result, name):
    return next(
        c
        for r in result.check_results
        for c in r.constraint_results
        if c.constraint.name.startswith(name)
    )


def test_listing_one_statuses_and_values(result, sessions):
    s = sessions
    expect = {
        "ComplianceConstraint(Combined Completeness)": (
            ConstraintStatus.FAILURE,
            s["device_type"].notna().mean(),
        ),
        "UniquenessConstraint": (ConstraintStatus.SUCCESS, 1.0),
        "CountDistinctConstraint(title)": (ConstraintStatus.SUCCESS, s["title"].nunique()),
        "ComplianceConstraint(count is non-negative)": (ConstraintStatus.SUCCESS, 1.0),
        "ComplianceConstraint(impression_start is less than impression_end)": (
            ConstraintStatus.FAILURE,
            (s["impression_start"] < s["impression_end"]).mean(),
        ),
        "ComplianceConstraint(priority contained in": (
            ConstraintStatus.FAILURE,
            s["priority"].isin(["hi", "lo"]).mean(),
        ),
        "CompletenessConstraint(zip_code) where": (
            ConstraintStatus.FAILURE,
            s.loc[s["country_residence"] == "DE", "zip_code"].notna().mean(),
        ),
    }
    for name, (status, value) in expect.items():
        constraint = by_name(result, name)
        assert constraint.status is status, (name, constraint.message)
        assert constraint.value == pytest.approx(value), name
    phone = by_name(result, "HistogramConstraint(device_type)")
    assert phone.status is ConstraintStatus.SUCCESS
    assert phone.value["phone"]["ratio"] == pytest.approx((s["device_type"] == "phone").mean())
    assert by_name(result, "ApproxQuantileConstraint(count").status is ConstraintStatus.SUCCESS


def test_listing_two_report(result):
    assert result.status is CheckStatus.ERROR
    statuses = {r.check.description: r.status for r in result.check_results}
    assert statuses == {
        "completeness and identity": CheckStatus.ERROR,
        "semantics": CheckStatus.ERROR,
        "German addresses": CheckStatus.WARNING,
    }
    report = result.report()
    print(report)
    assert report.splitlines()[0] == "Verification Error"
    assert "Error check 'semantics': Error" in report
    assert "impression_start is less than impression_end" in report
    assert "does not meet the constraint requirement" in report
