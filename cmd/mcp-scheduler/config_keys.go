package main

import (
	"encoding"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
	"github.com/agnivade/levenshtein"
)

// unknownKeyError is one key of the file that no setting has, with the key of the same table
// it most likely meant, when one is close enough.
func unknownKeyError(path string, key toml.Key) error {
	if near := nearestKeys(key); len(near) > 0 {
		return fmt.Errorf("config %s: unknown key %s: did you mean %s? (docs/configuration.md lists the keys)", path, key, strings.Join(near, " or "))
	}
	return fmt.Errorf("config %s: unknown key %s (docs/configuration.md lists the keys)", path, key)
}

// nearestKeys returns the keys of key's own table (whole, dotted) at the smallest edit
// distance from its last part, when that distance is small for its length: scheduler.ticks →
// scheduler.tick. None when the table is itself unknown (its own key gets the suggestion).
func nearestKeys(key toml.Key) []string {
	if len(key) == 0 {
		return nil
	}
	parent, name := key[:len(key)-1], key[len(key)-1]
	keys, ok := tableKeys(reflect.TypeFor[Config](), parent)
	if !ok {
		return nil
	}
	limit := 2
	if len(name) >= 8 {
		limit = 3
	}
	best, out := limit+1, []string(nil)
	for _, k := range keys {
		d := levenshtein.ComputeDistance(strings.ToLower(name), k)
		switch {
		case d < best:
			best, out = d, []string{k}
		case d == best:
			out = append(out, k)
		}
	}
	for i, k := range out {
		out[i] = append(slices.Clone(parent), k).String()
	}
	return out
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

// tableKeys lists the keys the TOML table at path accepts, read from the toml tags of t
// (Config); false when path names no table of it.
func tableKeys(t reflect.Type, path []string) ([]string, bool) {
	for _, part := range path {
		t = tableType(t)
		if t == nil {
			return nil, false
		}
		f, ok := fieldByKey(t, part)
		if !ok {
			return nil, false
		}
		t = f.Type
	}
	if t = tableType(t); t == nil {
		return nil, false
	}
	return structKeys(t), true
}

// tableType is the struct a TOML table (or an array of tables) decodes into, or nil.
func tableType(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return nil
	}
	return t
}

// structKeys lists the keys of a struct's exported fields, embedded structs' included.
func structKeys(t reflect.Type) []string {
	var keys []string
	for f := range fields(t) {
		keys = append(keys, f.key)
	}
	slices.Sort(keys)
	return keys
}

func fieldByKey(t reflect.Type, key string) (reflect.StructField, bool) {
	for f := range fields(t) {
		if f.key == key {
			return f.StructField, true
		}
	}
	return reflect.StructField{}, false
}

type keyedField struct {
	reflect.StructField
	key string
}

// fields yields the TOML fields of t as the decoder sees them: the tag's name, else the
// field's name; "-" and unexported fields skipped; untagged embedded structs flattened.
func fields(t reflect.Type) func(yield func(keyedField) bool) {
	return func(yield func(keyedField) bool) {
		for f := range t.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("toml"), ",")
			if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
				for sub := range fields(f.Type) {
					if !yield(sub) {
						return
					}
				}
				continue
			}
			if !f.IsExported() || name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if !yield(keyedField{f, name}) {
				return
			}
		}
	}
}
