// Command cronjob-controller runs CronJobs of batch.tutorial.kubebuilder.io/v1
// as batch/v1 Jobs.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"
	_ "time/tzdata" // spec.timeZone must resolve even where the image has no zone database

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubeinformers "k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	clientset "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned"
	informers "github.com/cronjob-controller/cronjob-controller/pkg/generated/informers/externalversions"
)

// options are the command-line flags.
type options struct {
	kubeconfig   string
	masterURL    string
	workers      int
	kubeAPIQPS   float64
	kubeAPIBurst int
}

func main() {
	klog.InitFlags(nil)
	var o options
	flag.StringVar(&o.kubeconfig, "kubeconfig", "", "Path to a kubeconfig. Defaults to $KUBECONFIG; in-cluster configuration when neither is set.")
	flag.StringVar(&o.masterURL, "master", "", "The address of the Kubernetes API server. Overrides any value in kubeconfig.")
	flag.IntVar(&o.workers, "workers", 20, "How many CronJobs are synced concurrently.")
	flag.Float64Var(&o.kubeAPIQPS, "kube-api-qps", 500, "Requests per second to the API server, sustained.")
	flag.IntVar(&o.kubeAPIBurst, "kube-api-burst", 2000, "Requests to the API server allowed in a burst above -kube-api-qps.")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	logger := klog.FromContext(ctx)
	ctx = klog.NewContext(ctx, logger)

	if err := run(ctx, o); err != nil {
		// One line a person can act on; no stack trace.
		fmt.Fprintln(os.Stderr, "cronjob-controller:", err)
		klog.Flush()
		os.Exit(1)
	}
	klog.Flush()
}

func run(ctx context.Context, o options) error {
	if o.workers < 1 {
		return fmt.Errorf("-workers must be at least 1, not %d", o.workers)
	}
	cfg, err := restConfig(o)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = float32(o.kubeAPIQPS), o.kubeAPIBurst
	cfg.UserAgent = controllerAgentName

	kubeClient, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building kubernetes client: %w", err)
	}
	cronClient, err := clientset.NewForConfig(cfg)
	if err != nil {
		return fmt.Errorf("building CronJob client: %w", err)
	}
	if err := checkAPI(ctx, cronClient); err != nil {
		return err
	}

	// Events go through a client of their own, so a burst of Events never
	// takes client rate-limit tokens from creating Jobs.
	eventClient, err := kubernetes.NewForConfig(rest.CopyConfig(cfg))
	if err != nil {
		return fmt.Errorf("building events client: %w", err)
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	defer broadcaster.Shutdown()
	broadcaster.StartStructuredLogging(0)
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: eventClient.CoreV1().Events("")})
	recorder := broadcaster.NewRecorder(scheme.Scheme, corev1.EventSource{Component: controllerAgentName})

	kubeInformerFactory := kubeinformers.NewSharedInformerFactory(kubeClient, 0)
	cronInformerFactory := informers.NewSharedInformerFactory(cronClient, 0)
	controller, err := NewController(ctx, kubeClient, cronClient,
		kubeInformerFactory.Batch().V1().Jobs(),
		cronInformerFactory.Batch().V1().CronJobs(),
		clock.RealClock{},
		WithEventRecorder(recorder))
	if err != nil {
		return err
	}
	kubeInformerFactory.Start(ctx.Done())
	cronInformerFactory.Start(ctx.Done())
	defer kubeInformerFactory.Shutdown()
	defer cronInformerFactory.Shutdown()

	return controller.Run(ctx, o.workers)
}

// restConfig follows sample-controller: -kubeconfig or $KUBECONFIG, and
// in-cluster configuration when neither is given.
func restConfig(o options) (*rest.Config, error) {
	kubeconfig := o.kubeconfig
	if kubeconfig == "" {
		kubeconfig = os.Getenv(clientcmd.RecommendedConfigPathEnvVar)
	}
	if kubeconfig == "" && o.masterURL == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, fmt.Errorf("no -kubeconfig, $KUBECONFIG or -master given, and not running in a cluster: %w", err)
		}
		return cfg, nil
	}
	loading := clientcmd.NewDefaultClientConfigLoadingRules()
	loading.ExplicitPath = o.kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(loading,
		&clientcmd.ConfigOverrides{ClusterInfo: clientcmdapi.Cluster{Server: o.masterURL}}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading kubeconfig %q: %w", kubeconfig, err)
	}
	return cfg, nil
}

// checkAPI fails fast, with a hint, when the API server is unreachable or
// the CronJob CRD is not installed.
func checkAPI(ctx context.Context, client clientset.Interface) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	_, err := client.BatchV1().CronJobs(metav1.NamespaceAll).List(ctx, metav1.ListOptions{Limit: 1})
	switch {
	case err == nil:
		return nil
	case apierrors.IsNotFound(err):
		return errors.New("the API server does not serve cronjobs.batch.tutorial.kubebuilder.io: install the CRD with `kubectl apply -f artifacts/examples/crd.yaml`")
	default:
		return fmt.Errorf("cannot reach the Kubernetes API server: %w", err)
	}
}
