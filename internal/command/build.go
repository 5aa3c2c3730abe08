package command

import (
	"fmt"
	"slices"
	"strings"
)

// New builds the invocation of command name from arguments and flags
// given apart, as a form or a JSON body gives them (a typed line goes
// through Parse): the same checks, the same errors. A switch's value is
// "true" or "" (set) or "false" (not set).
func New(name string, args []string, flags map[string]string) (Invocation, error) {
	c, ok := Lookup(name)
	if !ok {
		return Invocation{}, fmt.Errorf("unknown command /%s (see /help)", strings.TrimPrefix(name, "/"))
	}
	where := "/" + c.Name
	inv := Invocation{Cmd: c, Args: slices.Clone(args), Flags: map[string]string{}}
	names := make([]string, 0, len(flags))
	for n := range flags {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		value := flags[n]
		fname := strings.TrimPrefix(n, "--")
		f, ok := c.Flag(fname)
		if !ok {
			return Invocation{}, fmt.Errorf("%s: unknown flag --%s (%s)", where, fname, c.flagList())
		}
		if !f.Value {
			switch strings.ToLower(value) {
			case "", "true":
				inv.Flags[fname] = "true"
			case "false":
			default:
				return Invocation{}, fmt.Errorf("%s: --%s is a switch and takes no value (got %q)", where, fname, value)
			}
			continue
		}
		v, err := checkValue(where, f, value)
		if err != nil {
			return Invocation{}, err
		}
		inv.Flags[fname] = v
	}
	return inv.checked()
}
