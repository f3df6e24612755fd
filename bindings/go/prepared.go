package deviceshare

/*
#include <stdlib.h>
#include "deviceshare/c/deviceshare.h"
*/
import "C"

import (
	"runtime"
	"sync"
	"unsafe"
)

// PreparedPod is a pod parsed once for the per-node calls FilterNode and
// ScoreNode: what a framework plugin makes in PreFilter and uses in Filter
// and Score for every node, so that no call parses the pod's text or
// encodes JSON. Safe for concurrent use; Close it when the pod's cycle
// ends (a finalizer frees it otherwise).
type PreparedPod struct {
	mu     sync.RWMutex // held shared by calls, exclusively by Close
	handle *C.deviceshare_pod
}

// PreparePod parses a pod (JSON or YAML, either dialect) with the
// scheduler's config.
func (s *Scheduler) PreparePod(pod string) (*PreparedPod, error) {
	prepared := &PreparedPod{}
	err := s.withHandle(func(h *C.deviceshare_scheduler) error {
		cPod := C.CString(pod)
		defer C.free(unsafe.Pointer(cPod))
		return call(func(message **C.char) C.deviceshare_code {
			return C.deviceshare_pod_create(h, cPod, &prepared.handle, message)
		})
	})
	if err != nil {
		return nil, err
	}
	runtime.SetFinalizer(prepared, (*PreparedPod).Close)
	return prepared, nil
}

// Close frees the pod; later calls with it fail with FailedPrecondition.
// Closing twice is fine.
func (p *PreparedPod) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.handle == nil {
		return nil
	}
	code := C.deviceshare_pod_destroy(p.handle)
	p.handle = nil
	runtime.SetFinalizer(p, nil)
	if code != C.DEVICESHARE_OK {
		return &Error{Code: Code(code), Message: "destroying the prepared pod"}
	}
	return nil
}

// FilterNode is the filter step for one node: a verdict (a node the
// scheduler does not know is one too, NodeUnknown).
func (s *Scheduler) FilterNode(pod *PreparedPod, node string) (Verdict, error) {
	return s.FilterNodeWithout(pod, node, nil)
}

// FilterNodeWithout is FilterNode as if the pods `released` (their
// metadata.uid) were gone from the node: what a preemption simulation
// asks (kube-scheduler's PreFilterExtensions.RemovePod). A uid of a pod
// not placed on that node is ignored; nothing is released for real.
func (s *Scheduler) FilterNodeWithout(pod *PreparedPod, node string, released []string) (Verdict, error) {
	verdict := Verdict{Node: node}
	err := s.withPod(pod, func(h *C.deviceshare_scheduler, ph *C.deviceshare_pod) error {
		cNode := C.CString(node)
		defer C.free(unsafe.Pointer(cNode))
		var cReleased **C.char
		if len(released) > 0 {
			// A C array of C strings: cgo may not pass Go memory holding
			// Go pointers.
			array := (*[1 << 28]*C.char)(C.malloc(C.size_t(len(released)) * C.size_t(unsafe.Sizeof((*C.char)(nil)))))[:len(released):len(released)]
			for i, uid := range released {
				array[i] = C.CString(uid)
			}
			defer func() {
				for _, p := range array {
					C.free(unsafe.Pointer(p))
				}
				C.free(unsafe.Pointer(&array[0]))
			}()
			cReleased = &array[0]
		}
		var fits, score, unresolvable C.int
		var code *C.char
		var reason *C.char
		if err := call(func(message **C.char) C.deviceshare_code {
			if cReleased == nil {
				return C.deviceshare_pod_filter_node(h, ph, cNode, &fits, &score, &code, &unresolvable, &reason, message)
			}
			return C.deviceshare_pod_filter_node_without(h, ph, cNode, cReleased, C.size_t(len(released)),
				&fits, &score, &code, &unresolvable, &reason, message)
		}); err != nil {
			return err
		}
		verdict.Fits = fits != 0
		verdict.Score = int(score)
		verdict.Code = reasonCode(code)
		verdict.Unresolvable = unresolvable != 0
		if reason != nil {
			verdict.Reason = C.GoString(reason)
			C.deviceshare_free(reason)
		}
		return nil
	})
	return verdict, err
}

// WantsDevices says whether the pod asks for devices at all: a GPU of
// either dialect in any container, or a DRA ResourceClaim. A host skips
// FilterNode and ScoreNode for a pod that does not (kube-scheduler's
// PreFilter answers Skip).
func (p *PreparedPod) WantsDevices() (bool, error) {
	if p == nil {
		return false, &Error{Code: InvalidArgument, Message: "pod: nil"}
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.handle == nil {
		return false, &Error{Code: FailedPrecondition, Message: "the prepared pod is closed"}
	}
	var wants C.int
	if code := C.deviceshare_pod_wants_devices(p.handle, &wants); code != C.DEVICESHARE_OK {
		return false, &Error{Code: Code(code), Message: "asking whether the pod wants devices"}
	}
	return wants != 0, nil
}

// ScoreNode is Score for a prepared pod.
func (s *Scheduler) ScoreNode(pod *PreparedPod, node string) (int, error) {
	var score C.int
	err := s.withPod(pod, func(h *C.deviceshare_scheduler, ph *C.deviceshare_pod) error {
		cNode := C.CString(node)
		defer C.free(unsafe.Pointer(cNode))
		return call(func(message **C.char) C.deviceshare_code {
			return C.deviceshare_pod_score_node(h, ph, cNode, &score, message)
		})
	})
	return int(score), err
}

func (s *Scheduler) withPod(pod *PreparedPod, f func(*C.deviceshare_scheduler, *C.deviceshare_pod) error) error {
	if pod == nil {
		return &Error{Code: InvalidArgument, Message: "pod: nil"}
	}
	return s.withHandle(func(h *C.deviceshare_scheduler) error {
		pod.mu.RLock()
		defer pod.mu.RUnlock()
		if pod.handle == nil {
			return &Error{Code: FailedPrecondition, Message: "the prepared pod is closed"}
		}
		return f(h, pod.handle)
	})
}

// reasonCodes holds the Go string of each reason code the library has
// answered, by the C string's address: the codes are static strings in
// the library, a handful in all, so FilterNode copies none per call.
var reasonCodes sync.Map // uintptr -> string

func reasonCode(code *C.char) string {
	if code == nil {
		return ""
	}
	key := uintptr(unsafe.Pointer(code))
	if name, ok := reasonCodes.Load(key); ok {
		return name.(string)
	}
	name := C.GoString(code)
	reasonCodes.Store(key, name)
	return name
}
