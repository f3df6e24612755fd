package kit

import (
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// service stands in for the kit's Service deviceshare-scheduler and the
// kube-proxy behind it: connections to the extender's port (8888 in the
// kit) and the webhook's (443 -> 9443) go to a replica whose /readyz
// answers 200, as the Deployment's readinessProbe decides its endpoints.
// Endpoints are re-read every second (the probe's period is 5 s in the
// kit; a shorter one only makes a failover test quicker, not different).
type service struct {
	mu        sync.Mutex
	replicas  []*Extender
	ready     []*Extender
	listeners []net.Listener
	stop      chan struct{}
}

func newService(extenderPort, webhookPort int) (*service, error) {
	s := &service{stop: make(chan struct{})}
	for _, port := range []struct {
		listen int
		target func(*Extender) string
	}{
		{extenderPort, func(e *Extender) string { return strings.TrimPrefix(e.URL, "https://") }},
		{webhookPort, func(e *Extender) string { return fmt.Sprintf("127.0.0.1:%d", e.WebhookPort) }},
	} {
		listener, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port.listen))
		if err != nil {
			s.close()
			return nil, err
		}
		s.listeners = append(s.listeners, listener)
		go s.accept(listener, port.target)
	}
	go s.probe()
	return s, nil
}

func (s *service) add(e *Extender) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replicas = append(s.replicas, e)
}

// serves says whether calls go to e now.
func (s *service) serves(e *Extender) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ready := range s.ready {
		if ready == e {
			return true
		}
	}
	return false
}

// probe refreshes the ready endpoints every second.
func (s *service) probe() {
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	for {
		s.mu.Lock()
		replicas := append([]*Extender(nil), s.replicas...)
		s.mu.Unlock()
		var ready []*Extender
		for _, replica := range replicas {
			if replica.Ready() {
				ready = append(ready, replica)
			}
		}
		s.mu.Lock()
		s.ready = ready
		s.mu.Unlock()
		select {
		case <-s.stop:
			return
		case <-ticker.C:
		}
	}
}

func (s *service) accept(listener net.Listener, target func(*Extender) string) {
	for next := 0; ; next++ {
		conn, err := listener.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		var endpoint *Extender
		if len(s.ready) > 0 {
			endpoint = s.ready[next%len(s.ready)]
		}
		s.mu.Unlock()
		if endpoint == nil {
			// No ready endpoint: kube-proxy rejects the connection.
			conn.Close()
			continue
		}
		go forward(conn, target(endpoint))
	}
}

func forward(client net.Conn, address string) {
	defer client.Close()
	upstream, err := net.DialTimeout("tcp", address, 2*time.Second)
	if err != nil {
		return
	}
	defer upstream.Close()
	done := make(chan struct{}, 2)
	go func() { io.Copy(upstream, client); done <- struct{}{} }()
	go func() { io.Copy(client, upstream); done <- struct{}{} }()
	<-done
}

func (s *service) close() {
	select {
	case <-s.stop:
	default:
		close(s.stop)
	}
	for _, listener := range s.listeners {
		listener.Close()
	}
}
