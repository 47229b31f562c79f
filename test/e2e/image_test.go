//go:build e2e

package e2e

import (
	"bytes"
	"debug/buildinfo"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/cronjob-controller/cronjob-controller/hack/image/imagearchive"
	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// The image make image builds: its config is what the Deployment expects
// (non-root user, the controller as entrypoint, this machine's platform),
// its one layer is a static binary with the time zone database in it, and
// that binary, run as a container runtime would run it (the image's file
// system as its root and nothing of the host's, as the image's user, with
// an empty environment), does its job against the control plane and
// resolves a spec.timeZone.
//
// The build is go build of the controller with other flags than the test
// binary's (about 4 CPU-minutes on a cold build cache, seconds warm) and
// an archive of 12 MB (about 2 s).
func TestImage(t *testing.T) {
	archive := filepath.Join(t.TempDir(), "image.tar")
	start := time.Now()
	build := exec.Command("go", "run", "./hack/image", "-o", archive, "-image", "cronjob-controller:e2e")
	build.Dir = env.root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the image: %v\n%s", err, out)
	} else {
		t.Logf("built in %v: %s", time.Since(start).Round(100*time.Millisecond), bytes.TrimSpace(out))
	}
	img, err := imagearchive.Read(archive)
	if err != nil {
		t.Fatal(err)
	}

	cfg := img.Config
	if want := []string{"cronjob-controller:e2e"}; fmt.Sprint(img.RepoTags) != fmt.Sprint(want) {
		t.Errorf("tags %q, want %q", img.RepoTags, want)
	}
	if cfg.OS != "linux" || cfg.Architecture != runtime.GOARCH {
		t.Errorf("platform %s/%s, want linux/%s", cfg.OS, cfg.Architecture, runtime.GOARCH)
	}
	uid, gid, err := numericUser(cfg.Config.User)
	if err != nil || uid == 0 || gid == 0 {
		t.Errorf("user %q: %v; want a numeric non-root user and group", cfg.Config.User, err)
	}
	if len(cfg.Config.Entrypoint) != 1 || cfg.Config.Entrypoint[0] != "/cronjob-controller" || len(cfg.Config.Cmd) != 0 {
		t.Fatalf("entrypoint %q cmd %q, want [/cronjob-controller] alone", cfg.Config.Entrypoint, cfg.Config.Cmd)
	}
	if len(img.Layers) != 1 || len(img.Layers[0].Files) != 1 || img.Layers[0].Files[0].Header.Name != "cronjob-controller" {
		t.Fatalf("want one layer holding cronjob-controller alone, got %+v", img.Layers)
	}
	binary := img.Layers[0].Files[0].Data
	checkStaticWithTZData(t, binary)

	rootfs := t.TempDir()
	if err := img.Unpack(rootfs); err != nil {
		t.Fatal(err)
	}
	// t.TempDir is 0700: the image's user must be able to enter its root.
	if err := os.Chmod(rootfs, 0o755); err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := os.ReadFile(env.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rootfs, "kubeconfig"), kubeconfig, 0o644); err != nil {
		t.Fatal(err)
	}
	confine := confinement(uint32(uid), uint32(gid), rootfs)
	if confine == nil {
		t.Log("neither root nor user namespaces: the binary runs on the host's file system, so the zone check below cannot tell embedded tzdata from the host's")
	} else {
		checkConfinementHidesZoneinfo(t, confine)
	}

	ns := newNamespace(t)
	entrypoint := cfg.Config.Entrypoint[0]
	cmd := &exec.Cmd{
		Path:        entrypoint,
		Args:        append([]string{entrypoint}, controllerArgs("/kubeconfig")...),
		Dir:         "/",
		Env:         []string{},
		SysProcAttr: confine,
	}
	if confine == nil {
		cmd.Path = filepath.Join(rootfs, entrypoint)
		cmd.Args = append([]string{cmd.Path}, controllerArgs(filepath.Join(rootfs, "kubeconfig"))...)
	}
	startControllerCmd(t, cmd)

	every := createCronJob(t, cronJob(ns, "from-image", "@every 2s"))
	zoned := createCronJob(t, cronJob(ns, "zoned", "0 12 * * *", func(cj *cronv1.CronJob) {
		cj.Spec.TimeZone = ptr.To("Asia/Kolkata")
	}))
	eventually(t, 30*time.Second, "a Job from the controller of the image", func() (bool, string) {
		n := len(jobsOf(t, ns, every))
		return n >= 1, fmt.Sprintf("%d Jobs", n)
	})
	kolkata, err := time.LoadLocation("Asia/Kolkata")
	if err != nil {
		t.Fatal(err)
	}
	// 12:00 in Kolkata (UTC+5:30, no daylight saving) is 06:30 UTC.
	created := zoned.CreationTimestamp.In(kolkata)
	want := time.Date(created.Year(), created.Month(), created.Day(), 12, 0, 0, 0, kolkata)
	if !want.After(created) {
		want = want.AddDate(0, 0, 1)
	}
	eventually(t, 30*time.Second, "the next run of a CronJob in Asia/Kolkata", func() (bool, string) {
		cur := getCronJob(t, ns, zoned.Name)
		cond := meta.FindStatusCondition(cur.Status.Conditions, cronv1.ConditionScheduleValid)
		if cond != nil && cond.Status == metav1.ConditionFalse {
			t.Fatalf("the zone did not resolve in the image: %s: %s", cond.Reason, cond.Message)
		}
		next := cur.Status.NextScheduleTime
		return next != nil && next.Equal(&metav1.Time{Time: want}) && cond != nil && cond.Status == metav1.ConditionTrue,
			fmt.Sprintf("next %v, want %v; condition %+v", next, want.UTC(), cond)
	})
}

