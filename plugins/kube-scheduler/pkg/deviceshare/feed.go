package deviceshare

import (
	"fmt"
	"maps"
	"sync"

	v1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	ds "github.com/deviceshare/deviceshare/bindings/go"
)

// feed keeps the library's cluster state in step with the scheduler's
// shared informers: Nodes (their GPU registration), assigned Pods (their
// allocation records), DRA DeviceClasses, ResourceSlices and
// ResourceClaims, and ResourceQuotas (GPU quota). The handlers run on the
// informers' goroutines; the library is safe for that.
type feed struct {
	logger        klog.Logger
	lib           *ds.Scheduler
	registrations []cache.ResourceEventHandlerRegistration

	mu sync.Mutex
	// applied is the resourceVersion of each node last fed: the queueing
	// hints feed an event's object before they answer (so that the pod
	// they requeue is tried against it), once per pending pod; this makes
	// the repeats free.
	applied map[string]string
}

// startFeed adds the handlers. The scheduler starts the informers after
// the plugins are made; each handler sees every object once before synced
// says so.
func startFeed(logger klog.Logger, lib *ds.Scheduler, factory informers.SharedInformerFactory) (*feed, error) {
	f := &feed{logger: logger.WithName(Name), lib: lib, applied: map[string]string{}}
	handlers := []struct {
		informer cache.SharedIndexInformer
		handler  cache.ResourceEventHandler
	}{
		{factory.Core().V1().Nodes().Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc: f.onNode, UpdateFunc: f.onNodeUpdate, DeleteFunc: f.onNodeDelete}},
		{factory.Core().V1().Pods().Informer(), cache.ResourceEventHandlerFuncs{
			AddFunc: f.onPod, UpdateFunc: f.onPodUpdate, DeleteFunc: f.onPodDelete}},
		{factory.Resource().V1().DeviceClasses().Informer(), f.objectHandler(deviceClassKind)},
		{factory.Resource().V1().ResourceSlices().Informer(), f.objectHandler(resourceSliceKind)},
		{factory.Resource().V1().ResourceClaims().Informer(), f.objectHandler(resourceClaimKind)},
		{factory.Core().V1().ResourceQuotas().Informer(), f.objectHandler(resourceQuotaKind)},
	}
	for _, h := range handlers {
		registration, err := h.informer.AddEventHandler(h.handler)
		if err != nil {
			return nil, fmt.Errorf("%s: watching: %w", Name, err)
		}
		f.registrations = append(f.registrations, registration)
	}
	return f, nil
}

// synced says whether every handler has seen its informer's first list.
func (f *feed) synced() bool {
	for _, registration := range f.registrations {
		if !registration.HasSynced() {
			return false
		}
	}
	return true
}

func (f *feed) onNode(object interface{}) {
	node, ok := object.(*v1.Node)
	if !ok {
		return
	}
	f.mu.Lock()
	fresh := f.applied[node.Name] != node.ResourceVersion || node.ResourceVersion == ""
	f.applied[node.Name] = node.ResourceVersion
	f.mu.Unlock()
	if !fresh {
		return
	}
	text, err := objectJSON(node, nodeKind)
	if err != nil {
		f.logger.Error(err, "Node not fed to the library", "node", node.Name)
		return
	}
	displaced, err := f.lib.UpsertNode(text)
	switch {
	case ds.CodeOf(err) == ds.NotFound:
		// No registration (any more): the node offers no shareable GPU;
		// its DRA devices, if any, come from its ResourceSlices.
		f.removeNode(node.Name)
	case err != nil:
		f.logger.Error(err, "Node registration rejected", "node", node.Name)
	}
	for _, pod := range displaced {
		f.logger.Info("Pod no longer fits its node's new inventory; kept off the ledger", "pod", pod, "node", node.Name)
	}
}

// onNodeUpdate re-reads a node whose annotations or labels changed; a
// status update alone (conditions, heartbeats) cannot change its GPUs.
func (f *feed) onNodeUpdate(oldObject, newObject interface{}) {
	oldNode, okOld := oldObject.(*v1.Node)
	newNode, okNew := newObject.(*v1.Node)
	if okOld && okNew && maps.Equal(oldNode.Annotations, newNode.Annotations) &&
		maps.Equal(oldNode.Labels, newNode.Labels) {
		return
	}
	f.onNode(newObject)
}

func (f *feed) onNodeDelete(object interface{}) {
	if node, ok := unwrap(object).(*v1.Node); ok {
		f.removeNode(node.Name)
	}
}

func (f *feed) removeNode(name string) {
	f.mu.Lock()
	delete(f.applied, name)
	f.mu.Unlock()
	if err := f.lib.RemoveNode(name); err != nil && ds.CodeOf(err) != ds.NotFound {
		f.logger.Error(err, "Removing node", "node", name)
	}
}

