# Multi-stage image for either service. Build: docker build -t data-aggregator .
# Main:      docker run -p 8000:8000 -e HOST=0.0.0.0 data-aggregator
# Auxiliary: docker run -p 5000:5000 -e HOST=0.0.0.0 data-aggregator node dist/auxiliary/server.js

FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:24-bookworm-slim AS runtime
# Debian's Chromium for dynamic mode (playwright-core drives it; nothing is downloaded at run time).
# tini reaps the browser's child processes and forwards signals.
RUN apt-get update \
 && apt-get install -y --no-install-recommends chromium tini ca-certificates fonts-liberation \
 && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    DATA_DIR=/data \
    CHROMIUM_PATH=/usr/bin/chromium
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8000 5000
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/main/server.js"]
