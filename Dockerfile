# Reshard images: reshard-planner, reshard-agent and reshardctl on Debian 12.
#
#   docker build -t reshard:0.2.0 .
#
# The build stage runs the project's own build (`make build`: install-deps.sh,
# configure, compile), the same steps CI runs before its tests. The runtime
# stage holds the three binaries, their shared libraries and nothing else.
#
# NCCL agents (the GPU DaemonSet's, --backend nccl) need a build that found
# CUDA and NCCL, and a CUDA runtime with libnccl2: pass a Debian 12 based
# CUDA image with NCCL as RUNTIME_IMAGE:RUNTIME_TAG, and one with the CUDA
# toolkit and NCCL in /usr/local/cuda (where CMake finds them) as
# BUILD_IMAGE:BUILD_TAG; without them reshard-agent --backend nccl exits 2
# saying the build has no NCCL backend. E.g.
#   docker build --build-arg BUILD_IMAGE=my/cuda-devel --build-arg BUILD_TAG=debian12 \
#     --build-arg RUNTIME_IMAGE=my/cuda-runtime --build-arg RUNTIME_TAG=debian12 \
#     -t reshard-agent-cuda .
ARG BUILD_IMAGE=debian
ARG BUILD_TAG=12
ARG RUNTIME_IMAGE=debian
ARG RUNTIME_TAG=12-slim

FROM ${BUILD_IMAGE}:${BUILD_TAG} AS build
WORKDIR /src
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN bash scripts/install-deps.sh
COPY . .
RUN make build BUILD=build JOBS="$(nproc)" \
 && mkdir -p /out \
 && cp build/server/reshard-planner build/agent/reshard-agent \
       build/client/reshardctl /out/ \
 && cp scripts/reshard-agent-node.sh /out/reshard-agent-node

FROM ${RUNTIME_IMAGE}:${RUNTIME_TAG} AS runtime
# The shared libraries the binaries link (Debian 12 package names).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libgrpc++1.51 libgrpc29 libprotobuf32 libabsl20220623 \
      libprometheus-cpp-core1.0 libprometheus-cpp-pull1.0 libcivetweb1 \
      libspdlog1.10 libfmt9 libgloo0 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --user-group --no-create-home reshard
COPY --from=build /out/ /usr/local/bin/
USER 10001:10001
# gRPC (Planner, Coordinator, health), planner metrics, first agent metrics.
EXPOSE 50051 9090 9400
HEALTHCHECK --interval=15s --timeout=5s --retries=3 \
  CMD ["reshardctl", "--server", "127.0.0.1:50051", "health"]
CMD ["reshard-planner", "--listen", "0.0.0.0:50051", "--metrics_listen", "0.0.0.0:9090"]
