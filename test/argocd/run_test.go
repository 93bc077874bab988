package argocd

import (
	"encoding/json"
	"strings"
	"testing"
)

// The runner must be no more lenient than Argo CD, or a script that passes
// here could fail in a real argocd-cm.
func TestRunIsAsStrictAsArgoCD(t *testing.T) {
	for _, tc := range []struct {
		name, script string
		wantErr      string
	}{
		{"no string library", `return {status = string.format("%s", "Healthy")}`, "with key 'format'"},
		{"no math library", `return {status = "Healthy", message = "" .. math.floor(1.5)}`, "with key 'floor'"},
		{"no io library", `io.write("x") return {status = "Healthy"}`, "with key 'write'"},
		{"a runtime error", `return {status = obj.status.phase}`, "attempt to index"},
		{"no table returned", `return "Healthy"`, "string, not a table"},
		{"nothing returned", `local hs = {status = "Healthy"}`, "not a table"},
		{"a message of another type", `return {status = "Healthy", message = 3}`, "hs.message as a number"},
		{"a loop that never ends", `while true do end`, "context deadline exceeded"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, message, err := run(tc.script, map[string]any{})
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("run = %s %q, %v; want an error containing %q", status, message, err, tc.wantErr)
			}
		})
	}
}

func TestRunReportsAnUnknownStatusAsArgoCDDoes(t *testing.T) {
	status, message, err := run(`return {status = "Fine", message = "all good"}`, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if status != Unknown || message != invalidStatusMessage {
		t.Errorf("run = %s %q, want %s %q", status, message, Unknown, invalidStatusMessage)
	}
}

// The libraries Argo CD does give scripts are there.
func TestRunOffersBaseAndTable(t *testing.T) {
	status, message, err := run(`
		local parts = {}
		table.insert(parts, tostring(tonumber("2")))
		table.insert(parts, type(obj))
		return {status = "Healthy", message = table.concat(parts, " ")}`, map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	if status != Healthy || message != "2 table" {
		t.Errorf("run = %s %q", status, message)
	}
}

// Values reach the script as Argo CD converts them: numbers of any Go type
// as numbers except json.Number, which stays a string, nulls as nil (and
// left out of lists), and types JSON has no word for as nil.
func TestRunConvertsObjectsAsArgoCDDoes(t *testing.T) {
	object := map[string]any{
		"float": 1.5, "int64": int64(2), "int32": int32(3), "int": 4,
		"number": json.Number("5"), "string": "s", "bool": true, "null": nil,
		"list": []any{"a", nil, "b"}, "map": map[string]any{"k": "v"},
		"other": struct{}{},
	}
	script := `
		local keys = {"float", "int64", "int32", "int", "number", "string", "bool", "null", "list", "map", "other"}
		local parts = {}
		for _, k in ipairs(keys) do
			table.insert(parts, k .. "=" .. type(obj[k]))
		end
		table.insert(parts, "sum=" .. (obj.float + obj.int64 + obj.int32 + obj.int))
		table.insert(parts, "list=" .. #obj.list .. ":" .. obj.list[1] .. obj.list[2])
		table.insert(parts, "map=" .. obj.map.k)
		return {status = "Healthy", message = table.concat(parts, " ")}`
	status, message, err := run(script, object)
	if err != nil {
		t.Fatal(err)
	}
	want := "float=number int64=number int32=number int=number number=string string=string bool=boolean " +
		"null=nil list=table map=table other=nil sum=10.5 list=2:ab map=v"
	if status != Healthy || message != want {
		t.Errorf("run = %s %q, want %q", status, message, want)
	}
}
