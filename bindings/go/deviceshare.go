// Package deviceshare is the Go binding of deviceshare's C API
// (deviceshare/c/deviceshare.h, libdeviceshare_c.so): where GPU-sharing
// Kubernetes pods go, for schedulers written in Go.
//
// Objects travel as the text Kubernetes writes them (JSON or YAML); every
// failure is an *Error with a Code and a message naming the object and the
// field. "Does not fit" is not an error: it is a Decision with Placed
// false. A Scheduler's methods may be called from many goroutines at once.
//
// Where the C API is installed outside the compiler's default paths, point
// cgo at it, e.g. with the pkg-config file the install writes:
//
//	export CGO_CFLAGS="$(pkg-config --cflags deviceshare)"
//	export CGO_LDFLAGS="$(pkg-config --libs deviceshare) -Wl,-rpath,$(pkg-config --variable=libdir deviceshare)"
package deviceshare

/*
#cgo LDFLAGS: -ldeviceshare_c
#include <stdlib.h>
#include <string.h>
#include "deviceshare/c/deviceshare.h"
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"unsafe"
)

// ABIVersion is the C API's ABI version of the library loaded; the
// binding was written for the header's, and refuses another (NewScheduler).
func ABIVersion() int { return int(C.deviceshare_abi_version()) }

// Version is the library's release, e.g. "0.1.0".
func Version() string { return C.GoString(C.deviceshare_version()) }

// ParseDocuments is the documents of a YAML or JSON text (several YAML
// documents, a List's items, or one object), each as JSON.
func ParseDocuments(text string) ([]json.RawMessage, error) {
	cText := C.CString(text)
	defer C.free(unsafe.Pointer(cText))
	answer, err := callForAnswer(func(answer, message **C.char) C.deviceshare_code {
		return C.deviceshare_parse_documents(cText, answer, message)
	})
	if err != nil {
		return nil, err
	}
	var objects []json.RawMessage
	return objects, decodeAnswer(answer, &objects)
}

// Scheduler is a deviceshare scheduler: the cluster's nodes and pods and
// the decision path over them. Its methods are safe for concurrent use;
// Close waits for the calls in flight.
type Scheduler struct {
	mu     sync.RWMutex // held shared by calls, exclusively by Close
	handle *C.deviceshare_scheduler
}

// NewScheduler makes a scheduler from a deviceshare config (YAML or JSON,
// the `scheduler:` and `nvidia:` sections or a ConfigMap holding them);
// "" for the defaults. Every built-in backend and policy is registered.
func NewScheduler(config string) (*Scheduler, error) {
	if got := ABIVersion(); got != C.DEVICESHARE_ABI_VERSION {
		return nil, &Error{Code: FailedPrecondition, Message: fmt.Sprintf(
			"libdeviceshare_c has ABI version %d, this binding was built "+
				"for %d", got, C.DEVICESHARE_ABI_VERSION)}
	}
	cConfig := C.CString(config)
	defer C.free(unsafe.Pointer(cConfig))
	s := &Scheduler{}
	if err := call(func(message **C.char) C.deviceshare_code {
		return C.deviceshare_scheduler_create(cConfig, &s.handle, message)
	}); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(s, (*Scheduler).Close)
	return s, nil
}

// Close frees the scheduler; later calls fail with FailedPrecondition.
// Closing twice is fine.
func (s *Scheduler) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handle == nil {
		return nil
	}
	code := C.deviceshare_scheduler_destroy(s.handle)
	s.handle = nil
	runtime.SetFinalizer(s, nil)
	if code != C.DEVICESHARE_OK {
		return &Error{Code: Code(code), Message: "destroying the scheduler"}
	}
	return nil
}

// UpsertNodes adds or replaces nodes: Node objects with a registration
// annotation of either dialect (hami.io/node-nvidia-register,
// volcano.sh/node-vgpu-register), a List of them, or the inventory form
// (`nodes:` with model, memory_mib, count, ... per GPU).
func (s *Scheduler) UpsertNodes(nodes string) (UpsertResult, error) {
	var result UpsertResult
	err := s.withHandle(func(h *C.deviceshare_scheduler) error {
		cNodes := C.CString(nodes)
		defer C.free(unsafe.Pointer(cNodes))
		answer, err := callForAnswer(func(answer, message **C.char) C.deviceshare_code {
			return C.deviceshare_upsert_nodes(h, cNodes, answer, message)
		})
		if err != nil {
			return err
		}
		return decodeAnswer(answer, &result)
	})
	return result, err
}

// UpsertNode adds or replaces one node (a Node object, JSON or YAML) and
// returns the pods that no longer fit it.
func (s *Scheduler) UpsertNode(node string) (displaced []string, err error) {
	result, err := s.UpsertNodes(node)
	return result.Displaced, err
}

// RemoveNode forgets a node and the pods on it.
func (s *Scheduler) RemoveNode(name string) error {
	return s.withHandle(func(h *C.deviceshare_scheduler) error {
		cName := C.CString(name)
		defer C.free(unsafe.Pointer(cName))
		return call(func(message **C.char) C.deviceshare_code {
			return C.deviceshare_remove_node(h, cName, message)
		})
	})
}

// UpsertObject adds or replaces a DRA object (resource.k8s.io/v1): a
// DeviceClass, a node-local ResourceSlice or a ResourceClaim.
func (s *Scheduler) UpsertObject(object string) error {
	return s.withHandle(func(h *C.deviceshare_scheduler) error {
		cObject := C.CString(object)
		defer C.free(unsafe.Pointer(cObject))
		return call(func(message **C.char) C.deviceshare_code {
			return C.deviceshare_upsert_object(h, cObject, message)
		})
	})
}

// RemoveObject forgets a DRA object by kind ("DeviceClass",
// "ResourceSlice", "ResourceClaim") and name ("namespace/name" for a
// claim).
func (s *Scheduler) RemoveObject(kind, name string) error {
	return s.withHandle(func(h *C.deviceshare_scheduler) error {
		cKind := C.CString(kind)
		defer C.free(unsafe.Pointer(cKind))
		cName := C.CString(name)
		defer C.free(unsafe.Pointer(cName))
		return call(func(message **C.char) C.deviceshare_code {
			return C.deviceshare_remove_object(h, cKind, cName, message)
		})
	})
}

// Filter is the filter step: a verdict per node of nodes (nil: every
// node), in that order.
func (s *Scheduler) Filter(pod string, nodes []string) ([]Verdict, error) {
	var verdicts []Verdict
	err := s.withHandle(func(h *C.deviceshare_scheduler) error {
		names, err := json.Marshal(nodes)
		if err != nil {
			return err
		}
		if nodes == nil {
			names = []byte("[]")
		}
		cPod := C.CString(pod)
		defer C.free(unsafe.Pointer(cPod))
		cNames := C.CString(string(names))
		defer C.free(unsafe.Pointer(cNames))
		answer, err := callForAnswer(func(answer, message **C.char) C.deviceshare_code {
			return C.deviceshare_filter(h, cPod, cNames, answer, message)
		})
		if err != nil {
			return err
		}
		return decodeAnswer(answer, &verdicts)
	})
	return verdicts, err
}

// Score is the node policy's score (0..100) of a node the pod fits; a
// node it does not fit is a FailedPrecondition error with the reason.
func (s *Scheduler) Score(pod, node string) (int, error) {
	var score C.int
	err := s.withHandle(func(h *C.deviceshare_scheduler) error {
		cPod := C.CString(pod)
		defer C.free(unsafe.Pointer(cPod))
		cNode := C.CString(node)
		defer C.free(unsafe.Pointer(cNode))
		return call(func(message **C.char) C.deviceshare_code {
			return C.deviceshare_score(h, cPod, cNode, &score, message)
		})
	})
	return int(score), err
}

// Schedule decides where the pod goes, among options' candidates (nil
// options: every node), and reserves it there. A pod already placed is an
// AlreadyExists error.
func (s *Scheduler) Schedule(pod string, options *ScheduleOptions) (*Decision, error) {
	var decision *Decision
	err := s.withHandle(func(h *C.deviceshare_scheduler) error {
		var cOptions *C.char
		if options != nil {
			text, err := json.Marshal(options)
			if err != nil {
				return err
			}
			cOptions = C.CString(string(text))
			defer C.free(unsafe.Pointer(cOptions))
		}
		cPod := C.CString(pod)
		defer C.free(unsafe.Pointer(cPod))
		answer, err := callForAnswer(func(answer, message **C.char) C.deviceshare_code {
			return C.deviceshare_schedule(h, cPod, cOptions, answer, message)
		})
		if err != nil {
			return err
		}
		decision, err = decodeDecision(answer)
		return err
	})
	return decision, err
}

// Allocate is the decision on one node the host chose, reserved there.
func (s *Scheduler) Allocate(pod, node string) (*Decision, error) {
	var decision *Decision
	err := s.withHandle(func(h *C.deviceshare_scheduler) error {
		cPod := C.CString(pod)
		defer C.free(unsafe.Pointer(cPod))
		cNode := C.CString(node)
		defer C.free(unsafe.Pointer(cNode))
		answer, err := callForAnswer(func(answer, message **C.char) C.deviceshare_code {
			return C.deviceshare_allocate(h, cPod, cNode, answer, message)
		})
		if err != nil {
			return err
		}
		decision, err = decodeDecision(answer)
		return err
	})
	return decision, err
}

// Bind records a pod bound elsewhere, from the allocation record its
// annotations carry (either dialect); a pod without one is a
// FailedPrecondition error.
func (s *Scheduler) Bind(pod, node string) error {
	return s.withHandle(func(h *C.deviceshare_scheduler) error {
		cPod := C.CString(pod)
		defer C.free(unsafe.Pointer(cPod))
		cNode := C.CString(node)
		defer C.free(unsafe.Pointer(cNode))
		return call(func(message **C.char) C.deviceshare_code {
			return C.deviceshare_bind(h, cPod, cNode, message)
		})
	})
}

// Release forgets a pod (its metadata.uid, or "namespace/name" for a pod
// without one) and frees its shares. Releasing an unknown pod is fine.
func (s *Scheduler) Release(podUID string) error {
	return s.withHandle(func(h *C.deviceshare_scheduler) error {
		cUID := C.CString(podUID)
		defer C.free(unsafe.Pointer(cUID))
		return call(func(message **C.char) C.deviceshare_code {
			return C.deviceshare_release(h, cUID, message)
		})
	})
}

// Usage is the cluster's GPU usage now.
func (s *Scheduler) Usage() (Usage, error) {
	var usage Usage
	err := s.withHandle(func(h *C.deviceshare_scheduler) error {
		answer, err := callForAnswer(func(answer, message **C.char) C.deviceshare_code {
			return C.deviceshare_usage(h, answer, message)
		})
		if err != nil {
			return err
		}
		return decodeAnswer(answer, &usage)
	})
	return usage, err
}

// withHandle runs f on the open handle, holding Close off until it ends.
func (s *Scheduler) withHandle(f func(*C.deviceshare_scheduler) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.handle == nil {
		return &Error{Code: FailedPrecondition, Message: "the scheduler is closed"}
	}
	return f(s.handle)
}

// call runs one C call and turns its code and message into an error.
func call(f func(message **C.char) C.deviceshare_code) error {
	var message *C.char
	code := f(&message)
	if code == C.DEVICESHARE_OK {
		return nil
	}
	text := ""
	if message != nil {
		text = C.GoString(message)
		C.deviceshare_free(message)
	}
	return &Error{Code: Code(code), Message: text}
}

// callForAnswer runs one C call that answers a string, and copies and
// frees the answer.
func callForAnswer(f func(answer, message **C.char) C.deviceshare_code) ([]byte, error) {
	var answer *C.char
	if err := call(func(message **C.char) C.deviceshare_code {
		return f(&answer, message)
	}); err != nil {
		return nil, err
	}
	if answer == nil {
		return nil, nil
	}
	defer C.deviceshare_free(answer)
	return C.GoBytes(unsafe.Pointer(answer), C.int(C.strlen(answer))), nil
}

func decodeAnswer(text []byte, into interface{}) error {
	if err := json.Unmarshal(text, into); err != nil {
		return &Error{Code: Internal, Message: fmt.Sprintf(
			"the C API's answer does not decode: %v", err)}
	}
	return nil
}

func decodeDecision(text []byte) (*Decision, error) {
	decision := &Decision{Raw: json.RawMessage(text)}
	if err := json.Unmarshal(text, decision); err != nil {
		return nil, &Error{Code: Internal, Message: fmt.Sprintf(
			"the C API's decision does not decode: %v", err)}
	}
	return decision, nil
}
