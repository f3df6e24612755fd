package deviceshare

import (
	"context"
	"encoding/json"
	"fmt"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/retry"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"

	ds "github.com/deviceshare/deviceshare/bindings/go"
)

// claimWrite is what PreBind did to one claim: added the pod to
// reservedFor and, for a claim this decision allocated, set its
// allocation.
type claimWrite struct {
	namespace, name string
	allocated       bool
}

// PreBindPreFlight: PreBind has work only for a pod the library placed
// with DRA claims.
func (pl *DeviceShare) PreBindPreFlight(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) (*fwk.PreBindPreFlightResult, *fwk.Status) {
	s, status := stateOf(state)
	if status != nil || s.decision == nil || len(s.decision.Claims) == 0 {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	return &fwk.PreBindPreFlightResult{AllowParallel: true}, nil
}

// PreBind writes the claims' status (while the pod holds their devices in
// the library, nobody else can be given them); the pod's own record goes
// on its Binding (Bind). Any failure is undone by Unreserve.
func (pl *DeviceShare) PreBind(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	s, status := stateOf(state)
	if status != nil {
		return status
	}
	if s.decision == nil {
		return nil
	}
	for _, claim := range s.decision.Claims {
		if err := pl.writeClaim(ctx, s, pod, claim); err != nil {
			return fwk.AsStatus(fmt.Errorf("%s: claim %s of pod %s: %w", Name, claim.Claim, klog.KObj(pod), err))
		}
	}
	return nil
}

// Bind binds a pod the library placed and its allocation record in one
// write: the Binding carries the record's annotations (in the pod's
// dialect), which the API server sets on the pod together with its node,
// as Volcano binds. So the node agent (or HAMi's or Volcano's device
// plugin) never sees the pod on the node without its record, and a failed
// bind leaves no record behind. Other pods: Skip, for DefaultBinder.
func (pl *DeviceShare) Bind(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	s, status := stateOf(state)
	if status != nil || s.decision == nil || len(s.decision.Annotations) == 0 {
		return fwk.NewStatus(fwk.Skip)
	}
	binding := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID,
			Annotations: s.decision.Annotations},
		Target: v1.ObjectReference{Kind: "Node", Name: nodeName},
	}
	if err := pl.client.CoreV1().Pods(pod.Namespace).Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
		return fwk.AsStatus(fmt.Errorf("%s: binding pod %s to %s with its allocation record: %w", Name, klog.KObj(pod), nodeName, err))
	}
	return nil
}

// writeClaim reserves one claim for the pod, allocating it when the
// library's decision did.
func (pl *DeviceShare) writeClaim(ctx context.Context, s *cycleState, pod *v1.Pod, claim ds.Claim) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(claim.Claim)
	if err != nil {
		return err
	}
	var allocation *resourcev1.AllocationResult
	if claim.New {
		allocation = &resourcev1.AllocationResult{}
		if err := json.Unmarshal(claim.Allocation, allocation); err != nil {
			return fmt.Errorf("the library's allocation does not read: %w", err)
		}
	}
	claims := pl.client.ResourceV1().ResourceClaims(namespace)
	consumer := resourcev1.ResourceClaimConsumerReference{Resource: "pods", Name: pod.Name, UID: pod.UID}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		current, err := claims.Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if allocation != nil {
			if current.Status.Allocation != nil {
				return fmt.Errorf("allocated meanwhile by someone else")
			}
			current.Status.Allocation = allocation
		}
		for _, reserved := range current.Status.ReservedFor {
			if reserved.UID == pod.UID {
				if allocation == nil {
					return nil
				}
				break
			}
		}
		current.Status.ReservedFor = appendConsumer(current.Status.ReservedFor, consumer)
		_, err = claims.UpdateStatus(ctx, current, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return err
	}
	s.claims = append(s.claims, claimWrite{namespace: namespace, name: name, allocated: allocation != nil})
	return nil
}

// undoPreBind removes what PreBind wrote: the pod from the claims'
// reservedFor and the allocations it made.
func (pl *DeviceShare) undoPreBind(ctx context.Context, s *cycleState, pod *v1.Pod) {
	logger := klog.FromContext(ctx)
	for _, write := range s.claims {
		claims := pl.client.ResourceV1().ResourceClaims(write.namespace)
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			current, err := claims.Get(ctx, write.name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			kept := current.Status.ReservedFor[:0]
			for _, reserved := range current.Status.ReservedFor {
				if reserved.UID != pod.UID {
					kept = append(kept, reserved)
				}
			}
			current.Status.ReservedFor = kept
			if write.allocated && len(kept) == 0 {
				current.Status.Allocation = nil
			}
			_, err = claims.UpdateStatus(ctx, current, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			// The claim keeps naming the pod; the claim controller drops
			// the entry once the pod is gone.
			logger.Error(err, "Undoing a claim's reservation", "claim", klog.KRef(write.namespace, write.name), "pod", klog.KObj(pod))
		}
	}
	s.claims = nil
}

func appendConsumer(list []resourcev1.ResourceClaimConsumerReference, consumer resourcev1.ResourceClaimConsumerReference) []resourcev1.ResourceClaimConsumerReference {
	for _, reserved := range list {
		if reserved.UID == consumer.UID {
			return list
		}
	}
	return append(list, consumer)
}

// metaOf is an object's metadata (an empty one for an object without).
func metaOf(object runtime.Object) metav1.Object {
	if m, err := meta.Accessor(object); err == nil {
		return m
	}
	return &metav1.ObjectMeta{}
}
