FROM python:3.11-slim
ENV UV_PYTHON_DOWNLOADS=never UV_COMPILE_BYTECODE=1 PATH="/srv/.venv/bin:$PATH"
WORKDIR /srv
RUN pip install --no-cache-dir uv
COPY pyproject.toml uv.lock README.md ./
COPY app app
COPY indexer indexer
COPY mappings mappings
COPY fixtures fixtures
RUN uv sync --frozen --no-dev
EXPOSE 8000
CMD ["sh", "-c", "registry-admin migrate && exec registry-api --host 0.0.0.0 --port 8000 --workers 2"]
