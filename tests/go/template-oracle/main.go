// Command template-oracle renders Go text/template programs with the Sprig
// v3 functions, for the differential test of the tool's template engine.
//
// It reads a JSON list of cases, each {"template": "...", "data": ...}, on
// standard input, and writes a JSON list of results in the same order, each
// {"ok": "output"} or {"err": "message"}. The data is decoded as
// encoding/json decodes into interface{}: objects are map[string]interface{}
// and every number a float64.
package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"text/template"

	"github.com/Masterminds/sprig"
)

type testCase struct {
	Template string      `json:"template"`
	Data     interface{} `json:"data"`
}

type result struct {
	Ok  *string `json:"ok,omitempty"`
	Err *string `json:"err,omitempty"`
}

func render(c testCase) (out string, err error) {
	// A panic that escapes the template package is reported as an error.
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	t, err := template.New("t").Funcs(sprig.TxtFuncMap()).Parse(c.Template)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, c.Data); err != nil {
		return "", err
	}
	return buf.String(), nil
}

func main() {
	var cases []testCase
	if err := json.NewDecoder(os.Stdin).Decode(&cases); err != nil {
		fmt.Fprintln(os.Stderr, "reading cases:", err)
		os.Exit(2)
	}
	results := make([]result, 0, len(cases))
	for _, c := range cases {
		out, err := render(c)
		if err != nil {
			msg := err.Error()
			results = append(results, result{Err: &msg})
		} else {
			results = append(results, result{Ok: &out})
		}
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(results); err != nil {
		fmt.Fprintln(os.Stderr, "writing results:", err)
		os.Exit(2)
	}
}
