// Package argocd computes what Argo CD shows as the health of an
// ExtendedDaemonSet or an ExtendedDaemonSetReplicaSet, by running the
// health script shipped in kustomize/argocd with the Lua interpreter and
// the libraries Argo CD gives a health customization from argocd-cm.
package argocd

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"

	lua "github.com/yuin/gopher-lua"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Health statuses a script may return, as Argo CD names them.
const (
	Healthy     = "Healthy"
	Progressing = "Progressing"
	Suspended   = "Suspended"
	Degraded    = "Degraded"
	Missing     = "Missing"
	Unknown     = "Unknown"
)

// invalidStatusMessage is what Argo CD reports when a script returns a
// status it does not know.
const invalidStatusMessage = "Lua returned an invalid health status"

// scriptTimeout bounds a script as Argo CD does, so a loop that never ends
// fails the test instead of hanging it.
const scriptTimeout = time.Second

// scriptPath is the health script Argo CD is configured with, found from
// this source file so that tests of any package, whatever their working
// directory, run the same script.
func scriptPath() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "kustomize", "argocd", "health.lua")
}

var script = sync.OnceValues(func() (string, error) {
	b, err := os.ReadFile(scriptPath())
	if err != nil {
		return "", fmt.Errorf("reading the Argo CD health script: %w", err)
	}
	return string(b), nil
})

// Health returns the health status and message Argo CD computes for obj,
// an ExtendedDaemonSet or ExtendedDaemonSetReplicaSet as read from the API
// server. An error is what Argo CD would report as a failed health check.
func Health(obj *unstructured.Unstructured) (status, message string, err error) {
	s, err := script()
	if err != nil {
		return "", "", err
	}
	return run(s, obj.Object)
}

// run executes a health script with the global obj set to object, and
// reads the table it returns as Argo CD does.
func run(script string, object map[string]any) (status, message string, err error) {
	// Scripts from argocd-cm get no standard library but base, table,
	// package and a reduced os; leaving os out keeps this stricter, since
	// a health script has no use for the clock.
	state := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer state.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
	} {
		if err := state.CallByParam(lua.P{Fn: state.NewFunction(lib.open), Protect: true}, lua.LString(lib.name)); err != nil {
			return "", "", fmt.Errorf("opening Lua library %q: %w", lib.name, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), scriptTimeout)
	defer cancel()
	state.SetContext(ctx)
	state.SetGlobal("obj", toLua(state, object))
	if err := state.DoString(script); err != nil {
		return "", "", fmt.Errorf("health script: %w", err)
	}
	hs, ok := state.Get(-1).(*lua.LTable)
	if !ok {
		return "", "", fmt.Errorf("health script returned a %s, not a table", state.Get(-1).Type())
	}
	status, err = stringField(hs, "status")
	if err != nil {
		return "", "", err
	}
	message, err = stringField(hs, "message")
	if err != nil {
		return "", "", err
	}
	switch status {
	case Healthy, Progressing, Suspended, Degraded, Missing, Unknown:
		return status, message, nil
	default:
		return Unknown, invalidStatusMessage, nil
	}
}

// stringField reads a field of the returned table, which Argo CD decodes
// into a string through JSON: absent is empty, any other type an error.
func stringField(t *lua.LTable, key string) (string, error) {
	switch v := t.RawGetString(key).(type) {
	case *lua.LNilType:
		return "", nil
	case lua.LString:
		return string(v), nil
	default:
		return "", fmt.Errorf("health script returned hs.%s as a %s, not a string", key, v.Type())
	}
}

// toLua converts a value of an unstructured object the way Argo CD hands
// objects to its scripts: JSON objects and arrays become tables, numbers
// of any Go type become Lua numbers except json.Number, which stays a
// string, and values of any other type become nil.
func toLua(state *lua.LState, v any) lua.LValue {
	switch v := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(v)
	case string:
		return lua.LString(v)
	case json.Number:
		return lua.LString(v)
	case float64:
		return lua.LNumber(v)
	case int64:
		return lua.LNumber(v)
	case int32:
		return lua.LNumber(v)
	case int:
		return lua.LNumber(v)
	case []any:
		t := state.CreateTable(len(v), 0)
		for _, item := range v {
			t.Append(toLua(state, item))
		}
		return t
	case map[string]any:
		t := state.CreateTable(0, len(v))
		for key, item := range v {
			t.RawSetString(key, toLua(state, item))
		}
		return t
	default:
		return lua.LNil
	}
}
