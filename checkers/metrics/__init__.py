"""The monoid metrics engine: analyzers with mergeable states, a runner that computes them in shared
Spark passes, state stores, and metrics of any combination of partitions from stored states."""

from checkers.metrics._analyzer import Analyzer, FrequencyAnalyzer, ScanShareableAnalyzer, State
from checkers.metrics._metric import (
    EmptyStateError,
    Entity,
    Metric,
    MetricComputationError,
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
)
from checkers.metrics.datatype import DataType, DataTypeState
from checkers.metrics.differential import metrics_for_view
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
from checkers.metrics.frequencies import (
    CountDistinct,
    Distinctness,
    Entropy,
    FrequencyState,
    MutualInformation,
    Uniqueness,
    UniqueValueRatio,
)
from checkers.metrics.histogram import Histogram
from checkers.metrics.moments import (
    CoMomentsState,
    Correlation,
    Mean,
    MomentsState,
    StandardDeviation,
    Sum,
    SumState,
)
from checkers.metrics.runner import AnalysisResult, SketchPlan, run_analysis
from checkers.metrics.sketches import (
    ApproxCountDistinct,
    ApproxQuantile,
    ApproxQuantiles,
    HllState,
    InterquartileRange,
    KllState,
)
from checkers.metrics.state_stores import (
    FileStateStore,
    InMemoryStateStore,
    SqlStateStore,
    StateStore,
    load_states,
)

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
    "ColumnProfile",
    "Completeness",
    "Compliance",
    "ConstraintResult",
    "ConstraintStatus",
    "Correlation",
    "CountDistinct",
    "CountWhere",
    "DataType",
    "DataTypeState",
    "Distinctness",
    "EmptyStateError",
    "Entity",
    "Entropy",
    "ExactQuantile",
    "FileStateStore",
    "FrequencyAnalyzer",
    "FrequencyState",
    "Histogram",
    "HllState",
    "InMemoryStateStore",
    "InterquartileRange",
    "KllState",
    "MaxLength",
    "MaxState",
    "Maximum",
    "Mean",
    "Metric",
    "MetricComputationError",
    "MetricConstraint",
    "MetricHistory",
    "MetricRecord",
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
    "PartitionMetrics",
    "PatternMatch",
    "Patterns",
    "Profiles",
    "RelativeRateOfChange",
    "ResultKey",
    "ScanShareableAnalyzer",
    "Seasonal",
    "SimpleThreshold",
    "Size",
    "SketchPlan",
    "SqlStateStore",
    "StandardDeviation",
    "State",
    "StateFormatError",
    "StateStore",
    "Suggestion",
    "SuggestionResult",
    "Sum",
    "SumState",
    "UniqueValueRatio",
    "Uniqueness",
    "VerificationResult",
    "VerificationSuite",
    "load_states",
    "metrics_for_view",
    "profile",
    "run_analysis",
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
from checkers.metrics.verification import (
    CheckResult,
    CheckStatus,
    ConstraintResult,
    MetricHistory,
    PartitionMetrics,
    VerificationResult,
    VerificationSuite,
)
