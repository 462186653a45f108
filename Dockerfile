# Hearth: one image for every role; compose picks the command.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HEARTH_DATA_DIR=/data HOST=0.0.0.0
COPY package.json package-lock.json ./
# The dependencies first (a layer of their own); the package's own `prepare` (compiling the CLI)
# needs the sources, so it runs once they are in: `npm rebuild` runs the dependencies' scripts.
RUN npm ci --omit=dev --no-audit --no-fund --ignore-scripts && npm rebuild
COPY tsconfig.json drizzle.config.ts ./
COPY src ./src
COPY drizzle ./drizzle
COPY scripts ./scripts
COPY bin ./bin
COPY native ./native
RUN npm run build
# The batch sampler (native/batch-sampler.cpp: a step's samplings in one native call), compiled
# against the installed node-llama-cpp with a compiler and git that leave in the same layer.
RUN apt-get update \
 && apt-get install -y --no-install-recommends g++ git \
 && npm run build:batch-sampler \
 && apt-get purge -y --auto-remove g++ git \
 && rm -rf /var/lib/apt/lists/*
# Runs as the image's unprivileged `node` user: the code stays root's and read-only to it; only
# /data (a named volume takes this directory's owner on first use) is its to write.
RUN mkdir -p /data && chown node:node /data
USER node
VOLUME /data
EXPOSE 8080
CMD ["npm", "run", "start:api"]
