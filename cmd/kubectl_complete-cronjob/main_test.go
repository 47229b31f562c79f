package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// kubectl runs kubectl_complete-cronjob with the words after kubectl
// cronjob; it asks kubectl-cronjob __complete with the same words, and
// exits as the plugin does.
func TestCompleteHelperAsksThePluginsComplete(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in plugin is a shell script")
	}
	dir := t.TempDir()
	record := filepath.Join(dir, "args")
	// A stand-in for kubectl-cronjob that records its arguments, one a
	// line, and exits with the code the test sets.
	script := "#!/bin/sh\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > " + record + "\nexit \"$EXIT_CODE\"\n"
	if err := os.WriteFile(filepath.Join(dir, plugin), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
	for _, exit := range []string{"0", "3"} {
		t.Setenv("EXIT_CODE", exit)
		code := complete([]string{"history", "-n", "team a", ""})
		b, err := os.ReadFile(record)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := string(b), "__complete\nhistory\n-n\nteam a\n\n"; got != want {
			t.Errorf("the plugin got %q, want %q", strings.Split(got, "\n"), strings.Split(want, "\n"))
		}
		if want := map[string]int{"0": 0, "3": 3}[exit]; code != want {
			t.Errorf("exit %d, want the plugin's %d", code, want)
		}
	}
	// Without the plugin on PATH it says so and fails.
	t.Setenv("PATH", t.TempDir())
	if code := complete([]string{""}); code != 1 {
		t.Errorf("without the plugin: exit %d, want 1", code)
	}
}
