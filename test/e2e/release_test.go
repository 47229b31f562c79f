//go:build e2e

package e2e

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/cronjob-controller/cronjob-controller/hack/image/imagearchive"
)

// make release writes, with no registry: the Helm chart package (hack/helm's
// tests cover what it holds); install.yaml, which is
// artifacts/deploy with the image at IMAGE_REPO:VERSION and which one
// kubectl apply -f installs; the image archive tagged so, whose binary says
// the version; the plugin archive with the LICENSE, whose binary says the
// version; the krew manifest naming that archive with its sha256 (krew's
// validator accepted it, or make release would have failed); and SHA256SUMS,
// which sha256sum -c accepts. One platform each, to keep the build short.
func TestReleaseInstallsWithOneApply(t *testing.T) {
	const version = "v0.1.0-e2e.1"
	const repo = "registry.example.com/team/cronjob-controller"
	platform := "linux/" + runtime.GOARCH
	out := t.TempDir()
	release := exec.Command("make", "release", "VERSION="+version, "IMAGE_REPO="+repo, "RELEASE_DIR="+out,
		"PLUGIN_PLATFORMS="+platform, "IMAGE_PLATFORMS="+platform)
	release.Dir = env.root
	if b, err := release.CombinedOutput(); err != nil {
		t.Fatalf("make release: %v\n%s", err, b)
	}
	head, err := exec.Command("git", "-C", env.root, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	info := fmt.Sprintf("version %s, commit %s, %s", version, strings.TrimSpace(string(head)), runtime.Version())

	imageArchive := fmt.Sprintf("cronjob-controller-image_%s_linux_%s.tar", version, runtime.GOARCH)
	pluginArchive := fmt.Sprintf("kubectl-cronjob_%s_linux_%s.tar.gz", version, runtime.GOARCH)
	var files []string
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		files = append(files, e.Name())
	}
	chartPackage := "cronjob-controller-" + strings.TrimPrefix(version, "v") + ".tgz"
	ociArchive := fmt.Sprintf("cronjob-controller-image_%s.oci.tar", version)
	want := []string{"SHA256SUMS", chartPackage, ociArchive, imageArchive, "cronjob.yaml", "install.yaml", pluginArchive}
	sort.Strings(want)
	if !slices.Equal(files, want) {
		t.Errorf("the release holds %q, want %q", files, want)
	}
	check := exec.Command("sha256sum", "-c", "SHA256SUMS")
	check.Dir = out
	if b, err := check.CombinedOutput(); err != nil {
		t.Errorf("sha256sum -c SHA256SUMS: %v\n%s", err, b)
	}

	// install.yaml: the objects of artifacts/deploy, the image at the version.
	installed, err := decodeAll(filepath.Join(out, "install.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	deploy, err := renderKustomization(filepath.Join(env.root, "artifacts", "deploy"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := objectKeys(installed), objectKeys(deploy); !slices.Equal(got, want) {
		t.Errorf("install.yaml holds\n  %q\nwant what artifacts/deploy renders\n  %q", got, want)
	}
	for _, o := range installed {
		if o.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		for _, c := range containers {
			if got := c.(map[string]any)["image"]; got != repo+":"+version {
				t.Errorf("install.yaml's image %v, want %s", got, repo+":"+version)
			}
		}
	}
	if b, err := kubectl("apply", "-f", filepath.Join(out, "install.yaml")); err != nil {
		t.Fatalf("kubectl apply -f install.yaml: %v\n%s", err, b)
	}
	t.Cleanup(func() {
		_ = env.kube.AppsV1().Deployments(deployNamespace).Delete(context.Background(), "cronjob-controller", metav1.DeleteOptions{})
	})
	dep, err := env.kube.AppsV1().Deployments(deployNamespace).Get(context.Background(), "cronjob-controller", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := dep.Spec.Template.Spec.Containers[0].Image; got != repo+":"+version {
		t.Errorf("the applied Deployment's image %s, want %s", got, repo+":"+version)
	}

	// The image: tagged with the version, its binary stamped with it.
	img, err := imagearchive.Read(filepath.Join(out, imageArchive))
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{repo + ":" + version}; !slices.Equal(img.RepoTags, want) {
		t.Errorf("image tags %q, want %q", img.RepoTags, want)
	}
	if len(img.Layers) != 1 || len(img.Layers[0].Files) != 1 {
		t.Fatalf("want one layer holding the controller alone, got %+v", img.Layers)
	}
	bin := filepath.Join(t.TempDir(), "cronjob-controller")
	if err := os.WriteFile(bin, img.Layers[0].Files[0].Data, 0o755); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command(bin, "-version").CombinedOutput(); err != nil || string(b) != "cronjob-controller "+info+"\n" {
		t.Errorf("the image's controller -version: %v, %q; want %q", err, b, "cronjob-controller "+info)
	}

	// The plugin archive: the binary and the LICENSE; the binary says the version.
	archive, err := os.ReadFile(filepath.Join(out, pluginArchive))
	if err != nil {
		t.Fatal(err)
	}
	pluginDir := t.TempDir()
	names := untarGz(t, archive, pluginDir)
	if !slices.Equal(names, []string{"LICENSE", "kubectl-cronjob"}) {
		t.Errorf("the plugin archive holds %q, want LICENSE and kubectl-cronjob", names)
	}
	if b, err := exec.Command(filepath.Join(pluginDir, "kubectl-cronjob"), "version").CombinedOutput(); err != nil || string(b) != "kubectl-cronjob "+info+"\n" {
		t.Errorf("the released plugin's version: %v, %q; want %q", err, b, "kubectl-cronjob "+info)
	}

	// The krew manifest names that archive with its sha256.
	var manifest struct {
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Version   string `json:"version"`
			Platforms []struct {
				URI    string `json:"uri"`
				SHA256 string `json:"sha256"`
			} `json:"platforms"`
		} `json:"spec"`
	}
	data, err := os.ReadFile(filepath.Join(out, "cronjob.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sigsyaml.Unmarshal(data, &manifest); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(archive)
	if manifest.Metadata.Name != "cronjob" || manifest.Spec.Version != version || len(manifest.Spec.Platforms) != 1 ||
		manifest.Spec.Platforms[0].SHA256 != hex.EncodeToString(sum[:]) ||
		!strings.HasSuffix(manifest.Spec.Platforms[0].URI, "/"+version+"/"+pluginArchive) {
		t.Errorf("krew manifest %+v; want plugin cronjob %s, one platform naming %s with sha256 %x", manifest, version, pluginArchive, sum)
	}
	// krew itself installs the plugin from the manifest and the archive (it
	// checks the sha256), and what it installs runs as kubectl cronjob would.
	krewRoot := t.TempDir()
	install := exec.Command("go", "run", krew, "install", "--manifest="+filepath.Join(out, "cronjob.yaml"),
		"--archive="+filepath.Join(out, pluginArchive))
	install.Dir = env.root
	install.Env = append(os.Environ(), "KREW_ROOT="+krewRoot)
	if b, err := install.CombinedOutput(); err != nil {
		t.Fatalf("krew install: %v\n%s", err, b)
	}
	if b, err := exec.Command(filepath.Join(krewRoot, "bin", "kubectl-cronjob"), "version").CombinedOutput(); err != nil || string(b) != "kubectl-cronjob "+info+"\n" {
		t.Errorf("the plugin krew installed: %v, %q; want %q", err, b, "kubectl-cronjob "+info)
	}
	if _, err := os.Stat(filepath.Join(krewRoot, "store", "cronjob", version, "LICENSE")); err != nil {
		t.Errorf("krew installed no LICENSE beside the plugin: %v", err)
	}
}

// krew is krew's own command, at the version of the validator make release
// runs (hack/release's KrewValidator).
const krew = "sigs.k8s.io/krew/cmd/krew@v0.4.3"

func decodeAll(path string) ([]*unstructured.Unstructured, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var objs []*unstructured.Unstructured
	dec := yaml.NewYAMLOrJSONDecoder(f, 4096)
	for {
		o := &unstructured.Unstructured{}
		if err := dec.Decode(&o.Object); err == io.EOF {
			return objs, nil
		} else if err != nil {
			return nil, err
		}
		if len(o.Object) > 0 {
			objs = append(objs, o)
		}
	}
}

func objectKeys(objs []*unstructured.Unstructured) []string {
	var keys []string
	for _, o := range objs {
		keys = append(keys, o.GetKind()+" "+o.GetNamespace()+"/"+o.GetName())
	}
	sort.Strings(keys)
	return keys
}

// untarGz writes a tar.gz's files into dir and returns their names.
func untarGz(t *testing.T, data []byte, dir string) []string {
	t.Helper()
	gz, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names
		}
		if err != nil {
			t.Fatal(err)
		}
		content, _ := io.ReadAll(tr)
		if err := os.WriteFile(filepath.Join(dir, h.Name), content, os.FileMode(h.Mode)); err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
	}
}
