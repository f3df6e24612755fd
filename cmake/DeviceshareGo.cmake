# The Go toolchain the Go hosts need: Kubernetes 1.37's modules need Go >=
# 1.26 (.ci/install-deps installs it under /usr/local/go). Sets
# DEVICESHARE_GO (the go program, or empty) and DEVICESHARE_GO_OK (TRUE
# when it is new enough); without it the Go hosts are not built and their
# tests skip (77).
find_program(DEVICESHARE_GO go PATHS /usr/local/go/bin)
set(DEVICESHARE_GO_OK FALSE)
if(DEVICESHARE_GO)
  execute_process(COMMAND ${DEVICESHARE_GO} env GOVERSION
                  OUTPUT_VARIABLE DEVICESHARE_GO_VERSION
                  OUTPUT_STRIP_TRAILING_WHITESPACE)
  string(REGEX MATCH "^go1\\.([0-9]+)" _ "${DEVICESHARE_GO_VERSION}")
  if(CMAKE_MATCH_1 AND CMAKE_MATCH_1 GREATER_EQUAL 26)
    set(DEVICESHARE_GO_OK TRUE)
  endif()
endif()
if(NOT DEVICESHARE_GO_OK)
  message(STATUS "deviceshare: Go >= 1.26 not found (${DEVICESHARE_GO_VERSION}): "
                 "deviceshare-kube-scheduler is not built and the e2e tests "
                 "against the real control plane skip")
endif()

# Kubernetes' programs, and those built on its modules, are stamped as
# Kubernetes' own build does (hack/lib/version.sh), so they report v1.37.2
# and not v0.0.0-master to each other.
set(DEVICESHARE_K8S_VERSION_LDFLAGS "")
foreach(pkg k8s.io/component-base/version k8s.io/client-go/pkg/version)
  string(APPEND DEVICESHARE_K8S_VERSION_LDFLAGS
         " -X ${pkg}.gitVersion=v1.37.2 -X ${pkg}.gitMajor=1"
         " -X ${pkg}.gitMinor=37 -X ${pkg}.gitTreeState=clean")
endforeach()
string(STRIP "${DEVICESHARE_K8S_VERSION_LDFLAGS}" DEVICESHARE_K8S_VERSION_LDFLAGS)
