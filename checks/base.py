"""`QualityCheck`: the class a team subclasses. Class attributes say where the data comes from,
when to run, how much to tolerate, how severe failures are and who hears about them; `checker`
says what to check.

    class FlightsHaveDestinations(QualityCheck):
        description = "Every flight lands at a known airport, or routing reports break."
        parser = ParquetParser("lake/flights")
        clock = Cron("0 * * * *")
        tolerance = LessThan(10)
        alert_level = FailingElementsThresholds(warning=100, error=1000)

        def checker(self, flights):
            return PredicateSingleDatasetChecker(flights, "dest IS NOT NULL")
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, ClassVar

from checkers.levels import AlertLevel, AlertLevelPolicy, FixedLevel
from checkers.project_db import utc_now
from checkers.tolerances import NoFailures, Tolerance
from checks import registry
from checks.definition import refuse_shared_asset, validate_definition
from checks.problems import snake as _snake
from checks.task_states import TaskStates

if TYPE_CHECKING:
    from checkers.checker import Checker
    from checkers.parsers import Parser
    from checks.assets import Guarded
    from checks.incremental import Incremental


class QualityCheck:
    """Base of every check. Subclasses register themselves under `name` (default: the class
    name in snake_case) unless defined with `register=False` or marked `abstract = True`.

    The `parser` is one Parser (then `checker` gets a DataFrame) or a mapping of names to
    parsers (then `checker` gets a dict of DataFrames by the same names); it may be a method
    returning either, when the sources depend on the run time `self.now`.

    An empty dataset is an ERROR outcome ("no rows to check": usually an upstream failure)
    unless `allow_empty = True`, which makes it PASSED.

    Three attributes describe the check's place in a deployment rather than what it checks, and
    are plain values checked at definition time: `guards` (the dataset whose readiness each run
    publishes: a marker, `dq ready`, and under Airflow an asset event), and, read only by the
    Airflow integration through the manifest (scheduling/airflow/), `after` (upstream assets
    that also trigger the check) and `task_states` (what outcomes make of its task)."""

    name: ClassVar[str]
    description: ClassVar[str] = ""
    parser: ClassVar[Parser | Mapping[str, Parser]]
    clock: ClassVar[object | None] = None
    tolerance: ClassVar[Tolerance] = NoFailures()
    alert_level: ClassVar[AlertLevelPolicy] = FixedLevel(AlertLevel.ERROR)
    #: Level of an ERROR outcome (the check could not be evaluated).
    error_level: ClassVar[AlertLevel] = AlertLevel.ERROR
    escalation: ClassVar[object | None] = None
    owner: ClassVar[str] = ""
    #: What to do when it fails: an http(s) URL, a link button on its Slack alert.
    runbook: ClassVar[str | None] = None
    tags: ClassVar[tuple[str, ...]] = ()
    allow_empty: ClassVar[bool] = False
    #: Its failure explains the other checks over the same source (a late or partial load):
    #: while its incident is open, theirs are recorded and listed in its thread, not notified.
    inhibits: ClassVar[bool] = False
    sample_size: ClassVar[int] = 20
    #: Columns whose values never leave the run (PII): masked in samples, alerts and logs.
    masked_columns: ClassVar[tuple[str, ...]] = ()
    #: The dataset this check gates: a readiness marker after each green run (checks.assets).
    guards: ClassVar[Guarded | None] = None
    #: Upstream Airflow assets (names, or URIs with `://`) whose events also trigger this check.
    after: ClassVar[tuple[str, ...]] = ()
    #: Under Airflow, what its outcomes make of the check's task (None: the deployment's
    #: DQ_TASK_FAILS_AT and DQ_TASK_FAILS_ON_ERROR; see checks.task_states).
    task_states: ClassVar[TaskStates | None] = None
    #: Read only new and changed partitions of a partitioned source, merging stored states
    #: (checks.incremental); None reads the whole source every run.
    incremental: ClassVar[Incremental | None] = None
    #: Anomaly constraints' eagerness: low, medium or high (checkers.metrics.sensitivity), and
    #: the absolute change below which none alerts; a constraint's own settings win.
    sensitivity: ClassVar[str | None] = None
    min_change: ClassVar[float | None] = None
    abstract: ClassVar[bool] = False

    def __init_subclass__(cls, *, register: bool = True, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        if "abstract" not in cls.__dict__:
            cls.abstract = False
        if "name" not in cls.__dict__:
            cls.name = _snake(cls.__name__)
        if cls.abstract:
            return
        # Defined directly, a mistake raises here; while discovery collects, it becomes this
        # check's problem (an ERROR outcome) and the class is not registered.
        with registry.defining(cls):
            cls._validate()
            if register:
                refuse_shared_asset(cls, registry.registered().values())
                registry.register(cls)

    @classmethod
    def _validate(cls) -> None:
        validate_definition(cls, base_checker=QualityCheck.checker)

    def __init__(self, *, now: dt.datetime | None = None) -> None:
        #: When this run happens (the end of its scheduling window); checks of freshness or of
        #: "yesterday" compute from it instead of asking the system clock.
        self.now = now or utc_now()

    if TYPE_CHECKING:
        #: `checker(self, data)`: the checker over the parsed data (a DataFrame, or a dict of
        #: them by parser name). Subclasses annotate `data` as they need.
        checker: Callable[..., Checker]
    else:

        def checker(self, data):
            raise NotImplementedError

    def _parser_value(self) -> Parser | Mapping[str, Parser]:
        """The parser(s), built once per run when `parser` is a method."""
        from checkers.parsers import Parser

        if "_built_parser" not in self.__dict__:
            parser = self.parser
            if callable(parser) and not isinstance(parser, Parser):
                parser = parser()  # a method: sources that depend on the run time (`self.now`)
                named = parser.values() if isinstance(parser, Mapping) else [parser]
                if not named or not all(isinstance(p, Parser) for p in named):
                    raise TypeError(
                        f"parser() returned {parser!r:.80}: return a Parser (e.g. "
                        f"TableParser(f'events_{{self.now:%Y%m%d}}')) or a dict of them"
                    )
            self.__dict__["_built_parser"] = parser
        return self.__dict__["_built_parser"]

    def sources(self) -> dict[str, Parser]:
        """The check's parsers by name (a single parser is named "data")."""
        parser = self._parser_value()
        return dict(parser) if isinstance(parser, Mapping) else {"data": parser}

    def takes_mapping(self) -> bool:
        return isinstance(self._parser_value(), Mapping)
