package kit

import (
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ShareTemplate is a ResourceClaimTemplate of one request for a share of
// a hami-core GPU of deploy/dra's DeviceClass: `memory` (a quantity, e.g.
// "8Gi") and `cores` (percent of the SMs).
func ShareTemplate(name, memory, cores string) *resourcev1.ResourceClaimTemplate {
	return &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{
			Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
				Name: "gpu",
				Exactly: &resourcev1.ExactDeviceRequest{
					DeviceClassName: "hami-core.gpu.deviceshare.io",
					Capacity: &resourcev1.CapacityRequirements{Requests: map[resourcev1.QualifiedName]resource.Quantity{
						"memory": resource.MustParse(memory), "cores": resource.MustParse(cores)}},
				},
			}}},
		}},
	}
}
