package deployment_test

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mkube/mkube/client"
	"github.com/mkube/mkube/controllermanager"
	"github.com/mkube/mkube/controllermanager/deployment"
	"github.com/mkube/mkube/controllermanager/garbagecollector"
	"github.com/mkube/mkube/controllermanager/replicaset"
	"github.com/mkube/mkube/internal/testserver"
)

func TestANameTakenByAnotherReplicaSetBumpsCollisionCount(t *testing.T) {
	c := startAPIServer(t)
	ctx := context.Background()
	zero := int32(0)
	tmpl := corev1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "coll"}},
		Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx:1.27"}}},
	}
	d := &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "coll"},
		Spec: appsv1.DeploymentSpec{Replicas: &zero, Template: tmpl,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "coll"}}},
	}
	// Create the Deployment before any controller runs, so that the name
	// its ReplicaSet will want can be taken first by somebody else.
	if err := c.Create(ctx, client.Deployments, "default", d, d); err != nil {
		t.Fatal(err)
	}
	taken := "coll-" + deployment.TemplateHash(&d.Spec.Template, nil)
	squatter := &appsv1.ReplicaSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "ReplicaSet"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: taken},
		Spec: appsv1.ReplicaSetSpec{Replicas: &zero, Template: *d.Spec.Template.DeepCopy(),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "coll", "owner": "nobody"}}},
	}
	squatter.Spec.Template.Labels = map[string]string{"app": "coll", "owner": "nobody"}
	if err := c.Create(ctx, client.ReplicaSets, "default", squatter, nil); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelError}))
	testserver.Background(t, func(ctx context.Context) {
		controllermanager.Run(ctx, c, log, controllermanager.Options{ReplicaSet: replicaset.Options{Workers: 1}, Deployment: deployment.Options{Workers: 1},
			GarbageCollector: garbagecollector.Options{Workers: 1}})
	})
	testserver.Eventually(t, "the Deployment gets its own ReplicaSet under a salted name", func() (bool, string) {
		var got appsv1.Deployment
		if err := c.Get(ctx, client.Deployments, "default", "coll", &got); err != nil {
			return false, err.Error()
		}
		if got.Status.CollisionCount == nil || *got.Status.CollisionCount != 1 {
			return false, fmt.Sprintf("collisionCount %v", got.Status.CollisionCount)
		}
		want := "coll-" + deployment.TemplateHash(&got.Spec.Template, got.Status.CollisionCount)
		var rs appsv1.ReplicaSet
		if err := c.Get(ctx, client.ReplicaSets, "default", want, &rs); err != nil {
			return false, err.Error()
		}
		ref := metav1.GetControllerOf(&rs)
		return ref != nil && ref.UID == got.UID && want != taken, fmt.Sprintf("replicaset %s owner %v", want, ref)
	})
}
