package agent

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/stretchr/testify/require"
)

// docBlock is one fenced JSON block of docs/protocol.md with the marker before it.
type docBlock struct {
	kind string // schema, example, invalid
	typ  string // the message type
	text string
}

var blockMarker = regexp.MustCompile("(?s)<!-- (schema|example|invalid): ([a-z._]+) -->\\s*```json\\n(.*?)\\n```")

func protocolDoc(t *testing.T) []docBlock {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "protocol.md"))
	require.NoError(t, err)
	var out []docBlock
	for _, m := range blockMarker.FindAllStringSubmatch(string(b), -1) {
		out = append(out, docBlock{kind: m[1], typ: m[2], text: m[3]})
	}
	require.NotEmpty(t, out)
	return out
}

// jsonTags returns the JSON member names of a struct type, embedded structs flattened.
func jsonTags(t reflect.Type) []string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Tag.Get("json") == "" {
			out = append(out, jsonTags(f.Type)...)
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func schemaProps(t *testing.T, node map[string]any) []string {
	t.Helper()
	props, ok := node["properties"].(map[string]any)
	require.True(t, ok, "schema node without properties: %v", node)
	var out []string
	for k := range props {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var (
	toScheduler = []string{TypeStart, TypePing, TypeCancel, TypeYieldRequest}
	toAgent     = []string{TypeHeartbeat, TypeProgress, TypeLog, TypeCheckpoint, TypeYield, TypeRateLimit, TypeUsage, TypeResult}
)

func TestProtocolDoc_ExamplesValidateAgainstTheirSchemas(t *testing.T) {
	blocks := protocolDoc(t)
	c := jsonschema.NewCompiler()
	raw := map[string]map[string]any{}
	for _, b := range blocks {
		if b.kind != "schema" {
			continue
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(b.text))
		require.NoError(t, err, "schema %s", b.typ)
		require.NoError(t, c.AddResource("file:///protocol/"+b.typ+".json", doc))
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(b.text), &m))
		raw[b.typ] = m
	}
	all := append(slices.Clone(toScheduler), toAgent...)
	require.ElementsMatch(t, all, keys(raw), "one schema per message type")

	examples := map[string]int{}
	for _, b := range blocks {
		if b.kind == "schema" {
			continue
		}
		sch, err := c.Compile("file:///protocol/" + b.typ + ".json")
		require.NoError(t, err)
		inst, err := jsonschema.UnmarshalJSON(strings.NewReader(b.text))
		require.NoError(t, err, b.text)
		verr := sch.Validate(inst)
		if b.kind == "invalid" {
			require.Error(t, verr, "invalid example accepted by the schema: %s", b.text)
			var m Message
			require.NoError(t, json.Unmarshal([]byte(b.text), &m))
			require.NotNil(t, m.WorkerResult)
			require.ErrorIs(t, m.WorkerResult.Check(), ErrInvalidResult, "Check must refuse what the schema refuses: %s", b.text)
			continue
		}
		require.NoError(t, verr, "example of %s: %s", b.typ, b.text)
		examples[b.typ]++
		requireDecodesStrictly(t, b.typ, b.text)
	}
	for _, typ := range all {
		require.Positive(t, examples[typ], "no example for %s", typ)
	}
}

// requireDecodesStrictly decodes an example into its Go type refusing unknown members, so
// the examples use the Go field names; worker.result examples must also pass Check.
func requireDecodesStrictly(t *testing.T, typ, text string) {
	t.Helper()
	var target any
	switch typ {
	case TypeStart:
		target = &Start{}
	case TypePing:
		target = &Ping{}
	case TypeCancel:
		target = &Cancel{}
	case TypeYieldRequest:
		target = &YieldRequest{}
	default:
		target = &Message{}
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(text)))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(target), "%s example: %s", typ, text)
	if m, ok := target.(*Message); ok && typ == TypeResult {
		require.NoError(t, m.WorkerResult.Check(), text)
	}
}

func TestProtocolDoc_SchemasListTheGoFields(t *testing.T) {
	raw := map[string]map[string]any{}
	for _, b := range protocolDoc(t) {
		if b.kind == "schema" {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(b.text), &m))
			raw[b.typ] = m
		}
	}
	require.Equal(t, jsonTags(reflect.TypeFor[Start]()), schemaProps(t, raw[TypeStart]))
	require.Equal(t, jsonTags(reflect.TypeFor[Ping]()), schemaProps(t, raw[TypePing]))
	require.Equal(t, jsonTags(reflect.TypeFor[Cancel]()), schemaProps(t, raw[TypeCancel]))
	require.Equal(t, jsonTags(reflect.TypeFor[YieldRequest]()), schemaProps(t, raw[TypeYieldRequest]))

	// Agent → scheduler messages share one flat Go struct: every member a schema names is a
	// field of Message, and every field of Message is named by some schema.
	msgTags := jsonTags(reflect.TypeFor[Message]())
	var union []string
	for _, typ := range toAgent {
		props := schemaProps(t, raw[typ])
		require.Subset(t, msgTags, props, "schema %s names members Message does not have", typ)
		union = append(union, props...)
	}
	slices.Sort(union)
	require.Equal(t, msgTags, slices.Compact(union))

	res := raw[TypeResult]
	require.Equal(t, sortedCopy(append([]string{"type"}, jsonTags(reflect.TypeFor[WorkerResult]())...)), schemaProps(t, res))
	defs := res["$defs"].(map[string]any)
	require.Equal(t, jsonTags(reflect.TypeFor[Failure]()), schemaProps(t, defs["failure"].(map[string]any)))
	require.Equal(t, jsonTags(reflect.TypeFor[Usage]()), schemaProps(t, defs["usage"].(map[string]any)))
	require.Equal(t, jsonTags(reflect.TypeFor[Finding]()), schemaProps(t, defs["finding"].(map[string]any)))
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	sort.Strings(out)
	return out
}
