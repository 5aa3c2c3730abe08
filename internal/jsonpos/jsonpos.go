// Package jsonpos places JSON decoding errors: the line and column of the
// byte a syntax or type error names, so that a message can point at the
// place in the file. It is pure.
package jsonpos

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Position is the 1-based line and column of byte offset off in data.
func Position(data []byte, off int64) (line, col int) {
	if off < 0 {
		off = 0
	}
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	before := data[:off]
	line = 1 + bytes.Count(before, []byte("\n"))
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1)
	if col < 1 {
		col = 1
	}
	return line, col
}

// Error is err, from decoding data read from path, as "path:LINE:COL:
// what is wrong" when err names a place, else "path: what is wrong".
func Error(path string, data []byte, err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	msg := strings.TrimPrefix(err.Error(), "json: ")
	switch {
	case errors.As(err, &syn):
		line, col := Position(data, syn.Offset)
		return fmt.Errorf("%s:%d:%d: %s", path, line, col, msg)
	case errors.As(err, &typ):
		line, col := Position(data, typ.Offset)
		if typ.Field != "" {
			msg = fmt.Sprintf("field %q is a JSON %s where %s is wanted", typ.Field, typ.Value, kindWord(typ.Type.Kind()))
		}
		return fmt.Errorf("%s:%d:%d: %s", path, line, col, msg)
	}
	return fmt.Errorf("%s: %s", path, msg)
}

// kindWord is a Go kind in JSON's words.
func kindWord(k reflect.Kind) string {
	switch k {
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Float32, reflect.Float64, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a number"
	}
	return k.String()
}
