//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cronv1 "github.com/cronjob-controller/cronjob-controller/pkg/apis/batch/v1"
)

// artifacts/deploy's aggregated roles give the people bound to Kubernetes'
// built-in roles what they give for the built-in kinds: admin and edit in a
// namespace manage its CronJobs, Backfills and CronJobRuns, view there reads them, none
// writes a status; view bound cluster-wide reads Calendars, and only
// cluster-admin writes them. The API server answers each question as a
// SubjectAccessReview, after kube-controller-manager's clusterrole-aggregation
// controller folded the roles in.
func TestUserRolesAggregateIntoAdminEditAndView(t *testing.T) {
	if out, err := kubectl("apply", "-f", filepath.Join(env.root, "artifacts", "deploy", "15-user-roles.yaml")); err != nil {
		t.Fatalf("applying the user roles: %v\n%s", err, out)
	}
	ns := newNamespace(t)
	other := newNamespaceFor(t, "other")
	// Each user is bound to one built-in role: in ns by a RoleBinding
	// (as a namespace's users are), or cluster-wide by a ClusterRoleBinding.
	suffix := fmt.Sprint(time.Now().UnixNano() % 100000)
	user := func(role, scope string) string { return "rbac-" + role + "-" + scope + "-" + suffix }
	ctx := context.Background()
	for _, role := range []string{"admin", "edit", "view"} {
		rb := &rbacv1.RoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: "user-" + role, Namespace: ns},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user(role, "ns")}},
		}
		if _, err := env.kube.RbacV1().RoleBindings(ns).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, role := range []string{"admin", "edit", "view", "cluster-admin"} {
		crb := &rbacv1.ClusterRoleBinding{
			ObjectMeta: metav1.ObjectMeta{Name: user(role, "cluster")},
			RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user(role, "cluster")}},
		}
		if _, err := env.kube.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = env.kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), crb.Name, metav1.DeleteOptions{})
		})
	}

	type check struct {
		user, verb, resource, subresource, namespace string
		allowed                                      bool
	}
	var checks []check
	manage := []string{"create", "update", "patch", "delete", "deletecollection"}
	read := []string{"get", "list", "watch"}
	for _, resource := range []string{"cronjobs", "backfills", "cronjobruns"} {
		for _, role := range []string{"admin", "edit"} {
			for _, verb := range append(manage, read...) {
				checks = append(checks, check{user(role, "ns"), verb, resource, "", ns, true})
			}
			checks = append(checks,
				check{user(role, "ns"), "create", resource, "", other, false},
				check{user(role, "ns"), "update", resource, "status", ns, false})
		}
		for _, verb := range read {
			checks = append(checks, check{user("view", "ns"), verb, resource, "", ns, true},
				check{user("view", "ns"), verb, resource, "status", ns, true},
				check{user("view", "ns"), verb, resource, "", other, false})
		}
		for _, verb := range manage {
			checks = append(checks, check{user("view", "ns"), verb, resource, "", ns, false})
		}
		checks = append(checks, check{"rbac-nobody-" + suffix, "get", resource, "", ns, false})
	}
	// Calendars are cluster-scoped: a RoleBinding in a namespace reaches
	// none, view cluster-wide reads them, nobody but cluster-admin writes.
	for _, role := range []string{"admin", "edit", "view"} {
		checks = append(checks, check{user(role, "ns"), "get", "calendars", "", "", false})
		for _, verb := range read {
			checks = append(checks, check{user(role, "cluster"), verb, "calendars", "", "", true})
		}
		for _, verb := range manage {
			checks = append(checks, check{user(role, "cluster"), verb, "calendars", "", "", false})
		}
	}
	for _, verb := range append(manage, read...) {
		checks = append(checks, check{user("cluster-admin", "cluster"), verb, "calendars", "", "", true})
	}

	ask := func(c check) (bool, error) {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: c.user,
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Group: cronv1.GroupName, Resource: c.resource, Subresource: c.subresource,
				Verb: c.verb, Namespace: c.namespace,
			},
		}}
		got, err := env.kube.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
		if err != nil {
			return false, err
		}
		return got.Status.Allowed, nil
	}
	// The aggregation controller folds the roles in shortly after they are
	// applied; the first allowed answer of each role says it has.
	for _, role := range []string{"admin", "edit", "view"} {
		eventually(t, 30*time.Second, role+" aggregates the user roles", func() (bool, string) {
			ok, err := ask(check{user(role, "ns"), "get", "cronjobs", "", ns, true})
			return err == nil && ok, fmt.Sprint(ok, err)
		})
	}
	for _, c := range checks {
		got, err := ask(c)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.allowed {
			res := c.resource
			if c.subresource != "" {
				res += "/" + c.subresource
			}
			where := "cluster-wide"
			if c.namespace != "" {
				where = "in " + c.namespace
			}
			t.Errorf("may %s %s %s %s? %v, want %v", strings.TrimPrefix(c.user, "rbac-"), c.verb, res, where, got, c.allowed)
		}
	}
}
