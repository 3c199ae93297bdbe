"""Parser for an HTTP JSON API: GET a URL, take the list of records at `records_path`."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import StructType

from checkers.env_secrets import env_name, secret_from_env
from checkers.parsers._base import Lazy, Parser, SourceError, resolve
from checkers.parsers._records import records_frame


@dataclass(frozen=True)
class HttpJsonParser(Parser):
    """Records from a JSON API. `records_path` walks into the response (`("data", "items")`);
    `headers_from_env` maps header names to environment variables (tokens stay out of code).

    >>> HttpJsonParser("https://api.example.com/v1/payouts", records_path=("data",),
    ...     headers_from_env=(("Authorization", "PAYOUTS_API_AUTH"),),
    ...     schema="id string, amount double")
    """

    url: Lazy
    records_path: tuple[str, ...] = ()
    query: tuple[tuple[str, str], ...] = field(default=())
    headers_from_env: tuple[tuple[str, str], ...] = field(default=())
    schema: str | StructType | None = None
    casts_to_promise: ClassVar[bool] = True
    timeout_s: float = 30.0

    def __post_init__(self) -> None:
        # A token pasted where its variable's name belongs is refused here, never echoed later.
        for n, pair in enumerate(self.headers_from_env):
            option = f"headers_from_env[{n}]"
            if not (isinstance(pair, tuple | list) and len(pair) == 2):
                raise ValueError(f"HttpJsonParser: {option} must be a (header, variable) pair")
            env_name(option, pair[1], owner="HttpJsonParser")

    def _fetch(self) -> object:
        url = resolve(self.url)
        if self.query:
            url = f"{url}{'&' if '?' in url else '?'}{urllib.parse.urlencode(self.query)}"
        headers = {"Accept": "application/json"}
        for header, variable in self.headers_from_env:
            try:
                headers[header] = secret_from_env(variable)
            except LookupError as exc:
                raise SourceError(f"{self.describe()}: {exc}") from None
        request = urllib.request.Request(url, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                body = response.read()
        except urllib.error.HTTPError as exc:
            raise SourceError(f"{self.describe()} answered HTTP {exc.code} {exc.reason}") from exc
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise SourceError(f"{self.describe()} is unreachable: {reason}") from exc
        try:
            return json.loads(body)
        except ValueError as exc:
            raise SourceError(f"{self.describe()} did not return JSON: {exc}") from exc

    def read(self, spark: SparkSession) -> DataFrame:
        data = self._fetch()
        for step in self.records_path:
            if not isinstance(data, Mapping) or step not in data:
                raise SourceError(
                    f"{self.describe()}: response has no {step!r} along {self.records_path}"
                )
            data = data[step]
        if not isinstance(data, list) or not all(isinstance(r, Mapping) for r in data):
            raise SourceError(f"{self.describe()}: expected a list of JSON objects")
        columns = list(dict.fromkeys(k for record in data for k in record))
        if not columns and self.schema is None:
            raise SourceError(f"{self.describe()}: no records and no promised schema")
        return records_frame(spark, data, columns, self.schema)

    def describe(self) -> str:
        parsed = urllib.parse.urlsplit(resolve(self.url))
        return f"HTTP API {parsed.scheme}://{parsed.hostname}{parsed.path}"
