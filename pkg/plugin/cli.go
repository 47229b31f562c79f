package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
	clientset "github.com/cronjob-controller/cronjob-controller/pkg/generated/clientset/versioned"
	"github.com/cronjob-controller/cronjob-controller/pkg/version"
)

// Name is the plugin's executable; kubectl runs it as DisplayName.
const (
	Name        = "kubectl-cronjob"
	DisplayName = "kubectl cronjob"
)

// Connector builds the clients for the REST configuration the standard
// kubectl flags select. Tests pass one that returns fake clientsets.
type Connector func(*rest.Config) (versioned clientset.Interface, kube kubernetes.Interface, err error)

// Connect is the Connector of the binary.
func Connect(cfg *rest.Config) (clientset.Interface, kubernetes.Interface, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.UserAgent = Name
	cron, err := clientset.NewForConfig(cfg)
	if err != nil {
		return nil, nil, err
	}
	kube, err := kubernetes.NewForConfig(cfg)
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

// errUsage is a command line the plugin cannot run: an unknown command or
// flag, or the wrong number of arguments.
var errUsage = errors.New("usage")

// Main runs the command in args (the arguments after the program name) and
// returns the exit code: 0, 1 when the command failed, 2 for a bad command
// line.
func (cli CLI) Main(ctx context.Context, args []string) int {
	root := cli.Command()
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage):
		fmt.Fprintf(cli.Stderr, "error: %v\nSee %s --help.\n", errors.Unwrap(err), DisplayName)
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

// session is one command line's flags, shared by its commands.
type session struct {
	cli    CLI
	config *genericclioptions.ConfigFlags
}

// clients connects as the standard kubectl flags say (--kubeconfig,
// --context, --server, --token, ...), in the namespace -n names or else the
// kubeconfig context's.
func (s *session) clients() (Clients, error) {
	namespace, _, err := s.config.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return Clients{}, err
	}
	cfg, err := s.config.ToRESTConfig()
	if err != nil {
		return Clients{}, err
	}
	cron, kube, err := s.cli.Connect(cfg)
	if err != nil {
		return Clients{}, err
	}
	return Clients{Cron: cron, Kube: kube, Namespace: namespace, Clock: s.cli.Clock}, nil
}

// Command is the plugin's command tree, built afresh for each command line.
// It has cobra's completion command (bash, zsh, fish, powershell) and
// hidden __complete command, which kubectl_complete-cronjob calls.
func (cli CLI) Command() *cobra.Command {
	s := &session{cli: cli, config: genericclioptions.NewConfigFlags(false)}
	root := &cobra.Command{
		Use:   Name,
		Short: "Work with CronJobs of " + Resource,
		Long: "kubectl cronjob works with the CronJobs of batch.tutorial.kubebuilder.io/v1 (kubectl get tcj):\n" +
			"list them with their next run, last result and state, start one now, see its next runs and\n" +
			"its history, suspend it (for a while, or until a time) and resume it, skip some of its runs.\n" +
			"It takes kubectl's flags (-n, --context, --kubeconfig, ...).",
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: DisplayName},
		SilenceErrors: true,
		SilenceUsage:  true,
		// As cobra's own unknown-command message would suggest.
		SuggestionsMinimumDistance: 2,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return nil
			}
			if hint := cmd.SuggestionsFor(args[0]); len(hint) > 0 {
				return badUsage("unknown command %q (did you mean %s?)", args[0], strings.Join(hint, " or "))
			}
			return badUsage("unknown command %q", args[0])
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			cmd.SetOut(cli.Stderr)
			_ = cmd.Usage()
			return badUsage("no command given")
		},
	}
	root.SetOut(cli.Stdout)
	root.SetErr(cli.Stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	s.config.AddFlags(root.PersistentFlags())
	_ = root.RegisterFlagCompletionFunc("namespace", s.completeNamespaces)
	root.AddCommand(s.listCommand(), s.runCommand(), s.nextCommand(), s.suspendCommand(true), s.suspendCommand(false),
		s.skipCommand(), s.historyCommand(), versionCommand())
	return root
}

