# Harvest planner: the Streamlit app with the shipped logs inside.
#   docker build -t harvest-planner .
#   docker run --rm -p 8501:8501 harvest-planner      # then open http://localhost:8501
# Base image pinned to the Python patch release the project is tested on (see constraints.txt).
FROM python:3.11.7-slim-bookworm

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PYTHONPATH=/app \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PLANNER_DATA_DIR=/home/planner/data \
    PLANNER_SESSIONS_DIR=/home/planner/sessions \
    PLANNER_ARTIFACTS_DIR=/home/planner/artifacts

RUN useradd --create-home --uid 10001 planner
WORKDIR /app

# Pinned runtime dependencies first (a layer that survives code edits); constraints.txt pins
# every package of the resolved set, not only the top-level ones.
COPY requirements.txt constraints.txt ./
RUN sed -i '/^-e \./d' requirements.txt \
    && pip install -c constraints.txt -r requirements.txt

# The code with the shipped datasets (planner/datasets/: the Summit log the app opens on, SWF,
# scaling tables), and what the README's CLI examples use: examples/ and benchmarks/.
COPY pyproject.toml README.md ./
COPY planner/ planner/
COPY appkit/ appkit/
COPY app_pages/ app_pages/
COPY .streamlit/ .streamlit/
COPY examples/ examples/
COPY benchmarks/ benchmarks/
COPY app.py ./
# the package runs from /app (PYTHONPATH), a source checkout for planner.paths; the CLI too.
# benchmarks/run_all.py writes /app/artifacts: the one directory under /app the user may write.
RUN printf '#!/bin/sh\nexec python -m planner "$@"\n' > /usr/local/bin/planner \
    && chmod 755 /usr/local/bin/planner \
    && mkdir -p /home/planner/data /home/planner/sessions /home/planner/artifacts /app/artifacts \
    && chown -R planner:planner /home/planner /app/artifacts

USER planner
# Load the shipped Summit log into the image's database at build time, so the first page
# load does not pay for it (the app would do the same on first start).
RUN python -c "from planner import db, logs; logs.ensure_default(db.connect())"

EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=40s --retries=3 \
    CMD python -c "import urllib.request,sys; sys.exit(0 if urllib.request.urlopen('http://localhost:8501/_stcore/health', timeout=4).status == 200 else 1)"

CMD ["streamlit", "run", "app.py", "--server.address", "0.0.0.0", "--server.port", "8501", "--server.headless", "true", "--server.fileWatcherType", "none"]
