package deviceshare

/*
#include <stdlib.h>
#include "deviceshare/c/deviceshare.h"
*/
import "C"

import (
	"unsafe"
)

// FilterAllNodes is FilterNode for every node the scheduler knows, in one
// call, by node name: what a framework plugin asks once per pod in
// PreFilter so that its Filter and Score per node are map lookups instead
// of calls into C (each of which takes the scheduler's and the handles'
// locks, contended when the host filters nodes in parallel). Pure; the
// best fitting node's allocation is remembered for the AllocatePrepared
// that follows. A node missing from the map is one the scheduler does
// not know (FilterNode answers NodeUnknown).
func (s *Scheduler) FilterAllNodes(pod *PreparedPod) (map[string]Verdict, error) {
	var verdicts map[string]Verdict
	err := s.withPod(pod, func(h *C.deviceshare_scheduler, ph *C.deviceshare_pod) error {
		var block *C.deviceshare_node_verdict
		var count C.size_t
		if err := call(func(message **C.char) C.deviceshare_code {
			return C.deviceshare_pod_filter_all(h, ph, &block, &count, message)
		}); err != nil {
			return err
		}
		defer C.deviceshare_verdicts_free(block)
		verdicts = make(map[string]Verdict, int(count))
		if count == 0 {
			return nil
		}
		for _, v := range unsafe.Slice(block, int(count)) {
			verdict := Verdict{Node: C.GoString(v.node), Fits: v.fits != 0, Score: int(v.score),
				Code: reasonCode(v.code), Unresolvable: v.unresolvable != 0}
			if v.reason != nil {
				verdict.Reason = C.GoString(v.reason)
			}
			verdicts[verdict.Node] = verdict
		}
		return nil
	})
	return verdicts, err
}

// AllocatePrepared is Allocate for a prepared pod: the pod as it was
// prepared, not parsed again.
func (s *Scheduler) AllocatePrepared(pod *PreparedPod, node string) (*Decision, error) {
	var decision *Decision
	err := s.withPod(pod, func(h *C.deviceshare_scheduler, ph *C.deviceshare_pod) error {
		cNode := C.CString(node)
		defer C.free(unsafe.Pointer(cNode))
		answer, err := callForAnswer(func(answer, message **C.char) C.deviceshare_code {
			return C.deviceshare_pod_allocate(h, ph, cNode, answer, message)
		})
		if err != nil {
			return err
		}
		decision, err = decodeDecision(answer)
		return err
	})
	return decision, err
}
