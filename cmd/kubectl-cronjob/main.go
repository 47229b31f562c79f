// Command kubectl-cronjob is a kubectl plugin for the CronJobs of
// batch.tutorial.kubebuilder.io/v1: on PATH, it runs as kubectl cronjob
// list|run|next|suspend|resume|history|completion|version. The commands
// live in pkg/plugin.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"k8s.io/utils/clock"

	"github.com/cronjob-controller/cronjob-controller/pkg/plugin"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := plugin.CLI{Stdout: os.Stdout, Stderr: os.Stderr, Connect: plugin.Connect, Clock: clock.RealClock{}}.Main(ctx, os.Args[1:])
	stop()
	os.Exit(code)
}