// onPod records a pod bound with an allocation record (after a restart,
// or bound by another scheduler) and releases a pod that has finished.
// A pod this plugin reserved is recorded already; recording it again
// changes nothing.
func (f *feed) onPod(object interface{}) {
	pod, ok := object.(*v1.Pod)
	if !ok {
		return
	}
	if pod.Status.Phase == v1.PodSucceeded || pod.Status.Phase == v1.PodFailed {
		f.release(pod)
		return
	}
	if pod.Spec.NodeName == "" {
		return
	}
	text, err := objectJSON(pod, podKind)
	if err != nil {
		f.logger.Error(err, "Pod not fed to the library", "pod", klog.KObj(pod))
		return
	}
	switch err := f.lib.Bind(text, pod.Spec.NodeName); ds.CodeOf(err) {
	case ds.OK, ds.FailedPrecondition: // recorded, or it carries no record
	case ds.AlreadyExists:
		// Reserved here with more detail than the record carries (e.g. a
		// MIG slot's size): the reservation stays.
		f.logger.V(5).Info("Pod's record read back differs from its reservation", "pod", klog.KObj(pod), "err", err)
	default:
		f.logger.Error(err, "Pod's allocation record not recorded", "pod", klog.KObj(pod), "node", pod.Spec.NodeName)
	}
}

// onPodUpdate: only a change of node, phase or annotations can change
// what the library records.
func (f *feed) onPodUpdate(oldObject, newObject interface{}) {
	oldPod, okOld := oldObject.(*v1.Pod)
	newPod, okNew := newObject.(*v1.Pod)
	if okOld && okNew && oldPod.Spec.NodeName == newPod.Spec.NodeName &&
		oldPod.Status.Phase == newPod.Status.Phase &&
		maps.Equal(oldPod.Annotations, newPod.Annotations) {
		return
	}
	f.onPod(newObject)
}

func (f *feed) onPodDelete(object interface{}) {
	if pod, ok := unwrap(object).(*v1.Pod); ok {
		f.release(pod)
	}
}

func (f *feed) release(pod *v1.Pod) {
	if err := f.lib.Release(podKey(pod)); err != nil {
		f.logger.Error(err, "Releasing pod", "pod", klog.KObj(pod))
	}
}

var (
	deviceClassKind   = resourcev1.SchemeGroupVersion.WithKind("DeviceClass")
	resourceSliceKind = resourcev1.SchemeGroupVersion.WithKind("ResourceSlice")
	resourceClaimKind = resourcev1.SchemeGroupVersion.WithKind("ResourceClaim")
	resourceQuotaKind = v1.SchemeGroupVersion.WithKind("ResourceQuota")
)

// objectHandler feeds one kind of object the library takes whole
// (UpsertObject / RemoveObject). A rejected object is logged with the
// library's message (it names the field); the others stay served.
func (f *feed) objectHandler(kind schema.GroupVersionKind) cache.ResourceEventHandler {
	upsert := func(object interface{}) {
		if o, ok := object.(runtime.Object); ok {
			f.upsertObject(o, kind)
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    upsert,
		UpdateFunc: func(_, newObject interface{}) { upsert(newObject) },
		DeleteFunc: func(object interface{}) {
			o, ok := unwrap(object).(runtime.Object)
			if !ok {
				return
			}
			m := metaOf(o)
			name := m.GetName()
			if m.GetNamespace() != "" {
				name = m.GetNamespace() + "/" + name
			}
			if err := f.lib.RemoveObject(kind.Kind, name); err != nil && ds.CodeOf(err) != ds.NotFound {
				f.logger.Error(err, "Removing object", "kind", kind.Kind, "object", name)
			}
		},
	}
}

func (f *feed) upsertObject(o runtime.Object, kind schema.GroupVersionKind) {
	text, err := objectJSON(o, kind)
	if err == nil {
		err = f.lib.UpsertObject(text)
	}
	if err != nil {
		f.logger.Error(err, "Object not fed to the library", "kind", kind.Kind, "object", klog.KObj(metaOf(o)))
	}
}

// applyDRA feeds a DRA object of an event (nil for a delete, which the
// handler feeds).
func (f *feed) applyDRA(object interface{}) {
	switch o := object.(type) {
	case *resourcev1.DeviceClass:
		f.upsertObject(o, deviceClassKind)
	case *resourcev1.ResourceSlice:
		f.upsertObject(o, resourceSliceKind)
	case *resourcev1.ResourceClaim:
		f.upsertObject(o, resourceClaimKind)
	}
}

// unwrap is the object of a delete whose final state the informer missed.
func unwrap(object interface{}) interface{} {
	if tombstone, ok := object.(cache.DeletedFinalStateUnknown); ok {
		return tombstone.Obj
	}
	return object
}
