// Command release writes a release of cronjob-controller into one directory
// (make release VERSION=v0.1.0): everything a user installs from, with no
// registry and no network but the Go module proxy.
//
//   - install.yaml: artifacts/deploy rendered with the image at the
//     version (IMAGE_REPO:VERSION), so one kubectl apply -f installs the
//     CRDs, the namespace, the RBAC, the Deployment, its metrics Service and
//     its PodDisruptionBudget;
//   - cronjob-controller-image_<version>.oci.tar: the image as one OCI
//     image index of every platform, in an oci-archive (an OCI image
//     layout in a tar, for skopeo copy --all oci-archive:...): what a
//     registry serves under the tag;
//   - cronjob-controller-image_<version>_linux_<arch>.tar: the image per
//     platform, as make image builds it (docker load, podman load);
//   - kubectl-cronjob_<version>_<os>_<arch>.tar.gz (.zip for windows): the
//     plugin with the LICENSE, per platform;
//   - cronjob-controller-<version without v>.tgz: the Helm chart of
//     charts/cronjob-controller at the version, its image IMAGE_REPO
//     (packaged by hack/helm, with Helm's own Go module);
//   - cronjob.yaml: the krew manifest naming those archives with their
//     sha256, checked by krew's own validator (sigs.k8s.io/krew's
//     validate-krew-manifest, run with go run at a pinned version, so the
//     product's go.mod does not grow);
//   - SHA256SUMS of every file above.
package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"
)

// KrewValidator is krew's manifest validator, at the version whose rules
// the manifest is written to.
const KrewValidator = "sigs.k8s.io/krew/cmd/validate-krew-manifest@v0.4.3"

type config struct {
	version, revision string
	imageRepo         string
	downloadURL       string // where the release's files are served, the version appended
	out               string
	pluginPlatforms   []string
	imagePlatforms    []string
	validateKrew      bool
	chart             bool
}

func main() {
	var c config
	var plugins, images string
	flag.StringVar(&c.version, "version", "", "the release's version, a v-prefixed semantic version (required)")
	flag.StringVar(&c.revision, "revision", "", "the commit the release is built from (stamped into the binaries)")
	flag.StringVar(&c.imageRepo, "image-repo", "", "the image's repository; install.yaml names IMAGE_REPO:VERSION (required)")
	flag.StringVar(&c.downloadURL, "download-url", "https://github.com/cronjob-controller/cronjob-controller/releases/download", "where the release's files are served; the krew manifest's URIs are this/VERSION/FILE")
	flag.StringVar(&c.out, "o", "_output/release", "the directory to write; emptied first")
	flag.StringVar(&plugins, "plugin-platforms", "linux/amd64,linux/arm64,darwin/amd64,darwin/arm64,windows/amd64,windows/arm64", "os/arch of the plugin archives")
	flag.StringVar(&images, "image-platforms", "linux/amd64,linux/arm64", "os/arch of the image archives")
	flag.BoolVar(&c.validateKrew, "validate-krew", true, "check the krew manifest with "+KrewValidator)
	flag.BoolVar(&c.chart, "chart", true, "package the Helm chart (hack/helm)")
	flag.Parse()
	c.pluginPlatforms = split(plugins)
	c.imagePlatforms = split(images)
	if err := c.run(); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func split(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func (c config) run() error {
	if !strings.HasPrefix(c.version, "v") || c.imageRepo == "" {
		return errors.New("-version (v-prefixed) and -image-repo are required")
	}
	if err := os.RemoveAll(c.out); err != nil {
		return err
	}
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	started := time.Now()
	if err := c.installYAML(); err != nil {
		return fmt.Errorf("install.yaml: %w", err)
	}
	for _, p := range c.imagePlatforms {
		if err := c.image(p); err != nil {
			return fmt.Errorf("image for %s: %w", p, err)
		}
	}
	if len(c.imagePlatforms) > 0 {
		out := filepath.Join(c.out, fmt.Sprintf("cronjob-controller-image_%s.oci.tar", c.version))
		cmd := exec.Command("go", "run", "./hack/image", "-oci", "-o", out, "-image", c.imageRepo+":"+c.version,
			"-platform", strings.Join(c.imagePlatforms, ","), "-ldflags", c.ldflags())
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("the OCI image index: %w", err)
		}
	}
	var platforms []krewPlatform
	for _, p := range c.pluginPlatforms {
		kp, err := c.pluginArchive(p)
		if err != nil {
			return fmt.Errorf("plugin for %s: %w", p, err)
		}
		platforms = append(platforms, kp)
	}
	manifest, err := KrewManifest(c.version, platforms)
	if err != nil {
		return err
	}
	manifestPath := filepath.Join(c.out, "cronjob.yaml")
	if err := os.WriteFile(manifestPath, manifest, 0o644); err != nil {
		return err
	}
	if c.validateKrew {
		cmd := exec.Command("go", "run", KrewValidator, "-manifest", manifestPath, "-skip-install")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("krew's validator refused %s: %v\n%s", manifestPath, err, out)
		}
	}
	if c.chart {
		out, err := filepath.Abs(c.out)
		if err != nil {
			return err
		}
		cmd := exec.Command("go", "run", ".", "package", "-version", c.version, "-image-repo", c.imageRepo, "-o", out)
		cmd.Dir = filepath.Join("hack", "helm")
		if b, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("packaging the chart: %v\n%s", err, b)
		}
	}
	if err := writeSums(c.out); err != nil {
		return err
	}
	fmt.Printf("release %s in %s (%.0fs)\n", c.version, c.out, time.Since(started).Seconds())
	return nil
}

