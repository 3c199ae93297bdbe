"""Predictability: a naive Bayes model on hashed tokens, scored on held-out rows; its model counts
merge exactly, and failures are error metrics beside the rest of the run."""

from __future__ import annotations

import math
import random

import pytest
from pyspark.sql import functions as F

from checkers.metrics import (
    Check,
    CheckLevel,
    InMemoryStateStore,
    Predictability,
    PredictabilityState,
    Size,
    VerificationSuite,
    metrics_for_view,
    predictability,
    run_analysis,
)
from checkers.metrics._naive_bayes import ConfusionCounts, NaiveBayesCounts
from checkers.metrics._serde import decode_state, encode_state
from tests.metrics.jobs import count_jobs

SCHEMA = "id int, text string, label string"


def deterministic_rows(n: int, start: int = 0) -> list[tuple[int, str, str]]:
    """The label is a function of the first word of `text`; the second word is noise."""
    return [(i, f"w{i % 5} x{i % 7}", f"c{i % 5}") for i in range(start, start + n)]


def independent_rows(n: int, seed: int = 7) -> list[tuple[int, str, str]]:
    """Three random tokens of 50 and one of 4 labels, drawn independently."""
    rnd = random.Random(seed)
    return [
        (i, " ".join(f"t{rnd.randrange(50)}" for _ in range(3)), f"c{rnd.randrange(4)}")
        for i in range(n)
    ]


@pytest.fixture(scope="module")
def deterministic(spark):
    return spark.createDataFrame(deterministic_rows(400), SCHEMA)


def test_a_target_that_is_a_function_of_an_input_is_predicted_perfectly(deterministic) -> None:
    analyzers = [
        Predictability("label", ["text"]),
        Predictability("label", ["text"], metric="precision", average="weighted"),
        Predictability("label", ["text"], metric="recall", average="micro"),
    ]
    result = run_analysis(deterministic, analyzers)
    assert [result.metric(a).value for a in analyzers] == [1.0, 1.0, 1.0]
    state = result.states[analyzers[0]]
    held_out = state.evaluation.rows
    # every row is either a training row or held out; about 20% are held out
    assert sum(state.model.documents.values()) + held_out == 400
    assert 50 <= held_out <= 110
    assert set(state.model.documents) == {f"c{k}" for k in range(5)}
    # one token of each word per row: tokens of a class = 2 * its training rows
    for label, n in state.model.documents.items():
        assert state.model.token_total(label) == 2 * n


def test_independent_target_and_input_score_at_chance_level(spark) -> None:
    """4 balanced classes, ~600 held-out rows. When predictions are independent of the truth,
    accuracy (micro F1) has mean 1/4 and standard deviation sqrt(.25 * .75 / 600) = 0.018, so
    [0.18, 0.32] is about +-4 sigma. Macro F1 is at most 1/4 in expectation (each class's
    precision is its share, 1/4) and falls when predictions favour some classes; a model that
    had learnt something would be far above 0.32."""
    df = spark.createDataFrame(independent_rows(3000), SCHEMA)
    micro = Predictability("label", ["text"], average="micro")
    macro = Predictability("label", ["text"])
    result = run_analysis(df, [micro, macro])
    assert 500 <= result.states[micro].evaluation.rows <= 700
    assert 0.18 <= result.metric(micro).value <= 0.32
    assert 0.15 <= result.metric(macro).value <= 0.32


@pytest.mark.connect
def test_after_an_append_the_merged_model_equals_the_model_of_the_union(spark) -> None:
    first_rows, second_rows = deterministic_rows(300), independent_rows(200)
    second_rows = [(300 + i, t, c) for i, t, c in second_rows]
    first = spark.createDataFrame(first_rows, SCHEMA)
    second = spark.createDataFrame(second_rows, SCHEMA)
    union = spark.createDataFrame(first_rows + second_rows, SCHEMA)
    analyzer = Predictability("label", ["text", "id"])
    store = InMemoryStateStore()
    before = run_analysis(first, [analyzer], state_store=store, dataset="d", partition="1")
    after = run_analysis(
        second,
        [analyzer],
        aggregate_with=before.states,
        state_store=store,
        dataset="d",
        partition="2",
    )
    whole = run_analysis(union, [analyzer]).states[analyzer]
    merged = before.states[analyzer].merge(after.states[analyzer])
    assert merged.model == whole.model  # exact counts, class by class and feature by feature
    # the split is per row: the appended rows are held out exactly as in the union
    assert merged.evaluation.rows == whole.evaluation.rows
    # the metric after the append is that of all held-out rows, the new ones scored by the
    # merged model; the stored states give it again without Spark
    expected = merged.evaluation.score("f1", "macro")
    assert after.metric(analyzer).value == pytest.approx(expected)
    view = metrics_for_view(store, [analyzer], dataset="d")
    assert view.metric(analyzer).value == pytest.approx(expected)
    assert view.spark_actions == 0


