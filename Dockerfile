# syntax=docker/dockerfile:1
# Roster in a container: docs/deploying.md, "Container". Build: `docker build -t roster .`; with PostgreSQL:
# `docker compose up` (compose.yaml). The image runs against a PostgreSQL server (ROSTER_DATABASE_URL): the embedded
# engine is for a laptop, not for a container whose file system is thrown away.

# Build: every dependency (Vite and Preact build the portal in `prepare`), then only the runtime ones are kept.
FROM node:20-bookworm-slim AS build
WORKDIR /opt/roster
COPY package.json package-lock.json tsconfig.json ./
COPY src ./src
RUN npm ci --no-audit --no-fund \
 && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    ROSTER_HOST=0.0.0.0 \
    ROSTER_PORT=8080 \
    ROSTER_LOG_FORMAT=json
WORKDIR /opt/roster
COPY --from=build /opt/roster/package.json /opt/roster/tsconfig.json ./
COPY --from=build /opt/roster/node_modules ./node_modules
COPY --from=build /opt/roster/src ./src
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.ROSTER_PORT||8080)+'/health/ready').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Node is PID 1: SIGTERM (docker stop) reaches Roster itself, which finishes in-flight requests and exits.
STOPSIGNAL SIGTERM
CMD ["node", "--max-semi-space-size=32", "--import", "tsx", "src/server.ts"]
