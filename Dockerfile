# mcptap in a container: `docker build -t mcptap .` then `docker run --rm mcptap --help`.
# Two stages: the build stage compiles TypeScript and the native SQLite addon (better-sqlite3,
# built from source against this image's Node); the runtime stage holds only what runs.
FROM node:20-bookworm-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
# Native addons compiled here, not downloaded as prebuilt binaries.
ENV npm_config_build_from_source=true
COPY package.json package-lock.json ./
# The same install and build commands as .ci/run and `npm test`.
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY src src
COPY bench bench
COPY bin bin
RUN npm run build \
 && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/dist dist
COPY --from=build /app/bin bin
COPY scenarios scenarios
# Recordings go to /data (a volume in docker-compose.yml), owned by the unprivileged user.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
ENTRYPOINT ["node", "/app/bin/mcptap.js"]
CMD ["--help"]
