package model

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"path/filepath"
	"sort"
	"testing"
)

// mirrored are the functions of package controllers whose logic glue.go
// and workload.go copy (the model cannot call them: they are unexported and read the
// API), with the digest of their source when the copy was made. When one
// changes, its copy must change with it, then its digest here: a model
// that drifts from the controller proves nothing about it.
var mirrored = map[string]string{
	"ExtendedDaemonSetReconciler.chooseActive": "963cbc4cdbf24838",
	"ExtendedDaemonSetReconciler.stepCanary":   "3147967ba57f6936",
	"ExtendedDaemonSetReconciler.canaryInput":  "0f79ce6f6d984057",
	"observeCanary":                         "f10f6d76ef91ab94",
	"ExtendedDaemonSetReconciler.stepBake":  "72a15a730959e2c2",
	"rolloutDomains":                        "fef6d1baba2e2e81",
	"topologyKey":                           "08b85cc8acdf95a4",
	"domainOf":                              "d454f5af8dd30dfb",
	"topologyParams":                        "fa80f5be5132e5dc",
	"judgeBakes":                            "2bf90986b2725468",
	"domainStatuses":                        "5b50b4d4154025f9",
	"responsibleFor":                        "1571eca74d02cb8b",
	"ReplicaSetReconciler.observe":          "eb82c4d82e84fa47",
	"observation.addNodes":                  "f70f7e2d34f0db65",
	"observation.addPods":                   "b011c509cc5738e2",
	"rolloutPod":                            "957ff62d593fd1ca",
	"rolloutParams":                         "838c350d89111e63",
	"ReplicaSetReconciler.oldDaemonSetPods": "b6dd51919b26935c",
	"ReplicaSetReconciler.spentElsewhere":   "3c227bc765c22efd",
	"spentBy":                               "e4cbc60460a774a9",
	"view.restate":                          "556b588234a5f361",
	"setReplicaSetStatus":                   "d329eb56cc4149e7",
	"progressed":                            "5272d8cb3293f0d6",
	"replicaSetProgress":                    "3f5139979cc8f12c",
	"baking":                                "396eeb31c20fec29",
	"Progress.WaitsForProgress":             "bdec7a835100f487",
	"sumReplicaSets":                        "f1e643abd136555e",
	"canaryProgress":                        "641cb5a2312d8d2b",
	"activeProgress":                        "7e914580237278af",
	"withBakeMessage":                       "79fa3848fb6600bd",
	"ReplicaSetReconciler.Reconcile":        "f505e7049919bcd2",
	"ExtendedDaemonSetReconciler.currentReplicaSet": "e794c1461b6349a5",
	"availableOnEvery":                            "1322d5f7e2e4fcd8",
	"returnsAtOnce":                               "bba8de55010c1e91",
	"orphanSelector":                              "6be3bb848fea4b3c",
	"namesALabelValue":                            "9c43203208a23253",
	"markProgress":                                "249c28360785dbfd",
	"view.untilUnresponsive":                      "be3f0c5ece69fbba",
	"extendedDaemonSetProgress":                   "285ff8ab32dbef7e",
	"setExtendedDaemonSetStatus":                  "f595db7824811287",
	"ExtendedDaemonSetReconciler.reconcile":       "382a963ae887d21a",
	"newReplicaSet":                               "be08e6a08e8ee557",
	"bakeJudging":                                 "69e84d25fd6f10c4",
	"ReplicaSetReconciler.act":                    "3498d171d64ff22b",
	"ExtendedDaemonSetReconciler.currentRevision": "d130707bea5c8692",
	"ExtendedDaemonSetReconciler.podsOf":          "fa6fb7a860ef3fab",
	"ReplicaSetReconciler.podsOf":                 "0309152d0f6b101a",
	"workloadPods.templateOr":                     "54a7617fbb7d81dd",
	"workloadPods.waiting":                        "030a3e50a6847654",
	"workloadPods.err":                            "dcde0cbe0f519959",
	"errRevisionPending":                          "4dc5d8b422e8dd40",
	"CurrentRevision":                             "571a84d203884a4c",
	"WorkloadReplicaSetName":                      "e24b5aede6082997",
	"DaemonSetPods":                               "d7df220df2a9474a",
}

// TestMirrorsMatchTheController fails when a function the model copies has
// changed in package controllers since it was copied.
func TestMirrorsMatchTheController(t *testing.T) {
	got := controllerDigests(t)
	var names []string
	for name := range mirrored {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		switch d, ok := got[name]; {
		case !ok:
			t.Errorf("controllers.%s is gone: update its mirror in glue.go, and this table", name)
		case d != mirrored[name]:
			t.Errorf("controllers.%s changed since glue.go copied it: update the copy, then its digest here to %q", name, d)
		}
	}
}

// controllerDigests hashes, by name, the source of every function of
// package controllers and of the packages under controllers/internal,
// printed without comments.
func controllerDigests(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("../../../controllers/*.go")
	if err != nil {
		t.Fatal(err)
	}
	// What the reconcilers share: the condition contract among it.
	shared, err := filepath.Glob("../../../controllers/internal/*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, shared...)
	fset := token.NewFileSet()
	out := map[string]string{}
	for _, path := range files {
		if filepath.Ext(path) != ".go" || len(path) > 8 && path[len(path)-8:] == "_test.go" {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			name := fn.Name.Name
			if fn.Recv != nil && len(fn.Recv.List) == 1 {
				typ := fn.Recv.List[0].Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				if id, ok := typ.(*ast.Ident); ok {
					name = id.Name + "." + name
				}
			}
			var b bytes.Buffer
			if err := printer.Fprint(&b, fset, fn); err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(b.Bytes())
			out[name] = hex.EncodeToString(sum[:8])
		}
	}
	return out
}
