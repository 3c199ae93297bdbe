"""The HTML report (`dq report`): `data` reads the project database, `plot` and `sections` turn a
check's history into SVG and HTML, `assets` holds the page's CSS and script, `render` writes it."""

from scheduling.report.plot import outliers
from scheduling.report.render import REPORT_BYTES_500, render_report, write_report
from scheduling.report.sections import reading, status_words

__all__ = [
    "REPORT_BYTES_500",
    "outliers",
    "reading",
    "render_report",
    "status_words",
    "write_report",
]
