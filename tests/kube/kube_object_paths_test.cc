// The API paths of kube/object_paths.h, the resource.k8s.io ones in
// particular.
#include "deviceshare/kube/object_paths.h"
#include "gtest/gtest.h"

namespace deviceshare::kube {
namespace {

TEST(ObjectPathsTest, CorePaths) {
  EXPECT_EQ(PodsPath(), "/api/v1/pods");
  EXPECT_EQ(PodPath("ns", "p"), "/api/v1/namespaces/ns/pods/p");
  EXPECT_EQ(PodStatusPath("ns", "p"), "/api/v1/namespaces/ns/pods/p/status");
  EXPECT_EQ(NodePath("n1"), "/api/v1/nodes/n1");
}

TEST(ObjectPathsTest, ResourceSlicesAreClusterScoped) {
  EXPECT_EQ(ResourceSlicesPath(), "/apis/resource.k8s.io/v1/resourceslices");
  EXPECT_EQ(ResourceSlicePath("node-1-gpu.deviceshare.io-abcde"),
            "/apis/resource.k8s.io/v1/resourceslices/"
            "node-1-gpu.deviceshare.io-abcde");
}

TEST(ObjectPathsTest, ResourceClaimsAreNamespaced) {
  EXPECT_EQ(ResourceClaimsPath(), "/apis/resource.k8s.io/v1/resourceclaims");
  EXPECT_EQ(ResourceClaimsPath("team"),
            "/apis/resource.k8s.io/v1/namespaces/team/resourceclaims");
  EXPECT_EQ(ResourceClaimPath("team", "c1"),
            "/apis/resource.k8s.io/v1/namespaces/team/resourceclaims/c1");
  EXPECT_EQ(ResourceClaimStatusPath("team", "c1"),
            "/apis/resource.k8s.io/v1/namespaces/team/resourceclaims/c1/"
            "status");
}

TEST(ObjectPathsTest, DeviceClasses) {
  EXPECT_EQ(DeviceClassesPath(), "/apis/resource.k8s.io/v1/deviceclasses");
  EXPECT_EQ(DeviceClassPath("gpu.deviceshare.io"),
            "/apis/resource.k8s.io/v1/deviceclasses/gpu.deviceshare.io");
}

TEST(ObjectPathsTest, NamesAreEscapedAsOneSegment) {
  EXPECT_EQ(ResourceSlicePath("a/../b"),
            "/apis/resource.k8s.io/v1/resourceslices/a%2F..%2Fb");
  EXPECT_EQ(ResourceClaimPath("n s", "c?x=1"),
            "/apis/resource.k8s.io/v1/namespaces/n%20s/resourceclaims/"
            "c%3Fx%3D1");
  EXPECT_EQ(ResourceClaimStatusPath("ns", "c#1"),
            "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims/c%231/"
            "status");
  EXPECT_EQ(DeviceClassPath("x/y"),
            "/apis/resource.k8s.io/v1/deviceclasses/x%2Fy");
}

TEST(ObjectPathsTest, QueriesAppendToTheNewPaths) {
  EXPECT_EQ(WithQuery(ResourceSlicesPath(),
                      {{"fieldSelector", "spec.nodeName=n1,spec.driver=d"}}),
            "/apis/resource.k8s.io/v1/resourceslices?fieldSelector="
            "spec.nodeName%3Dn1%2Cspec.driver%3Dd");
}

}  // namespace
}  // namespace deviceshare::kube
