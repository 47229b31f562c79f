package localcluster

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
)

// NodeName is the simulated node that kwok runs pods on.
const NodeName = "kwok-node-0"

// Config says where the cluster keeps its state.
type Config struct {
	// Binaries from EnsureBinaries.
	Binaries Binaries
	// Dir holds etcd's data, keys, the kubeconfig and the logs. It is
	// created if missing.
	Dir string
	// Progress receives a line per step; nil discards them.
	Progress io.Writer
	// Controllers overrides the kube-controller-manager controllers (its
	// --controllers flag); empty means DefaultControllers.
	Controllers string
	// FeatureGates is kube-apiserver's --feature-gates, e.g.
	// "ShardedListAndWatch=true"; empty leaves the defaults.
	FeatureGates string
	// ControllerManagerFlags are added to kube-controller-manager's command
	// line, e.g. --kube-api-qps=500 for a benchmark whose Job controller
	// must not be held back by its client.
	ControllerManagerFlags []string
	// NodePods is how many pods the simulated node takes (its capacity and
	// allocatable pods); 0 means DefaultNodePods.
	NodePods int
}

// DefaultNodePods is the simulated node's pod capacity unless
// Config.NodePods says otherwise.
const DefaultNodePods = 1000

// DefaultControllers are the kube-controller-manager controllers this
// product does not replace: never cronjob. (The end-to-end tests add it, to
// compare this controller with it.) ttl-after-finished deletes Jobs with
// ttlSecondsAfterFinished, as in a real cluster: the crash-window test needs
// those deletes.
const DefaultControllers = "job,garbagecollector,nodelifecycle,namespace,serviceaccount,ttl-after-finished"

// APIServerMetrics returns the API server's /metrics text.
func (c *Cluster) APIServerMetrics(ctx context.Context) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.APIServerURL+"/metrics", nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback, own server
	}}
	resp, err := client.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

// Cluster is a running local control plane.
type Cluster struct {
	// Kubeconfig is the path of an admin kubeconfig (system:masters).
	Kubeconfig string
	// Dir is the state directory; logs are in Dir/logs.
	Dir string
	// APIServerURL is https://127.0.0.1:<port>.
	APIServerURL string

	cfg     Config
	token   string
	ports   ports
	spawner *spawner
	mu      sync.Mutex
	procs   map[string]*proc
	// commands remembers how each component was started, to restart it.
	commands map[string][]string
	stopOnce sync.Once
}

type ports struct{ etcdClient, etcdPeer, apiserver, kwok int }

// Start brings up etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok, registers one simulated node, and returns when
// the API server is ready and the node can run pods. On error everything
// started is stopped again.
func Start(ctx context.Context, cfg Config) (_ *Cluster, err error) {
	if cfg.Progress == nil {
		cfg.Progress = io.Discard
	}
	for _, d := range []string{"etcd", "pki", "logs"} {
		if err := os.MkdirAll(filepath.Join(cfg.Dir, d), 0o700); err != nil {
			return nil, err
		}
	}
	free, err := freePorts(4)
	if err != nil {
		return nil, err
	}
	c := &Cluster{
		Dir:      cfg.Dir,
		cfg:      cfg,
		ports:    ports{etcdClient: free[0], etcdPeer: free[1], apiserver: free[2], kwok: free[3]},
		spawner:  newSpawner(),
		procs:    map[string]*proc{},
		commands: map[string][]string{},
	}
	c.APIServerURL = "https://127.0.0.1:" + strconv.Itoa(c.ports.apiserver)
	defer func() {
		if err != nil {
			c.Stop()
		}
	}()
	if err := c.writeCredentials(); err != nil {
		return nil, err
	}

	c.progress("starting etcd %s", EtcdVersion)
	if err := c.startEtcd(); err != nil {
		return nil, err
	}
	if err := c.waitHTTP(ctx, "etcd", fmt.Sprintf("http://127.0.0.1:%d/health", c.ports.etcdClient), false); err != nil {
		return nil, err
	}
	c.progress("starting kube-apiserver %s on %s", KubernetesVersion, c.APIServerURL)
	if err := c.startAPIServer(); err != nil {
		return nil, err
	}
	if err := c.waitHTTP(ctx, "kube-apiserver", c.APIServerURL+"/readyz", true); err != nil {
		return nil, err
	}
	c.progress("starting kube-controller-manager (%s), kube-scheduler and kwok", ptrOr(cfg.Controllers, DefaultControllers))
	if err := c.startControllers(); err != nil {
		return nil, err
	}
	if err := c.registerNode(ctx); err != nil {
		return nil, err
	}
	c.progress("ready: export KUBECONFIG=%s", c.Kubeconfig)
	return c, nil
}

