package apiserver

import (
	"context"
	"encoding/base64"
	"encoding/json"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/mkube/mkube/store"
)

// page is one chunk of a list, with the token for the next one.
type page struct {
	items []runtime.Object
	rev   int64
	next  string // the continue token; "" when this is the last page
	// remaining is how many objects the pages after this one hold, for a
	// list without selectors (metadata.remainingItemCount, as Kubernetes
	// gives it); nil otherwise.
	remaining *int64
}

// continueToken pins a paginated list to the revision of its first page,
// so all pages together are one consistent snapshot.
type continueToken struct {
	Rev   int64  `json:"rv"`
	After string `json:"start"`
}

// listPage reads up to limit matching objects (0 = all). Filtering happens
// after reading, so a page may need several etcd reads.
func listPage(ctx context.Context, st *Storage, f *filter, limit int64, cont string) (page, error) {
	var opts store.ListOptions
	if cont != "" {
		var tok continueToken
		raw, err := base64.RawURLEncoding.DecodeString(cont)
		if err == nil {
			err = json.Unmarshal(raw, &tok)
		}
		if err != nil || tok.Rev == 0 || tok.Rev < latestRev {
			return page{}, badRequest("continue key is not valid: %q", cont)
		}
		opts.After = tok.After
		if tok.Rev != latestRev {
			opts.Rev = tok.Rev
		}
	}
	var out page
	for {
		opts.Limit = limit
		objs, res, err := st.List(ctx, f.namespace, opts)
		if err != nil {
			if (apierrors.IsResourceExpired(err) || apierrors.IsGone(err)) && cont != "" {
				// The first page's revision is compacted away: the 410
				// carries a token that goes on from the same key at the
				// latest revision, for a client that accepts an
				// inconsistent list (Kubernetes' handleCompactedErrorForPaging).
				expired := apierrors.NewResourceExpired(inconsistentContinue)
				expired.ErrStatus.ListMeta.Continue = encodeToken(continueToken{Rev: latestRev, After: opts.After})
				return page{}, expired
			}
			return page{}, err
		}
		opts.Rev, out.rev = res.Rev, res.Rev
		for i, obj := range objs {
			if f.matches(obj) {
				out.items = append(out.items, obj)
			}
			opts.After = res.KVs[i].Key
			if limit > 0 && int64(len(out.items)) == limit {
				if i < len(objs)-1 || res.More {
					out.next = encodeToken(continueToken{Rev: opts.Rev, After: opts.After})
					if f.labels.Empty() && f.fields.Empty() {
						left := res.Count - int64(i+1)
						out.remaining = &left
					}
				}
				return out, nil
			}
		}
		if !res.More || limit == 0 {
			return out, nil
		}
	}
}

// latestRev in a continue token means the latest revision: the token a
// 410 gives for an inconsistent continuation.
const latestRev = -1

const inconsistentContinue = "The provided continue parameter is too old to display a consistent list result. " +
	"You can start a new list without the continue parameter, or use the continue token in this response to retrieve " +
	"the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that " +
	"were created, modified, or deleted between the time the first chunk was returned and now may show up in the list."

func encodeToken(t continueToken) string {
	raw, _ := json.Marshal(t)
	return base64.RawURLEncoding.EncodeToString(raw)
}
