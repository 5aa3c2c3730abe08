package tool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// decodeArgs decodes the raw JSON arguments of a call into dst, a pointer
// to a struct whose fields carry json tags. It is lenient where weak
// models are sloppy: empty or null arguments count as {}, arguments
// encoded twice (a JSON string holding the object) are unwrapped, unknown
// keys are ignored, and a field may name alternative keys with an
// `alias:"a,b"` tag. A field tagged `required:"true"` must be present and
// not null. On failure it returns a Malformed result naming the problem.
func decodeArgs(tool string, raw json.RawMessage, dst any) (Result, bool) {
	data := bytes.TrimSpace(raw)
	if len(data) == 0 || string(data) == "null" {
		data = []byte("{}")
	}
	if data[0] == '"' {
		var s string
		if err := json.Unmarshal(data, &s); err == nil && strings.HasPrefix(strings.TrimSpace(s), "{") {
			data = []byte(s)
		}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			err = fmt.Errorf("expected a JSON object, got %s", te.Value)
		}
		return malformed("invalid JSON arguments for %s: %v", tool, err), false
	}
	if obj == nil {
		obj = map[string]json.RawMessage{}
	}
	v := reflect.ValueOf(dst).Elem()
	t := v.Type()
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		val, ok := obj[name]
		if !ok {
			if alias := f.Tag.Get("alias"); alias != "" {
				for _, a := range strings.Split(alias, ",") {
					if val, ok = obj[a]; ok {
						break
					}
				}
			}
		}
		if !ok || string(bytes.TrimSpace(val)) == "null" {
			if f.Tag.Get("required") == "true" {
				return malformed("missing required argument %q for %s", name, tool), false
			}
			continue
		}
		if err := json.Unmarshal(val, v.Field(i).Addr().Interface()); err != nil {
			return malformed("invalid arguments for %s: argument %q %s", tool, name, describeTypeError(err, f.Type)), false
		}
	}
	return Result{}, true
}

func describeTypeError(err error, t reflect.Type) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("must be %s, got %s", kindName(t), te.Value)
	}
	return err.Error()
}

func kindName(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return t.String()
}

// malformed is the result of a call whose arguments were at fault.
func malformed(format string, a ...any) Result {
	return Result{Output: fmt.Sprintf(format, a...), IsError: true, Malformed: true}
}

// errorf is the result of a call that failed for another reason.
func errorf(format string, a ...any) Result {
	return Result{Output: fmt.Sprintf(format, a...), IsError: true}
}

// flexInt is an optional integer argument that also accepts a string
// holding one ("10") and integral floats (10.0).
type flexInt struct {
	Set bool
	N   int
}

func (f *flexInt) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if s == "null" {
		*f = flexInt{}
		return nil
	}
	if strings.HasPrefix(s, `"`) {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		str = strings.TrimSpace(str)
		if str == "" {
			*f = flexInt{}
			return nil
		}
		s = str
	}
	if n, err := strconv.Atoi(s); err == nil {
		*f = flexInt{Set: true, N: n}
		return nil
	}
	if x, err := strconv.ParseFloat(s, 64); err == nil && x == math.Trunc(x) && math.Abs(x) < 1<<53 {
		*f = flexInt{Set: true, N: int(x)}
		return nil
	}
	return fmt.Errorf("must be an integer, got %s", string(b))
}

// flexBool is an optional boolean argument that also accepts "true",
// "false", "yes", "no", 1 and 0.
type flexBool struct {
	Set bool
	B   bool
}

func (f *flexBool) UnmarshalJSON(b []byte) error {
	s := strings.TrimSpace(string(b))
	if strings.HasPrefix(s, `"`) {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		s = strings.ToLower(strings.TrimSpace(str))
	}
	switch s {
	case "null", "":
		*f = flexBool{}
	case "true", "yes", "1", "on":
		*f = flexBool{Set: true, B: true}
	case "false", "no", "0", "off":
		*f = flexBool{Set: true, B: false}
	default:
		return fmt.Errorf("must be a boolean, got %s", string(b))
	}
	return nil
}

// schema builds a JSON Schema object for a tool's parameters.
func schema(props map[string]any, required ...string) json.RawMessage {
	s := map[string]any{
		"type":                 "object",
		"properties":           props,
		"additionalProperties": false,
	}
	if len(required) > 0 {
		s["required"] = required
	}
	b, err := json.Marshal(s)
	if err != nil {
		panic(err)
	}
	return b
}

func prop(typ, desc string) map[string]any {
	return map[string]any{"type": typ, "description": desc}
}
