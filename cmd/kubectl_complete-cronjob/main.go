// Command kubectl_complete-cronjob completes kubectl cronjob's command
// lines: kubectl (1.26 and later) runs kubectl_complete-<plugin>, when it
// is on PATH, to complete the arguments of kubectl <plugin>. It passes
// them on to kubectl-cronjob __complete, cobra's completion request, so
// the plugin itself answers; it stays this small so that it needs no
// build of its own beyond go install.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// plugin is the executable that answers.
const plugin = "kubectl-cronjob"

func main() {
	os.Exit(complete(os.Args[1:]))
}

// complete runs plugin __complete ARGS with this process's standard
// streams, and returns its exit code.
func complete(args []string) int {
	cmd := exec.Command(plugin, append([]string{"__complete"}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exit):
		return exit.ExitCode()
	default:
		fmt.Fprintf(os.Stderr, "kubectl_complete-cronjob: %v\n", err)
		return 1
	}
}
