"""Coverage of the suite per package, and the floors it keeps.

    .venv/bin/python scripts/coverage_report.py [--json OUT]

Reads the combined data of `coverage run -m pytest` (`scripts/test.sh`), prints lines and
branches covered per package of `app/` and `indexer/`, and fails (exit 1) when:
- `app/` and `indexer/` together fall under `FLOOR` (statements and branches, as coverage counts
  them), or
- an `except` clause that turns a dependency failure (Elasticsearch, PostgreSQL, Redis, SMTP,
  the record store, the job queue, the network) into an answer was never executed: each such
  handler is found in the source and its first line must have run at least once, or
- an exception handler the app registers (`HANDLERS` of `app/errors.py`: the answer to an error
  no `except` caught on the way) was never executed, found and judged the same way.
"""

from __future__ import annotations

import argparse
import ast
import json
import sys
from collections import defaultdict
from pathlib import Path

import coverage

ROOT = Path(__file__).resolve().parent.parent
FLOOR = 90.0
"""Percent of statements and branches of app/ and indexer/ the suite must cover."""
DEPENDENCY_ERRORS = {
    "ApiError", "TransportError", "NotFoundError", "ConnectionError", "ConnectionTimeout",
    "OperationalError", "PoolTimeout", "RedisError", "SMTPException", "OSError",
    "psycopg.Error", "psycopg.OperationalError", "MissingError", "lmdb.Error",
    "ConnectorException", "ClientConnectorError", "ClientError", "TimeoutError",
}  # fmt: skip
"""Exceptions of dependencies, by name as written in an `except` (a dotted name also matches by
its last part, so `aiohttp.ClientError` matches `ClientError`; `lmdb.Error` only as written)."""
ERROR_HANDLERS = ROOT / "app" / "errors.py"
"""The module whose `HANDLERS` maps exception types to the app's exception handlers."""


def _names(node: ast.expr | None) -> set[str]:
    if node is None:
        return set()
    if isinstance(node, ast.Tuple):
        return set().union(*(_names(item) for item in node.elts))
    return {ast.unparse(node)}


def dependency_handlers(path: Path) -> list[tuple[int, str]]:
    """(first line of the handler's body, the exceptions it catches) of each `except` that
    catches a dependency failure."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ExceptHandler):
            caught = _names(node.type)
            if (
                caught & DEPENDENCY_ERRORS
                or {name.split(".")[-1] for name in caught} & DEPENDENCY_ERRORS
            ):
                found.append((node.body[0].lineno, ", ".join(sorted(caught))))
    return found


def _first_statement(function: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """The line of the first statement of `function` after its docstring."""
    body = function.body
    docstring = (
        isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    )
    return body[1 if docstring and len(body) > 1 else 0].lineno


def registered_handlers(path: Path) -> list[tuple[int, str]]:
    """(first line of the function's body, the function and the exceptions it answers) of each
    function of the module that its `HANDLERS` dict maps exception types to."""
    tree = ast.parse(path.read_text(), str(path))
    functions = {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    answers: dict[str, list[str]] = defaultdict(list)
    for node in tree.body:
        if isinstance(node, ast.Assign):
            targets = node.targets
        elif isinstance(node, ast.AnnAssign):
            targets = [node.target]
        else:
            continue
        named = any(isinstance(target, ast.Name) and target.id == "HANDLERS" for target in targets)
        if named and isinstance(node.value, ast.Dict):
            for key, value in zip(node.value.keys, node.value.values, strict=True):
                if key is not None and isinstance(value, ast.Name):
                    answers[value.id].append(ast.unparse(key))
    return [
        (_first_statement(functions[name]), f"{name}: {', '.join(kinds)}")
        for name, kinds in answers.items()
        if name in functions
    ]


def package_of(path: str) -> str:
    relative = Path(path).resolve().relative_to(ROOT)
    parts = relative.parts
    return "/".join(parts[:2]) if len(parts) > 2 else parts[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args()
    cov = coverage.Coverage(config_file=str(ROOT / "pyproject.toml"))
    cov.load()
    data = cov.get_data()
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    unexercised = []
    unanswered = []
    for filename in sorted(data.measured_files()):
        if not filename.endswith(".py") or (
            not filename.startswith(str(ROOT / "app"))
            and not filename.startswith(str(ROOT / "indexer"))
        ):
            continue
        analysis = cov._analyze(filename)
        numbers = analysis.numbers
        row = totals[package_of(filename)]
        row[0] += numbers.n_statements
        row[1] += numbers.n_statements - numbers.n_missing
        row[2] += numbers.n_branches
        row[3] += numbers.n_branches - numbers.n_missing_branches
        executed = set(data.lines(filename) or [])
        for line, caught in dependency_handlers(Path(filename)):
            if line not in executed:
                unexercised.append(f"{Path(filename).relative_to(ROOT)}:{line} ({caught})")
        if Path(filename).resolve() == ERROR_HANDLERS:
            for line, answered in registered_handlers(ERROR_HANDLERS):
                if line not in executed:
                    unanswered.append(f"{ERROR_HANDLERS.relative_to(ROOT)}:{line} ({answered})")
    print(f"{'package':<24}{'lines':>14}{'branches':>14}{'total':>9}")
    grand = [0, 0, 0, 0]
    figures = {}
    for package, (statements, covered, branches, taken) in sorted(totals.items()):
        grand = [a + b for a, b in zip(grand, (statements, covered, branches, taken), strict=True)]
        percent = 100 * (covered + taken) / max(statements + branches, 1)
        figures[package] = round(percent, 1)
        print(f"{package:<24}{covered:>6}/{statements:<7}{taken:>6}/{branches:<7}{percent:>8.1f}%")
    total = 100 * (grand[1] + grand[3]) / max(grand[0] + grand[2], 1)
    figures["total"] = round(total, 1)
    label = "app/ + indexer/"
    print(f"{label:<24}{grand[1]:>6}/{grand[0]:<7}{grand[3]:>6}/{grand[2]:<7}{total:>8.1f}%")
    if args.json:
        report = {"figures": figures, "unexercised": unexercised, "handlers": unanswered}
        args.json.write_text(json.dumps(report, indent=1))
    failed = False
    if total < FLOOR:
        print(f"coverage {total:.1f}% is under the floor of {FLOOR}%")
        failed = True
    if unexercised:
        print("dependency-failure handlers never executed:")
        for where in unexercised:
            print(f"  {where}")
        failed = True
    if unanswered:
        print("exception handlers of the app never executed:")
        for where in unanswered:
            print(f"  {where}")
        failed = True
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
