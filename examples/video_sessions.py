"""A generated dataset of video-session logs, the running example of the Deequ paper: customer,
title, impression start and end, device, priority, count, country, zip code and city. Realistic
shape, seeded, with a few planted defects so checks have something to find."""

from __future__ import annotations

import datetime as dt
import random

import pandas as pd

DEVICES = {"phone": 0.45, "desktop": 0.30, "tablet": 0.15, "tv": 0.10}
COUNTRIES = {
    "US": [("10001", "New York"), ("94103", "San Francisco"), ("60601", "Chicago")],
    "DE": [("10115", "Berlin"), ("80331", "Munich"), ("20095", "Hamburg")],
    "FR": [("75001", "Paris"), ("69001", "Lyon")],
}
TITLES = [f"title-{i:03d}" for i in range(1, 121)]


def video_sessions(rows: int = 5000, *, seed: int = 7) -> pd.DataFrame:
    """`rows` sessions. Planted defects: 1% of sessions end before they start, 0.5% have no
    device type, 2% of German sessions lack a zip code, one priority value is misspelt."""
    rng = random.Random(seed)
    start = dt.datetime(2026, 11, 1)
    records = []
    for i in range(rows):
        country = rng.choices(list(COUNTRIES), weights=[0.5, 0.3, 0.2])[0]
        zip_code, city = rng.choice(COUNTRIES[country])
        began = start + dt.timedelta(seconds=rng.randrange(0, 20 * 24 * 3600))
        watched = dt.timedelta(seconds=rng.randrange(30, 3 * 3600))
        ended = began - watched if i % 100 == 7 else began + watched
        device = rng.choices(list(DEVICES), weights=list(DEVICES.values()))[0]
        records.append(
            {
                "customer_id": 100_000 + i,
                "title": rng.choice(TITLES),
                "impression_start": began,
                "impression_end": ended,
                "device_type": None if i % 200 == 3 else device,
                "priority": "hi" if rng.random() < 0.2 else "lo",
                "count": rng.randrange(0, 40),
                "country_residence": country,
                "zip_code": None if country == "DE" and i % 50 == 11 else zip_code,
                "city_residence": city,
            }
        )
    records[42]["priority"] = "hgih"
    return pd.DataFrame.from_records(records)