func (c *Cluster) progress(format string, args ...any) {
	fmt.Fprintf(c.cfg.Progress, "localcluster: "+format+"\n", args...)
}

// writeCredentials makes the serving certificate, the service-account
// signing key, the admin token and the kubeconfig that uses them.
func (c *Cluster) writeCredentials() error {
	pki := filepath.Join(c.Dir, "pki")
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", []net.IP{net.ParseIP("127.0.0.1")}, []string{"localhost"})
	if err != nil {
		return fmt.Errorf("making the serving certificate: %w", err)
	}
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	saPub, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return err
	}
	tokenBytes := make([]byte, 24)
	if _, err := rand.Read(tokenBytes); err != nil {
		return err
	}
	c.token = hex.EncodeToString(tokenBytes)
	files := map[string][]byte{
		"serving.crt": certPEM,
		"serving.key": keyPEM,
		"sa.key":      pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(saKey)}),
		"sa.pub":      pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: saPub}),
		"tokens.csv":  []byte(c.token + ",admin,admin,system:masters\n"),
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(pki, name), data, 0o600); err != nil {
			return err
		}
	}

	kc := clientcmdapi.NewConfig()
	kc.Clusters["local"] = &clientcmdapi.Cluster{Server: c.APIServerURL, CertificateAuthorityData: certPEM}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: c.token}
	kc.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "admin", Namespace: metav1.NamespaceDefault}
	kc.CurrentContext = "local"
	c.Kubeconfig = filepath.Join(c.Dir, "kubeconfig")
	return clientcmd.WriteToFile(*kc, c.Kubeconfig)
}

func (c *Cluster) pki(name string) string { return filepath.Join(c.Dir, "pki", name) }

func (c *Cluster) startEtcd() error {
	peer := fmt.Sprintf("http://127.0.0.1:%d", c.ports.etcdPeer)
	client := fmt.Sprintf("http://127.0.0.1:%d", c.ports.etcdClient)
	return c.start("etcd", c.cfg.Binaries.Etcd,
		"--name=local",
		"--data-dir="+filepath.Join(c.Dir, "etcd"),
		"--listen-client-urls="+client,
		"--advertise-client-urls="+client,
		"--listen-peer-urls="+peer,
		"--initial-advertise-peer-urls="+peer,
		"--initial-cluster=local="+peer,
		// A test cluster trades durability across power loss for speed.
		"--unsafe-no-fsync=true",
		"--log-level=warn",
	)
}

func (c *Cluster) startAPIServer() error {
	var gates []string
	if c.cfg.FeatureGates != "" {
		gates = append(gates, "--feature-gates="+c.cfg.FeatureGates)
	}
	return c.start("kube-apiserver", c.cfg.Binaries.APIServer, append([]string{
		"--etcd-servers=" + fmt.Sprintf("http://127.0.0.1:%d", c.ports.etcdClient),
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(c.ports.apiserver),
		"--tls-cert-file=" + c.pki("serving.crt"),
		"--tls-private-key-file=" + c.pki("serving.key"),
		"--token-auth-file=" + c.pki("tokens.csv"),
		"--authorization-mode=Node,RBAC",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + c.pki("sa.pub"),
		"--service-account-signing-key-file=" + c.pki("sa.key"),
		"--api-audiences=https://kubernetes.default.svc.cluster.local",
		"--service-cluster-ip-range=10.96.0.0/16",
		"--allow-privileged=true",
		"--enable-priority-and-fairness=true",
		// On by default in several distributions: setting blockOwnerDeletion
		// on an owner reference, as every Job of a CronJob does, then needs
		// update on the owner's finalizers subresource. With it on here, the
		// least-privilege end-to-end test proves the shipped roles grant that.
		"--enable-admission-plugins=OwnerReferencesPermissionEnforcement",
		// The simulated node's only address is kwok's server on loopback.
		"--kubelet-preferred-address-types=InternalIP",
		"--v=1",
	}, gates...)...)
}

