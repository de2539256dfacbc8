# Harvest planner: the Streamlit app with the shipped logs inside.
#   docker build -t harvest-planner .
#   docker run --rm -p 8501:8501 harvest-planner      # then open http://localhost:8501
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PYTHONPATH=/app \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PLANNER_DATA_DIR=/home/planner/data \
    PLANNER_SESSIONS_DIR=/home/planner/sessions

RUN useradd --create-home --uid 10001 planner
WORKDIR /app

# Pinned runtime dependencies first (a layer that survives code edits).
COPY requirements.txt ./
RUN sed -i '/^-e \./d' requirements.txt \
    && pip install -r requirements.txt

# The code and the shipped datasets (the Summit log the app opens on, SWF, scaling tables).
COPY planner/ planner/
COPY appkit/ appkit/
COPY app_pages/ app_pages/
COPY datasets/ datasets/
COPY .streamlit/ .streamlit/
COPY app.py ./
# the package runs from /app (PYTHONPATH), so planner.paths finds /app/datasets; the CLI too
RUN printf '#!/bin/sh\nexec python -m planner "$@"\n' > /usr/local/bin/planner \
    && chmod 755 /usr/local/bin/planner \
    && mkdir -p /home/planner/data /home/planner/sessions \
    && chown -R planner:planner /home/planner

USER planner
# Load the shipped Summit log into the image's database at build time, so the first page
# load does not pay for it (the app would do the same on first start).
RUN python -c "from planner import db, logs; logs.ensure_default(db.connect())"

EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=40s --retries=3 \
    CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://localhost:8501/_stcore/health', timeout=4).status == 200 else 1)"

CMD ["streamlit", "run", "app.py", "--server.address", "0.0.0.0", "--server.port", "8501", "--server.headless", "true", "--server.fileWatcherType", "none"]
