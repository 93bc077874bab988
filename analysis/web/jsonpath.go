package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"k8s.io/client-go/util/jsonpath"
)

// The ways an answer can fail to hold a number. Their texts are fixed: they
// describe the answer without quoting it.
var (
	ErrNotJSON      = errors.New("the answer is not JSON")
	ErrNoValue      = errors.New("the answer has no value at jsonPath")
	ErrManyValues   = errors.New("jsonPath selects more than one value in the answer")
	ErrNotANumber   = errors.New("the value at jsonPath is not a number")
	errTrailingData = errors.New("data after the JSON value")
)

// parseJSONPath parses a path in kubectl's jsonpath syntax; a path without
// braces, such as .data.value, is taken as one expression, as kubectl
// takes it.
func parseJSONPath(path string) (*jsonpath.JSONPath, error) {
	expr := strings.TrimSpace(path)
	if !strings.HasPrefix(expr, "{") {
		expr = "{" + expr + "}"
	}
	jp := jsonpath.New("jsonPath").AllowMissingKeys(false)
	if err := jp.Parse(expr); err != nil {
		return nil, fmt.Errorf("jsonPath %q: %w", path, err)
	}
	return jp, nil
}

// CheckJSONPath says what is wrong with a jsonPath, or nil.
func CheckJSONPath(path string) error {
	_, err := parseJSONPath(path)
	return err
}

// Number is the number at path in a JSON answer: a JSON number, or a string
// that parses as one (as Prometheus writes values). Its errors are ErrNotJSON,
// ErrNoValue, ErrManyValues, ErrNotANumber, or a jsonPath that does not
// parse; none quotes the answer.
func Number(body []byte, path string) (float64, error) {
	jp, err := parseJSONPath(path)
	if err != nil {
		return 0, err
	}
	var data any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&data); err != nil {
		return 0, ErrNotJSON
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return 0, fmt.Errorf("%w: %w", ErrNotJSON, errTrailingData)
	}
	results, err := jp.FindResults(data)
	if err != nil {
		// The error of a missing key quotes the path only, but others may
		// quote the data: keep to the fixed text.
		return 0, ErrNoValue
	}
	var values []reflect.Value
	for _, r := range results {
		values = append(values, r...)
	}
	switch len(values) {
	case 0:
		return 0, ErrNoValue
	case 1:
	default:
		return 0, ErrManyValues
	}
	v := values[0]
	for v.Kind() == reflect.Interface && !v.IsNil() {
		v = v.Elem()
	}
	if !v.IsValid() || !v.CanInterface() {
		return 0, ErrNotANumber
	}
	var text string
	switch x := v.Interface().(type) {
	case json.Number:
		text = x.String()
	case string:
		text = strings.TrimSpace(x)
	default:
		return 0, ErrNotANumber
	}
	f, err := strconv.ParseFloat(text, 64)
	if err != nil {
		return 0, ErrNotANumber
	}
	return f, nil
}
