package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/clock"

	clientset "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned"
	"github.com/cronjob-controller/cronjob-controller/pkg/version"
)

// Usage is what kubectl cronjob --help prints.
const Usage = `kubectl cronjob: work with CronJobs of batch.tutorial.kubebuilder.io/v1

Usage:
  kubectl cronjob run NAME               start one Job now (the run-now annotation)
  kubectl cronjob next NAME [--count N]  the next N (5) scheduled times, in the CronJob's zone and UTC
  kubectl cronjob suspend NAME           set spec.suspend: no new scheduled runs
  kubectl cronjob resume NAME            clear spec.suspend, and end a pause after failed runs
  kubectl cronjob history NAME           its Jobs, newest first, with outcome and duration
  kubectl cronjob version                the plugin's version, commit and Go version

Flags (as for kubectl: -n/--namespace, --kubeconfig, --context, ...):
`

// Connector builds the clients for a kubeconfig as the flags select it.
type Connector func(clientcmd.ClientConfig) (versioned clientset.Interface, kube kubernetes.Interface, err error)

// Connect is the Connector of the binary: clients for the REST
// configuration the kubeconfig and flags give.
func Connect(cfg clientcmd.ClientConfig) (clientset.Interface, kubernetes.Interface, error) {
	rest, err := cfg.ClientConfig()
	if err != nil {
		return nil, nil, err
	}
	rest.UserAgent = "kubectl-cronjob"
	cron, err := clientset.NewForConfig(rest)
	if err != nil {
		return nil, nil, err
	}
	kube, err := kubernetes.NewForConfig(rest)
	if err != nil {
		return nil, nil, err
	}
	return cron, kube, nil
}

// CLI is the command line of kubectl-cronjob.
type CLI struct {
	Stdout, Stderr io.Writer
	// Connect builds the clients; Connect above in the binary.
	Connect Connector
	Clock   clock.PassiveClock
}

// errUsage is a command line that names no command the plugin has.
var errUsage = errors.New("usage")

// Main runs the command in args (the arguments after the program name) and
// returns the exit code: 0, 1 when the command failed, 2 for a bad command
// line.
func (cli CLI) Main(ctx context.Context, args []string) int {
	err := cli.run(ctx, args)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, pflag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(cli.Stderr, "error: %v\nSee kubectl cronjob --help.\n", errors.Unwrap(err))
		return 2
	default:
		fmt.Fprintf(cli.Stderr, "error: %v\n", err)
		return 1
	}
}

// usageError wraps a complaint about the command line.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }
func (e usageError) Is(target error) bool {
	return target == errUsage
}

func badUsage(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

func (cli CLI) run(ctx context.Context, args []string) error {
	flags := pflag.NewFlagSet("kubectl cronjob", pflag.ContinueOnError)
	flags.SetOutput(cli.Stderr)
	flags.Usage = func() {
		fmt.Fprint(cli.Stderr, Usage)
		flags.PrintDefaults()
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	flags.StringVar(&rules.ExplicitPath, clientcmd.RecommendedConfigPathFlag, "", "Path to the kubeconfig file to use")
	overrides := &clientcmd.ConfigOverrides{}
	clientcmd.BindOverrideFlags(overrides, flags, clientcmd.RecommendedConfigOverrideFlags(""))
	count := flags.IntP("count", "c", 5, "next: how many times to print")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return err
		}
		return badUsage("%v", err)
	}
	if flags.NArg() == 0 {
		flags.Usage()
		return badUsage("no command given")
	}
	command, rest := flags.Arg(0), flags.Args()[1:]
	// version needs no cluster: it answers even where no kubeconfig works.
	if command == "version" {
		if len(rest) != 0 {
			return badUsage("version takes no arguments, got %d", len(rest))
		}
		_, err := fmt.Fprintln(cli.Stdout, "kubectl-cronjob", version.Get())
		return err
	}
	switch command {
	case "run", "next", "suspend", "resume", "history":
	default:
		return badUsage("unknown command %q", command)
	}
	if len(rest) != 1 {
		return badUsage("%s takes one CronJob name, got %d arguments", command, len(rest))
	}
	if command != "next" && flags.Changed("count") {
		return badUsage("--count applies to next only")
	}
	name := rest[0]

	cfg := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	namespace, _, err := cfg.Namespace()
	if err != nil {
		return err
	}
	cron, kube, err := cli.Connect(cfg)
	if err != nil {
		return err
	}
	c := Clients{Cron: cron, Kube: kube, Namespace: namespace, Clock: cli.Clock}
	switch command {
	case "run":
		_, err = Run(ctx, c, cli.Stdout, name)
	case "next":
		err = Next(ctx, c, cli.Stdout, name, *count)
	case "suspend":
		err = Suspend(ctx, c, cli.Stdout, name, true)
	case "resume":
		err = Resume(ctx, c, cli.Stdout, name)
	case "history":
		err = History(ctx, c, cli.Stdout, name)
	}
	return err
}
