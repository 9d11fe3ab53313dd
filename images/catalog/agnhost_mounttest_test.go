package catalog

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/mkube/mkube/images/shell"
	clocktesting "k8s.io/utils/clock/testing"
)

// modeVolume is a mounted volume whose files have modes and owners, as
// the kubelet leaves them on the node's disk: names relative to its
// root, "" for the root itself.
type modeVolume struct {
	files map[string]*modeFile
	dirs  map[string]fs.FileMode
	magic int64 // statfs f_type
}

type modeFile struct {
	data     []byte
	mode     fs.FileMode
	uid, gid uint32
}

func newModeVolume(magic int64, rootMode fs.FileMode) *modeVolume {
	return &modeVolume{files: map[string]*modeFile{}, dirs: map[string]fs.FileMode{"": rootMode}, magic: magic}
}

func (v *modeVolume) ReadFile(name string) ([]byte, error) {
	if f, ok := v.files[name]; ok {
		return append([]byte{}, f.data...), nil
	}
	if _, ok := v.dirs[name]; ok {
		return nil, errors.New("Is a directory")
	}
	return nil, fs.ErrNotExist
}
func (v *modeVolume) WriteFile(name string, data []byte, appendTo bool) error {
	f := v.files[name]
	if f == nil {
		f = &modeFile{mode: 0o644}
		v.files[name] = f
	}
	if !appendTo {
		f.data = nil
	}
	f.data = append(f.data, data...)
	return nil
}
func (v *modeVolume) Stat(name string) (bool, bool) {
	if _, ok := v.dirs[name]; ok {
		return true, true
	}
	_, ok := v.files[name]
	return ok, false
}
func (v *modeVolume) Mkdir(name string, _ bool) error { v.dirs[name] = 0o755; return nil }
func (v *modeVolume) Remove(name string, _ bool) error {
	delete(v.files, name)
	return nil
}
func (v *modeVolume) List(string) ([]string, error) {
	var names []string
	for n := range v.files {
		names = append(names, path.Base(n))
	}
	sort.Strings(names)
	return names, nil
}
func (v *modeVolume) Files() []shell.File { return nil }
func (v *modeVolume) Info(name string) (shell.FileInfo, error) {
	if f, ok := v.files[name]; ok {
		return shell.FileInfo{Mode: f.mode, UID: f.uid, GID: f.gid}, nil
	}
	if m, ok := v.dirs[name]; ok {
		return shell.FileInfo{Mode: fs.ModeDir | m}, nil
	}
	return shell.FileInfo{}, fs.ErrNotExist
}
func (v *modeVolume) Create(name string, data []byte, perm fs.FileMode) error {
	if _, ok := v.dirs[path.Dir("/" + name)[1:]]; !ok {
		return fs.ErrNotExist
	}
	f := v.files[name]
	if f == nil {
		f = &modeFile{mode: perm}
		v.files[name] = f
	}
	f.data = append([]byte{}, data...)
	return nil
}
func (v *modeVolume) FSType(string) (int64, error) { return v.magic, nil }

// ext4Magic is the f_type of a node's disk.
const ext4Magic = 0xef53

// mounttestFS is a container of the agnhost image with the volumes
// Kubernetes' conformance tests mount: a ConfigMap (read-only, its files
// of defaultMode 0644, one item of mode 0400, one owned by 1000:1001),
// an emptyDir on the node's disk (0777) and one of medium Memory (a
// tmpfs, 1777).
func mounttestFS() (*shell.FS, *modeVolume) {
	fsys := shell.NewFS()
	for name, data := range Lookup("registry.k8s.io/e2e-test-images/agnhost:2.66").Files {
		fsys.WriteFile(name, []byte(data))
	}
	config := newModeVolume(ext4Magic, 0o777)
	config.files["data-1"] = &modeFile{data: []byte("value-1"), mode: 0o644}
	config.dirs["path"], config.dirs["path/to"] = 0o755, 0o755
	config.files["path/to/data-2"] = &modeFile{data: []byte("value-2"), mode: 0o400}
	config.files["owned"] = &modeFile{data: []byte("x"), mode: 0o440, uid: 1000, gid: 1001}
	fsys.Mount("/etc/configmap-volume", config, true)
	fsys.Mount("/test-volume", newModeVolume(ext4Magic, 0o777), false)
	fsys.Mount("/memory-volume", newModeVolume(shell.TmpfsMagic, fs.ModeSticky|0o777), false)
	return fsys, config
}

