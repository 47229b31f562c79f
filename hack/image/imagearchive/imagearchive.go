// Package imagearchive reads an image archive in the `docker save` format
// (manifest.json, the config, the layer blobs) with the standard library
// alone, checking what docker load checks: each layer's uncompressed digest
// is the config's diff_id. It lets tests look inside what hack/image wrote
// without trusting the library that wrote it.
package imagearchive

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// Image is the one image of an archive.
type Image struct {
	RepoTags []string
	// RawConfig is the config file as stored; Config is what tests look at.
	RawConfig []byte
	Config    Config
	Layers    []Layer
}

// Config is the part of an image config (OCI image spec, "config") a
// runtime acts on.
type Config struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Variant      string `json:"variant,omitempty"`
	Config       struct {
		User       string            `json:"User"`
		Entrypoint []string          `json:"Entrypoint"`
		Cmd        []string          `json:"Cmd"`
		Env        []string          `json:"Env"`
		WorkingDir string            `json:"WorkingDir"`
		Labels     map[string]string `json:"Labels"`
	} `json:"config"`
	RootFS struct {
		Type    string   `json:"type"`
		DiffIDs []string `json:"diff_ids"`
	} `json:"rootfs"`
}

// Layer is one layer's file system entries, in archive order.
type Layer struct {
	Files []File
}

// File is one entry of a layer.
type File struct {
	Header tar.Header
	Data   []byte
}

type manifestEntry struct {
	Config   string
	RepoTags []string
	Layers   []string
}

// Read reads an archive holding exactly one image.
func Read(archive string) (*Image, error) {
	files, err := readTar(archive)
	if err != nil {
		return nil, err
	}
	var manifest []manifestEntry
	if err := json.Unmarshal(files["manifest.json"], &manifest); err != nil {
		return nil, fmt.Errorf("%s: manifest.json: %w", archive, err)
	}
	if len(manifest) != 1 {
		return nil, fmt.Errorf("%s: %d images in manifest.json, want 1", archive, len(manifest))
	}
	m := manifest[0]
	img := &Image{RepoTags: m.RepoTags, RawConfig: files[m.Config]}
	if img.RawConfig == nil {
		return nil, fmt.Errorf("%s: config %q missing", archive, m.Config)
	}
	if err := json.Unmarshal(img.RawConfig, &img.Config); err != nil {
		return nil, fmt.Errorf("%s: config: %w", archive, err)
	}
	if len(img.Config.RootFS.DiffIDs) != len(m.Layers) {
		return nil, fmt.Errorf("%s: %d layers, %d diff_ids", archive, len(m.Layers), len(img.Config.RootFS.DiffIDs))
	}
	for i, name := range m.Layers {
		blob, ok := files[name]
		if !ok {
			return nil, fmt.Errorf("%s: layer %q missing", archive, name)
		}
		uncompressed, err := decompress(blob)
		if err != nil {
			return nil, fmt.Errorf("%s: layer %q: %w", archive, name, err)
		}
		sum := sha256.Sum256(uncompressed)
		if got, want := "sha256:"+hex.EncodeToString(sum[:]), img.Config.RootFS.DiffIDs[i]; got != want {
			return nil, fmt.Errorf("%s: layer %q has digest %s, the config's diff_id is %s", archive, name, got, want)
		}
		layer, err := readLayer(uncompressed)
		if err != nil {
			return nil, fmt.Errorf("%s: layer %q: %w", archive, name, err)
		}
		img.Layers = append(img.Layers, layer)
	}
	return img, nil
}

// readTar returns the regular files of the outer archive by name.
func readTar(archive string) (map[string][]byte, error) {
	f, err := os.Open(archive)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	files := map[string][]byte{}
	tr := tar.NewReader(bufio.NewReader(f))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", archive, err)
		}
		if hdr.Typeflag != tar.TypeReg {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", archive, hdr.Name, err)
		}
		files[path.Clean(hdr.Name)] = data
	}
}

// decompress undoes gzip if the blob is gzipped (docker load takes both).
func decompress(blob []byte) ([]byte, error) {
	if !bytes.HasPrefix(blob, []byte{0x1f, 0x8b}) {
		return blob, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(blob))
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr)
}

func readLayer(uncompressed []byte) (Layer, error) {
	var l Layer
	tr := tar.NewReader(bytes.NewReader(uncompressed))
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return l, nil
		}
		if err != nil {
			return l, err
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return l, err
		}
		l.Files = append(l.Files, File{Header: *hdr, Data: data})
	}
}

// Unpack writes the image's file system under dir, layer over layer, with
// each entry's mode. Only directories and regular files are supported, which
// is all hack/image writes.
func (img *Image) Unpack(dir string) error {
	for _, l := range img.Layers {
		for _, f := range l.Files {
			name := path.Clean("/" + f.Header.Name)
			if name == "/" {
				continue
			}
			if strings.HasPrefix(path.Base(name), ".wh.") {
				return fmt.Errorf("%s: whiteouts are not supported", f.Header.Name)
			}
			target := filepath.Join(dir, filepath.FromSlash(name))
			mode := os.FileMode(f.Header.Mode).Perm()
			switch f.Header.Typeflag {
			case tar.TypeDir:
				if err := os.MkdirAll(target, mode); err != nil {
					return err
				}
			case tar.TypeReg:
				if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
					return err
				}
				if err := os.WriteFile(target, f.Data, mode); err != nil {
					return err
				}
				// WriteFile's mode passes through the umask.
				if err := os.Chmod(target, mode); err != nil {
					return err
				}
			default:
				return fmt.Errorf("%s: entry type %q not supported", f.Header.Name, f.Header.Typeflag)
			}
		}
	}
	return nil
}