// oneName accepts the one CronJob name a command works on.
func oneName(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return badUsage("%s takes one CronJob name, got %d arguments", cmd.Name(), len(args))
	}
	return nil
}

func (s *session) runCommand() *cobra.Command {
	var env []string
	var wait, annotation bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "run NAME [--env K=V ...] [--wait [--timeout D]] | run NAME --annotation",
		Short: "Start one run now (a CronJobRun), and name the Job to expect",
		Long: "kubectl cronjob run creates a CronJobRun for the CronJob: the controller starts one Job for it,\n" +
			"exactly once, with the env vars given (each one the CronJob's spec.runOverrides.allowedEnv must\n" +
			"name). It needs create on cronjobruns only (and get, for --wait), no right to change the CronJob.\n" +
			"--wait follows the run to its end and exits non-zero unless it succeeded.\n" +
			"--annotation sets the CronJob's run-now annotation instead (needs patch on the CronJob; no --env,\n" +
			"no --wait), as before CronJobRuns existed.",
		Args:              oneName,
		ValidArgsFunction: s.completeNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			if annotation && (len(env) > 0 || wait) {
				return badUsage("--annotation takes neither --env nor --wait")
			}
			if timeout <= 0 || timeout > MaxWait {
				return badUsage("--timeout must be more than 0 and at most %v, not %v", MaxWait, timeout)
			}
			vars, err := ParseEnv(env)
			if err != nil {
				return err
			}
			c, err := s.clients()
			if err != nil {
				return err
			}
			if annotation {
				_, err = Run(cmd.Context(), c, cmd.OutOrStdout(), args[0])
				return err
			}
			res, err := Request(cmd.Context(), c, cmd.OutOrStdout(), args[0], vars)
			if err != nil || !wait {
				return err
			}
			return WaitForRun(cmd.Context(), c, cmd.OutOrStdout(), res.Run.Name, timeout)
		},
	}
	cmd.Flags().StringArrayVar(&env, "env", nil, "set an env var in the run's containers, NAME=VALUE (repeatable, at most 32)")
	cmd.Flags().BoolVar(&wait, "wait", false, "wait until the run has finished; exit 1 unless it succeeded")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Hour, "with --wait, how long to wait at most (up to 24h)")
	cmd.Flags().BoolVar(&annotation, "annotation", false, "use the run-now annotation instead of a CronJobRun (needs patch on the CronJob)")
	return cmd
}

func (s *session) nextCommand() *cobra.Command {
	var count int
	var output string
	cmd := &cobra.Command{
		Use:               "next NAME [--count N]",
		Short:             "The next N scheduled times, in the CronJob's time zone and UTC",
		Args:              oneName,
		ValidArgsFunction: s.completeNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			if count < 1 || count > MaxNextCount {
				return badUsage("--count must be between 1 and %d, not %d", MaxNextCount, count)
			}
			if err := checkOutput(output); err != nil {
				return err
			}
			c, err := s.clients()
			if err != nil {
				return err
			}
			if output == "" {
				return Next(cmd.Context(), c, cmd.OutOrStdout(), args[0], count)
			}
			runs, err := NextRunsOf(cmd.Context(), c, args[0], count)
			if err != nil {
				return err
			}
			return printData(cmd.OutOrStdout(), output, runs)
		},
	}
	cmd.Flags().IntVarP(&count, "count", "c", 5, fmt.Sprintf("how many times to print (1 to %d)", MaxNextCount))
	addOutputFlag(cmd, &output)
	return cmd
}

