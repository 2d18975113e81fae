# One image for the api, worker, scheduler and migrate services.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY requirements.txt .
RUN pip install --no-cache-dir -r requirements.txt
COPY api ./api
COPY models ./models
COPY workers ./workers
COPY scheduler ./scheduler
COPY importer ./importer
COPY pyproject.toml ./
RUN useradd --system --uid 10001 gateway && mkdir -p /app/data && chown gateway /app/data
USER gateway
EXPOSE 3000
CMD ["python", "-m", "api"]
