# deviceshare-scheduler: the kube-scheduler extender, the second container of
# the scheduler pod (deploy/deployment.yaml). Built from the repository root
# (the context is the source tree; .dockerignore keeps build trees out):
#   deploy/images/build.sh                     both images, tags from
#                                              deploy/kustomization.yaml
#   docker build -f deploy/images/scheduler.Dockerfile \
#     -t deviceshare-scheduler:0.1.0 .
#
# tests/install/image_packages_test.sh checks both stages' package lists:
# the build stage's against .ci/install-deps, the runtime stage's against
# what `ldd` finds the binary loading.

# ---- build -------------------------------------------------------------------
FROM debian:12 AS build
# .ci/install-deps' build packages, less those of the tests, benchmarks,
# fuzzers and Go binding (gtest, gmock, benchmark, glpk, clang, golang-go): the
# configure below turns those off. protobuf and gRPC are configure-time
# requirements of the whole tree, though only the node agent links them.
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
# Only the scheduler, installed (stripped) as its own component into a
# staging root that the runtime stage copies from.
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release \
       -DCMAKE_INSTALL_PREFIX=/usr/local \
       -DDEVICESHARE_BUILD_TESTS=OFF -DDEVICESHARE_BUILD_BENCH=OFF \
    && cmake --build /build --target deviceshare-scheduler \
    && DESTDIR=/staging cmake --install /build --component scheduler --strip

# ---- runtime -----------------------------------------------------------------
FROM debian:12-slim AS runtime
# The packages of the shared libraries the binary loads (`ldd`); libc6,
# libstdc++6, libgcc-s1 and zlib1g are in debian:12-slim already.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
       --no-install-recommends \
       libabsl20220623 libbrotli1 libcpp-httplib0.11 libfmt9 \
       libprometheus-cpp-core1.0 libspdlog1.10 libssl3 libyaml-0-2 \
       libyaml-cpp0.7 \
    && rm -rf /var/lib/apt/lists/*
COPY --from=build /staging/usr/local/bin/deviceshare-scheduler /usr/local/bin/
# Not root: the extender needs no privilege, only the API server
# (in-cluster credentials) and its port, 8888, which is above 1024. The
# numeric id lets kubelet check runAsNonRoot; it is the Deployment's
# runAsUser/runAsGroup.
USER 65532:65532
EXPOSE 8888
ENTRYPOINT ["deviceshare-scheduler"]
CMD ["--help"]
