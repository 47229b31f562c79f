package main

import (
	"archive/tar"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/cronjob-controller/cronjob-controller/hack/image/imagearchive"
)

// writeArchive assembles an image around binary and writes it as make image
// does, returning what a reader of the archive sees.
func writeArchive(t *testing.T, binary []byte, platform, ref string) *imagearchive.Image {
	t.Helper()
	p, err := v1.ParsePlatform(platform)
	if err != nil {
		t.Fatal(err)
	}
	img, err := Image(binary, *p)
	if err != nil {
		t.Fatal(err)
	}
	tag, err := name.NewTag(ref)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "image.tar")
	if err := tarball.WriteToFile(path, tag, img); err != nil {
		t.Fatal(err)
	}
	read, err := imagearchive.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return read
}

// The archive holds one image whose config runs the binary as a non-root
// user on the asked platform, and whose one layer is the binary alone,
// executable and owned by root.
func TestImageConfigAndLayer(t *testing.T) {
	binary := []byte("\x7fELF not really, but bytes that must arrive intact\x00\xff")
	for _, c := range []struct{ platform, arch, variant string }{
		{"linux/amd64", "amd64", ""},
		{"linux/arm64/v8", "arm64", "v8"},
	} {
		t.Run(c.platform, func(t *testing.T) {
			img := writeArchive(t, binary, c.platform, "example.com/team/cronjob-controller:v1.2.3")
			if want := []string{"example.com/team/cronjob-controller:v1.2.3"}; !reflect.DeepEqual(img.RepoTags, want) {
				t.Errorf("RepoTags %q, want %q", img.RepoTags, want)
			}
			cfg := img.Config
			if cfg.OS != "linux" || cfg.Architecture != c.arch || cfg.Variant != c.variant {
				t.Errorf("platform %s/%s/%s, want linux/%s/%s", cfg.OS, cfg.Architecture, cfg.Variant, c.arch, c.variant)
			}
			if cfg.Config.User != "65532:65532" {
				t.Errorf("user %q, want 65532:65532", cfg.Config.User)
			}
			if want := []string{"/cronjob-controller"}; !reflect.DeepEqual(cfg.Config.Entrypoint, want) || len(cfg.Config.Cmd) != 0 {
				t.Errorf("entrypoint %q cmd %q, want %q and no cmd", cfg.Config.Entrypoint, cfg.Config.Cmd, want)
			}
			if len(img.Layers) != 1 || len(img.Layers[0].Files) != 1 {
				t.Fatalf("layers %+v, want one layer of one file", img.Layers)
			}
			f := img.Layers[0].Files[0]
			if f.Header.Name != "cronjob-controller" || f.Header.Typeflag != tar.TypeReg {
				t.Errorf("layer entry %q type %q, want the regular file cronjob-controller", f.Header.Name, f.Header.Typeflag)
			}
			if f.Header.Mode != 0o755 || f.Header.Uid != 0 || f.Header.Gid != 0 {
				t.Errorf("mode %o owner %d:%d, want 755 root:root", f.Header.Mode, f.Header.Uid, f.Header.Gid)
			}
			if !bytes.Equal(f.Data, binary) {
				t.Error("the layer's file is not the binary")
			}
			if f.Header.ModTime.Unix() != 0 {
				t.Errorf("mtime %v, want the epoch", f.Header.ModTime)
			}
		})
	}
}

// The same binary makes the same image, byte for byte: no build time or
// host detail leaks in.
func TestImageReproducible(t *testing.T) {
	digest := func() v1.Hash {
		img, err := Image([]byte("binary"), v1.Platform{OS: "linux", Architecture: "amd64"})
		if err != nil {
			t.Fatal(err)
		}
		d, err := img.Digest()
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if a, b := digest(), digest(); a != b {
		t.Errorf("two builds of one binary: %s and %s", a, b)
	}
}

// The test reader refuses what docker load refuses: a layer whose content
// is not the config's diff_id.
func TestReadRefusesTamperedLayer(t *testing.T) {
	img, err := Image([]byte("binary"), v1.Platform{OS: "linux", Architecture: "amd64"})
	if err != nil {
		t.Fatal(err)
	}
	other, err := Image([]byte("another binary"), v1.Platform{OS: "linux", Architecture: "amd64"})
	if err != nil {
		t.Fatal(err)
	}
	tag, _ := name.NewTag("cronjob-controller:latest")
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.tar"), filepath.Join(dir, "bad.tar")
	if err := tarball.WriteToFile(good, tag, img); err != nil {
		t.Fatal(err)
	}
	// The manifest and config of one image around the layer of another.
	if err := os.WriteFile(bad, swapLayer(t, good, other), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := imagearchive.Read(good); err != nil {
		t.Fatalf("the untouched archive: %v", err)
	}
	if _, err := imagearchive.Read(bad); err == nil || !strings.Contains(err.Error(), "diff_id") {
		t.Errorf("reading an archive with a swapped layer: %v, want a diff_id mismatch", err)
	}
}

// swapLayer rewrites the archive with the layer blob's content replaced by
// other's layer, keeping its name.
func swapLayer(t *testing.T, archive string, other v1.Image) []byte {
	t.Helper()
	layers, err := other.Layers()
	if err != nil {
		t.Fatal(err)
	}
	rc, err := layers[0].Compressed()
	if err != nil {
		t.Fatal(err)
	}
	var blob bytes.Buffer
	if _, err := blob.ReadFrom(rc); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(archive)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	var out bytes.Buffer
	tr, tw := tar.NewReader(in), tar.NewWriter(&out)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var data bytes.Buffer
		if _, err := data.ReadFrom(tr); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(hdr.Name, ".tar.gz") {
			data = blob
			hdr.Size = int64(blob.Len())
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(data.Bytes()); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
