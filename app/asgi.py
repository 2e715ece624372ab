"""ASGI entry point for production servers: `uvicorn app.asgi:app --workers N`."""

import logging

from app.core import create_app

logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
logging.getLogger("elastic_transport").setLevel(logging.WARNING)
app = create_app()
