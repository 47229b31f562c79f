//go:build tools

// Package tools pins the code generators this project runs, so that
// hack/update-codegen.sh uses the version recorded in go.mod.
package tools

import _ "k8s.io/code-generator"
