# GPU Classroom: an npm stage for htmx, Swagger UI and ReDoc, a builder for the Python environment (the locked
# versions, hashes checked), a slim non-root final stage.
FROM node:20-slim AS frontend
WORKDIR /src
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund --omit=dev

FROM python:3.11-slim AS builder
WORKDIR /srv
RUN python -m venv /venv
COPY pyproject.toml README.md requirements.lock ./
RUN /venv/bin/pip install --no-cache-dir --require-hashes -r requirements.lock

FROM python:3.11-slim
RUN useradd --create-home --uid 10001 classroom && mkdir /data && chown classroom /data
WORKDIR /srv
COPY --from=builder /venv /venv
COPY pyproject.toml README.md ./
COPY app ./app
COPY lessons ./lessons
COPY templates ./templates
COPY static ./static
COPY --from=frontend /src/node_modules/htmx.org/dist/htmx.min.js ./static/vendor/htmx.min.js
COPY --from=frontend /src/node_modules/swagger-ui-dist/swagger-ui-bundle.js /src/node_modules/swagger-ui-dist/swagger-ui.css ./static/vendor/
COPY --from=frontend /src/node_modules/redoc/bundles/redoc.standalone.js ./static/vendor/
RUN /venv/bin/pip install --no-cache-dir --no-deps -e . && chown -R classroom /srv
ENV PATH=/venv/bin:$PATH \
    GPU_CLASSROOM_HOST=0.0.0.0 \
    GPU_CLASSROOM_DATA_DIR=/data \
    PYTHONUNBUFFERED=1
VOLUME ["/data"]
USER classroom
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=20s --retries=3 \
  CMD python -c "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8000/healthz', timeout=4).status == 200 else 1)"
CMD ["gpu-classroom", "serve"]
