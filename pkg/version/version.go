// Package version says which build of cronjob-controller and kubectl-cronjob
// is running. The Makefile stamps Version and Revision with -ldflags -X
// (from git describe, or VERSION=); a build without them, such as go run or
// go install, falls back to what the Go toolchain recorded in the binary.
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Set at link time by the Makefile:
//
//	-X github.com/cronjob-controller/cronjob-controller/pkg/version.version=v0.1.0
//	-X github.com/cronjob-controller/cronjob-controller/pkg/version.revision=<commit>
//
// They are variables, not constants, because -X can set only variables.
var (
	version  string
	revision string
)

// Unknown is what Version and Revision say when neither the linker nor the
// toolchain recorded them.
const Unknown = "unknown"

// Info is one build's identity.
type Info struct {
	// Version is the release (v0.1.0), or git describe's name of a commit
	// after it (v0.1.0-3-gabc1234, -dirty when the tree had changes).
	Version string
	// Revision is the full commit hash the binary was built from.
	Revision string
	// GoVersion is the Go toolchain that built it (go1.26.8).
	GoVersion string
}

// Get returns the running binary's Info.
func Get() Info {
	info, _ := debug.ReadBuildInfo()
	return get(version, revision, info)
}

// get prefers what the linker stamped, then what the toolchain recorded:
// the module version for go install ...@vX.Y.Z, vcs.revision for a go build
// in a git checkout.
func get(stampedVersion, stampedRevision string, build *debug.BuildInfo) Info {
	i := Info{Version: stampedVersion, Revision: stampedRevision, GoVersion: runtime.Version()}
	if build != nil {
		if i.Version == "" && build.Main.Version != "" && build.Main.Version != "(devel)" {
			i.Version = build.Main.Version
		}
		for _, s := range build.Settings {
			if s.Key == "vcs.revision" && i.Revision == "" {
				i.Revision = s.Value
			}
		}
		if build.GoVersion != "" {
			i.GoVersion = build.GoVersion
		}
	}
	if i.Version == "" {
		i.Version = Unknown
	}
	if i.Revision == "" {
		i.Revision = Unknown
	}
	return i
}

// String is what -version prints: one line a bug report can quote.
func (i Info) String() string {
	return fmt.Sprintf("version %s, commit %s, %s", i.Version, i.Revision, i.GoVersion)
}

// KeysAndValues are the Info as structured-log pairs, for the start-up line.
func (i Info) KeysAndValues() []any {
	return []any{"version", i.Version, "revision", i.Revision, "goVersion", i.GoVersion}
}
