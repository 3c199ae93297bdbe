"""Run reladiff's hashdiff on two tables and print its result as one JSON line.

Run by the separate venv that has reladiff (never the project's): benchmarks/consistency.py starts

    /work/reladiff-venv/bin/python benchmarks/reladiff_diff.py LEFT_URL RIGHT_URL TABLE KEY COLS

so this file imports only reladiff and the standard library.
"""

from __future__ import annotations

import json
import sys
import time


def main() -> None:
    left_url, right_url, table, key, columns = sys.argv[1:6]
    threads = int(sys.argv[6]) if len(sys.argv) > 6 else 1
    from reladiff import connect_to_table, diff_tables

    extra = tuple(c for c in columns.split(",") if c and c != key)
    start = time.perf_counter()
    left = connect_to_table(left_url, table, key, thread_count=threads, extra_columns=extra)
    right = connect_to_table(right_url, table, key, thread_count=threads, extra_columns=extra)
    result = diff_tables(left, right, threaded=True, max_threadpool_size=threads)
    rows = list(result)
    stats = result.get_stats_dict()
    seconds = time.perf_counter() - start
    # '-' rows are only in the left table, '+' only in the right; an updated key gives both.
    print(
        json.dumps(
            {
                "seconds": seconds,
                "diff_rows": len(rows),
                "only_left": stats["exclusive_A"],
                "only_right": stats["exclusive_B"],
                "updated": stats["updated"],
                "rows_downloaded": stats["stats"].get("rows_downloaded", 0),
            }
        )
    )


if __name__ == "__main__":
    main()
