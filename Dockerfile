# Hearth: one image for every role; compose picks the command.
FROM node:20-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production HEARTH_DATA_DIR=/data HOST=0.0.0.0
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund
COPY tsconfig.json drizzle.config.ts ./
COPY src ./src
COPY drizzle ./drizzle
COPY scripts ./scripts
COPY bin ./bin
VOLUME /data
EXPOSE 8080
CMD ["npm", "run", "start:api"]
