package catalogfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Limits on what a file may contain; they keep a hostile file from using
// unbounded memory or stack.
const (
	MaxFileBytes = 16 << 20
	maxDepth     = 32
	maxNodes     = 1 << 20
)

// decodeTree decodes data into a plain tree: map[string]any, []any,
// json.Number, string, bool and nil.
func decodeTree(data []byte, format string) (any, error) {
	if len(data) > MaxFileBytes {
		return nil, fmt.Errorf("file is larger than %d bytes", MaxFileBytes)
	}
	switch format {
	case FormatJSON:
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("not valid JSON: %s", jsonMessage(err))
		}
		if _, err := dec.Token(); !errors.Is(err, io.EOF) {
			return nil, errors.New("not valid JSON: data after the top-level value")
		}
		if err := checkDepth(v, 0); err != nil {
			return nil, err
		}
		return v, nil
	case FormatYAML:
		var doc yaml.Node
		if err := yaml.Unmarshal(data, &doc); err != nil {
			return nil, fmt.Errorf("not valid YAML: %s", strings.TrimPrefix(err.Error(), "yaml: "))
		}
		if doc.Kind == 0 {
			return nil, nil
		}
		n := 0
		return fromNode(&doc, 0, &n)
	default:
		return nil, fmt.Errorf("unknown catalog format %q (want json or yaml)", format)
	}
}

func jsonMessage(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%s at byte %d", se.Error(), se.Offset)
	}
	if errors.Is(err, io.EOF) {
		return "empty document"
	}
	return err.Error()
}

func checkDepth(v any, depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("nested deeper than %d levels", maxDepth)
	}
	switch t := v.(type) {
	case map[string]any:
		for _, e := range t {
			if err := checkDepth(e, depth+1); err != nil {
				return err
			}
		}
	case []any:
		for _, e := range t {
			if err := checkDepth(e, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// fromNode converts a YAML node. Scalars keep their text except numbers
// (json.Number), booleans and nulls, so "2026-12-24" and "09:00" stay strings.
func fromNode(n *yaml.Node, depth int, count *int) (any, error) {
	*count++
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxDepth)
	}
	if *count > maxNodes {
		return nil, fmt.Errorf("more than %d values", maxNodes)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return fromNode(n.Content[0], depth+1, count)
	case yaml.AliasNode:
		if n.Alias == nil {
			return nil, errors.New("not valid YAML: unknown alias")
		}
		return fromNode(n.Alias, depth+1, count)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: keys must be plain text", k.Line)
			}
			if k.Value == "<<" && k.ShortTag() == "!!merge" {
				return nil, fmt.Errorf("line %d: merge keys (<<) are not supported", k.Line)
			}
			if _, dup := m[k.Value]; dup {
				return nil, fmt.Errorf("line %d: key %q appears twice", k.Line, k.Value)
			}
			v, err := fromNode(n.Content[i+1], depth+1, count)
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := fromNode(c, depth+1, count)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return nil, nil
		case "!!bool":
			b, err := strconv.ParseBool(strings.ToLower(n.Value))
			if err != nil {
				return n.Value, nil
			}
			return b, nil
		case "!!int":
			if i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, 64); err == nil {
				return json.Number(strconv.FormatInt(i, 10)), nil
			}
			return json.Number(n.Value), nil
		case "!!float":
			if _, err := strconv.ParseFloat(n.Value, 64); err == nil {
				return json.Number(n.Value), nil
			}
			return n.Value, nil
		default:
			return n.Value, nil
		}
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line)
}
