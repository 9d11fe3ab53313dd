package aggregator

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/mkube/mkube/apiserver/authentication"
	"github.com/mkube/mkube/apiserver/webhookclient"
)

// The front proxy's request headers, kube-apiserver's default
// --requestheader-*-headers, which it publishes for aggregated servers
// (authconfigmap.go).
const (
	userHeader        = "X-Remote-User"
	uidHeader         = "X-Remote-Uid"
	groupHeader       = "X-Remote-Group"
	extraHeaderPrefix = "X-Remote-Extra-"
)

// ServeHTTP proxies one request to the APIService's server, as
// kube-aggregator's proxy handler does: 503 while the APIService is not
// Available; the client's own credentials stay here (its Authorization
// and Impersonate-* headers are dropped: this server has used them), and
// the user it was authenticated, or impersonated, as goes in the front
// proxy's headers. A watch is streamed as it comes (FlushInterval -1).
func (api *remoteAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !api.available {
		writeStatus(w, apierrors.NewServiceUnavailable("service unavailable"))
		return
	}
	user, _ := authentication.UserFrom(r.Context())
	proxy := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL.Scheme, pr.Out.URL.Host = "https", api.host
			pr.Out.Host = ""
			for name := range pr.Out.Header {
				if name == "Authorization" || strings.HasPrefix(name, "Impersonate-") {
					pr.Out.Header.Del(name)
				}
			}
			setUserHeaders(pr.Out.Header, user)
		},
		Transport:     api.transport,
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			api.agg.log.Info("proxy to the aggregated API server failed", "apiservice", api.name, "path", r.URL.Path, "err", err)
			writeStatus(w, apierrors.NewServiceUnavailable(fmt.Sprintf("error trying to reach service: %v", err)))
		},
	}
	proxy.ServeHTTP(w, r.WithContext(webhookclient.WithObjects(r.Context(), api.agg.objects)))
}

// setUserHeaders names user in the front proxy's headers, replacing any
// the client sent: only the proxy may say who the user is. Extra keys
// are escaped to be header names, as client-go's auth proxy round
// tripper escapes them.
func setUserHeaders(h http.Header, user authenticationv1.UserInfo) {
	for name := range h {
		if name == userHeader || name == uidHeader || name == groupHeader || strings.HasPrefix(name, extraHeaderPrefix) {
			h.Del(name)
		}
	}
	h.Set(userHeader, user.Username)
	if user.UID != "" {
		h.Set(uidHeader, user.UID)
	}
	for _, g := range user.Groups {
		h.Add(groupHeader, g)
	}
	for key, values := range user.Extra {
		for _, v := range values {
			h.Add(extraHeaderPrefix+url.PathEscape(key), v)
		}
	}
}

// writeStatus answers with err's metav1.Status.
func writeStatus(w http.ResponseWriter, err *apierrors.StatusError) {
	st := err.ErrStatus
	st.Kind, st.APIVersion = "Status", "v1"
	data, _ := json.Marshal(st)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(st.Code))
	w.Write(append(data, '\n'))
}
