# The web and worker image: DJANGO_ENV=production, run as a non-root user.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 PYTHONPATH=/app
WORKDIR /app
COPY . .
# Installs the project, its runtime dependencies and the label-quality extra
# (cleanlab, crowd-kit) from pyproject.toml, then
# collects the static files (with gzip copies) where the app looks for them
# (STATIC_ROOT=/app/var/staticfiles, also set by docker-compose.yml).
RUN pip install --upgrade pip && pip install ".[parquet,quality]" && \
    DATA_DIR=/tmp/build STATIC_ROOT=/app/var/staticfiles python manage.py collectstatic --noinput && \
    rm -rf /tmp/build
# The code and static files stay root-owned (read-only to the app); only /data
# (media, the volume) belongs to the user the processes run as.
RUN useradd --system --uid 10001 --create-home studio && \
    mkdir -p /data && chown studio:studio /data
USER studio
ENV DJANGO_ENV=production DATA_DIR=/data STATIC_ROOT=/app/var/staticfiles
EXPOSE 8000
# gthread: a worker runs another request while one waits for PostgreSQL
# (bench/HISTORY.md, annotation, second round: more judgements/s than sync workers).
CMD ["gunicorn", "config.wsgi", "--bind", "0.0.0.0:8000", "--workers", "2", "--worker-class", "gthread", "--threads", "4", "--access-logfile", "-"]