func (s *session) suspendCommand(suspend bool) *cobra.Command {
	var forDuration time.Duration
	var until string
	cmd := &cobra.Command{
		Use:   "suspend NAME [--for DURATION | --until TIME]",
		Short: "Set spec.suspend (no new scheduled runs), or spec.suspendUntil with --for or --until",
		Long: "suspend NAME sets spec.suspend: no scheduled run starts until kubectl cronjob resume NAME.\n" +
			"With --for DURATION (2h, 90m, at most 8784h: 366 days) or --until TIME (RFC 3339, or a wall\n" +
			"time in the CronJob's zone: 2026-11-24 09:00) it sets spec.suspendUntil instead, leaving\n" +
			"spec.suspend alone: runs due before that time do not start, and then the CronJob schedules\n" +
			"by itself.",
		Args:              oneName,
		ValidArgsFunction: s.completeNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			timed := cmd.Flags().Changed("for") || cmd.Flags().Changed("until")
			if cmd.Flags().Changed("for") && cmd.Flags().Changed("until") {
				return badUsage("--for and --until exclude one another")
			}
			if cmd.Flags().Changed("for") {
				if err := checkFor(forDuration); err != nil {
					return err
				}
			}
			if cmd.Flags().Changed("until") {
				if _, err := parseTime(until, time.UTC); err != nil {
					return badUsage("--until: %v", err)
				}
			}
			c, err := s.clients()
			if err != nil {
				return err
			}
			if timed {
				return SuspendUntil(cmd.Context(), c, cmd.OutOrStdout(), args[0], forDuration, until)
			}
			return Suspend(cmd.Context(), c, cmd.OutOrStdout(), args[0], suspend)
		},
	}
	if !suspend {
		cmd.Use, cmd.Short, cmd.Long = "resume NAME", "Clear spec.suspend and spec.suspendUntil, and end a pause after failed runs", ""
		return cmd
	}
	cmd.Flags().DurationVar(&forDuration, "for", 0, "suspend for this long (Go duration: 2h, 90m; at most 8784h) through spec.suspendUntil")
	cmd.Flags().StringVar(&until, "until", "", "suspend until this time (RFC 3339, or YYYY-MM-DD[ HH:MM[:SS]] in the CronJob's zone) through spec.suspendUntil")
	_ = cmd.RegisterFlagCompletionFunc("for", cobra.FixedCompletions([]cobra.Completion{"30m", "1h", "2h", "6h", "12h", "24h", "48h", "168h"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("until", s.completeTimes)
	return cmd
}

func (s *session) skipCommand() *cobra.Command {
	var req SkipRequest
	cmd := &cobra.Command{
		Use:   "skip NAME [--next N | --at TIME | --clear]",
		Short: "Skip the next N runs (spec.skipTimes), or the run at a time, or --clear every skip",
		Long: "skip NAME adds to spec.skipTimes the next scheduled run (--next N: the next N, at most 20)\n" +
			"that would start, as kubectl cronjob next lists them, or the run at --at TIME (RFC 3339, or a\n" +
			"wall time in the CronJob's zone), which must be one of them. A skipped run does not start and\n" +
			"is counted in status.missedRuns under Skipped. --clear removes every skip.",
		Args:              oneName,
		ValidArgsFunction: s.completeNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			set := 0
			for _, f := range []string{"next", "at", "clear"} {
				if cmd.Flags().Changed(f) {
					set++
				}
			}
			if set > 1 {
				return badUsage("--next, --at and --clear exclude one another")
			}
			if req.Next < 1 || req.Next > MaxSkipTimes {
				return badUsage("--next must be between 1 and %d, not %d", MaxSkipTimes, req.Next)
			}
			if cmd.Flags().Changed("at") {
				if _, err := parseTime(req.At, time.UTC); err != nil {
					return badUsage("--at: %v", err)
				}
			}
			c, err := s.clients()
			if err != nil {
				return err
			}
			return Skip(cmd.Context(), c, cmd.OutOrStdout(), args[0], req)
		},
	}
	cmd.Flags().IntVar(&req.Next, "next", 1, fmt.Sprintf("skip the next N runs that would start (1 to %d)", MaxSkipTimes))
	cmd.Flags().StringVar(&req.At, "at", "", "skip the run at this time, one of the schedule's (RFC 3339, or YYYY-MM-DD HH:MM[:SS] in the CronJob's zone)")
	cmd.Flags().BoolVar(&req.Clear, "clear", false, "remove every skip (spec.skipTimes)")
	_ = cmd.RegisterFlagCompletionFunc("next", cobra.FixedCompletions([]cobra.Completion{"1", "2", "3", "5", "10"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("at", s.completeTimes)
	return cmd
}

func (s *session) historyCommand() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:               "history NAME",
		Short:             "Its Jobs and recorded runs, newest first, with outcome and duration",
		Args:              oneName,
		ValidArgsFunction: s.completeNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			c, err := s.clients()
			if err != nil {
				return err
			}
			if output == "" {
				return History(cmd.Context(), c, cmd.OutOrStdout(), args[0])
			}
			list, err := HistoryList(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			return printObject(cmd.OutOrStdout(), output, list)
		},
	}
	addOutputFlag(cmd, &output)
	return cmd
}

func (s *session) listCommand() *cobra.Command {
	var output string
	var all bool
	cmd := &cobra.Command{
		Use:               "list [-A]",
		Short:             "Every CronJob with its schedule, next run, last result and state",
		Args:              noArgs("list"),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output); err != nil {
				return err
			}
			c, err := s.clients()
			if err != nil {
				return err
			}
			list, err := ListCronJobs(cmd.Context(), c, all)
			if err != nil {
				return err
			}
			if output == "" {
				return PrintList(cmd.OutOrStdout(), list, c, all)
			}
			return printObject(cmd.OutOrStdout(), output, list)
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "list the CronJobs of every namespace")
	addOutputFlag(cmd, &output)
	return cmd
}

// noArgs refuses any argument to the command name.
func noArgs(name string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != 0 {
			return badUsage("%s takes no arguments, got %d", name, len(args))
		}
		return nil
	}
}