func (c config) ldflags() string {
	const pkg = "github.com/cronjob-controller/cronjob-controller/pkg/version"
	return fmt.Sprintf("-X %s.version=%s -X %s.revision=%s", pkg, c.version, pkg, c.revision)
}

// installYAML renders artifacts/deploy through an overlay that sets the
// image, so the shipped kustomization stays the one description.
func (c config) installYAML() error {
	overlay, err := os.MkdirTemp(filepath.Dir(filepath.Clean(c.out)), ".install-overlay-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(overlay)
	deploy, err := filepath.Abs("artifacts/deploy")
	if err != nil {
		return err
	}
	absOverlay, err := filepath.Abs(overlay)
	if err != nil {
		return err
	}
	rel, err := filepath.Rel(absOverlay, deploy) // kustomize takes relative paths only
	if err != nil {
		return err
	}
	k := map[string]any{
		"apiVersion": "kustomize.config.k8s.io/v1beta1",
		"kind":       "Kustomization",
		"resources":  []string{filepath.ToSlash(rel)},
		"images":     []map[string]string{{"name": "cronjob-controller", "newName": c.imageRepo, "newTag": c.version}},
	}
	data, err := yaml.Marshal(k)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), data, 0o644); err != nil {
		return err
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.Command("kubectl", "kustomize", overlay)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("kubectl kustomize: %v\n%s", err, stderr.String())
	}
	header := fmt.Sprintf("# cronjob-controller %s: the CRDs, the namespace, the RBAC, the Deployment,\n"+
		"# its metrics Service and PodDisruptionBudget, with the image %s:%s.\n"+
		"#   kubectl apply -f install.yaml\n", c.version, c.imageRepo, c.version)
	return os.WriteFile(filepath.Join(c.out, "install.yaml"), append([]byte(header), stdout.Bytes()...), 0o644)
}

