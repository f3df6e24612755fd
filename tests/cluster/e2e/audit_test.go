package e2e

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/deviceshare/deviceshare/tests/cluster/controlplane"
	"github.com/deviceshare/deviceshare/tests/cluster/kit"
)

// auditLog is kube-apiserver's own audit log of the writes that end pods
// (pod deletions and pods/eviction), each with who made it and what the
// API server answered: what a program did to pods, from the API server's
// side, not from the program's word.
type auditLog struct{ path string }

// auditEvent is the part of an audit.k8s.io/v1 Event the tests read.
type auditEvent struct {
	Stage string `json:"stage"`
	Verb  string `json:"verb"`
	User  struct {
		Username string `json:"username"`
	} `json:"user"`
	ObjectRef struct {
		Resource    string `json:"resource"`
		Subresource string `json:"subresource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
	} `json:"objectRef"`
	ResponseStatus struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
}

// withAudit turns on kube-apiserver's audit log (a log backend in the
// control plane's folder) for pod deletions and evictions.
func withAudit(log *auditLog) clusterOption {
	return func(p *controlplane.Options, _ *kit.Options) {
		policy := filepath.Join(p.Dir, "audit-policy.yaml")
		log.path = filepath.Join(p.Dir, "audit.log")
		// One event per request, when its answer is sent (ResponseComplete).
		text := `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
  - level: Metadata
    verbs: [create, delete, deletecollection]
    resources:
      - group: ""
        resources: [pods, pods/eviction]
  - level: None
`
		if err := os.WriteFile(policy, []byte(text), 0o600); err != nil {
			panic(err)
		}
		p.ExtraAPIServerArgs = append(p.ExtraAPIServerArgs,
			"--audit-policy-file="+policy, "--audit-log-path="+log.path,
			"--audit-log-format=json", "--audit-log-mode=blocking")
	}
}

// events are the logged requests that delete or evict a pod.
func (a *auditLog) events(t *testing.T) []auditEvent {
	t.Helper()
	file, err := os.Open(a.path)
	if os.IsNotExist(err) {
		return nil // nothing logged yet
	}
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	defer file.Close()
	var events []auditEvent
	scanner := bufio.NewScanner(file)
	scanner.Buffer(make([]byte, 1<<20), 1<<20)
	for scanner.Scan() {
		var event auditEvent
		if err := json.Unmarshal(scanner.Bytes(), &event); err != nil {
			t.Fatalf("audit log line %q: %v", scanner.Text(), err)
		}
		if event.ObjectRef.Resource != "pods" {
			continue
		}
		evict := event.Verb == "create" && event.ObjectRef.Subresource == "eviction"
		remove := event.Verb == "delete" && event.ObjectRef.Subresource == ""
		if evict || remove {
			events = append(events, event)
		}
	}
	if err := scanner.Err(); err != nil {
		t.Fatalf("audit log: %v", err)
	}
	return events
}

// serviceAccountUser is the user name a ServiceAccount's token stands for.
func serviceAccountUser(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}

func (e auditEvent) String() string {
	what := e.Verb
	if e.ObjectRef.Subresource != "" {
		what += " " + e.ObjectRef.Subresource
	}
	return strings.Join([]string{e.User.Username, what, e.ObjectRef.Namespace + "/" + e.ObjectRef.Name,
		"->", strconv.Itoa(e.ResponseStatus.Code)}, " ")
}
