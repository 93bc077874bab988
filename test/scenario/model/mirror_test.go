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
// copies (the model cannot call them: they are unexported and read the
// API), with the digest of their source when the copy was made. When one
// changes, its copy must change with it, then its digest here: a model
// that drifts from the controller proves nothing about it.
var mirrored = map[string]string{
	"ExtendedDaemonSetReconciler.chooseActive": "86bba937a9061a4d",
	"ExtendedDaemonSetReconciler.stepCanary":   "19aa7e21a65eb1dc",
	"ExtendedDaemonSetReconciler.canaryInput":  "7865dfcbd85fb41d",
	"ExtendedDaemonSetReconciler.stepBake":     "29b266d58b1e2324",
	"spreadCanary":                             "1963626dfa265d9c",
	"topologyKey":                              "08b85cc8acdf95a4",
	"domainOf":                                 "d454f5af8dd30dfb",
	"topologyParams":                           "fa80f5be5132e5dc",
	"judgeBakes":                               "2bf90986b2725468",
	"domainStatuses":                           "5b50b4d4154025f9",
	"roleOf":                                   "1286dba012594150",
	"runningCanary":                            "78110abb7e858dd3",
	"responsibleFor":                           "1a6c486dd4f9f9b0",
	"ReplicaSetReconciler.observe":             "b582ffecf24fa7f6",
	"observation.addNodes":                     "a5c3fb54a3b4cb94",
	"observation.addPods":                      "a04f14b268187fca",
	"rolloutPod":                               "174716d0c363c980",
	"rolloutParams":                            "838c350d89111e63",
	"ReplicaSetReconciler.oldDaemonSetPods":    "1c8ecaf1412ba829",
	"ReplicaSetReconciler.spentElsewhere":      "ad84e7ddd273e9fc",
	"fitting":                                  "7dc4b5533b994105",
	"setReplicaSetStatus":                      "8405041fe73272ce",
	"progressed":                               "cb0a87fc8f83cf51",
	"replicaSetProgress":                       "f31fc55fc057a244",
	"keptPods":                                 "84ee70bf0e2ca769",
	"baking":                                   "396eeb31c20fec29",
	"progress.waitsForProgress":                "534489ed7db87cd8",
	"sumReplicaSets":                           "d4964da41ed2eca8",
	"canaryProgress":                           "ae5f0c47e8963fa4",
	"edsProgress":                              "468b1e679e15cc84",
	"bakeProgress":                             "5e6432707ff8f9dd",
	"ReplicaSetReconciler.Reconcile":           "bbc743d9448898c5",
	"ExtendedDaemonSetReconciler.currentReplicaSet": "daa9a6d33e236c62",
}

// TestMirrorsMatchTheController fails when a function glue.go copies has
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
// package controllers, printed without comments.
func controllerDigests(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob("../../../controllers/*.go")
	if err != nil {
		t.Fatal(err)
	}
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
