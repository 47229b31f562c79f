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
	// controller-gen writes one document per kind; only CronJob's has a
	// job template to tidy.
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		if strings.TrimSpace(strings.TrimPrefix(doc, "---")) == "" {
			continue
		}
		if err := tidy([]byte(doc), out); err != nil {
			return err
		}
	}
	return nil
}

func tidy(raw []byte, out io.Writer) error {
	var crd map[string]any
	if err := yaml.Unmarshal(raw, &crd); err != nil {
		return fmt.Errorf("parsing CRD: %w", err)
	}
	versions, _ := lookup(crd, "spec", "versions").([]any)
	if len(versions) == 0 {
		return fmt.Errorf("no spec.versions in input")
	}
	if lookup(crd, "spec", "names", "kind") == "CronJob" {
		for _, v := range versions {
			tmpl, ok := lookup(v, "schema", "openAPIV3Schema", "properties", "spec", "properties", "jobTemplate").(map[string]any)
			if !ok {
				return fmt.Errorf("no spec.jobTemplate schema in version %v", lookup(v, "name"))
			}
			tidyTemplate(tmpl, true)
			meta, ok := lookup(v, "schema", "openAPIV3Schema", "properties", "metadata").(map[string]any)
			if !ok {
				return fmt.Errorf("no metadata schema in version %v", lookup(v, "name"))
			}
			meta["properties"] = map[string]any{"name": map[string]any{"type": "string"}}
		}
	}
	b, err := yaml.Marshal(crd)
	if err != nil {
		return err
	}
	_, err = out.Write(append([]byte("---\n"), b...))
	return err
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
