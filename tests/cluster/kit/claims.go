package kit

import (
	"fmt"

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

// MIGTemplate is a ResourceClaimTemplate of one request for a MIG
// partition of deploy/dra's DeviceClass, of one profile (e.g. "1g.10gb",
// the agent's profile attribute).
func MIGTemplate(name, profile string) *resourcev1.ResourceClaimTemplate {
	return &resourcev1.ResourceClaimTemplate{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourcev1.ResourceClaimTemplateSpec{Spec: resourcev1.ResourceClaimSpec{
			Devices: resourcev1.DeviceClaim{Requests: []resourcev1.DeviceRequest{{
				Name: "mig",
				Exactly: &resourcev1.ExactDeviceRequest{
					DeviceClassName: "mig.gpu.deviceshare.io",
					Selectors: []resourcev1.DeviceSelector{{CEL: &resourcev1.CELDeviceSelector{
						Expression: fmt.Sprintf(`device.attributes["gpu.deviceshare.io"].profile == %q`, profile)}}},
				},
			}}},
		}},
	}
}