def naive_bayes_by_hand(rows, num_features: int, smoothing: float) -> dict[str, dict[str, int]]:
    """Train and score in plain Python from the analyzer's own (label, features, held_out)."""
    training = [(label, f) for label, f, held in rows if not held]
    held_out = [(label, f) for label, f, held in rows if held]
    classes = sorted({label for label, _ in training})
    documents = {k: sum(1 for label, _ in training if label == k) for k in classes}
    counts = {k: [0] * num_features for k in classes}
    for label, features in training:
        for i in features:
            counts[label][i] += 1
    confusion: dict[str, dict[str, int]] = {}
    for label, features in held_out:
        scores = {}
        for k in classes:
            total = sum(counts[k])
            score = math.log(documents[k] + smoothing) - math.log(
                len(training) + len(classes) * smoothing
            )
            for i in features:
                score += math.log(counts[k][i] + smoothing) - math.log(
                    total + num_features * smoothing
                )
            scores[k] = score
        predicted = max(classes, key=lambda k: (scores[k], k))
        row = confusion.setdefault(label, {})
        row[predicted] = row.get(predicted, 0) + 1
    return confusion


@pytest.mark.connect
@pytest.mark.parametrize("model_row_cells", [2_000_000, 0], ids=["one model row", "join"])
def test_spark_scoring_matches_a_plain_python_naive_bayes(
    spark, monkeypatch, model_row_cells
) -> None:
    """Both ways of scoring (the model as one broadcast row; a table joined to every token when
    the model is large) predict what a plain Python naive Bayes predicts, ties included."""
    monkeypatch.setattr(predictability, "MODEL_ROW_CELLS", model_row_cells)
    rnd = random.Random(3)
    words = ["red", "green", "blue", "dark", "light"]
    rows = []
    for i in range(600):  # the label leans on the colour word, with noise
        colour = rnd.choice(words[:3])
        label = colour if rnd.random() < 0.7 else rnd.choice(words[:3])
        rows.append((i, f"{colour} {rnd.choice(words[3:])}, n{rnd.randrange(20)}", label))
    df = spark.createDataFrame(rows, SCHEMA)
    analyzer = Predictability("label", ["text"], num_features=64, smoothing=0.5)
    state = run_analysis(df, [analyzer]).states[analyzer]
    prepared = [tuple(r) for r in analyzer._rows(df).collect()]
    assert state.evaluation.pairs == naive_bayes_by_hand(prepared, 64, 0.5)
    assert 0.4 < state.evaluation.score("f1", "macro") < 0.95  # it learnt something, not all


def test_tokens_are_lower_cased_runs_of_letters_and_digits_per_column(spark) -> None:
    from checkers.metrics.predictability import hashed_tokens

    df = spark.createDataFrame([("Foo--bar  BAZ9", "foo"), (None, "bar baz")], "a string, b string")
    found = [r[0] for r in df.select(hashed_tokens(["a", "b"], 2**20)).collect()]
    expected = df.select(
        *(
            F.pmod(F.xxhash64(F.lit(token)), F.lit(2**20)).cast("int")
            for token in ("a:foo", "a:bar", "a:baz9", "b:foo", "b:bar", "b:baz")
        )
    ).first()
    foo, bar, baz9, b_foo, b_bar, b_baz = expected
    assert found == [[foo, bar, baz9, b_foo], [b_bar, b_baz]]
    assert foo != b_foo  # one word in two columns is two features


def test_scores_from_confusion_counts() -> None:
    # actual -> predicted: a: 3 right, 1 as b; b: 1 right, 1 as a; c: never predicted
    counts = ConfusionCounts({"a": {"a": 3, "b": 1}, "b": {"b": 1, "a": 1}, "c": {"a": 2}})
    # precision a 3/6, b 1/2, c 0 (0/0); recall a 3/4, b 1/2, c 0
    assert counts.score("precision", "macro") == pytest.approx((0.5 + 0.5 + 0) / 3)
    assert counts.score("recall", "weighted") == pytest.approx((0.75 * 4 + 0.5 * 2) / 8)
    f1_a = 2 * 0.5 * 0.75 / 1.25
    assert counts.score("f1", "macro") == pytest.approx((f1_a + 0.5) / 3)
    assert counts.score("f1", "micro") == pytest.approx(4 / 8)


