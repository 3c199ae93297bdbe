"""What a check declares about data assets: `guards`, the dataset it gates (a readiness marker is
written after each green run: scheduling/tick/readiness.py), and `after`, the upstream assets
whose events trigger it besides its clock. Plain values, checked when the check is defined; no
Spark, no I/O.

    class FlightsHaveDestinations(QualityCheck):
        parser = ParquetParser("lake/flights")
        guards = Guarded("lake/flights")   # marker lake/flights/_SUCCESS, asset "lake/flights"
        after = ("producer/flights",)      # runs when the producing DAG updates its asset
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass

#: The Airflow asset URI a guarded asset's readiness events carry: `dq://ready/<asset>`.
READY_URI_PREFIX = "dq://ready/"
_ASSET = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.\-]*(/[A-Za-z0-9_.\-]+)*")
_MARKER = re.compile(r"[_.](?=.*[A-Za-z0-9])[A-Za-z0-9_.\-]+")
_MAX_ASSET = 200  # dq_readiness.asset


def asset_problem(name: object, attribute: str) -> str | None:
    """Why `name` cannot name a guarded asset (None when it can)."""
    if isinstance(name, str) and len(name) <= _MAX_ASSET and _ASSET.fullmatch(name):
        return None
    return (
        f"{attribute} {name!r}: name the dataset with letters, digits, _ . - and single / "
        f"between parts (at most {_MAX_ASSET} characters), e.g. 'lake/flights'"
    )


@dataclass(frozen=True)
class Guarded:
    """The dataset a check guards. After each PASSED or TOLERATED run its readiness marker says
    "ready" for the run's window; a FAILED or ERROR run takes it back.

    `asset` names the dataset for consumers (default: the check's name). The marker file is
    written beside the data when the check reads one file source (CSV, JSON, Parquet): inside a
    directory as `<dir>/_SUCCESS`, beside a single file `f.csv` as `_f.csv_SUCCESS`;
    `marker_dir` puts it elsewhere, `marker=None` writes none. The project database keeps a
    readiness row per asset in every case (`dq_readiness`), and is all there is for sources
    without files.

        guards = Guarded()                      # asset = the check's name
        guards = Guarded("lake/flights", marker_dir="/lake/_ready/flights")
    """

    asset: str | None = None
    _: KW_ONLY
    marker: str | None = "_SUCCESS"
    marker_dir: str | Callable[[], str] | None = None

    def __post_init__(self) -> None:
        problems = []
        if self.asset is not None and (problem := asset_problem(self.asset, "asset")):
            problems.append(problem)
        if self.marker is not None and not (
            isinstance(self.marker, str) and _MARKER.fullmatch(self.marker)
        ):
            problems.append(
                f"marker {self.marker!r}: a file name starting with _ or . (Spark skips such "
                "files when it reads the directory), e.g. '_SUCCESS'; None writes no file"
            )
        if self.marker_dir is not None and not (
            callable(self.marker_dir) or (isinstance(self.marker_dir, str) and self.marker_dir)
        ):
            problems.append(
                f"marker_dir {self.marker_dir!r}: a directory path, or a function returning one"
            )
        if self.marker is None and self.marker_dir is not None:
            problems.append("marker_dir is set but marker=None writes no file: drop one of them")
        if problems:
            raise ValueError("Guarded: " + "; ".join(problems))

    def name_for(self, check: str) -> str:
        """The asset's name: `asset`, else the guarding check's name."""
        return self.asset or check

    def airflow_asset(self, check: str) -> dict[str, str]:
        """The Airflow asset whose events say "passed quality" (scheduling/tick/readiness.py)."""
        name = self.name_for(check)
        return {"name": name, "uri": f"{READY_URI_PREFIX}{name}"}


def upstream_problem(value: object) -> str | None:
    """Why `value` cannot name an upstream Airflow asset (a name, or a URI with `://`)."""
    if not isinstance(value, str) or not value or len(value) > 1500 or value != value.strip():
        return f"after entry {value!r}: an Airflow asset name or URI, e.g. 'producer/flights'"
    if any(c.isspace() for c in value):
        return f"after entry {value!r}: no spaces in an asset name or URI"
    if value.lower().startswith("airflow://"):
        return f"after entry {value!r}: Airflow reserves the airflow:// scheme"
    return None


def upstream_ref(value: str) -> dict[str, str]:
    """An `after` entry as the DAG references it: `{"uri": ...}` when it has a scheme (`://`),
    else `{"name": ...}` (Asset.ref(uri=...) / Asset.ref(name=...))."""
    return {"uri": value} if "://" in value else {"name": value}
