package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	apiregistrationv1 "k8s.io/kube-aggregator/pkg/apis/apiregistration/v1"
	"sigs.k8s.io/yaml"

	"github.com/mkube/mkube/apiserver/storageformat"
)

const etcdUsage = `usage: mkube etcd get KEY [--prefix] [--keys-only] [-o yaml|json] [--etcd-endpoints URLS]

Prints the object stored in etcd under KEY (e.g. /registry/pods/default/web)
as YAML or JSON, whether the API server stored it as JSON or as protobuf
(--storage-media-type), as auger does for Kubernetes. --prefix prints every
key under KEY; with --keys-only, only each key, its format and its size.
etcd is --etcd-endpoints, else $ETCDCTL_ENDPOINTS, else
http://127.0.0.1:2379: the API server's --etcd-client-url, as for etcdctl.
`

// etcdDialTimeout bounds the connection to etcd: a member that does not
// accept one in 5 seconds is not running there.
const etcdDialTimeout = 5 * time.Second

// runEtcd is `mkube etcd get KEY`: etcdctl get, made readable.
func runEtcd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fset := flag.NewFlagSet("etcd", flag.ContinueOnError)
	fset.SetOutput(stderr)
	endpoints := fset.String("etcd-endpoints", defaultEtcdEndpoints(), "etcd's client URLs (comma-separated)")
	prefix := fset.Bool("prefix", false, "print every key that starts with KEY")
	keysOnly := fset.Bool("keys-only", false, "print the keys, their storage format and size, not the objects")
	output := fset.String("o", "yaml", "yaml or json")
	words, err := parseInterleaved(fset, args)
	if err != nil {
		return 2
	}
	if len(words) != 2 || words[0] != "get" || (*output != "yaml" && *output != "json") {
		fmt.Fprint(stderr, etcdUsage)
		return 2
	}
	client, err := clientv3.New(clientv3.Config{Endpoints: strings.Split(*endpoints, ","), DialTimeout: etcdDialTimeout})
	if err != nil {
		fmt.Fprintf(stderr, "error: connect to etcd: %v\n", err)
		return 1
	}
	defer client.Close()
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	var opts []clientv3.OpOption
	if *prefix {
		opts = append(opts, clientv3.WithPrefix())
	}
	resp, err := client.Get(ctx, words[1], opts...)
	if err != nil {
		fmt.Fprintf(stderr, "error: get %s from etcd: %v\n", words[1], err)
		return 1
	}
	if len(resp.Kvs) == 0 {
		fmt.Fprintf(stderr, "error: etcd has no key %s\n", words[1])
		return 1
	}
	view := storedView{codec: storageformat.NewCodec(storageformat.JSON, builtinScheme()), output: *output, keysOnly: *keysOnly}
	for i, kv := range resp.Kvs {
		if err := view.print(stdout, i, string(kv.Key), kv.Value); err != nil {
			fmt.Fprintf(stderr, "error: %s: %v\n", kv.Key, err)
			return 1
		}
	}
	return 0
}

func defaultEtcdEndpoints() string {
	if e := os.Getenv("ETCDCTL_ENDPOINTS"); e != "" {
		return e
	}
	return "http://127.0.0.1:2379"
}

// storedView prints stored values for people.
type storedView struct {
	codec    storageformat.Codec
	output   string // "yaml" or "json"
	keysOnly bool
}

// print writes the i-th value: in YAML a document per key, headed by a
// comment naming the key and how it is stored; in JSON, indented objects
// one after another (what jq reads), with nothing else.
func (v storedView) print(w io.Writer, i int, key string, value []byte) error {
	data, format, err := v.codec.Readable(value)
	if v.keysOnly {
		if format == "" {
			format = "unreadable"
		}
		_, err := fmt.Fprintf(w, "%s\t%s\t%d bytes\n", key, format, len(value))
		return err
	}
	if err != nil {
		return err
	}
	if v.output == "json" {
		var out bytes.Buffer
		if err := json.Indent(&out, data, "", "  "); err != nil {
			return err
		}
		out.WriteByte('\n')
		_, err := w.Write(out.Bytes())
		return err
	}
	doc, err := yaml.JSONToYAML(data)
	if err != nil {
		return err
	}
	if i > 0 {
		fmt.Fprintln(w, "---")
	}
	_, err = fmt.Fprintf(w, "# %s: stored as %s, %d bytes\n%s", key, format, len(value), doc)
	return err
}

// builtinScheme knows the Go type of every kind mkube stores in protobuf:
// the same groups as the API server's scheme (apiserver/scheme.go).
func builtinScheme() *runtime.Scheme {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, apiextensionsv1.AddToScheme, apiregistrationv1.AddToScheme} {
		if err := add(s); err != nil {
			panic(err)
		}
	}
	return s
}
