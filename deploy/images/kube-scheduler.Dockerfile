# deviceshare-kube-scheduler: the stock kube-scheduler (Kubernetes v1.37.2,
# built from its modules) with the DeviceShare plugin, which links
# libdeviceshare_c.so through cgo. The first container of the scheduler pod
# in the in-process kit (deploy/in-process). Built from the repository root:
#   deploy/images/build.sh          every image of the kit and its components
#   docker build -f deploy/images/kube-scheduler.Dockerfile \
#     -t deviceshare-kube-scheduler:0.1.0 .
#
# tests/install/image_packages_test.sh checks both stages' package lists,
# as for the other images.

# ---- build -------------------------------------------------------------------
# Debian 12 with Go 1.26 (Kubernetes 1.37's modules need it; Debian's
# golang-go is 1.19). Go modules come from the module proxy, pinned by
# plugins/kube-scheduler/go.sum.
FROM golang:1.26-bookworm AS build
# The C API's build packages (as scheduler.Dockerfile's: protobuf and gRPC
# are configure-time requirements of the whole tree).
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
# The C API, then the Go program against it (the version stamped as
# cmake/DeviceshareGo.cmake stamps it).
RUN cmake -S . -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release \
       -DDEVICESHARE_BUILD_TESTS=OFF -DDEVICESHARE_BUILD_BENCH=OFF \
    && cmake --build /build --target deviceshare_c \
    && mkdir -p /staging/usr/local/bin /staging/usr/local/lib \
    && cp -L /build/plugins/capi/libdeviceshare_c.so.4 /staging/usr/local/lib/ \
    && strip --strip-unneeded /staging/usr/local/lib/libdeviceshare_c.so.4 \
    && cd plugins/kube-scheduler \
    && v="-X k8s.io/component-base/version.gitVersion=v1.37.2 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=37 -X k8s.io/component-base/version.gitTreeState=clean" \
    && CGO_ENABLED=1 CGO_CFLAGS=-I/src/plugins/capi/include \
       CGO_LDFLAGS=-L/build/plugins/capi \
       go build -trimpath -ldflags "-s -w $v" \
         -o /staging/usr/local/bin/deviceshare-kube-scheduler .

# ---- runtime -----------------------------------------------------------------
FROM debian:12-slim AS runtime
# The packages of the shared libraries libdeviceshare_c.so loads (`ldd`);
# the Go program itself loads only libc and the C API.
RUN apt-get update \
    && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
       --no-install-recommends \
       libabsl20220623 libssl3 libyaml-cpp0.7 \
    && rm -rf /var/lib/apt/lists/*
# The C API under its SONAME (the ABI version, DEVICESHARE_ABI_VERSION),
# which is what the program loads.
COPY --from=build /staging/usr/local/lib/libdeviceshare_c.so.4 /usr/local/lib/
COPY --from=build /staging/usr/local/bin/deviceshare-kube-scheduler /usr/local/bin/
RUN ldconfig
# As the Deployment's runAsUser/runAsGroup (deploy/deployment.yaml).
USER 65532:65532
EXPOSE 10259
ENTRYPOINT ["deviceshare-kube-scheduler"]
