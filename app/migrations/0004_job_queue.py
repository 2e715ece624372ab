"""The job queue's tables and functions (procrastinate), from the schema of the installed
library: the worker and the app's transactions defer jobs into them."""

from importlib.resources import files

from yoyo import step

__depends__ = {"0003_audit_operation"}

steps = [step(files("procrastinate.sql").joinpath("schema.sql").read_text(encoding="utf-8"))]
