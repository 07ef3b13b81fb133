# loanql service image: `docker compose up` builds it (see docker-compose.yml).
# Stage 1 builds with the dev dependencies (esbuild turns the TypeScript into dist/); stage 2 carries only what runs.
FROM node:20-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
# Everything else that .dockerignore lets through (the sources; not tests, data or node_modules).
COPY . .
RUN npm run build && npm prune --omit=dev

FROM node:20-slim
ENV NODE_ENV=production \
    PORT=8080 \
    HOST=0.0.0.0 \
    DATA_DIR=/app/data
WORKDIR /app
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
# The service serves /app/metadata/loanql.yaml (read and watched for edits at run time), creating
# it from the shipped loanql.default.yaml on its first start; docker-compose.yml mounts ./metadata
# here so the file lives on the host. The folder belongs to the service's user so it can do that.
COPY --from=build --chown=node:node /app/metadata ./metadata
# DATA_DIR is used only when DATABASE_URL is unset (embedded PGlite); mount a volume there.
RUN mkdir -p /app/data && chown node:node /app/data
USER node
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=5s --start-period=90s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "--max-semi-space-size=32", "dist/server/main.js"]
