// Command template-oracle renders Go text/template programs with the Sprig
// v3 functions, for the differential test of the tool's template engine,
// and the few functions Helm adds that charts use (include, required,
// toYaml and fromYaml through sigs.k8s.io/yaml, as Helm writes them).
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
	"strings"
	"text/template"

	"github.com/Masterminds/sprig"
	"sigs.k8s.io/yaml"
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
	t := template.New("t")
	t, err = t.Funcs(sprig.TxtFuncMap()).Funcs(helmFuncs(t)).Parse(c.Template)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	if err := t.Execute(&buf, c.Data); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// helmFuncs are Helm's additions as its engine defines them: include runs
// a template of t's set into a string.
func helmFuncs(t *template.Template) template.FuncMap {
	return template.FuncMap{
		"include": func(name string, data interface{}) (string, error) {
			var buf strings.Builder
			err := t.ExecuteTemplate(&buf, name, data)
			return buf.String(), err
		},
		"required": func(warn string, val interface{}) (interface{}, error) {
			if val == nil {
				return val, fmt.Errorf("%s", warn)
			}
			if s, ok := val.(string); ok && s == "" {
				return val, fmt.Errorf("%s", warn)
			}
			return val, nil
		},
		"toYaml": func(v interface{}) string {
			data, err := yaml.Marshal(v)
			if err != nil {
				return ""
			}
			return strings.TrimSuffix(string(data), "\n")
		},
		"fromYaml": func(text string) map[string]interface{} {
			m := map[string]interface{}{}
			if err := yaml.Unmarshal([]byte(text), &m); err != nil {
				m["Error"] = err.Error()
			}
			return m
		},
	}
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
