package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func writeFiles(t *testing.T, files map[string]string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	paths := map[string]string{}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		paths[name] = p
	}
	return paths
}

// A plugin archive holds the binary (executable) and the LICENSE, and the
// same files always give the same bytes: the sha256 in the krew manifest
// of a release can be rebuilt and checked.
func TestPluginArchivesHoldTheBinaryAndLicenseAndAreReproducible(t *testing.T) {
	files := writeFiles(t, map[string]string{"kubectl-cronjob": "binary", "LICENSE": "Apache"})
	first, err := tarGz(files)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := tarGz(files)
	if !bytes.Equal(first, again) {
		t.Error("two tar.gz archives of the same files differ")
	}
	gz, err := gzip.NewReader(bytes.NewReader(first))
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	got := map[string]string{}
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(tr)
		got[h.Name] = string(data)
		if h.Name == "kubectl-cronjob" && h.Mode&0o111 == 0 {
			t.Errorf("the plugin in the archive is not executable: mode %o", h.Mode)
		}
	}
	if got["kubectl-cronjob"] != "binary" || got["LICENSE"] != "Apache" || len(got) != 2 {
		t.Errorf("tar.gz holds %v", got)
	}

	winFiles := writeFiles(t, map[string]string{"kubectl-cronjob.exe": "exe", "LICENSE": "Apache"})
	z, err := zipArchive(winFiles)
	if err != nil {
		t.Fatal(err)
	}
	zagain, _ := zipArchive(winFiles)
	if !bytes.Equal(z, zagain) {
		t.Error("two zip archives of the same files differ")
	}
	zr, err := zip.NewReader(bytes.NewReader(z), int64(len(z)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
	}
	if strings.Join(names, ",") != "LICENSE,kubectl-cronjob.exe" {
		t.Errorf("zip holds %v", names)
	}
}

// The krew manifest names the plugin cronjob (kubectl cronjob), the
// version, and per platform its selector, URI, sha256 and binary, with the
// LICENSE installed beside it.
func TestKrewManifestNamesEachArchiveWithItsSum(t *testing.T) {
	platforms := []krewPlatform{
		{OS: "linux", Arch: "amd64", Bin: "kubectl-cronjob", SHA256: "aa", URI: "https://example.com/v0.1.0/l.tar.gz"},
		{OS: "windows", Arch: "arm64", Bin: "kubectl-cronjob.exe", SHA256: "bb", URI: "https://example.com/v0.1.0/w.zip"},
	}
	data, err := KrewManifest("v0.1.0", platforms)
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Version          string `json:"version"`
			Homepage         string `json:"homepage"`
			ShortDescription string `json:"shortDescription"`
			Description      string `json:"description"`
			Caveats          string `json:"caveats"`
			Platforms        []struct {
				Selector struct {
					MatchLabels map[string]string `json:"matchLabels"`
				} `json:"selector"`
				URI    string              `json:"uri"`
				SHA256 string              `json:"sha256"`
				Bin    string              `json:"bin"`
				Files  []map[string]string `json:"files"`
			} `json:"platforms"`
		} `json:"spec"`
	}
	if err := yaml.UnmarshalStrict(data, &m); err != nil {
		t.Fatal(err)
	}
	if m.APIVersion != "krew.googlecontainertools.github.com/v1alpha2" || m.Kind != "Plugin" || m.Metadata.Name != "cronjob" || m.Spec.Version != "v0.1.0" {
		t.Errorf("manifest %s %s %s %s", m.APIVersion, m.Kind, m.Metadata.Name, m.Spec.Version)
	}
	// krew puts only the plugin on PATH: its caveats say how to add the
	// helper kubectl runs to complete kubectl cronjob.
	if !strings.Contains(m.Spec.Caveats, "kubectl_complete-cronjob") || !strings.Contains(m.Spec.Caveats, `exec kubectl-cronjob __complete "$@"`) {
		t.Errorf("the caveats do not say how to add completion:\n%s", m.Spec.Caveats)
	}
	if len(m.Spec.Platforms) != 2 {
		t.Fatalf("%d platforms, want 2", len(m.Spec.Platforms))
	}
	for i, p := range m.Spec.Platforms {
		want := platforms[i]
		if p.Selector.MatchLabels["os"] != want.OS || p.Selector.MatchLabels["arch"] != want.Arch ||
			p.URI != want.URI || p.SHA256 != want.SHA256 || p.Bin != want.Bin {
			t.Errorf("platform %d: %+v, want %+v", i, p, want)
		}
		if len(p.Files) != 2 || p.Files[0]["from"] != want.Bin || p.Files[1]["from"] != "LICENSE" {
			t.Errorf("platform %d installs %v, want the binary and the LICENSE", i, p.Files)
		}
	}
	if _, err := KrewManifest("v0.1.0", nil); err == nil {
		t.Error("a manifest with no platform was written")
	}
}

// SHA256SUMS lists every file of the release by name with its sha256, in
// the format sha256sum -c reads, and not itself.
func TestSHA256SUMSListsEveryFile(t *testing.T) {
	dir := t.TempDir()
	for name, content := range map[string]string{"install.yaml": "kind: List\n", "b.tar.gz": "archive", "SHA256SUMS": "stale"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := writeSums(dir); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(dir, "SHA256SUMS"))
	if err != nil {
		t.Fatal(err)
	}
	sum := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:]) }
	want := sum("archive") + "  b.tar.gz\n" + sum("kind: List\n") + "  install.yaml\n"
	if string(got) != want {
		t.Errorf("SHA256SUMS\n%s\nwant\n%s", got, want)
	}
}
