package deviceshare

import (
	"context"
	"maps"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
)

// EventsToRegister names the events that can give a pod this plugin
// rejected the room it lacked, each with a hint that skips the events of
// that kind which cannot:
//   - a Node added, or its annotations changed (the GPU registration and
//     the device cordon are annotations; a status or label update cannot
//     change a node's GPUs);
//   - an assigned pod that held devices deleted (a finished pod leaves the
//     scheduler's informer as a delete);
//   - DRA objects (a ResourceSlice or DeviceClass added or changed, a
//     ResourceClaim added, changed or deleted), for a pod with claims.
//
// A pod rejected for GPUs is not retried when an unrelated pod goes, nor
// on node heartbeats.
//
// A hint that answers Queue first feeds the event's object to the library
// (the feed's handler does the same, idempotently): the scheduler's queue
// and the feed are separate informer handlers, and without this the pod
// could be retried -- and refused again, waiting for the next event --
// before the feed released the deleted pod or read the new node.
func (pl *DeviceShare) EventsToRegister(_ context.Context) ([]fwk.ClusterEventWithHint, error) {
	return []fwk.ClusterEventWithHint{
		{Event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Add | fwk.UpdateNodeAnnotation},
			QueueingHintFn: pl.isSchedulableAfterNodeChange},
		{Event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.Delete},
			QueueingHintFn: pl.isSchedulableAfterPodDeleted},
		{Event: fwk.ClusterEvent{Resource: fwk.ResourceSlice, ActionType: fwk.Add | fwk.Update},
			QueueingHintFn: pl.isSchedulableAfterDRAChange},
		{Event: fwk.ClusterEvent{Resource: fwk.DeviceClass, ActionType: fwk.Add | fwk.Update},
			QueueingHintFn: pl.isSchedulableAfterDRAChange},
		{Event: fwk.ClusterEvent{Resource: fwk.ResourceClaim, ActionType: fwk.Add | fwk.Update | fwk.Delete},
			QueueingHintFn: pl.isSchedulableAfterDRAChange},
	}, nil
}

// isSchedulableAfterNodeChange: a new node may register GPUs; an updated
// one helps only if its annotations changed.
func (pl *DeviceShare) isSchedulableAfterNodeChange(logger klog.Logger, pod *v1.Pod, oldObject, newObject interface{}) (fwk.QueueingHint, error) {
	newNode, ok := newObject.(*v1.Node)
	if !ok {
		return fwk.Queue, nil
	}
	oldNode, ok := oldObject.(*v1.Node)
	if ok && oldNode != nil && maps.Equal(oldNode.Annotations, newNode.Annotations) {
		logger.V(5).Info("Node's annotations did not change: its GPUs did not", "pod", klog.KObj(pod), "node", newNode.Name)
		return fwk.QueueSkip, nil
	}
	pl.feed.onNode(newNode)
	return fwk.Queue, nil
}

// isSchedulableAfterPodDeleted: only a pod that held devices frees any.
func (pl *DeviceShare) isSchedulableAfterPodDeleted(logger klog.Logger, pod *v1.Pod, oldObject, _ interface{}) (fwk.QueueingHint, error) {
	deleted, ok := unwrap(oldObject).(*v1.Pod)
	if !ok {
		return fwk.Queue, nil
	}
	if deleted.Spec.NodeName == "" {
		return fwk.QueueSkip, nil
	}
	text, err := objectJSON(deleted, podKind)
	if err != nil {
		return fwk.Queue, err
	}
	prepared, err := pl.lib.PreparePod(text)
	if err != nil {
		// A pod whose request does not read holds nothing the library
		// charged.
		return fwk.QueueSkip, nil
	}
	defer prepared.Close()
	wants, err := prepared.WantsDevices()
	if err != nil {
		return fwk.Queue, err
	}
	if !wants {
		logger.V(5).Info("Deleted pod held no devices", "pod", klog.KObj(pod), "deleted", klog.KObj(deleted))
		return fwk.QueueSkip, nil
	}
	pl.feed.release(deleted)
	return fwk.Queue, nil
}

// isSchedulableAfterDRAChange: DRA objects matter to a pod with claims.
func (pl *DeviceShare) isSchedulableAfterDRAChange(logger klog.Logger, pod *v1.Pod, _, newObject interface{}) (fwk.QueueingHint, error) {
	if len(pod.Spec.ResourceClaims) == 0 {
		return fwk.QueueSkip, nil
	}
	pl.feed.applyDRA(newObject)
	return fwk.Queue, nil
}
