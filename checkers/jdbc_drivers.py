"""JDBC drivers for Spark: Debian's packaged jars, found where apt installs them, plus any listed
in `DQ_JDBC_JARS` (comma-separated paths). Sessions whose driver runs here put them on
`spark.jars`; a remote Spark Connect server needs them at its own start (`--jars`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Driver:
    """A JDBC driver: its class, the jar Debian installs and the package that installs it."""

    name: str
    driver_class: str
    jar: Path
    package: str

    def missing(self) -> str:
        return (
            f"the {self.name} JDBC driver is not installed: apt-get install {self.package}, "
            "or set DQ_JDBC_JARS to its jar"
        )


POSTGRESQL = Driver(
    "PostgreSQL",
    "org.postgresql.Driver",
    Path("/usr/share/java/postgresql.jar"),
    "libpostgresql-jdbc-java",
)
MARIADB = Driver(
    "MariaDB",
    "org.mariadb.jdbc.Driver",
    Path("/usr/share/java/mariadb-java-client.jar"),
    "libmariadb-java",
)
#: By JDBC subprotocol (`jdbc:<subprotocol>://...`).
DRIVERS = {"postgresql": POSTGRESQL, "mariadb": MARIADB, "mysql": MARIADB}


def driver_jars(environ: Mapping[str, str] | None = None) -> list[str]:
    """Installed Debian driver jars, then those of `DQ_JDBC_JARS` (which must exist)."""
    env = os.environ if environ is None else environ  # read with the session (checkers.spark)
    found = [str(d.jar) for d in (POSTGRESQL, MARIADB) if d.jar.is_file()]
    extra = [p.strip() for p in env.get("DQ_JDBC_JARS", "").split(",") if p.strip()]
    absent = [p for p in extra if not Path(p).is_file()]
    if absent:
        raise FileNotFoundError(f"DQ_JDBC_JARS names jars that do not exist: {', '.join(absent)}")
    return list(dict.fromkeys(found + extra))


def with_driver_jars(jars: str, environ: Mapping[str, str] | None = None) -> str:
    """A `spark.jars` value: `jars` (comma-separated, may be empty) plus the driver jars."""
    given = [j for j in jars.split(",") if j]
    return ",".join(dict.fromkeys(given + driver_jars(environ)))
