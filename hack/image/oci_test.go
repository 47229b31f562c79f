package main

import (
	"archive/tar"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// untar writes an archive's files under dir.
func untar(t *testing.T, archive, dir string) {
	t.Helper()
	data, err := os.ReadFile(archive)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, filepath.FromSlash(h.Name))
		if h.Typeflag == tar.TypeDir {
			if err := os.MkdirAll(path, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		content, _ := io.ReadAll(tr)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, content, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// The release's image is one OCI image index under the tag, one image per
// platform, each an OCI manifest whose config names its platform and whose
// layer is that platform's binary; the archive is an OCI image layout that
// names the tag in index.json, and the same binaries give the same bytes.
func TestOCIArchiveHoldsOneIndexOfEveryPlatform(t *testing.T) {
	binaries := map[string][]byte{"linux/amd64": []byte("amd64 binary"), "linux/arm64": []byte("arm64 binary")}
	write := func(out string) {
		images := map[string]v1.Image{}
		for spec, binary := range binaries {
			p, err := v1.ParsePlatform(spec)
			if err != nil {
				t.Fatal(err)
			}
			img, err := Image(binary, *p)
			if err != nil {
				t.Fatal(err)
			}
			images[spec] = img
		}
		idx, err := OCIIndex(images)
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteOCIArchive(out, name.MustParseReference("registry.example.com/cc:v0.1.0").(name.Tag), idx); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	first, second := filepath.Join(dir, "a.oci.tar"), filepath.Join(dir, "b.oci.tar")
	write(first)
	write(second)
	a, _ := os.ReadFile(first)
	b, _ := os.ReadFile(second)
	if !bytes.Equal(a, b) {
		t.Error("two archives of the same binaries differ")
	}

	root := filepath.Join(dir, "layout")
	untar(t, first, root)
	top, err := layout.ImageIndexFromPath(root)
	if err != nil {
		t.Fatal(err)
	}
	topManifest, err := top.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(topManifest.Manifests) != 1 {
		t.Fatalf("index.json names %d entries, want the one index", len(topManifest.Manifests))
	}
	entry := topManifest.Manifests[0]
	if entry.MediaType != types.OCIImageIndex || entry.Annotations["org.opencontainers.image.ref.name"] != "v0.1.0" ||
		entry.Annotations["io.containerd.image.name"] != "registry.example.com/cc:v0.1.0" {
		t.Errorf("index.json's entry %+v, want an OCI index named registry.example.com/cc:v0.1.0", entry)
	}
	idx, err := top.ImageIndex(entry.Digest)
	if err != nil {
		t.Fatal(err)
	}
	m, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Manifests) != len(binaries) {
		t.Fatalf("the index holds %d images, want %d", len(m.Manifests), len(binaries))
	}
	for _, d := range m.Manifests {
		spec := d.Platform.OS + "/" + d.Platform.Architecture
		if d.MediaType != types.OCIManifestSchema1 || binaries[spec] == nil {
			t.Errorf("index entry %s %s, want an OCI manifest of a built platform", d.MediaType, spec)
			continue
		}
		img, err := idx.Image(d.Digest)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := img.ConfigFile()
		if err != nil {
			t.Fatal(err)
		}
		if cfg.OS+"/"+cfg.Architecture != spec || cfg.Config.User != User || cfg.Config.Entrypoint[0] != BinaryPath {
			t.Errorf("%s: config %s/%s user %s entrypoint %v", spec, cfg.OS, cfg.Architecture, cfg.Config.User, cfg.Config.Entrypoint)
		}
		layers, err := img.Layers()
		if err != nil || len(layers) != 1 {
			t.Fatalf("%s: %d layers, %v", spec, len(layers), err)
		}
		rc, err := layers[0].Uncompressed()
		if err != nil {
			t.Fatal(err)
		}
		tr := tar.NewReader(rc)
		h, err := tr.Next()
		if err != nil {
			t.Fatal(err)
		}
		content, _ := io.ReadAll(tr)
		rc.Close()
		if h.Name != BinaryPath[1:] || !bytes.Equal(content, binaries[spec]) {
			t.Errorf("%s: layer holds %s %q, want its own binary", spec, h.Name, content)
		}
	}
}
