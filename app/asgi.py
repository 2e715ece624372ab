"""ASGI entry point for production servers: `uvicorn app.asgi:app --workers N`."""

from app.core import create_app

app = create_app()