// image builds the image archive with hack/image, as make image does.
func (c config) image(platform string) error {
	osName, arch, ok := strings.Cut(platform, "/")
	if !ok || osName != "linux" {
		return fmt.Errorf("%q: images are linux/ARCH", platform)
	}
	out := filepath.Join(c.out, fmt.Sprintf("cronjob-controller-image_%s_linux_%s.tar", c.version, arch))
	cmd := exec.Command("go", "run", "./hack/image", "-o", out, "-image", c.imageRepo+":"+c.version,
		"-platform", platform, "-ldflags", c.ldflags())
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

// krewPlatform is one platform's entry of the krew manifest.
type krewPlatform struct {
	OS, Arch, Archive, SHA256, Bin string
	URI                            string
}

// pluginArchive builds the plugin for one os/arch and archives it with the
// LICENSE (krew's validator wants one installed beside the binary).
func (c config) pluginArchive(platform string) (krewPlatform, error) {
	osName, arch, ok := strings.Cut(platform, "/")
	if !ok {
		return krewPlatform{}, fmt.Errorf("%q is not os/arch", platform)
	}
	bin := "kubectl-cronjob"
	if osName == "windows" {
		bin += ".exe"
	}
	tmp, err := os.MkdirTemp("", "kubectl-cronjob-")
	if err != nil {
		return krewPlatform{}, err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w "+c.ldflags(), "-o", filepath.Join(tmp, bin), "./cmd/kubectl-cronjob")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+osName, "GOARCH="+arch)
	if out, err := cmd.CombinedOutput(); err != nil {
		return krewPlatform{}, fmt.Errorf("go build: %v\n%s", err, out)
	}
	files := map[string]string{bin: filepath.Join(tmp, bin), "LICENSE": "LICENSE"}
	name := fmt.Sprintf("kubectl-cronjob_%s_%s_%s", c.version, osName, arch)
	var archive []byte
	if osName == "windows" {
		name += ".zip"
		archive, err = zipArchive(files)
	} else {
		name += ".tar.gz"
		archive, err = tarGz(files)
	}
	if err != nil {
		return krewPlatform{}, err
	}
	if err := os.WriteFile(filepath.Join(c.out, name), archive, 0o644); err != nil {
		return krewPlatform{}, err
	}
	sum := sha256.Sum256(archive)
	return krewPlatform{OS: osName, Arch: arch, Archive: name, SHA256: hex.EncodeToString(sum[:]), Bin: bin,
		URI: strings.TrimSuffix(c.downloadURL, "/") + "/" + c.version + "/" + name}, nil
}

// epoch is every archive entry's time, so the same binaries give the same
// archive and the same sha256.
var epoch = time.Unix(0, 0).UTC()

func sortedNames(files map[string]string) []string {
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func tarGz(files map[string]string) ([]byte, error) {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for _, n := range sortedNames(files) {
		data, err := os.ReadFile(files[n])
		if err != nil {
			return nil, err
		}
		mode := int64(0o644)
		if strings.HasPrefix(n, "kubectl-") {
			mode = 0o755
		}
		if err := tw.WriteHeader(&tar.Header{Name: n, Mode: mode, Size: int64(len(data)), ModTime: epoch, Typeflag: tar.TypeReg}); err != nil {
			return nil, err
		}
		if _, err := tw.Write(data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func zipArchive(files map[string]string) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, n := range sortedNames(files) {
		data, err := os.ReadFile(files[n])
		if err != nil {
			return nil, err
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: n, Method: zip.Deflate, Modified: epoch})
		if err != nil {
			return nil, err
		}
		if _, err := w.Write(data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// KrewCaveats is what krew prints after installing the plugin: how to
// complete kubectl cronjob's command lines.
const KrewCaveats = `For kubectl cronjob <TAB> (kubectl 1.26 and later), put an executable
kubectl_complete-cronjob on your PATH that runs:

  #!/bin/sh
  exec kubectl-cronjob __complete "$@"
`

// KrewManifest is the plugin's krew manifest (krew.googlecontainertools.github.com/v1alpha2
// Plugin, named cronjob so that krew installs it as kubectl cronjob).
func KrewManifest(version string, platforms []krewPlatform) ([]byte, error) {
	if len(platforms) == 0 {
		return nil, errors.New("no plugin platform")
	}
	var specs []map[string]any
	for _, p := range platforms {
		specs = append(specs, map[string]any{
			"selector": map[string]any{"matchLabels": map[string]string{"os": p.OS, "arch": p.Arch}},
			"uri":      p.URI,
			"sha256":   p.SHA256,
			"bin":      p.Bin,
			"files": []map[string]string{
				{"from": p.Bin, "to": "."},
				{"from": "LICENSE", "to": "."},
			},
		})
	}
	m := map[string]any{
		"apiVersion": "krew.googlecontainertools.github.com/v1alpha2",
		"kind":       "Plugin",
		"metadata":   map[string]any{"name": "cronjob"},
		"spec": map[string]any{
			"version":          version,
			"homepage":         "https://github.com/cronjob-controller/cronjob-controller",
			"shortDescription": "List, run, suspend, resume and inspect cronjob-controller's CronJobs",
			"description": "Works with the CronJobs of batch.tutorial.kubebuilder.io/v1 (cronjob-controller):\n" +
				"list shows each with its next run, last result and state (-A for every namespace),\n" +
				"run starts one Job now, next prints the next scheduled times, suspend and resume\n" +
				"toggle scheduled runs (resume also ends a pause after failed runs), history lists\n" +
				"the Jobs with their outcome, version prints the plugin's build. list, next and\n" +
				"history print -o json or -o yaml; completion prints shell completion scripts.\n",
			// krew links only bin onto PATH: kubectl's completion of plugins
			// needs a helper beside it, which the user adds.
			"caveats":   KrewCaveats,
			"platforms": specs,
		},
	}
	return yaml.Marshal(m)
}

// writeSums writes SHA256SUMS, in the format sha256sum -c reads, of every
// file in dir, by name.
func writeSums(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var lines []string
	for _, e := range entries {
		if e.IsDir() || e.Name() == "SHA256SUMS" {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			return err
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return err
		}
		lines = append(lines, hex.EncodeToString(h.Sum(nil))+"  "+e.Name())
	}
	return os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
}
