package tools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
)

// Schemas are generated from the Go types of tool arguments and results with
// google/jsonschema-go (the generator mcp-go itself uses), so the schema a client sees and
// the struct a handler binds can never disagree. On top of the generator:
//
//   - json.RawMessage is "any JSON value" (the generator would say "array of bytes") and
//     time.Time an RFC 3339 string;
//   - struct tags add constraints the generator does not read: `enum:"a|b|c"`,
//     `minimum:"1"`, `maximum:"1000"`, `maxLength:"200"`, `pattern:"^…$"`,
//     `minItems:"1"`, `maxItems:"64"`; the `jsonschema:"…"` tag is the description;
//   - input schemas never allow null (a nil-able slice becomes a plain array): clients and
//     models send arrays, and some clients refuse type lists.

var typeSchemas = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[json.RawMessage](): {Description: "any JSON value"},
	reflect.TypeFor[time.Time]():       {Type: "string", Format: "date-time"},
}

// inputSchema returns the JSON Schema of a tool's arguments (type T, a struct).
func inputSchema[T any]() json.RawMessage { return mustSchema[T](true) }

// outputSchema returns the JSON Schema of a tool's structured result (type T, a struct).
func outputSchema[T any]() json.RawMessage { return mustSchema[T](false) }

// mustSchema panics when T cannot be described: tool types are fixed at compile time, so
// this is a programming error found by the first test that builds the registry.
func mustSchema[T any](input bool) json.RawMessage {
	s, err := schemaFor(reflect.TypeFor[T](), input)
	if err != nil {
		panic(fmt.Sprintf("tools: schema of %v: %v", reflect.TypeFor[T](), err))
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("tools: schema of %v: %v", reflect.TypeFor[T](), err))
	}
	return b
}

func schemaFor(t reflect.Type, input bool) (*jsonschema.Schema, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("%v is not a struct (tool arguments and results are objects)", t)
	}
	s, err := jsonschema.ForType(t, &jsonschema.ForOptions{TypeSchemas: typeSchemas})
	if err != nil {
		return nil, err
	}
	if err := applyTags(t, s); err != nil {
		return nil, err
	}
	if input {
		dropNull(s)
	}
	return s, nil
}

// applyTags walks struct type t alongside its schema s and applies our constraint tags.
func applyTags(t reflect.Type, s *jsonschema.Schema) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 { // []byte-like types map to typeSchemas
			return nil
		}
		return applyTags(t.Elem(), s.Items)
	case reflect.Map:
		return applyTags(t.Elem(), s.AdditionalProperties)
	case reflect.Struct:
	default:
		return nil
	}
	if _, overridden := typeSchemas[t]; overridden {
		return nil
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous && f.Tag.Get("json") == "" {
			// An embedded struct's fields are the outer object's (encoding/json rules).
			if err := applyTags(f.Type, s); err != nil {
				return err
			}
			continue
		}
		name := jsonName(f)
		if name == "" {
			continue
		}
		prop := s.Properties[name]
		if prop == nil {
			continue
		}
		if err := applyFieldTags(f, prop); err != nil {
			return fmt.Errorf("%s.%s: %w", t.Name(), f.Name, err)
		}
		if err := applyTags(f.Type, prop); err != nil {
			return err
		}
	}
	return nil
}

func applyFieldTags(f reflect.StructField, prop *jsonschema.Schema) error {
	target := prop
	if prop.Items != nil && (prop.Type == "array" || slices.Contains(prop.Types, "array")) {
		// enum, pattern and maxLength on a list constrain its items.
		target = prop.Items
	}
	if v, ok := f.Tag.Lookup("enum"); ok {
		target.Enum = nil
		for _, e := range strings.Split(v, "|") {
			target.Enum = append(target.Enum, e)
		}
	}
	if v, ok := f.Tag.Lookup("pattern"); ok {
		target.Pattern = v
	}
	if v, ok := f.Tag.Lookup("maxLength"); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return err
		}
		target.MaxLength = &n
	}
	for tag, dst := range map[string]**float64{"minimum": &prop.Minimum, "maximum": &prop.Maximum} {
		if v, ok := f.Tag.Lookup(tag); ok {
			x, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return err
			}
			*dst = &x
		}
	}
	for tag, dst := range map[string]**int{"minItems": &prop.MinItems, "maxItems": &prop.MaxItems} {
		if v, ok := f.Tag.Lookup(tag); ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return err
			}
			*dst = &n
		}
	}
	return nil
}

func jsonName(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	tag := f.Tag.Get("json")
	name, _, _ := strings.Cut(tag, ",")
	switch name {
	case "-":
		return ""
	case "":
		return f.Name
	}
	return name
}

// dropNull removes "null" from type lists everywhere in s.
func dropNull(s *jsonschema.Schema) {
	if s == nil {
		return
	}
	if len(s.Types) > 0 {
		types := slices.DeleteFunc(slices.Clone(s.Types), func(t string) bool { return t == "null" })
		if len(types) == 1 {
			s.Type, s.Types = types[0], nil
		} else {
			s.Types = types
		}
	}
	dropNull(s.Items)
	dropNull(s.AdditionalProperties)
	for _, p := range s.Properties {
		dropNull(p)
	}
}
