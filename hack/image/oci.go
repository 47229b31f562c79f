package main

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// OCIIndex is the images, one per platform, as one OCI image index: the
// multi-platform image a registry serves under one tag. Each image is made
// OCI throughout (manifest and config media types), as an index holds.
func OCIIndex(images map[string]v1.Image) (v1.ImageIndex, error) {
	platforms := make([]string, 0, len(images))
	for p := range images {
		platforms = append(platforms, p)
	}
	slices.Sort(platforms) // the same images give the same index digest
	var adds []mutate.IndexAddendum
	for _, spec := range platforms {
		p, err := v1.ParsePlatform(spec)
		if err != nil {
			return nil, err
		}
		img := mutate.MediaType(mutate.ConfigMediaType(images[spec], types.OCIConfigJSON), types.OCIManifestSchema1)
		adds = append(adds, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{Platform: p}})
	}
	return mutate.IndexMediaType(mutate.AppendManifests(empty.Index, adds...), types.OCIImageIndex), nil
}

// WriteOCIArchive writes the index as an OCI image layout in a tar (an
// oci-archive, as skopeo copy --all oci-archive:... reads), named tag:
// index.json names it by the annotations the OCI spec and containerd read.
func WriteOCIArchive(out string, tag name.Tag, idx v1.ImageIndex) error {
	dir, err := os.MkdirTemp("", "cronjob-controller-oci-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p, err := layout.Write(dir, empty.Index)
	if err != nil {
		return err
	}
	if err := p.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": tag.TagStr(),
		"io.containerd.image.name":          tag.String(),
	})); err != nil {
		return err
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	epoch := time.Unix(0, 0).UTC()
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: filepath.ToSlash(rel) + "/", Mode: 0o755, ModTime: epoch})
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: filepath.ToSlash(rel), Mode: 0o644, Size: int64(len(data)), ModTime: epoch}); err != nil {
			return err
		}
		_, err = tw.Write(data)
		return err
	})
	if err != nil {
		return err
	}
	if err := tw.Close(); err != nil {
		return err
	}
	partial := out + ".partial"
	if err := os.WriteFile(partial, buf.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(partial, out)
}

// runOCI builds the controller for each platform and writes one
// oci-archive holding their index.
func runOCI(ctx context.Context, out, ref string, platforms []string, pkg, ldflags string) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("image name %q: %w", ref, err)
	}
	tmp, err := os.MkdirTemp("", "cronjob-controller-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	images := map[string]v1.Image{}
	for _, spec := range platforms {
		platform, err := v1.ParsePlatform(spec)
		if err != nil {
			return err
		}
		if platform.OS != "linux" {
			return fmt.Errorf("platform %s: only linux images are built", spec)
		}
		binary := filepath.Join(tmp, "cronjob-controller-"+platform.Architecture)
		if err := BuildBinary(ctx, pkg, *platform, binary, ldflags); err != nil {
			return err
		}
		data, err := os.ReadFile(binary)
		if err != nil {
			return err
		}
		img, err := Image(data, *platform)
		if err != nil {
			return err
		}
		images[spec] = img
	}
	idx, err := OCIIndex(images)
	if err != nil {
		return err
	}
	if err := WriteOCIArchive(out, tag, idx); err != nil {
		return err
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	fmt.Printf("%s: %s %v, index %s\n", out, tag, platforms, digest)
	return nil
}
