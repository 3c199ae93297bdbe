"""Tolerances: which failures are acceptable. Zero failures always pass; a failure the tolerance
accepts makes the outcome TOLERATED instead of FAILED.

Counting tolerances judge the failures that no `KnownBroken` key excuses, so
`KnownBroken(["N123"]) | LessThan(3)` reads "N123 may fail, and fewer than 3 others may too".
No Spark here: the checkers turn `KnownBroken` into a Column."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class FailureCounts:
    """What a tolerance sees: failing elements, all elements, and failing ones not excused."""

    failing: int
    total: int
    unexcused: int

    @property
    def share(self) -> float:
        return self.unexcused / self.total if self.total else 0.0


class Tolerance(ABC):
    """Base of tolerances; combine them with `&` (all must accept) and `|` (any may accept)."""

    @abstractmethod
    def accepts(self, counts: FailureCounts) -> bool: ...

    @abstractmethod
    def describe(self) -> str: ...

    def known_broken(self) -> tuple[KnownBroken, ...]:
        """Every KnownBroken part of this tolerance (their keys are excused when counting)."""
        return ()

    def __and__(self, other: Tolerance) -> Tolerance:
        return AllOf((self, _tolerance(other, "&")))

    def __or__(self, other: Tolerance) -> Tolerance:
        return AnyOf((self, _tolerance(other, "|")))

    def __str__(self) -> str:
        return self.describe()


def _tolerance(other: object, operator: str) -> Tolerance:
    if not isinstance(other, Tolerance):
        raise TypeError(
            f"tolerances combine with tolerances, got {operator} {other!r}: write e.g. "
            f"KnownBroken([...]) {operator} LessThan(3)"
        )
    return other


@dataclass(frozen=True)
class NoFailures(Tolerance):
    """The default: any failure fails."""

    def accepts(self, counts: FailureCounts) -> bool:
        return counts.unexcused == 0

    def describe(self) -> str:
        return "no failures"


@dataclass(frozen=True)
class LessThan(Tolerance):
    """Fewer than `n` failing elements are acceptable (Drivy's tolerance)."""

    n: int

    def __post_init__(self) -> None:
        if not isinstance(self.n, int) or isinstance(self.n, bool):
            raise TypeError(
                f"LessThan counts failing elements: n must be a whole number, e.g. LessThan(10), "
                f"got {self.n!r} (for a share of the elements use ShareAtMost(0.01))"
            )
        if self.n < 0:
            raise ValueError(f"LessThan needs n >= 0, got {self.n}")

    def accepts(self, counts: FailureCounts) -> bool:
        return counts.unexcused < self.n

    def describe(self) -> str:
        return f"fewer than {self.n} failing"


@dataclass(frozen=True)
class ShareAtMost(Tolerance):
    """At most `share` (0..1) of the elements may fail."""

    share: float

    def __post_init__(self) -> None:
        if not isinstance(self.share, int | float) or isinstance(self.share, bool):
            raise TypeError(
                f"ShareAtMost needs a number from 0 to 1, e.g. 0.01, got {self.share!r}"
            )
        if not 0.0 <= self.share <= 1.0:
            raise ValueError(
                f"ShareAtMost needs 0 <= share <= 1 (a fraction: 0.05 is 5%), got {self.share}"
            )

    def accepts(self, counts: FailureCounts) -> bool:
        return counts.total > 0 and counts.share <= self.share

    def describe(self) -> str:
        return f"at most {self.share:.2%} failing"


Key = object  # one value, or a tuple of values for a key over several columns


@dataclass(frozen=True)
class KnownBroken(Tolerance):
    """Elements whose key is listed may fail; any other failure is not accepted.

    `columns` name the key; left out, the checker's key columns are used (`key=` of a predicate
    checker, `on=` of a double-dataset checker). NULL equals no key, so a key holding None is
    refused: `nulls=True` excuses the rows whose key (any of its columns) is NULL.

    >>> KnownBroken(["N3ABAA", "N3AEAA"], columns=("tailnum",))
    >>> KnownBroken(nulls=True, columns="tailnum")  # rows without a tail number may fail
    """

    keys: frozenset[Key]
    columns: tuple[str, ...] = ()
    nulls: bool = False

    def __init__(
        self, keys: Iterable[Key] = (), columns: Iterable[str] = (), *, nulls: bool = False
    ) -> None:
        if isinstance(keys, str | bytes):
            raise TypeError(
                f"KnownBroken takes a list of keys, not one string (it would excuse each "
                f"character): write KnownBroken([{keys!r}])"
            )
        names = (columns,) if isinstance(columns, str) else tuple(columns)
        if not all(isinstance(c, str) for c in names):
            raise TypeError(f"KnownBroken columns must be column names, got {names!r}")
        object.__setattr__(self, "keys", frozenset(keys))
        object.__setattr__(self, "columns", names)
        object.__setattr__(self, "nulls", bool(nulls))
        if any(isinstance(k, tuple) and len(k) != len(names or k) for k in self.keys):
            raise ValueError(f"KnownBroken keys must have one value per key column {names}")
        if any(k is None or (isinstance(k, tuple) and None in k) for k in self.keys):
            raise ValueError(
                "KnownBroken keys cannot hold None: NULL equals no key, so it would excuse "
                "nothing; to excuse rows whose key is NULL write KnownBroken(nulls=True, ...)"
            )
        if not self.keys and not self.nulls:
            raise ValueError("KnownBroken needs keys, or nulls=True to excuse NULL keys")

    def accepts(self, counts: FailureCounts) -> bool:
        return counts.unexcused == 0

    def describe(self) -> str:
        shown = ", ".join(sorted(map(str, self.keys))[:5])
        more = f" and {len(self.keys) - 5} more" if len(self.keys) > 5 else ""
        listed = [f"{shown}{more}"] if self.keys else []
        return "known broken keys " + " and ".join([*listed, *(["NULL"] if self.nulls else [])])

    def known_broken(self) -> tuple[KnownBroken, ...]:
        return (self,)


@dataclass(frozen=True)
class AllOf(Tolerance):
    parts: tuple[Tolerance, ...]

    def accepts(self, counts: FailureCounts) -> bool:
        return all(p.accepts(counts) for p in self.parts)

    def describe(self) -> str:
        return " and ".join(f"({p.describe()})" for p in self.parts)

    def known_broken(self) -> tuple[KnownBroken, ...]:
        return tuple(k for p in self.parts for k in p.known_broken())


@dataclass(frozen=True)
class AnyOf(Tolerance):
    parts: tuple[Tolerance, ...]

    def accepts(self, counts: FailureCounts) -> bool:
        return any(p.accepts(counts) for p in self.parts)

    def describe(self) -> str:
        return " or ".join(f"({p.describe()})" for p in self.parts)

    def known_broken(self) -> tuple[KnownBroken, ...]:
        return tuple(k for p in self.parts for k in p.known_broken())
