"""The `dq` command line: `app` wires argparse to one function per command, the other modules
hold a command group (`silence`, `scaffold`, `doctor`) or its output (`console`, `run_output`,
`progress`), and `exits` the exit codes. `python -m scheduling.cli` runs it."""

from scheduling.cli.app import main, parser

__all__ = ["main", "parser"]
