"""The monoid metrics engine: analyzers with mergeable states, a runner that computes them in shared
Spark passes, state stores, and metrics of any combination of partitions from stored states."""

from checkers.metrics._analyzer import (
    Analyzer,
    FrequencyAnalyzer,
    OwnPassAnalyzer,
    ScanShareableAnalyzer,
    State,
)
from checkers.metrics._metric import (
    EmptyStateError,
    Entity,
    Metric,
    MetricComputationError,
    MetricSource,
    MetricValue,
)
from checkers.metrics._serde import STATE_FORMAT_VERSION, StateFormatError
from checkers.metrics.anomaly import (
    AbsoluteChange,
    Anomaly,
    AnomalyStrategy,
    BatchNormal,
    OnlineNormal,
    RelativeRateOfChange,
    Seasonal,
    SimpleThreshold,
)
from checkers.metrics.check import Check, CheckLevel
from checkers.metrics.constraints import ConstraintStatus, MetricConstraint
from checkers.metrics.counts import (
    Completeness,
    Compliance,
    CountWhere,
    NumMatchesAndCountState,
    NumMatchesState,
    PatternMatch,
    Patterns,
    Size,
    ZerosCount,
)
from checkers.metrics.datatype import DataType, DataTypeState
from checkers.metrics.differential import (
    load_states,
    merge_states,
    metrics_for_view,
    metrics_from_states,
)
from checkers.metrics.exact_quantile import ExactQuantile
from checkers.metrics.extremes import (
    Maximum,
    MaxLength,
    MaxState,
    Minimum,
    MinLength,
    MinState,
    NullBehavior,
)
from checkers.metrics.file_stats import ColumnStats, FileStats, SourceStats, attach_stats, stats_of
from checkers.metrics.frequencies import (
    CountDistinct,
    Distinctness,
    DuplicateRowCount,
    Entropy,
    FrequencyState,
    MutualInformation,
    Uniqueness,
    UniqueValueRatio,
)
from checkers.metrics.higher_moments import HigherMomentsState, Kurtosis, Skewness
from checkers.metrics.histogram import Histogram
from checkers.metrics.moments import (
    CoMomentsState,
    Correlation,
    Mean,
    MomentsState,
    StandardDeviation,
    Sum,
    SumState,
    Variance,
)
from checkers.metrics.partition_drift import KsDrift
from checkers.metrics.predictability import Predictability, PredictabilityState
from checkers.metrics.ratio_of_sums import RatioOfSums, RatioOfSumsState
from checkers.metrics.runner import AnalysisResult, SketchPlan, run_analysis
from checkers.metrics.sketches import (
    ApproxCountDistinct,
    ApproxQuantile,
    ApproxQuantiles,
    HllState,
    InterquartileRange,
    KllState,
)
from checkers.metrics.sql_state_store import SqlStateStore, StateTable
from checkers.metrics.standalone import (
    ColumnCount,
    ColumnNamesState,
    CustomSql,
    CustomSqlState,
    QueryAnalyzer,
    SchemaAnalyzer,
)
from checkers.metrics.state_stores import FileStateStore, InMemoryStateStore, StateStore

__all__ = [
    "DEFAULT_RULES",
    "EXTENDED_RULES",
    "STATE_FORMAT_VERSION",
    "AbsoluteChange",
    "AnalysisResult",
    "Analyzer",
    "Anomaly",
    "AnomalyStrategy",
    "ApproxCountDistinct",
    "ApproxQuantile",
    "ApproxQuantiles",
    "BatchNormal",
    "Check",
    "CheckLevel",
    "CheckResult",
    "CheckStatus",
    "CoMomentsState",
    "ColumnCount",
    "ColumnNamesState",
    "ColumnProfile",
    "ColumnStats",
    "Completeness",
    "Compliance",
    "ConstraintResult",
    "ConstraintStatus",
    "Correlation",
    "CountDistinct",
    "CountWhere",
    "CustomSql",
    "CustomSqlState",
    "DataType",
    "DataTypeState",
    "Distinctness",
    "DuplicateRowCount",
    "EmptyStateError",
    "Entity",
    "Entropy",
    "ExactQuantile",
    "FileStateStore",
    "FileStats",
    "FrequencyAnalyzer",
    "FrequencyState",
    "HigherMomentsState",
    "Histogram",
    "HllState",
    "InMemoryStateStore",
    "InterquartileRange",
    "KllState",
    "KsDrift",
    "Kurtosis",
    "MaxLength",
    "MaxState",
    "Maximum",
    "Mean",
    "Metric",
    "MetricComputationError",
    "MetricConstraint",
    "MetricHistory",
    "MetricRecord",
    "MetricSource",
    "MetricValue",
    "MetricsRepository",
    "MinLength",
    "MinState",
    "Minimum",
    "MomentsState",
    "MutualInformation",
    "NullBehavior",
    "NumMatchesAndCountState",
    "NumMatchesState",
    "OnlineNormal",
    "OwnPassAnalyzer",
    "PartitionMetrics",
    "PatternMatch",
    "Patterns",
    "Predictability",
    "PredictabilityState",
    "Profiles",
    "QueryAnalyzer",
    "RatioOfSums",
    "RatioOfSumsState",
    "RelativeRateOfChange",
    "ResultKey",
    "ScanShareableAnalyzer",
    "SchemaAnalyzer",
    "Seasonal",
    "SimpleThreshold",
    "Size",
    "SketchPlan",
    "Skewness",
    "SourceStats",
    "SqlStateStore",
    "StandardDeviation",
    "State",
    "StateFormatError",
    "StateStore",
    "StateTable",
    "Suggestion",
    "SuggestionResult",
    "Sum",
    "SumState",
    "TimeBuckets",
    "UniqueValueRatio",
    "Uniqueness",
    "Variance",
    "VerificationResult",
    "VerificationSuite",
    "ZerosCount",
    "attach_stats",
    "load_states",
    "merge_states",
    "metrics_for_view",
    "metrics_from_states",
    "profile",
    "run_analysis",
    "stats_of",
    "suggest",
]

from checkers.metrics.profiles import ColumnProfile, Profiles, profile
from checkers.metrics.repository import MetricRecord, MetricsRepository, ResultKey
from checkers.metrics.suggestions import (
    DEFAULT_RULES,
    EXTENDED_RULES,
    Suggestion,
    SuggestionResult,
    suggest,
)
from checkers.metrics.time_buckets import TimeBuckets
from checkers.metrics.verification import (
    CheckResult,
    CheckStatus,
    ConstraintResult,
    MetricHistory,
    PartitionMetrics,
    VerificationResult,
    VerificationSuite,
)
