// Command helm renders and packages the chart in charts/cronjob-controller
// with Helm's own Go packages (helm.sh/helm/v3), so no helm binary is
// needed. It is a module of its own so the product's go.mod does not carry
// Helm. Its tests lint the chart and compare what it renders at its
// defaults with artifacts/deploy; the end-to-end test applies what
// `go run . template` prints on the embedded control plane; make release
// runs `go run . package`.
//
//	go run . template [-release NAME] [-namespace NS] [-set key=value,...]
//	go run . package -version v0.1.0 [-image-repo REPO] -o DIR
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	"helm.sh/helm/v3/pkg/strvals"
)

// ChartDir is the chart, found from this file so tests and go run agree.
func ChartDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "charts", "cronjob-controller")
}

// Rendered is a chart rendered as helm install would apply it.
type Rendered struct {
	CRDs      []string          // crds/, applied first and never templated
	Templates map[string]string // by template path, NOTES.txt apart
	Notes     string
}

// Render renders the chart for a release with the values given (merged over
// values.yaml and checked against values.schema.json).
func Render(release, namespace string, values map[string]any) (*Rendered, error) {
	ch, err := loader.Load(ChartDir())
	if err != nil {
		return nil, err
	}
	return render(ch, release, namespace, values)
}

func render(ch *chart.Chart, release, namespace string, values map[string]any) (*Rendered, error) {
	vals, err := chartutil.ToRenderValues(ch, values, chartutil.ReleaseOptions{
		Name: release, Namespace: namespace, IsInstall: true, Revision: 1,
	}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	files, err := engine.Render(ch, vals)
	if err != nil {
		return nil, err
	}
	r := &Rendered{Templates: map[string]string{}}
	for name, text := range files {
		switch {
		case strings.HasSuffix(name, "NOTES.txt"):
			r.Notes = text
		case strings.HasPrefix(filepath.Base(name), "_"), strings.TrimSpace(text) == "":
		default:
			r.Templates[name] = text
		}
	}
	for _, crd := range ch.CRDObjects() {
		r.CRDs = append(r.CRDs, string(crd.File.Data))
	}
	return r, nil
}

// YAML is the rendered chart as one stream: CRDs, then templates by name.
func (r *Rendered) YAML() string {
	var b strings.Builder
	for _, c := range r.CRDs {
		b.WriteString("---\n" + strings.TrimPrefix(c, "---\n"))
	}
	names := make([]string, 0, len(r.Templates))
	for n := range r.Templates {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		fmt.Fprintf(&b, "---\n# Source: %s\n%s\n", n, strings.TrimPrefix(strings.TrimSpace(r.Templates[n]), "---\n"))
	}
	return b.String()
}

// defaultRepository is values.yaml's image.repository, which package
// replaces with the release's.
const defaultRepository = "ghcr.io/cronjob-controller/cronjob-controller"

// Package writes the chart as NAME-VERSION.tgz into dir, its version and
// appVersion the release's (version without its v for the chart, as Helm
// wants SemVer) and its image repository repo, and returns the file's path.
func Package(version, repo, dir string) (string, error) {
	ch, err := loader.Load(ChartDir())
	if err != nil {
		return "", err
	}
	ch.Metadata.Version = strings.TrimPrefix(version, "v")
	ch.Metadata.AppVersion = version
	if repo != "" {
		for _, f := range ch.Raw {
			if f.Name == chartutil.ValuesfileName {
				old := []byte("repository: " + defaultRepository + "\n")
				if !bytes.Contains(f.Data, old) {
					return "", fmt.Errorf("values.yaml has no line %q", old)
				}
				f.Data = bytes.Replace(f.Data, old, []byte("repository: "+repo+"\n"), 1)
			}
		}
	}
	if err := ch.Validate(); err != nil {
		return "", err
	}
	return chartutil.Save(ch, dir)
}

func main() {
	if len(os.Args) >= 2 && os.Args[1] == "package" {
		fs := flag.NewFlagSet("package", flag.ExitOnError)
		version := fs.String("version", "", "the release's version, v-prefixed")
		repo := fs.String("image-repo", "", "the image repository the chart defaults to")
		out := fs.String("o", ".", "the directory to write the .tgz into")
		_ = fs.Parse(os.Args[2:])
		path, err := Package(*version, *repo, *out)
		if err != nil {
			fmt.Fprintln(os.Stderr, "helm:", err)
			os.Exit(1)
		}
		fmt.Println(path)
		return
	}
	if len(os.Args) < 2 || os.Args[1] != "template" {
		fmt.Fprintln(os.Stderr, "usage: go run . template [-release NAME] [-namespace NS] [-set key=value,...]\n       go run . package -version v0.1.0 [-image-repo REPO] -o DIR")
		os.Exit(2)
	}
	fs := flag.NewFlagSet("template", flag.ExitOnError)
	release := fs.String("release", "cronjob-controller", "the release's name")
	namespace := fs.String("namespace", "cronjob-controller-system", "the release's namespace")
	set := fs.String("set", "", "values, as helm --set takes them")
	_ = fs.Parse(os.Args[2:])
	values := map[string]any{}
	if *set != "" {
		if err := strvals.ParseInto(*set, values); err != nil {
			fmt.Fprintln(os.Stderr, "helm:", err)
			os.Exit(2)
		}
	}
	r, err := Render(*release, *namespace, values)
	if err != nil {
		fmt.Fprintln(os.Stderr, "helm:", err)
		os.Exit(1)
	}
	fmt.Print(r.YAML())
}
