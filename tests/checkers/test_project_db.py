"""The migration registry: packages' steps composed into one numbered list, a version's steps in
the order the packages are given, gaps refused; only pending versions run."""

from __future__ import annotations

import pytest
import sqlalchemy as sa

from checkers.project_db import Migration, compose, migrate


def test_steps_of_one_version_run_in_the_order_the_packages_are_given(tmp_path):
    ran: list[str] = []

    def step(name: str):
        return lambda connection: ran.append(name)

    first = [Migration(1, "a", step("a1")), Migration(2, "a", step("a2"))]
    second = [Migration(1, "b", step("b1")), Migration(3, "b", step("b3"))]
    registry = compose(first, second)
    assert [version for version, _ in registry] == [1, 2, 3]
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'dq.db'}")
    assert migrate(engine, registry[:2]) == 2
    assert ran == ["a1", "b1", "a2"]
    assert migrate(engine, registry) == 3  # only what is pending
    assert ran == ["a1", "b1", "a2", "b3"]


def test_a_gap_in_the_versions_is_refused():
    with pytest.raises(ValueError, match="without a gap"):
        compose([Migration(1, "a", lambda c: None), Migration(3, "a", lambda c: None)])
