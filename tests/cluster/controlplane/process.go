package controlplane

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// Process is one program of the control plane (or of the kit) started
// with its output in dir/name.log. Kill and Start may be called again to
// restart it with the same arguments, as the fault tests do.
type Process struct {
	Name    string
	Path    string
	Args    []string
	Env     []string
	LogFile string
	// RestartOnExit: when the program exits by itself it is started again
	// a second later, as kubelet restarts a static pod's container.
	// kube-scheduler and kube-controller-manager exit when they lose their
	// lease, which an API server down past the renew deadline makes them
	// do; a cluster brings them back, and so must the tests.
	RestartOnExit bool

	mu       sync.Mutex
	cmd      *exec.Cmd
	done     chan struct{}
	signals  int // Kill/Stop calls: a restart planned before one is dropped
	restarts int
}

// NewProcess describes a program; nothing runs until Start.
func NewProcess(name, path string, args []string, logDir string) *Process {
	return &Process{Name: name, Path: path, Args: args,
		LogFile: filepath.Join(logDir, name+".log")}
}

// Start runs the program; its output is appended to LogFile.
func (p *Process) Start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return fmt.Errorf("%s is already running", p.Name)
	}
	log, err := os.OpenFile(p.LogFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.Path, p.Args...)
	cmd.Stdout = log
	cmd.Stderr = log
	cmd.Env = append(os.Environ(), p.Env...)
	// Its own process group, so that a signal to the test (ctest's
	// timeout) does not leave it running, and Kill reaches its children.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("start %s: %w", p.Name, err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		log.Close()
		close(done)
		p.restartAfterExit(cmd)
	}()
	p.cmd, p.done = cmd, done
	return nil
}

// restartAfterExit starts the program again when it exited by itself and
// RestartOnExit is set.
func (p *Process) restartAfterExit(exited *exec.Cmd) {
	p.mu.Lock()
	if !p.RestartOnExit || p.cmd != exited {
		p.mu.Unlock()
		return
	}
	signals := p.signals
	p.cmd, p.done = nil, nil
	p.restarts++
	p.mu.Unlock()
	time.Sleep(time.Second)
	p.mu.Lock()
	stopped := p.signals != signals
	p.mu.Unlock()
	if !stopped {
		p.Start()
	}
}

// Restarts says how often RestartOnExit started the program again.
func (p *Process) Restarts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.restarts
}

// Running says whether the program has been started and not exited.
func (p *Process) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return false
	}
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Signal sends sig to the program's process group and, for SIGKILL or
// SIGTERM, waits for it to exit (SIGTERM escalates to SIGKILL after 10 s).
func (p *Process) Signal(sig syscall.Signal) {
	p.mu.Lock()
	cmd, done := p.cmd, p.done
	stopping := sig == syscall.SIGKILL || sig == syscall.SIGTERM
	if stopping {
		p.signals++
		// Taken over here, so that the exit is not seen as the program's
		// own and restarted.
		p.cmd, p.done = nil, nil
	}
	p.mu.Unlock()
	if cmd == nil {
		return
	}
	syscall.Kill(-cmd.Process.Pid, sig)
	if sig != syscall.SIGKILL && sig != syscall.SIGTERM {
		return
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// Kill is kill -9.
func (p *Process) Kill() { p.Signal(syscall.SIGKILL) }

// Stop asks the program to exit (SIGTERM), then kills it.
func (p *Process) Stop() { p.Signal(syscall.SIGTERM) }

// Log is what the program has printed so far (the last 64 KiB).
func (p *Process) Log() string {
	data, err := os.ReadFile(p.LogFile)
	if err != nil {
		return ""
	}
	if len(data) > 64<<10 {
		data = data[len(data)-64<<10:]
	}
	return string(data)
}

// FreePort asks the kernel for a free TCP port on 127.0.0.1.
func FreePort() (int, error) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer listener.Close()
	return listener.Addr().(*net.TCPAddr).Port, nil
}