def test_log_parameters_are_smoothed_like_spark_ml() -> None:
    model = NaiveBayesCounts({"x": 2, "y": 1}, {"x": {0: 3, 1: 1}, "y": {1: 2}})
    found = model.log_parameters(num_features=4, smoothing=1.0)
    prior_x, unseen_x, extra_x = found["x"]
    assert prior_x == pytest.approx(math.log(3 / 5))  # (2 + 1) / (3 + 2 * 1)
    assert unseen_x == pytest.approx(math.log(1 / 8))  # (0 + 1) / (4 + 4 * 1)
    assert unseen_x + extra_x[0] == pytest.approx(math.log(4 / 8))
    assert found["y"][1] + found["y"][2][1] == pytest.approx(math.log(3 / 6))


def test_the_state_round_trips_through_serialization() -> None:
    state = PredictabilityState(
        NaiveBayesCounts({"a": 2, "b": 1}, {"a": {3: 4}, "b": {0: 1, 7: 2}}),
        ConfusionCounts({"a": {"b": 1}}),
    )
    assert decode_state(encode_state(state)) == state
    assert state.merge(PredictabilityState.zero()) == state


def test_missing_column_wrong_type_empty_input_and_one_class_are_error_metrics(spark) -> None:
    df = spark.createDataFrame(
        [(i, f"w{i}", "only", {"k": i}) for i in range(50)],
        "id int, text string, label string, m map<string,int>",
    )
    missing = Predictability("nope", ["text"])
    wrong = Predictability("label", ["m"])
    one_class = Predictability("label", ["text"])
    filtered = Predictability("label", ["text"], where="id > 100")
    bad_filter = Predictability("label", ["text"], where="no_such_column > 1")
    result = run_analysis(df, [missing, wrong, one_class, filtered, bad_filter, Size()])
    assert "column 'nope' does not exist" in result.metric(missing).error
    assert "column 'm' has type map<string,int>" in result.metric(wrong).error
    assert "1 class(es) of 'label'" in result.metric(one_class).error
    assert "Empty state" in result.metric(filtered).error
    assert "no_such_column" in result.metric(bad_filter).error
    assert result.metric(Size()).value == 50.0
    empty = run_analysis(spark.createDataFrame([], SCHEMA), [one_class])
    assert "Empty state" in empty.metric(one_class).error
    assert empty.spark_actions == 1  # nothing to score: no second job


def test_options_are_checked_when_the_analyzer_is_defined() -> None:
    with pytest.raises(ValueError, match="power of two"):
        Predictability("label", ["text"], num_features=1000)
    with pytest.raises(ValueError, match="also an input"):
        Predictability("label", ["label", "text"])
    with pytest.raises(ValueError, match="metric must be one of"):
        Predictability("label", ["text"], metric="accuracy")
    with pytest.raises(ValueError, match="test_fraction"):
        Predictability("label", ["text"], test_fraction=1.0)
    assert Predictability("label", "text") == Predictability("label", ["text"])


def test_has_predictability_in_a_verification_suite(deterministic) -> None:
    check = (
        Check(CheckLevel.ERROR, "predictable")
        .has_predictability("label", ["text"], lambda f1: f1 == 1.0)
        .has_predictability("label", ["id"], lambda f1: f1 > 0.9, average="weighted")
    )
    report = VerificationSuite(deterministic).add_check(check).run()
    first, second = report.check_results[0].constraint_results
    assert first.status.value == "Success" and first.value == 1.0
    # ids are unique, so a held-out id was never seen in training: the model is barely better
    # than the prior and the constraint fails with its value
    assert second.status.value == "Failure" and second.value < 0.9


@pytest.mark.classic_only
def test_one_run_reads_the_data_twice(spark, deterministic) -> None:
    """Two actions (count, then score); classic Spark adds one small job that collects the
    model table built on the driver for its broadcast."""
    analyzer = Predictability("label", ["text"])
    result, jobs = count_jobs(spark, lambda: run_analysis(deterministic, [analyzer, Size()]))
    assert result.spark_actions == 3  # with Size's shared scan
    assert jobs == 4


def test_nycflights_carrier_from_tailnum_is_predictable(flights) -> None:
    sample = flights.where("month = 1 AND day <= 7")  # 6,099 flights
    accuracy = Predictability("carrier", ["tailnum"], average="micro")
    result = run_analysis(sample, [accuracy])
    # a tail number belongs to one carrier: 74% of held-out flights are right, where always
    # answering the largest carrier would be right for under a fifth; the misses are planes
    # not seen in the training week (and NULL tail numbers), which fall back on the prior
    assert 0.7 < result.metric(accuracy).value < 0.8
