package catalog

import (
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/mkube/mkube/images/lib"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// `agnhost crd-conversion-webhook` (test/images/agnhost/crd-conversion-webhook)
// is the conversion webhook of Kubernetes' CustomResourceConversionWebhook
// and CustomResourceFieldSelectors conformance specs: an HTTPS server on
// --port (443), with the key pair of --tls-cert-file and
// --tls-private-key-file, whose /crdconvert converts the objects of a
// ConversionReview (v1 or v1beta1) between stable.example.com/v1, which
// has a top-level field hostPort "host:port", and stable.example.com/v2,
// which has host and port; /readyz answers "ok" for the readiness probe.
// It starts and fails as the admission webhook does (webhookStart), and
// answers in the real one's words.

// serveCRDConversion answers one connection: TLS with the mounted key
// pair, then the converter's HTTP server.
func serveCRDConversion(c Running, conn net.Conn, flags []string) {
	cert, err := webhookCertificate(c.Process.FS, flags)
	if err != nil {
		conn.Close()
		return
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/crdconvert", func(w http.ResponseWriter, r *http.Request) { serveConversionReview(c, w, r) })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") })
	lib.ServeHTTP(tls.Server(conn, &tls.Config{Certificates: []tls.Certificate{cert}}), mux)
}

// serveConversionReview is the converter framework's serve: decode the
// review, convert each object, answer in the review's own version with
// the request's uid and an emptied request.
func serveConversionReview(c Running, w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if ct := r.Header.Get("Content-Type"); ct != "application/json" && ct != "application/yaml" {
		msg := fmt.Sprintf("invalid Content-Type header `%s`", ct)
		klogError(c, msg)
		http.Error(w, msg, http.StatusBadRequest)
		return
	}
	// v1 and v1beta1 reviews have the same fields.
	var review apiextensionsv1.ConversionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		msg := fmt.Sprintf("failed to deserialize body (%v) with error %v", string(body), err)
		klogError(c, msg)
		http.Error(w, msg, http.StatusBadRequest)
		return
	}
	if review.Kind != "ConversionReview" || (review.APIVersion != "apiextensions.k8s.io/v1" && review.APIVersion != "apiextensions.k8s.io/v1beta1") {
		http.Error(w, fmt.Sprintf("Unsupported group version kind: %s, Kind=%s", review.APIVersion, review.Kind), http.StatusBadRequest)
		return
	}
	resp := convertReview(review.Request)
	resp.UID = review.Request.UID
	if resp.Result.Status != metav1.StatusSuccess {
		klogError(c, resp.Result.String())
	}
	data, err := json.Marshal(apiextensionsv1.ConversionReview{TypeMeta: review.TypeMeta, Request: &apiextensionsv1.ConversionRequest{}, Response: resp})
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(data)
}

// convertReview converts every object, or fails at the first that does
// not convert.
func convertReview(req *apiextensionsv1.ConversionRequest) *apiextensionsv1.ConversionResponse {
	var converted []runtime.RawExtension
	for _, raw := range req.Objects {
		cr := &unstructured.Unstructured{}
		if err := cr.UnmarshalJSON(raw.Raw); err != nil {
			return &apiextensionsv1.ConversionResponse{Result: conversionFailure("failed to unmarshall object (%v) with error: %v", string(raw.Raw), err)}
		}
		out, status := convertExample(cr, req.DesiredAPIVersion)
		if status.Status != metav1.StatusSuccess {
			return &apiextensionsv1.ConversionResponse{Result: status}
		}
		out.SetAPIVersion(req.DesiredAPIVersion)
		data, err := out.MarshalJSON()
		if err != nil {
			return &apiextensionsv1.ConversionResponse{Result: conversionFailure("%v", err)}
		}
		converted = append(converted, runtime.RawExtension{Raw: data})
	}
	return &apiextensionsv1.ConversionResponse{ConvertedObjects: converted, Result: metav1.Status{Status: metav1.StatusSuccess}}
}

// convertExample is the example converter: v1's hostPort "h:p" is v2's
// host "h" and port "p", and back.
func convertExample(in *unstructured.Unstructured, toVersion string) (*unstructured.Unstructured, metav1.Status) {
	out := in.DeepCopy()
	from := in.GetAPIVersion()
	if toVersion == from {
		return nil, conversionFailure("conversion from a version to itself should not call the webhook: %s", toVersion)
	}
	switch from {
	case "stable.example.com/v1":
		if toVersion != "stable.example.com/v2" {
			return nil, conversionFailure("unexpected conversion version %q", toVersion)
		}
		if hostPort, ok := out.Object["hostPort"]; ok {
			delete(out.Object, "hostPort")
			s, _ := hostPort.(string)
			parts := strings.Split(s, ":")
			if len(parts) != 2 {
				return nil, conversionFailure("invalid hostPort value `%v`", hostPort)
			}
			out.Object["host"], out.Object["port"] = parts[0], parts[1]
		}
	case "stable.example.com/v2":
		if toVersion != "stable.example.com/v1" {
			return nil, conversionFailure("unexpected conversion version %q", toVersion)
		}
		host, hasHost := out.Object["host"]
		port, hasPort := out.Object["port"]
		if hasHost || hasPort {
			if !hasHost {
				host = ""
			}
			if !hasPort {
				port = ""
			}
			out.Object["hostPort"] = fmt.Sprintf("%s:%s", host, port)
			delete(out.Object, "host")
			delete(out.Object, "port")
		}
	default:
		return nil, conversionFailure("unexpected conversion version %q", from)
	}
	return out, metav1.Status{Status: metav1.StatusSuccess}
}

func conversionFailure(format string, args ...any) metav1.Status {
	return metav1.Status{Status: metav1.StatusFailure, Message: fmt.Sprintf(format, args...)}
}
