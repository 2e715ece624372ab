"""ASGI entry point for production servers: `uvicorn app.asgi:app --workers N`."""

import logging

from app.core import create_app
from app.lib.head import HeadAsGet
from app.lib.shedding import Shedding
from app.lookup.fast import FastLookups
from app.settings import get_settings

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
logging.getLogger("elastic_transport").setLevel(logging.WARNING)
# The client logs every retry of a failed request as a WARNING with its traceback; the app logs
# the failure once itself (`app.errors.elastic_failure`), so the retries stay out of the log.
logging.getLogger("elastic_transport.transport").setLevel(logging.ERROR)
settings = get_settings()
core = create_app(settings)
app = HeadAsGet(
    Shedding(
        FastLookups(core) if settings.fast_lookups else core,
        settings.max_in_flight,
        settings.max_searches_in_flight,
        settings.search_latency_target_ms / 1000,
        state=core.state,
    )
)