func TestAgnhostMounttestPrintsWhatTheRealOnePrints(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // all of it
		stderr string
	}{
		{
			name:   "a ConfigMap key's content, mode and owner, as the ConfigMap volume specs read them",
			args:   []string{"--file_content=/etc/configmap-volume/data-1", "--file_mode=/etc/configmap-volume/data-1", "--file_owner=/etc/configmap-volume/data-1"},
			stdout: "mode of file \"/etc/configmap-volume/data-1\": -rw-r--r--\nowner UID of \"/etc/configmap-volume/data-1\": 0\nowner GID of \"/etc/configmap-volume/data-1\": 0\ncontent of file \"/etc/configmap-volume/data-1\": value-1\n",
		},
		{
			name:   "an item's own mode and a file's owner are the volume's",
			args:   []string{"--file_mode=/etc/configmap-volume/path/to/data-2", "--file_owner=/etc/configmap-volume/owned", "--file_perm=/etc/configmap-volume/owned"},
			stdout: "mode of file \"/etc/configmap-volume/path/to/data-2\": -r--------\nperms of file \"/etc/configmap-volume/owned\": -r--r-----\nowner UID of \"/etc/configmap-volume/owned\": 1000\nowner GID of \"/etc/configmap-volume/owned\": 1001\n",
		},
		{
			name:   "an emptyDir on a tmpfs: its type, a new 0666 file in it, and the file's perms (EmptyDir (root,0666,tmpfs))",
			args:   []string{"--fs_type=/memory-volume", "--new_file_0666=/memory-volume/test-file", "--file_perm=/memory-volume/test-file"},
			stdout: "mount type of \"/memory-volume\": tmpfs\ncontent of file \"/memory-volume/test-file\": mount-tester new file\n\nperms of file \"/memory-volume/test-file\": -rw-rw-rw-\n",
		},
		{
			name:   "a new 0777 file on the node's disk, and the volume's own mode (a tmpfs root is sticky)",
			args:   []string{"--fs_type=/test-volume", "--new_file_0777=/test-volume/test-file", "--file_perm=/test-volume/test-file", "--file_mode=/memory-volume"},
			stdout: "mount type of \"/test-volume\": 61267\ncontent of file \"/test-volume/test-file\": mount-tester new file\n\nmode of file \"/memory-volume\": dtrwxrwxrwx\nperms of file \"/test-volume/test-file\": -rwxrwxrwx\n",
		},
		{
			name:   "the steps run in their fixed order, not the flags': type, new files, mode, perms, owner, content",
			args:   []string{"--file_content=/etc/hostname-less", "--file-owner=/test-volume", "--file_perm=/test-volume", "--file_mode=/test-volume", "--new-file-0660=/test-volume/f", "--fs_type=/"},
			code:   1,
			stdout: "mount type of \"/\": 2035054128\ncontent of file \"/test-volume/f\": mount-tester new file\n\nmode of file \"/test-volume\": drwxrwxrwx\nperms of file \"/test-volume\": -rwxrwxrwx\nowner UID of \"/test-volume\": 0\nowner GID of \"/test-volume\": 0\nerror reading file content for \"/etc/hostname-less\": open /etc/hostname-less: no such file or directory\n",
		},
		{
			name:   "a read-only volume refuses the new file, and a missing path fails each step in Go's words; all steps run, exit 1",
			args:   []string{"--new_file_0644=/etc/configmap-volume/new", "--fs_type=/nope", "--file_mode=/nope", "--file_owner=/nope", "--file_content=/test-volume"},
			code:   1,
			stdout: "error from statfs(\"/nope\"): no such file or directory\nerror writing new file \"/etc/configmap-volume/new\": open /etc/configmap-volume/new: read-only file system\nerror from Stat(\"/nope\"): stat /nope: no such file or directory\nerror from stat(\"/nope\"): no such file or directory\nerror reading file content for \"/test-volume\": read /test-volume: is a directory\n",
		},
		{
			name: "a new file in a directory that is not there", args: []string{"--new_file_0644=/test-volume/no/f"}, code: 1,
			stdout: "error writing new file \"/test-volume/no/f\": open /test-volume/no/f: no such file or directory\n",
		},
		{
			name: "the content loop stops at once on the new-file content", args: []string{"--new_file_0644=/tmp/f", "--file_content_in_loop=/tmp/f"},
			stdout: "content of file \"/tmp/f\": mount-tester new file\n\ncontent of file \"/tmp/f\": mount-tester new file\n\n",
		},
		{name: "a retry time of 0 reads nothing", args: []string{"--file_content_in_loop=/nope", "--retry_time=0"}},
		{name: "nothing asked, nothing printed", args: nil},
		{name: "an unknown flag fails as pflag says", args: []string{"--file_contents=/x"}, code: 1, stderr: "Error: unknown flag: --file_contents\n"},
		{name: "an argument is refused: the command takes none", args: []string{"/etc/x"}, code: 1, stderr: "Error: accepts at most 0 arg(s), received 1\n"},
		{name: "a bool flag takes its value only after =", args: []string{"--break_on_expected_content", "false"}, code: 1, stderr: "Error: accepts at most 0 arg(s), received 1\n"},
		{
			name: "a bad number names the flag as normalized", args: []string{"--retry_time=soon"}, code: 1,
			stderr: "Error: invalid argument \"soon\" for \"--retry-time\" flag: strconv.ParseInt: parsing \"soon\": invalid syntax\n",
		},
		{name: "a string flag needs its value", args: []string{"--fs_type"}, code: 1, stderr: "Error: flag needs an argument: --fs_type\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fsys, _ := mounttestFS()
			var stdout, stderr strings.Builder
			p := shell.New(shell.Options{Clock: clocktesting.NewFakeClock(epoch), FS: fsys, Stdout: &stdout, Stderr: &stderr,
				Programs: agnhostImage().Programs})
			code, err := p.Exec(context.Background(), append([]string{"/agnhost", "mounttest"}, tc.args...))
			if err != nil || code != tc.code {
				t.Errorf("exit (%d, %v), want %d", code, err, tc.code)
			}
			if stdout.String() != tc.stdout {
				t.Errorf("stdout:\n%s\nwant:\n%s", stdout.String(), tc.stdout)
			}
			if stderr.String() != tc.stderr {
				t.Errorf("stderr %q, want %q", stderr.String(), tc.stderr)
			}
		})
	}
}

