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
	"ExtendedDaemonSetReconciler.chooseActive": "ccd9da0e6e5be08a",
	"ExtendedDaemonSetReconciler.stepCanary":   "af5e6c5661d9912f",
	"ExtendedDaemonSetReconciler.canaryInput":  "174ef96bdd313466",
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
	"ReplicaSetReconciler.observe":             "c26fc39b8a1ee9b0",
	"observation.addNodes":                     "a5c3fb54a3b4cb94",
	"observation.addPods":                      "f7b44e7e1acb17e0",
	"rolloutPod":                               "957ff62d593fd1ca",
	"rolloutParams":                            "838c350d89111e63",
	"ReplicaSetReconciler.oldDaemonSetPods":    "b6dd51919b26935c",
	"ReplicaSetReconciler.spentElsewhere":      "ad84e7ddd273e9fc",
	"fitting":                                  "7dc4b5533b994105",
	"setReplicaSetStatus":                      "6f8f4b6a6d0560ea",
	"progressed":                               "5272d8cb3293f0d6",
	"replicaSetProgress":                       "f31fc55fc057a244",
	"keptPods":                                 "84ee70bf0e2ca769",
	"baking":                                   "396eeb31c20fec29",
	"progress.waitsForProgress":                "534489ed7db87cd8",
	"sumReplicaSets":                           "54266b41a1ec8da0",
	"canaryProgress":                           "ae5f0c47e8963fa4",
	"edsProgress":                              "468b1e679e15cc84",
	"bakeProgress":                             "5e6432707ff8f9dd",
	"ReplicaSetReconciler.Reconcile":           "a816dbf26420f6c2",
	"ExtendedDaemonSetReconciler.currentReplicaSet": "daa9a6d33e236c62",
	"availableOnEvery":           "1322d5f7e2e4fcd8",
	"returnsAtOnce":              "16a1befc345f057f",
	"orphanSelector":             "6be3bb848fea4b3c",
	"namesALabelValue":           "9c43203208a23253",
	"markProgress":               "c11e20021833bd0d",
	"runningNodes":               "ae4439d025de8992",
	"untilUnresponsive":          "a67b4a57cbf9254e",
	"setExtendedDaemonSetStatus": "048983305ba0e231",
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
