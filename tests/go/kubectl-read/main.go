// Command kubectl-read reads YAML documents as kubectl reads each document
// of a manifest: sigs.k8s.io/yaml's YAMLToJSON, over go-yaml v2 (YAML 1.1
// scalars). Standard input is a JSON array of documents' texts; standard
// output is a JSON array with, for each, {"json": VALUE} or {"error": TEXT}.
package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"sigs.k8s.io/yaml"
)

type reading struct {
	JSON  json.RawMessage `json:"json,omitempty"`
	Error string          `json:"error,omitempty"`
}

func main() {
	input, err := io.ReadAll(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubectl-read:", err)
		os.Exit(1)
	}
	var texts []string
	if err := json.Unmarshal(input, &texts); err != nil {
		fmt.Fprintln(os.Stderr, "kubectl-read:", err)
		os.Exit(1)
	}
	out := make([]reading, 0, len(texts))
	for _, text := range texts {
		converted, err := yaml.YAMLToJSON([]byte(text))
		if err != nil {
			out = append(out, reading{Error: err.Error()})
			continue
		}
		out = append(out, reading{JSON: converted})
	}
	written, err := json.Marshal(out)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubectl-read:", err)
		os.Exit(1)
	}
	os.Stdout.Write(written)
}