// The "updates should be reflected in volume" specs run mounttest with
// --break_on_expected_content=false: it prints the file every 2 s of the
// clock, whatever it holds, until --retry_time has passed; a file that
// goes away is an error it retries, and the last read's failure is its
// exit status.
func TestAgnhostMounttestLoopsOnTheClock(t *testing.T) {
	fsys, config := mounttestFS()
	clk := clocktesting.NewFakeClock(epoch)
	stdout := &syncBuffer{}
	p := shell.New(shell.Options{Clock: clk, FS: fsys, Stdout: stdout, Programs: agnhostImage().Programs})
	done := make(chan result, 1)
	go func() {
		code, err := p.Exec(context.Background(), []string{"/agnhost", "mounttest", "--break_on_expected_content=false",
			"--retry_time=6", "--file_content_in_loop=/etc/configmap-volume/data-1"})
		done <- result{code, err}
	}()
	const first = "content of file \"/etc/configmap-volume/data-1\": value-1\n"
	waitUntil(t, "the first read", func() bool { return clk.HasWaiters() && stdout.String() == first })
	config.files["data-1"] = &modeFile{data: []byte("value-2"), mode: 0o644} // what an update of the ConfigMap does
	clk.Step(2 * time.Second)
	waitUntil(t, "the second read", func() bool { return clk.HasWaiters() && strings.Count(stdout.String(), "\n") == 2 })
	delete(config.files, "data-1")
	clk.Step(2 * time.Second)
	waitUntil(t, "the third read", func() bool { return clk.HasWaiters() && strings.Count(stdout.String(), "\n") == 3 })
	clk.Step(2 * time.Second) // 6 s: done
	r := <-done
	want := first + "content of file \"/etc/configmap-volume/data-1\": value-2\n" +
		"Error reading file /etc/configmap-volume/data-1: open /etc/configmap-volume/data-1: no such file or directory, retrying\n"
	if r.code != 1 || r.err != nil || stdout.String() != want {
		t.Errorf("exit (%d, %v), stdout:\n%s\nwant (1), stdout:\n%s", r.code, r.err, stdout.String(), want)
	}
}

