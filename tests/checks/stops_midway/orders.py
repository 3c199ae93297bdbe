"""Three checks; the second one's class body raises, so the third never runs as code."""

from pyspark.sql import functions as F

from checkers import PredicateSingleDatasetChecker
from checkers.parsers import CallableParser
from checks import QualityCheck


def _rows(spark):
    return spark.range(3).withColumn("amount", F.col("id") * 10)


class MidwayFirst(QualityCheck):
    name = "midway_first"
    parser = CallableParser(_rows)

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "amount >= 0")


class MidwayBroken(QualityCheck):
    name = "midway_broken"
    parser = CallableParser(_rows)
    threshold = 1 / 0  # the class body raises here


class MidwayAfter(QualityCheck):
    name = "midway_after"
    owner = "team-orders"
    parser = CallableParser(_rows)

    def checker(self, data):
        return PredicateSingleDatasetChecker(data, "amount >= 0")
