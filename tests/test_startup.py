"""What a serving process prepares before its first request."""

from __future__ import annotations

from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.testing import TestClient
from procrastinate import PsycopgConnector

from app.core import create_app
from app.web import search
from app.worker.queue import queue


def test_the_pages_are_compiled_before_the_first_request() -> None:
    search.city_names.cache_clear()
    app = create_app()
    # The job queue is the module's one app: a connector of this process's own (`test_heap`).
    with queue.replace_connector(PsycopgConnector()), TestClient(app, base_url="http://127.0.0.1"):
        engine = app.template_engine
        assert isinstance(engine, JinjaTemplateEngine)
        names = engine.engine.list_templates()
        assert "busca.html" in names
        compiled = {key[1] for key in engine.engine.cache or {}}
        assert compiled >= set(names)
        assert search.city_names.cache_info().currsize == 1
