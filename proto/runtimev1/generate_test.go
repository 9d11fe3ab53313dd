package runtimev1

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedCodeIsCurrent regenerates the Go from proto/runtime.proto
// as `make proto` does and compares it with what is committed. It needs
// protoc and the plugins `make proto` installs in bin/, and skips
// without them (CI does not install them: the Go is committed).
func TestGeneratedCodeIsCurrent(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	plugins := map[string]string{}
	for _, p := range []string{"protoc-gen-go", "protoc-gen-go-grpc"} {
		plugins[p] = filepath.Join(root, "bin", p)
		if _, err := os.Stat(plugins[p]); err != nil {
			t.Skipf("%s is not installed (make proto installs it)", p)
		}
	}
	if _, err := exec.LookPath("protoc"); err != nil {
		t.Skip("protoc is not installed (apt-get install protobuf-compiler)")
	}
	out := t.TempDir()
	cmd := exec.Command("protoc", "--plugin=protoc-gen-go="+plugins["protoc-gen-go"],
		"--plugin=protoc-gen-go-grpc="+plugins["protoc-gen-go-grpc"],
		"--go_out="+out, "--go_opt=module=github.com/mkube/mkube",
		"--go-grpc_out="+out, "--go-grpc_opt=module=github.com/mkube/mkube", "proto/runtime.proto")
	cmd.Dir = root
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("protoc: %v\n%s", err, b)
	}
	for _, name := range []string{"runtime.pb.go", "runtime_grpc.pb.go"} {
		want, err := os.ReadFile(filepath.Join(out, "proto", "runtimev1", name))
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := os.ReadFile(name); !bytes.Equal(got, want) {
			t.Errorf("proto/runtimev1/%s is not what proto/runtime.proto generates: run `make proto`", name)
		}
	}
}