// versionCommand needs no cluster: it answers even where no kubeconfig
// works.
func versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:               "version",
		Short:             "The plugin's version, commit and Go version",
		Args:              noArgs("version"),
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintln(cmd.OutOrStdout(), Name, version.Get())
			return err
		},
	}
}

// completeNames offers the names of the CronJobs in the namespace the
// flags select, for the one NAME argument. Without a cluster it offers
// nothing, rather than file names.
func (s *session) completeNames(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) != 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	c, err := s.clients()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	list, err := c.Cron.BatchV1().CronJobs(c.Namespace).List(contextOf(cmd), metav1.ListOptions{})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return prefixed(list.Items, func(cj cronv1.CronJob) string { return cj.Name }, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// prefixed is the names of items that start with what is typed so far.
func prefixed[T any](items []T, name func(T) string, toComplete string) []cobra.Completion {
	var names []cobra.Completion
	for _, it := range items {
		if n := name(it); strings.HasPrefix(n, toComplete) {
			names = append(names, n)
		}
	}
	return names
}

// completeTimes offers, for --at and --until, the next scheduled times of
// the CronJob the command names that the spec does not hold yet, in UTC
// as RFC 3339: the times skip --at takes, and the ends of suspensions
// that let the run then start.
func (s *session) completeTimes(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) != 1 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	c, err := s.clients()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	cj, err := c.get(contextOf(cmd), args[0])
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	_, _, times, err := NextTimes(cj, c.Clock.Now(), completedTimes+MaxSkipTimes)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, t := range times {
		if v := t.UTC().Format(utcLayout); holdMark(&cj.Spec, t) == "" && strings.HasPrefix(v, toComplete) && len(out) < completedTimes {
			out = append(out, v)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completedTimes is how many times completeTimes offers.
const completedTimes = 10

// completeNamespaces offers the cluster's namespaces for -n, as kubectl's
// own completion does.
func (s *session) completeNamespaces(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	c, err := s.clients()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	list, err := c.Kube.CoreV1().Namespaces().List(contextOf(cmd), metav1.ListOptions{})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return prefixed(list.Items, func(n corev1.Namespace) string { return n.Name }, toComplete), cobra.ShellCompDirectiveNoFileComp
}

func contextOf(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}