func (c *Cluster) startControllers() error {
	controllers := c.cfg.Controllers
	if controllers == "" {
		controllers = DefaultControllers
	}
	if err := c.start("kube-controller-manager", c.cfg.Binaries.ControllerManager, append([]string{
		"--kubeconfig=" + c.Kubeconfig,
		"--controllers=" + controllers,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port=0",
		"--service-account-private-key-file=" + c.pki("sa.key"),
		"--v=1",
	}, c.cfg.ControllerManagerFlags...)...); err != nil {
		return err
	}
	if err := c.start("kube-scheduler", c.cfg.Binaries.Scheduler,
		"--kubeconfig="+c.Kubeconfig,
		"--authentication-kubeconfig="+c.Kubeconfig,
		"--authorization-kubeconfig="+c.Kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1",
		"--secure-port=0",
		"--v=1",
	); err != nil {
		return err
	}
	logs, err := c.writePodLogs()
	if err != nil {
		return err
	}
	// The node's address and port are kwok's own server, which serves the
	// kubelet API: `kubectl logs` reaches it through the API server.
	args := []string{
		"--kubeconfig=" + c.Kubeconfig,
		"--manage-all-nodes=false",
		"--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
		"--server-address=127.0.0.1:" + strconv.Itoa(c.ports.kwok),
		"--node-ip=127.0.0.1",
		"--node-port=" + strconv.Itoa(c.ports.kwok),
		"--node-lease-duration-seconds=40",
		"--config=" + logs,
	}
	for _, s := range c.cfg.Binaries.KwokStages {
		args = append(args, "--config="+s)
	}
	return c.start("kwok", c.cfg.Binaries.Kwok, args...)
}

// PodLog is what `kubectl logs` prints for any container on the simulated
// node: nothing runs there, so there is no output to show.
const PodLog = "cronjob-controller's embedded node (kwok) runs no container, so there is no output: a pod's phase and exit code come from its spec (README.md, On a fresh machine)."

