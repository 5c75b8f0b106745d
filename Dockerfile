# Reshard images: reshard-planner, reshard-agent and reshardctl on Debian 12.
#
#   docker build -t reshard:0.2.0 .
#
# The build stage runs the project's own build (`make build`: install-deps.sh,
# configure, compile), the same steps CI runs before its tests. The runtime
# stage holds the three binaries, their shared libraries and nothing else.
#
# install-deps.sh --no-python lays out CUDA and NCCL from NVIDIA's pinned
# PyPI wheels in /opt/reshard/cuda (no Python environment: the image needs
# only the C++ side), so the build always has the NCCL backend. The runtime
# stage carries the two libraries it links, libcudart.so.13 and
# libnccl.so.2, in /usr/local/lib/reshard: the agents run Gloo on any node
# and NCCL (--backend nccl) where the container runtime provides the GPU
# driver (libcuda). BUILD_IMAGE/BUILD_TAG and RUNTIME_IMAGE/RUNTIME_TAG
# select other Debian 12 based images.
ARG BUILD_IMAGE=debian
ARG BUILD_TAG=12
ARG RUNTIME_IMAGE=debian
ARG RUNTIME_TAG=12-slim

FROM ${BUILD_IMAGE}:${BUILD_TAG} AS build
WORKDIR /src
COPY scripts/install-deps.sh scripts/install-deps.sh
RUN bash scripts/install-deps.sh --no-python
COPY . .
RUN make build BUILD=build JOBS="$(nproc)" DEPS_FLAGS=--no-python \
 && mkdir -p /out/bin /out/lib \
 && cp build/server/reshard-planner build/agent/reshard-agent \
       build/client/reshardctl /out/bin/ \
 && cp scripts/reshard-agent-node.sh /out/bin/reshard-agent-node \
 && cp -L /opt/reshard/cuda/lib/libcudart.so.13 \
          /opt/reshard/cuda/lib/libnccl.so.2 /out/lib/

FROM ${RUNTIME_IMAGE}:${RUNTIME_TAG} AS runtime
# The shared libraries the binaries link (Debian 12 package names).
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      libgrpc++1.51 libgrpc29 libprotobuf32 libabsl20220623 \
      libprometheus-cpp-core1.0 libprometheus-cpp-pull1.0 libcivetweb1 \
      libspdlog1.10 libfmt9 libgloo0 \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --user-group --no-create-home reshard
COPY --from=build /out/lib/ /usr/local/lib/reshard/
RUN echo /usr/local/lib/reshard > /etc/ld.so.conf.d/reshard.conf && ldconfig
COPY --from=build /out/bin/ /usr/local/bin/
USER 10001:10001
# gRPC (Planner, Coordinator, health), planner metrics, first agent metrics.
EXPOSE 50051 9090 9400
HEALTHCHECK --interval=15s --timeout=5s --retries=3 \
  CMD ["reshardctl", "--server", "127.0.0.1:50051", "health"]
CMD ["reshard-planner", "--listen", "0.0.0.0:50051", "--metrics_listen", "0.0.0.0:9090"]
