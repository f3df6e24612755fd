package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/deviceshare/deviceshare/tests/cluster/controlplane"
)

// profiler fetches a CPU profile of the row's kube-scheduler (stock or
// deviceshare-kube-scheduler) from its /debug/pprof while the burst runs,
// so a row's pods/s can be explained by where the scheduler's time went.
type profiler struct {
	port int
	path string
}

// newProfiler picks the scheduler's secure port; args are the flags that
// serve /debug/pprof on it without credentials (the kit's scheduler runs
// on 127.0.0.1 only).
func newProfiler(dir, row string) (*profiler, []string, error) {
	port, err := controlplane.FreePort()
	if err != nil {
		return nil, nil, err
	}
	p := &profiler{port: port, path: filepath.Join(dir, row+".pprof")}
	return p, []string{"--secure-port=" + strconv.Itoa(port),
		"--authorization-always-allow-paths=/healthz,/readyz,/livez,/debug/pprof/*"}, nil
}

// capture writes a profile of `seconds` to the row's file; it runs beside
// the burst and reports a failure on stderr only (the row's figure stands).
func (p *profiler) capture(ctx context.Context, seconds int) {
	if err := p.fetch(ctx, seconds); err != nil {
		fmt.Fprintf(os.Stderr, "throughput: profile %s: %v\n", p.path, err)
	}
}

func (p *profiler) fetch(ctx context.Context, seconds int) error {
	client := &http.Client{Timeout: time.Duration(seconds+30) * time.Second,
		// The scheduler's serving certificate is self-signed.
		Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	url := fmt.Sprintf("https://127.0.0.1:%d/debug/pprof/profile?seconds=%d", p.port, seconds)
	request, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	// The scheduler serves once its informers have synced, which may be
	// after the burst began.
	response, err := client.Do(request)
	for attempt := 0; err != nil && attempt < 100; attempt++ {
		time.Sleep(100 * time.Millisecond)
		response, err = client.Do(request)
	}
	if err != nil {
		return err
	}
	defer response.Body.Close()
	if response.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(response.Body, 512))
		return fmt.Errorf("%s: %s", response.Status, body)
	}
	out, err := os.Create(p.path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, response.Body); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
