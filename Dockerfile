# syntax=docker/dockerfile:1
# The hnc-ts manager image: `docker build -t hnc-ts:0.1.0 .` (npm run kind:up does this).
#
# On the maintained Node.js LTS the project is tested on (.nvmrc; docs/deploy.md, "The image").
# Three stages: `build` compiles cmd/manager.ts (the production entry point) and what it imports to plain ESM with tsc
# (tsconfig.build.json); `deps` installs the production dependencies only; the final image holds
# Node, those dependencies, the compiled code and the CRDs (read by the manager's CRD check), owned
# by root and run as uid 1000, so the code cannot be changed at run time. Nothing is written to
# disk: the pod runs with a read-only root filesystem (deploy/manager/deployment.yaml).
ARG NODE_IMAGE=node:26-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY . .
RUN npx tsc -p tsconfig.build.json

FROM ${NODE_IMAGE} AS deps
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM ${NODE_IMAGE}
ENV NODE_ENV=production
WORKDIR /app
# package.json marks the compiled .js files as ES modules ("type": "module").
COPY package.json ./
COPY --from=deps /src/node_modules ./node_modules
COPY crds ./crds
COPY --from=build /src/dist/manager/ ./
# The node image's unprivileged user (uid 1000), numeric so that runAsNonRoot can verify it.
USER 1000:1000
EXPOSE 9443 8080 8081
# HNC's manager flags go in the Deployment's args (e.g. --enable-leader-election). In a pod the
# manager uses its service account; elsewhere pass --kubeconfig.
# --heap-growing-percent=50: V8 grows the heap by 1.5x its live size, not up to 4x, after a full
# collection: at 5,000 namespaces RSS 233 MB instead of 314 for about 20 % more CPU in a cold start.
# --max-semi-space-size=8 --expose-gc: a young generation of up to 2 x 8 MB (Node 26's V8 lets it
# grow to about 56 MB) for bursts of writes, a quarter of the scavenges a 2 MB one costs (HNC's CPU
# per copy written was about 20 % higher with 2 MB); V8 keeps a grown young generation while
# nothing allocates, so once a thread is idle HNC scavenges it back to its smallest size
# (kube/young-generation.ts, which needs --expose-gc), and steady memory is that of the smallest
# one (docs/benchmarks.md, "A young generation for bursts, given back when idle").
# MALLOC_ARENA_MAX=2: glibc's allocator otherwise gives each thread that allocates (the admission
# thread, V8's compiler and GC helpers) an arena of its own, each keeping memory it freed
# (docs/benchmarks.md, "Memory of a small cluster").
# The benchmark runs HNC with exactly these flags and this ENV (bench/node-flags.ts).
ENV MALLOC_ARENA_MAX=2
ENTRYPOINT ["node", "--enable-source-maps", "--heap-growing-percent=50", "--max-semi-space-size=8", "--expose-gc", "cmd/manager.js"]
