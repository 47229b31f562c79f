// Command crdtidy post-processes the CRD that controller-gen writes, so that
// it can be applied with client-side `kubectl apply` and the job template
// stays editable:
//
//   - descriptions are dropped inside spec.jobTemplate (the embedded Job and
//     Pod schemas make the CRD larger than the 256 KiB last-applied
//     annotation allows), while this API's own fields keep theirs so that
//     `kubectl explain` can describe them;
//   - CEL rules copied from k8s.io/api that compare with oldSelf (the
//     immutability of a running Job's fields) are removed from the template:
//     a template is not a running Job, and users must be able to edit it;
//   - descriptions are unwrapped: the line breaks of a Go comment inside a
//     paragraph become spaces (paragraphs and list items keep theirs), so
//     that `kubectl explain` wraps them to the terminal, not mid-sentence;
//   - the root metadata schema declares name (a string, no constraint of
//     its own), so that the root CEL rule on the name's length can point
//     its error at metadata.name (fieldPath must name a property the schema
//     has; apiextensions allows name and generateName there, nothing else).
//     The length stays a CEL rule: a maxLength failure would stop every CEL
//     rule and add a second error line saying so.
//
// It reads the CRD on stdin and writes the result on stdout.
package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"sigs.k8s.io/yaml"
)

func main() {
	if err := run(os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "crdtidy:", err)
		os.Exit(1)
	}
}

func run(in io.Reader, out io.Writer) error {
	raw, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	// controller-gen writes one document per kind; each is tidied alone.
	for _, doc := range strings.Split("\n"+string(raw), "\n---\n") {
		if strings.TrimSpace(doc) == "" {
			continue
		}
		b, err := tidy([]byte(doc))
		if err != nil {
			return err
		}
		if _, err := out.Write(append([]byte("---\n"), b...)); err != nil {
			return err
		}
	}
	return nil
}

// tidy post-processes one CRD. Only a kind with a job template (CronJob)
// has one to tidy.
func tidy(raw []byte) ([]byte, error) {
	var crd map[string]any
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		return nil, fmt.Errorf("parsing CRD: %w", err)
	}
	versions, _ := lookup(crd, "spec", "versions").([]any)
	if len(versions) == 0 {
		return nil, fmt.Errorf("no spec.versions in input")
	}
	for _, v := range versions {
		if tmpl, ok := lookup(v, "schema", "openAPIV3Schema", "properties", "spec", "properties", "jobTemplate").(map[string]any); ok {
			tidyTemplate(tmpl, true)
		} else if kind := lookup(crd, "spec", "names", "kind"); kind == "CronJob" {
			return nil, fmt.Errorf("no spec.jobTemplate schema in version %v", lookup(v, "name"))
		}
		meta, ok := lookup(v, "schema", "openAPIV3Schema", "properties", "metadata").(map[string]any)
		if !ok {
			return nil, fmt.Errorf("no metadata schema in version %v", lookup(v, "name"))
		}
		meta["properties"] = map[string]any{"name": map[string]any{"type": "string"}}
		unwrapDescriptions(lookup(v, "schema", "openAPIV3Schema"))
	}
	return yaml.Marshal(crd)
}

// unwrapDescriptions unwraps every description in a schema (unwrap).
func unwrapDescriptions(node any) {
	switch n := node.(type) {
	case map[string]any:
		for k, v := range n {
			if d, ok := v.(string); ok && k == "description" {
				n[k] = unwrap(d)
				continue
			}
			unwrapDescriptions(v)
		}
	case []any:
		for _, v := range n {
			unwrapDescriptions(v)
		}
	}
}

// unwrap joins the lines of each paragraph of a comment with spaces. A line
// that starts a list item ("- ", "* ") or is indented starts a line of its
// own, and blank lines still part paragraphs.
func unwrap(text string) string {
	paragraphs := strings.Split(text, "\n\n")
	for i, p := range paragraphs {
		lines := strings.Split(p, "\n")
		var b strings.Builder
		for j, l := range lines {
			if j > 0 {
				if strings.HasPrefix(l, "- ") || strings.HasPrefix(l, "* ") || strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") {
					b.WriteString("\n")
				} else {
					b.WriteString(" ")
				}
			}
			b.WriteString(l)
		}
		paragraphs[i] = b.String()
	}
	return strings.Join(paragraphs, "\n\n")
}

// tidyTemplate walks a schema node of the job template. The template's own
// description (top) is kept; everything below loses its description and its
// transition rules.
func tidyTemplate(node map[string]any, top bool) {
	if !top {
		delete(node, "description")
	}
	if rules, ok := node["x-kubernetes-validations"].([]any); ok {
		kept := rules[:0]
		for _, r := range rules {
			rule, _ := lookup(r, "rule").(string)
			if !strings.Contains(rule, "oldSelf") {
				kept = append(kept, r)
			}
		}
		if len(kept) == 0 {
			delete(node, "x-kubernetes-validations")
		} else {
			node["x-kubernetes-validations"] = kept
		}
	}
	if props, ok := node["properties"].(map[string]any); ok {
		for _, p := range props {
			if child, ok := p.(map[string]any); ok {
				tidyTemplate(child, false)
			}
		}
	}
	for _, key := range []string{"items", "additionalProperties"} {
		if child, ok := node[key].(map[string]any); ok {
			tidyTemplate(child, false)
		}
	}
}

// lookup follows a path of map keys, returning nil where it breaks off.
func lookup(node any, path ...string) any {
	for _, key := range path {
		m, ok := node.(map[string]any)
		if !ok {
			return nil
		}
		node = m[key]
	}
	return node
}
