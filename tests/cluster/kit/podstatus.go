package kit

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
)

// ReportRunning writes the status kubelet's status manager writes once a
// pod's containers have started and passed their readiness probes: phase
// Running, the Initialized, ContainersReady and Ready conditions, each
// container running. The DeviceKubelet only admits pods (there are no
// containers), so without this every pod stays Pending and unready, and
// what depends on readiness behaves as it never does in a cluster: the
// disruption controller counts no pod healthy, and the Eviction API
// ignores PodDisruptionBudgets for Pending pods altogether.
//
// Kubelet starts containers only after admission, so this refuses a pod
// whose node agent has not yet marked its devices handed over (bind-phase
// success in either dialect); call it again until it is.
func (k *Kit) ReportRunning(ctx context.Context, namespace, name string) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		pod, err := k.Client.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if pod.Spec.NodeName == "" {
			return fmt.Errorf("pod %s/%s is not bound", namespace, name)
		}
		phase := pod.Annotations["hami.io/bind-phase"]
		if phase == "" {
			phase = pod.Annotations["volcano.sh/bind-phase"]
		}
		if phase != "success" {
			return fmt.Errorf("pod %s/%s not admitted yet (bind-phase %q)", namespace, name, phase)
		}
		now := metav1.Now()
		status := &pod.Status
		status.Phase = corev1.PodRunning
		status.HostIP = "127.0.0.1"
		status.HostIPs = []corev1.HostIP{{IP: "127.0.0.1"}}
		if status.StartTime == nil {
			status.StartTime = &now
		}
		for _, kind := range []corev1.PodConditionType{corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
			setCondition(status, corev1.PodCondition{Type: kind, Status: corev1.ConditionTrue, LastTransitionTime: now})
		}
		status.ContainerStatuses = nil
		for _, container := range pod.Spec.Containers {
			status.ContainerStatuses = append(status.ContainerStatuses, corev1.ContainerStatus{
				Name: container.Name, Image: container.Image, Ready: true, Started: new(true),
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: now}}})
		}
		_, err = k.Client.CoreV1().Pods(namespace).UpdateStatus(ctx, pod, metav1.UpdateOptions{})
		return err
	})
}

// setCondition replaces the condition of the same type, or adds it.
func setCondition(status *corev1.PodStatus, condition corev1.PodCondition) {
	for i := range status.Conditions {
		if status.Conditions[i].Type == condition.Type {
			status.Conditions[i] = condition
			return
		}
	}
	status.Conditions = append(status.Conditions, condition)
}
