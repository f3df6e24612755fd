package kit

import (
	"reflect"
	"testing"
)

func TestRewritePathsTakesTheLongestMount(t *testing.T) {
	mounts := map[string]string{"/run/deviceshare": "/x/run", "/run/deviceshare/mps/shm": "/x/shm",
		"/etc/deviceshare": "/x/etc"}
	cases := map[string]string{
		"--state-dir=/run/deviceshare":      "--state-dir=/x/run",
		"--mps-root=/run/deviceshare/mps":   "--mps-root=/x/run/mps",
		"/run/deviceshare/mps/shm/a":        "/x/shm/a",
		"--config=/etc/deviceshare/ds.yaml": "--config=/x/etc/ds.yaml",
		"/etc/deviceshare-other":            "/etc/deviceshare-other",
		"--address=0.0.0.0:8888":            "--address=0.0.0.0:8888",
		"/etc/deviceshare/tls/tls.crt":      "/x/etc/tls/tls.crt",
	}
	for in, want := range cases {
		if got := rewritePaths(in, mounts); got != want {
			t.Errorf("rewritePaths(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestExpandLikeKubelet(t *testing.T) {
	env := map[string]string{"NODE_NAME": "n1"}
	if got := expand("--node-name=$(NODE_NAME)", env); got != "--node-name=n1" {
		t.Errorf("got %q", got)
	}
	if got := expand("$(UNKNOWN)/x", env); got != "$(UNKNOWN)/x" {
		t.Errorf("an unknown reference must stay as written, got %q", got)
	}
}

func TestSetFlagBothForms(t *testing.T) {
	args := []string{"serve", "--address", "0.0.0.0:8888", "--dialect=hami"}
	args = setFlag(args, "address", "127.0.0.1:1")
	args = setFlag(args, "dialect", "volcano")
	args = setFlag(args, "kubeconfig", "k")
	want := []string{"serve", "--address", "127.0.0.1:1", "--dialect=volcano", "--kubeconfig", "k"}
	if !reflect.DeepEqual(args, want) {
		t.Errorf("got %q, want %q", args, want)
	}
}
