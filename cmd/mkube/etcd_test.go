package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/apiserver/storageformat"
)

func TestStoredViewPrintsEitherFormatReadably(t *testing.T) {
	ns := &corev1.Namespace{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"}, ObjectMeta: metav1.ObjectMeta{Name: "default"}}
	const key = "/registry/namespaces/default"
	for _, format := range []storageformat.MediaType{storageformat.JSON, storageformat.Protobuf} {
		value, err := storageformat.NewCodec(format, builtinScheme()).Encode(ns)
		if err != nil {
			t.Fatal(err)
		}
		tests := []struct {
			name     string
			view     storedView
			want     []string
			position int
		}{
			{"YAML is headed by the key and its format", storedView{output: "yaml"}, []string{"# " + key + ": stored as " + string(format), "kind: Namespace", "name: default"}, 0},
			{"a later YAML document is separated", storedView{output: "yaml"}, []string{"---\n# " + key}, 1},
			{"JSON is the object alone, indented", storedView{output: "json"}, []string{"{\n  \"kind\": \"Namespace\"", "\"name\": \"default\""}, 0},
			{"keys only: the key, its format and size", storedView{keysOnly: true}, []string{key + "\t" + string(format) + "\t"}, 0},
		}
		for _, tt := range tests {
			t.Run(string(format)+": "+tt.name, func(t *testing.T) {
				tt.view.codec = storageformat.NewCodec(storageformat.JSON, builtinScheme())
				var out bytes.Buffer
				if err := tt.view.print(&out, tt.position, key, value); err != nil {
					t.Fatal(err)
				}
				for _, want := range tt.want {
					if !strings.Contains(out.String(), want) {
						t.Errorf("output lacks %q:\n%s", want, out.String())
					}
				}
				if tt.view.output == "json" && strings.Contains(out.String(), "#") {
					t.Errorf("JSON output has a comment:\n%s", out.String())
				}
			})
		}
	}
}

func TestEtcdUsageErrors(t *testing.T) {
	for _, args := range [][]string{{"etcd"}, {"etcd", "put", "/k"}, {"etcd", "get", "/k", "-o", "wide"}} {
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), args, &stdout, &stderr); code != 2 || !strings.Contains(stderr.String(), "usage: mkube etcd get KEY") {
			t.Errorf("mkube %s: exit %d, stderr %q", strings.Join(args, " "), code, stderr.String())
		}
	}
}
