// Command image builds the controller's container image with no container
// engine and writes it as an image archive that `docker load`, `podman load`
// and `kind load image-archive` read (the `docker save` format).
//
// The image has no base (scratch) and one layer holding one file: the
// controller, built static (CGO_ENABLED=0) with the time zone database
// embedded (-tags timetzdata), so spec.timeZone resolves in an image with no
// /usr/share/zoneinfo. It runs as 65532:65532 (non-root, the user of the
// shipped Deployment's securityContext). Timestamps are the Unix epoch, so
// the same source gives the same image digest.
//
//	go run ./hack/image -o _output/cronjob-controller-image.tar
//	go run ./hack/image -o arm.tar -platform linux/arm64 -image example.com/cronjob-controller:v1
//	go run ./hack/image -oci -o multi.oci.tar -platform linux/amd64,linux/arm64 -image example.com/cronjob-controller:v1
package main

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
)

const (
	// BinaryPath is where the controller sits in the image, and the entrypoint.
	BinaryPath = "/cronjob-controller"
	// User is the image's user and group: non-root, as distroless's nonroot.
	User = "65532:65532"
	// BuildTags embed the time zone database in the binary.
	BuildTags = "timetzdata"
)

func main() {
	out := flag.String("o", "", "the image archive to write (required)")
	ref := flag.String("image", "cronjob-controller:latest", "the image's name and tag in the archive")
	platform := flag.String("platform", "linux/"+runtime.GOARCH, "os/arch of the image (linux/amd64, linux/arm64, ...); with -oci, a comma-separated list")
	oci := flag.Bool("oci", false, "write an oci-archive holding an OCI image index of every -platform, instead of a docker save archive of one")
	pkg := flag.String("package", ".", "the controller's main package, built with go build")
	ldflags := flag.String("ldflags", "", "more -ldflags for go build, after -s -w: the Makefile's -X version stamps")
	flag.Parse()
	if *out == "" || flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "usage: image -o ARCHIVE [-image NAME:TAG] [-platform OS/ARCH[,...] [-oci]] [-package DIR] [-ldflags FLAGS]")
		os.Exit(2)
	}
	var err error
	if *oci {
		err = runOCI(context.Background(), *out, *ref, strings.Split(*platform, ","), *pkg, *ldflags)
	} else {
		err = run(context.Background(), *out, *ref, *platform, *pkg, *ldflags)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "image:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out, ref, platformSpec, pkg, ldflags string) error {
	tag, err := name.NewTag(ref)
	if err != nil {
		return fmt.Errorf("image name %q: %w", ref, err)
	}
	platform, err := v1.ParsePlatform(platformSpec)
	if err != nil {
		return err
	}
	if platform.OS != "linux" {
		return fmt.Errorf("platform %s: only linux images are built", platformSpec)
	}
	started := time.Now()
	tmp, err := os.MkdirTemp("", "cronjob-controller-image-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	binary := filepath.Join(tmp, "cronjob-controller")
	if err := BuildBinary(ctx, pkg, *platform, binary, ldflags); err != nil {
		return err
	}
	built := time.Now()
	data, err := os.ReadFile(binary)
	if err != nil {
		return err
	}
	img, err := Image(data, *platform)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return err
	}
	// Written beside the target and renamed, so a failed run leaves no
	// half archive for docker load to choke on.
	partial := out + ".partial"
	if err := tarball.WriteToFile(partial, tag, img); err != nil {
		os.Remove(partial)
		return fmt.Errorf("writing %s: %w", out, err)
	}
	if err := os.Rename(partial, out); err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	info, err := os.Stat(out)
	if err != nil {
		return err
	}
	fmt.Printf("%s: %s %s %s, %.1f MB (binary %.1f MB); go build %.1fs, archive %.1fs\n",
		out, tag, platform, digest, float64(info.Size())/1e6, float64(len(data))/1e6,
		built.Sub(started).Seconds(), time.Since(built).Seconds())
	return nil
}

// BuildBinary builds the controller for the platform: static, stripped,
// reproducible paths, time zone database embedded; ldflags (the version
// stamps) are added to -s -w.
func BuildBinary(ctx context.Context, pkg string, platform v1.Platform, out, ldflags string) error {
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-tags", BuildTags, "-ldflags=-s -w "+ldflags, "-o", out, pkg)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+platform.OS, "GOARCH="+platform.Architecture)
	if platform.Architecture == "arm" && platform.Variant != "" {
		cmd.Env = append(cmd.Env, "GOARM="+platform.Variant[len("v"):])
	}
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build for %s: %w", platform.String(), err)
	}
	return nil
}

// Image is the image of the controller binary: no base, one layer holding
// the binary at BinaryPath, run as User.
func Image(binary []byte, platform v1.Platform) (v1.Image, error) {
	if len(binary) == 0 {
		return nil, errors.New("empty binary")
	}
	epoch := v1.Time{Time: time.Unix(0, 0).UTC()}
	layerTar, err := layerTar(binary, epoch.Time)
	if err != nil {
		return nil, err
	}
	layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(layerTar)), nil
	})
	if err != nil {
		return nil, err
	}
	img, err := mutate.ConfigFile(empty.Image, &v1.ConfigFile{
		Architecture: platform.Architecture,
		OS:           platform.OS,
		Variant:      platform.Variant,
		Created:      epoch,
		Config: v1.Config{
			Entrypoint: []string{BinaryPath},
			User:       User,
			WorkingDir: "/",
			Labels: map[string]string{
				"org.opencontainers.image.title":       "cronjob-controller",
				"org.opencontainers.image.description": "CronJob controller for batch.tutorial.kubebuilder.io/v1",
			},
		},
		RootFS: v1.RootFS{Type: "layers"},
	})
	if err != nil {
		return nil, err
	}
	return mutate.Append(img, mutate.Addendum{
		Layer: layer,
		History: v1.History{
			Created:   epoch,
			CreatedBy: fmt.Sprintf("CGO_ENABLED=0 go build -trimpath -tags %s -ldflags='-s -w' (hack/image)", BuildTags),
			Comment:   "the controller, static, time zone database embedded",
		},
	})
}

// layerTar is the layer's file system: the binary alone, owned by root and
// executable by all, so the image's user runs it and cannot change it.
func layerTar(binary []byte, mtime time.Time) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	hdr := &tar.Header{
		Typeflag: tar.TypeReg,
		Name:     BinaryPath[1:],
		Mode:     0o755,
		Size:     int64(len(binary)),
		ModTime:  mtime,
	}
	if err := tw.WriteHeader(hdr); err != nil {
		return nil, err
	}
	if _, err := tw.Write(binary); err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
