package web

import (
	"errors"
	"math"
	"strings"
	"testing"
)

func TestNumber(t *testing.T) {
	const answer = `{"data": {"errorRate": 0.02, "asText": "1.5e-3", "nan": "NaN", "name": "secret-ish", "flag": true,
		"list": [3, 4], "one": [7], "null": null}, "status": "success"}`
	cases := []struct {
		body, path string
		want       float64
		err        error
	}{
		{answer, "{.data.errorRate}", 0.02, nil},
		{answer, ".data.errorRate", 0.02, nil},
		{answer, "{.data.asText}", 0.0015, nil},
		{answer, "{.data.one[0]}", 7, nil},
		{answer, "{.data.list[1]}", 4, nil},
		{`12`, "{@}", 12, nil},
		{answer, "{.data.missing}", 0, ErrNoValue},
		{answer, "{.data.list[5]}", 0, ErrNoValue},
		{answer, "{.data.list[*]}", 0, ErrManyValues},
		{answer, "{.data.errorRate}{.data.asText}", 0, ErrManyValues},
		{answer, "{.data.name}", 0, ErrNotANumber},
		{answer, "{.data.flag}", 0, ErrNotANumber},
		{answer, "{.data.null}", 0, ErrNotANumber},
		{answer, "{.data}", 0, ErrNotANumber},
		{`{"v": 1e999}`, "{.v}", 0, ErrNotANumber},
		{`<html>secret-ish</html>`, "{.v}", 0, ErrNotJSON},
		{`{"v": 1} {"v": 2}`, "{.v}", 0, ErrNotJSON},
		{``, "{.v}", 0, ErrNotJSON},
	}
	for _, c := range cases {
		got, err := Number([]byte(c.body), c.path)
		if c.err == nil {
			if err != nil || got != c.want {
				t.Errorf("%s: got %v, %v; want %v", c.path, got, err, c.want)
			}
			continue
		}
		if !errors.Is(err, c.err) {
			t.Errorf("%s in %.20s: got %v, %v; want %v", c.path, c.body, got, err, c.err)
		}
		if err != nil && strings.Contains(err.Error(), "secret-ish") {
			t.Errorf("%s: error %q quotes the answer", c.path, err)
		}
	}
	if v, err := Number([]byte(answer), "{.data.nan}"); err != nil || !math.IsNaN(v) {
		t.Errorf("NaN: got %v, %v", v, err)
	}
}

func TestCheckJSONPath(t *testing.T) {
	for _, path := range []string{"{.data.errorRate}", ".data.errorRate", "{.items[0].value}", "{.data.result[?(@.metric=='x')].value}"} {
		if err := CheckJSONPath(path); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
	for _, path := range []string{"{.data.errorRate", "{.items[}", "{.items[1:2:3:4]}"} {
		if err := CheckJSONPath(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: got %v, want an error naming the path", path, err)
		}
	}
}
