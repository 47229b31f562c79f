package version

import (
	"runtime/debug"
	"testing"
)

func TestStampedVersionWinsOverWhatTheToolchainRecorded(t *testing.T) {
	build := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/cronjob-controller/cronjob-controller", Version: "v0.0.9"},
		Settings:  []debug.BuildSetting{{Key: "vcs.revision", Value: "toolchain-commit"}},
	}
	for _, tc := range []struct {
		name              string
		version, revision string
		build             *debug.BuildInfo
		want              Info
	}{
		{"stamped by the Makefile", "v0.1.0", "0123abc", build,
			Info{Version: "v0.1.0", Revision: "0123abc", GoVersion: "go1.26.8"}},
		{"go install of a tagged module", "", "", build,
			Info{Version: "v0.0.9", Revision: "toolchain-commit", GoVersion: "go1.26.8"}},
		{"go build in a checkout", "", "", &debug.BuildInfo{
			GoVersion: "go1.26.8",
			Main:      debug.Module{Version: "(devel)"},
			Settings:  []debug.BuildSetting{{Key: "vcs.revision", Value: "checkout-commit"}},
		}, Info{Version: Unknown, Revision: "checkout-commit", GoVersion: "go1.26.8"}},
		{"nothing recorded", "", "", &debug.BuildInfo{GoVersion: "go1.26.8"},
			Info{Version: Unknown, Revision: Unknown, GoVersion: "go1.26.8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := get(tc.version, tc.revision, tc.build); got != tc.want {
				t.Errorf("get = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestInfoPrintsVersionCommitAndGoVersion(t *testing.T) {
	i := Info{Version: "v0.1.0", Revision: "0123abc", GoVersion: "go1.26.8"}
	if got, want := i.String(), "version v0.1.0, commit 0123abc, go1.26.8"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	kv := i.KeysAndValues()
	want := []any{"version", "v0.1.0", "revision", "0123abc", "goVersion", "go1.26.8"}
	if len(kv) != len(want) {
		t.Fatalf("KeysAndValues() = %v, want %v", kv, want)
	}
	for n := range want {
		if kv[n] != want[n] {
			t.Errorf("KeysAndValues() = %v, want %v", kv, want)
		}
	}
}

// A test binary is not stamped and has no module version: Get must still
// name the Go version and say unknown rather than leave a field empty.
func TestGetNeverLeavesAFieldEmpty(t *testing.T) {
	i := Get()
	if i.Version == "" || i.Revision == "" || i.GoVersion == "" {
		t.Errorf("Get() = %+v, a field empty", i)
	}
}
