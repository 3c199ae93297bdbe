"""Column types the packages' tables share, so every table stores time and long text alike."""

from __future__ import annotations

import sqlalchemy as sa
from sqlalchemy.dialects import mysql

# MariaDB's DATETIME drops microseconds (window starts key claims): ask for DATETIME(6).
UtcDateTime = sa.DateTime(timezone=True).with_variant(mysql.DATETIME(fsp=6), "mysql", "mariadb")
LongText = sa.Text().with_variant(mysql.LONGTEXT(), "mysql", "mariadb")
