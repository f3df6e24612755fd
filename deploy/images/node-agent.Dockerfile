# deviceshare-node-agent and libvgpu.so: the node agent DaemonSet's image
# (deploy/node-agent-daemonset.yaml, deploy/dra/node-agent-daemonset.yaml).
# Built from the repository root (the context is the source tree;
# .dockerignore keeps build trees out):
#   deploy/images/build.sh                     both images, tags from
#                                              deploy/kustomization.yaml
#   docker build -f deploy/images/node-agent.Dockerfile \
#     -t deviceshare-node-agent:0.1.0 .
#
# tests/install/image_packages_test.sh checks both stages' package lists:
# the build stage's against .ci/install-deps, the runtime stage's against
# what `ldd` finds the binary and libvgpu.so loading.

# ---- build -------------------------------------------------------------------
FROM debian:12 AS build
# .ci/install-deps' build packages, less those of the tests, benchmarks,
# fuzzers and Go binding (gtest, gmock, benchmark, glpk, clang, golang-go): the
# configure below turns those off.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
       --no-install-recommends \
       cmake ninja-build g++ pkg-config \
       libabsl-dev libyaml-cpp-dev libyaml-dev nlohmann-json3-dev libssl-dev \
       libcpp-httplib-dev libspdlog-dev libboost-dev libboost-graph-dev \
       prometheus-cpp-dev \
       protobuf-compiler libprotobuf-dev libgrpc++-dev protobuf-compiler-grpc \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# The agent and libvgpu.so (component node-agent), stripped, under
# /usr/local in a staging root. libvgpu.so lands at
# /usr/local/lib/deviceshare/libvgpu.so, the DaemonSets' --vgpu-library.
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release \
       -DCMAKE_INSTALL_PREFIX=/usr/local \
       -DDEVICESHARE_BUILD_TESTS=OFF -DDEVICESHARE_BUILD_BENCH=OFF \
    && cmake --build /build --target deviceshare-node-agent vgpu \
    && DESTDIR=/staging cmake --install /build --component node-agent --strip \
    && test -f /staging/usr/local/lib/deviceshare/libvgpu.so

# ---- runtime -----------------------------------------------------------------
FROM debian:12-slim AS runtime
# The packages of the shared libraries the agent and libvgpu.so load
# (`ldd`); libc6, libstdc++6, libgcc-s1 and zlib1g are in debian:12-slim
# already. NVML (libnvidia-ml.so.1, loaded with dlopen) and
# nvidia-cuda-mps-control are the driver's: the NVIDIA container runtime
# mounts them from the host (NVIDIA_DRIVER_CAPABILITIES in the DaemonSet).
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
       --no-install-recommends \
       libabsl20220623 libbrotli1 libc-ares2 libcpp-httplib0.11 libfmt9 \
       libgrpc++1.51 libgrpc29 libprometheus-cpp-core1.0 libprotobuf32 \
       libre2-9 libspdlog1.10 libssl3 libyaml-cpp0.7 \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /staging/usr/local/bin/deviceshare-node-agent /usr/local/bin/
COPY --from=build /staging/usr/local/lib/deviceshare/libvgpu.so \
     /usr/local/lib/deviceshare/libvgpu.so
# Root, on purpose: the agent writes into host directories that belong to
# root (kubelet's device-plugins and plugins sockets, the CDI specs, the
# hook path it installs libvgpu.so into, /run/deviceshare), and creates MIG
# instances and runs the MPS control daemon through NVML, which "requires
# privileged user" (the DaemonSet also sets privileged: true).
USER 0:0
ENTRYPOINT ["deviceshare-node-agent"]
CMD ["--help"]
