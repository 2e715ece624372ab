"""Write the OpenAPI document the app serves at /schema/openapi.json to docs/openapi.json.

Run after changing a route: `.venv/bin/python scripts/export_openapi.py`. A test fails when the
committed document and the app disagree, so drift shows in review.
"""

from __future__ import annotations

import json
from pathlib import Path

from litestar.serialization import encode_json

from app.core import create_app
from app.settings import Settings

OUTPUT = Path(__file__).resolve().parent.parent / "docs" / "openapi.json"


def render() -> str:
    schema = json.loads(encode_json(create_app(Settings()).openapi_schema.to_schema()))
    return json.dumps(schema, indent=2, ensure_ascii=False, sort_keys=True) + "\n"


if __name__ == "__main__":
    OUTPUT.write_text(render(), encoding="utf-8")
    print(f"wrote {OUTPUT}")