// numericUser parses the uid:gid form the image config's User has here;
// a name would need an /etc/passwd the image does not have.
func numericUser(user string) (int, int, error) {
	u, g, ok := strings.Cut(user, ":")
	if !ok {
		return 0, 0, errors.New("no group")
	}
	uid, err := strconv.Atoi(u)
	if err != nil {
		return 0, 0, err
	}
	gid, err := strconv.Atoi(g)
	return uid, gid, err
}

// checkStaticWithTZData: the binary needs no dynamic loader or shared
// library (so it runs in an image with neither), and was built with the
// time zone database embedded.
func checkStaticWithTZData(t *testing.T, binary []byte) {
	t.Helper()
	f, err := elf.NewFile(bytes.NewReader(binary))
	if err != nil {
		t.Fatalf("the layer's file is not an ELF binary: %v", err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary names a dynamic loader (PT_INTERP): not static")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) != 0 {
		t.Errorf("the binary needs shared libraries %q", libs)
	}
	info, err := buildinfo.Read(bytes.NewReader(binary))
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if settings["CGO_ENABLED"] != "0" || settings["GOOS"] != "linux" || settings["GOARCH"] != runtime.GOARCH {
		t.Errorf("built with CGO_ENABLED=%q GOOS=%q GOARCH=%q, want 0, linux, %s",
			settings["CGO_ENABLED"], settings["GOOS"], settings["GOARCH"], runtime.GOARCH)
	}
	if !strings.Contains(","+settings["-tags"]+",", ",timetzdata,") {
		t.Errorf("built with -tags %q, want timetzdata (the zone database embedded)", settings["-tags"])
	}
	if info.Path != "github.com/cronjob-controller/cronjob-controller" {
		t.Errorf("the binary is %s, want the controller", info.Path)
	}
}

// confinement runs a process with root as its file system root, as uid:gid:
// directly as root, or in a user namespace mapping uid:gid to ours. Nil when
// neither is possible here.
func confinement(uid, gid uint32, root string) *syscall.SysProcAttr {
	attr := &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: uid, Gid: gid}}
	if os.Geteuid() == 0 {
		return attr
	}
	attr.Cloneflags = syscall.CLONE_NEWUSER
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: int(uid), HostID: os.Getuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: int(gid), HostID: os.Getgid(), Size: 1}}
	attr.GidMappingsEnableSetgroups = false
	attr.Credential.NoSetGroups = true
	probe := &exec.Cmd{Path: "/cronjob-controller", Args: []string{"/cronjob-controller", "-h"}, SysProcAttr: attr}
	if err := probe.Run(); err != nil {
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			return nil // could not start: user namespaces are off
		}
	}
	return attr
}

// checkConfinementHidesZoneinfo is the control for the zone check: in the
// same confinement, a static binary without embedded tzdata cannot load
// Asia/Kolkata, so the controller's success there is the embedded copy's.
func checkConfinementHidesZoneinfo(t *testing.T, confine *syscall.SysProcAttr) {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "main.go")
	prog := `package main

import (
	"fmt"
	"os"
	"time"
)

func main() {
	if _, err := time.LoadLocation("Asia/Kolkata"); err != nil {
		fmt.Println(err)
		os.Exit(3)
	}
}
`
	if err := os.WriteFile(src, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	root := confine.Chroot
	build := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(root, "loadzone"), src)
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the zone probe: %v\n%s", err, out)
	}
	defer os.Remove(filepath.Join(root, "loadzone"))
	probe := &exec.Cmd{Path: "/loadzone", Args: []string{"/loadzone"}, Dir: "/", Env: []string{}, SysProcAttr: confine}
	out, err := probe.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Fatalf("a binary without embedded tzdata, confined as the controller is: %v %s; want it unable to load Asia/Kolkata", err, out)
	}
}