// Waiting for the new-file content, it says what it expected each time.
func TestAgnhostMounttestLoopWaitsForTheExpectedContent(t *testing.T) {
	fsys, _ := mounttestFS()
	clk := clocktesting.NewFakeClock(epoch)
	stdout := &syncBuffer{}
	p := shell.New(shell.Options{Clock: clk, FS: fsys, Stdout: stdout, Programs: agnhostImage().Programs})
	done := make(chan result, 1)
	ctx, kill := context.WithCancel(context.Background())
	defer kill()
	go func() {
		code, err := p.Exec(ctx, []string{"/agnhost", "mounttest", "--file_content_in_loop=/test-volume/f"})
		done <- result{code, err}
	}()
	waitUntil(t, "the first read", func() bool { return clk.HasWaiters() })
	fsys.WriteFile("/test-volume/f", []byte("partial"))
	clk.Step(2 * time.Second)
	waitUntil(t, "the second read", func() bool { return clk.HasWaiters() && strings.Count(stdout.String(), "Retrying") == 1 })
	fsys.WriteFile("/test-volume/f", []byte(mounttestContent))
	clk.Step(2 * time.Second)
	r := <-done
	want := "Error reading file /test-volume/f: open /test-volume/f: no such file or directory, retrying\n" +
		"content of file \"/test-volume/f\": partial\nUnexpected content. Expected: mount-tester new file\n. Retrying\n" +
		"content of file \"/test-volume/f\": mount-tester new file\n\n"
	if r.code != 0 || r.err != nil || stdout.String() != want {
		t.Errorf("exit (%d, %v), stdout:\n%s\nwant (0), stdout:\n%s", r.code, r.err, stdout.String(), want)
	}
}

// The [sig-node] Containers specs: entrypoint-tester prints its whole
// command line, by the name it was called by, so an ENTRYPOINT
// overridden with /agnhost-2 shows.
func TestAgnhostEntrypointTesterPrintsItsCommandLine(t *testing.T) {
	for _, argv := range [][]string{
		{"/agnhost", "entrypoint-tester", "override", "arguments"},
		{"/agnhost-2", "entrypoint-tester"},
		{"/agnhost-2", "entrypoint-tester", "override", "arguments"},
	} {
		t.Run(strings.Join(argv, " "), func(t *testing.T) {
			var stdout strings.Builder
			p := shell.New(shell.Options{Stdout: &stdout, Programs: agnhostImage().Programs})
			code, err := p.Exec(context.Background(), argv)
			if want := "[" + strings.Join(argv, " ") + "]\n"; code != 0 || err != nil || stdout.String() != want {
				t.Errorf("exit (%d, %v), stdout %q; want 0, %q", code, err, stdout.String(), want)
			}
		})
	}
}
