// Command kubectl-yaml writes JSON objects as `kubectl get -o yaml` writes
// them: the objects read from standard input (one JSON value per line) are
// put into a `kind: List`, as kubectl lists what a `get` of several names
// returns, and written by sigs.k8s.io/yaml, kubectl's own YAML writer (keys
// sorted, multi-line strings as block scalars, long lines kept whole).
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"

	"sigs.k8s.io/yaml"
)

func main() {
	items := []interface{}{}
	scanner := bufio.NewScanner(os.Stdin)
	scanner.Buffer(make([]byte, 1<<20), 1<<26)
	for scanner.Scan() {
		if len(scanner.Bytes()) == 0 {
			continue
		}
		var item interface{}
		if err := json.Unmarshal(scanner.Bytes(), &item); err != nil {
			fmt.Fprintln(os.Stderr, "kubectl-yaml:", err)
			os.Exit(1)
		}
		items = append(items, item)
	}
	if err := scanner.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "kubectl-yaml:", err)
		os.Exit(1)
	}
	list := map[string]interface{}{
		"apiVersion": "v1",
		"kind":       "List",
		"items":      items,
		"metadata":   map[string]interface{}{"resourceVersion": ""},
	}
	out, err := yaml.Marshal(list)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kubectl-yaml:", err)
		os.Exit(1)
	}
	os.Stdout.Write(out)
}