// writePodLogs writes kwok's ClusterLogs config, which serves PodLog as
// every container's log, and returns its path.
func (c *Cluster) writePodLogs() (string, error) {
	logFile := filepath.Join(c.Dir, "pod.log")
	// kwok reads the file as a container runtime's log: time, stream, tag.
	line := time.Now().UTC().Format(time.RFC3339Nano) + " stdout F " + PodLog + "\n"
	if err := os.WriteFile(logFile, []byte(line), 0o644); err != nil {
		return "", err
	}
	config := filepath.Join(c.Dir, "kwok-logs.yaml")
	return config, os.WriteFile(config, []byte(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterLogs
metadata:
  name: no-container-runs
spec:
  logs:
  - logsFile: `+strconv.Quote(logFile)+`
    follow: false
`), 0o644)
}

// registerNode creates the simulated node and waits until it is Ready and
// the default ServiceAccount, which pods need, exists.
func (c *Cluster) registerNode(ctx context.Context) error {
	client, err := c.Client()
	if err != nil {
		return err
	}
	pods := resource.MustParse(strconv.Itoa(cmp.Or(c.cfg.NodePods, DefaultNodePods)))
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        NodeName,
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
			Labels:      map[string]string{"type": "kwok", "kubernetes.io/hostname": NodeName, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64"},
		},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: pods},
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("64"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: pods},
		},
	}
	if _, err := client.CoreV1().Nodes().Create(ctx, node, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("registering the kwok node: %w", err)
	}
	return c.poll(ctx, "the kwok node to be Ready and the default ServiceAccount to exist", 2*time.Minute, func(ctx context.Context) (bool, error) {
		n, err := client.CoreV1().Nodes().Get(ctx, NodeName, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		ready := false
		for _, cond := range n.Status.Conditions {
			ready = ready || (cond.Type == corev1.NodeReady && cond.Status == corev1.ConditionTrue)
		}
		if !ready || len(n.Spec.Taints) > 0 {
			return false, nil
		}
		_, err = client.CoreV1().ServiceAccounts(metav1.NamespaceDefault).Get(ctx, "default", metav1.GetOptions{})
		return err == nil, nil
	})
}

// Client is an admin clientset for the cluster.
func (c *Cluster) Client() (kubernetes.Interface, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig)
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(cfg)
}

// waitHTTP polls url until it answers 200, failing early if the component
// behind it exits.
func (c *Cluster) waitHTTP(ctx context.Context, component, url string, auth bool) error {
	httpClient := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		// Only a liveness probe on loopback; the kubeconfig verifies the CA.
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec
	}}
	return c.poll(ctx, component+" to be ready", 2*time.Minute, func(ctx context.Context) (bool, error) {
		if err := c.exited(component); err != nil {
			return false, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		if auth {
			req.Header.Set("Authorization", "Bearer "+c.token)
		}
		resp, err := httpClient.Do(req)
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

func (c *Cluster) poll(ctx context.Context, what string, timeout time.Duration, cond wait.ConditionWithContextFunc) error {
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, cond); err != nil {
		return fmt.Errorf("waiting for %s: %w (logs in %s)", what, err, filepath.Join(c.Dir, "logs"))
	}
	return nil
}

// exited reports an error if the named component is no longer running.
func (c *Cluster) exited(name string) error {
	c.mu.Lock()
	p := c.procs[name]
	c.mu.Unlock()
	if p == nil {
		return nil
	}
	select {
	case <-p.done:
		return fmt.Errorf("%s exited: %v (see %s)", name, p.err, c.logPath(name))
	default:
		return nil
	}
}

// proc is a running component.
type proc struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // Wait's result, valid once done is closed
}

func (c *Cluster) logPath(name string) string { return filepath.Join(c.Dir, "logs", name+".log") }

// StartComponent starts again a component stopped with StopComponent, with
// the same command line, and waits until it is ready if it serves HTTP.
func (c *Cluster) StartComponent(ctx context.Context, name string) error {
	c.mu.Lock()
	cmdline, ok := c.commands[name]
	c.mu.Unlock()
	if !ok {
		return fmt.Errorf("no component %q was ever started", name)
	}
	if err := c.start(name, cmdline[0], cmdline[1:]...); err != nil {
		return err
	}
	switch name {
	case "etcd":
		return c.waitHTTP(ctx, name, fmt.Sprintf("http://127.0.0.1:%d/health", c.ports.etcdClient), false)
	case "kube-apiserver":
		return c.waitHTTP(ctx, name, c.APIServerURL+"/readyz", true)
	}
	return nil
}

// start runs a component with its output in Dir/logs/<name>.log.
func (c *Cluster) start(name, binary string, args ...string) error {
	log, err := os.OpenFile(c.logPath(name), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = log, log
	if err := c.spawner.start(cmd); err != nil {
		log.Close()
		return fmt.Errorf("starting %s: %w", name, err)
	}
	p := &proc{cmd: cmd, done: make(chan struct{})}
	c.mu.Lock()
	c.procs[name] = p
	c.commands[name] = append([]string{binary}, args...)
	c.mu.Unlock()
	go func() {
		p.err = cmd.Wait()
		log.Close()
		close(p.done)
	}()
	return nil
}

// Pid is the process ID of the named running component ("etcd",
// "kube-apiserver", ...), 0 if none runs.
func (c *Cluster) Pid(name string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.procs[name]
	if p == nil || p.cmd.Process == nil {
		return 0
	}
	select {
	case <-p.done: // exited: its pid may be another process's by now
		return 0
	default:
		return p.cmd.Process.Pid
	}
}

// StopComponent stops one component (for fault tests) and waits for it.
func (c *Cluster) StopComponent(name string) error {
	c.mu.Lock()
	p := c.procs[name]
	delete(c.procs, name)
	c.mu.Unlock()
	if p == nil {
		return fmt.Errorf("no component %q running", name)
	}
	p.terminate()
	return nil
}

// Stop ends every component, newest first, and leaves no process behind.
// The state directory is kept for its logs.
func (c *Cluster) Stop() {
	c.stopOnce.Do(func() {
		for _, name := range []string{"kwok", "kube-scheduler", "kube-controller-manager", "kube-apiserver", "etcd"} {
			c.mu.Lock()
			p := c.procs[name]
			delete(c.procs, name)
			c.mu.Unlock()
			if p != nil {
				p.terminate()
			}
		}
		c.spawner.close()
	})
}

// terminate asks a process to stop, kills it after ten seconds, and waits
// until it is gone.
func (p *proc) terminate() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// spawner starts every child from one locked OS thread, so that the
// children's parent-death signal fires only when this process dies: an
// interrupted test or `make run` leaves no component behind.
type spawner struct {
	requests chan spawnRequest
	once     sync.Once
}

type spawnRequest struct {
	cmd  *exec.Cmd
	done chan error
}

func newSpawner() *spawner {
	s := &spawner{requests: make(chan spawnRequest)}
	go func() {
		runtime.LockOSThread()
		// The thread is never unlocked: it ends with the goroutine, after
		// every child it started has been stopped.
		for r := range s.requests {
			r.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
			r.done <- r.cmd.Start()
		}
	}()
	return s
}

func (s *spawner) start(cmd *exec.Cmd) error {
	done := make(chan error)
	s.requests <- spawnRequest{cmd: cmd, done: done}
	return <-done
}

func (s *spawner) close() { s.once.Do(func() { close(s.requests) }) }

func ptrOr(s, fallback string) string {
	if s == "" {
		return fallback
	}
	return s
}

// freePorts asks the kernel for n unused loopback ports.
func freePorts(n int) ([]int, error) {
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	var out []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, errors.Join(errors.New("finding a free port"), err)
		}
		listeners = append(listeners, l)
		out = append(out, l.Addr().(*net.TCPAddr).Port)
	}
	return out, nil
}
