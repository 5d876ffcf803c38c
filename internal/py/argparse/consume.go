package argparse

import (
	"errors"
	"unicode/utf8"
)

// state is one run of Parse.
type state struct {
	p          *Parser
	ns         *Namespace
	args       []string
	pattern    []byte
	nonDefault map[*opt]bool
}

type taken struct {
	o      *opt
	values []string
}

// consume mirrors argparse's consume_optional: it takes the option at args[i]
// and its values, and returns the index after them.
func (st *state) consume(i int, m match) (int, error) {
	o, name, explicit := m.o, m.name, m.explicit
	var todo []taken
	stop := 0
	for {
		if explicit != nil {
			n := 1
			if !o.takesValues() {
				n = 0
			}
			if n == 0 && name[1] != '-' && *explicit != "" {
				// "-hx": a short flag followed by more short flags.
				todo = append(todo, taken{o: o})
				r, size := utf8.DecodeRuneInString(*explicit)
				next, ok := st.p.byName["-"+string(r)]
				if !ok {
					return 0, o.errorf("ignored explicit argument %s", Repr(*explicit))
				}
				o, name = next, "-"+string(r)
				if rest := (*explicit)[size:]; rest != "" {
					explicit = &rest
				} else {
					explicit = nil
				}
				continue
			}
			if n == 1 {
				todo = append(todo, taken{o: o, values: []string{*explicit}})
				stop = i + 1
				break
			}
			return 0, o.errorf("ignored explicit argument %s", Repr(*explicit))
		}
		n, err := countValues(o, st.pattern[i+1:])
		if err != nil {
			return 0, err
		}
		todo = append(todo, taken{o: o, values: st.args[i+1 : i+1+n]})
		stop = i + 1 + n
		break
	}
	for _, t := range todo {
		if err := st.take(t.o, t.values); err != nil {
			return 0, err
		}
	}
	return stop, nil
}

// countValues mirrors _match_argument for an option: its values are the
// plain strings that follow it, up to the next option or "--".
func countValues(o *opt, pattern []byte) (int, error) {
	if !o.takesValues() {
		return 0, nil
	}
	n := 0
	for n < len(pattern) && pattern[n] == 'A' {
		n++
	}
	switch o.Nargs {
	case One:
		if n == 0 {
			return 0, o.errorf("expected one argument")
		}
		return 1, nil
	case OneOrMore:
		if n == 0 {
			return 0, o.errorf("expected at least one argument")
		}
	}
	return n, nil
}

// take mirrors take_action: convert and check the values, check the
// exclusive set, store.
func (st *state) take(o *opt, values []string) error {
	if o.Action == actionHelp {
		return ErrHelp
	}
	var v any
	switch {
	case o.Action == StoreTrue:
		v = true
	case o.Action == Append || o.Nargs == One:
		x, err := convert(o, values[0])
		if err != nil {
			return err
		}
		if err := checkChoice(o, x); err != nil {
			return err
		}
		v = x
		if o.Action == Append {
			var list []any
			if st.ns.given[o.Dest] {
				list, _ = st.ns.values[o.Dest].([]any)
			}
			v = append(list, x)
		}
	default:
		list := make([]any, len(values))
		for i, s := range values {
			x, err := convert(o, s)
			if err != nil {
				return err
			}
			list[i] = x
		}
		for _, x := range list {
			if err := checkChoice(o, x); err != nil {
				return err
			}
		}
		v = list
	}
	// argparse counts an option as present when its value "is not" the
	// default object; a value parsed from the command line never is.
	st.nonDefault[o] = true
	if o.excl != nil {
		for _, other := range *o.excl {
			if other != o && st.nonDefault[other] {
				return o.errorf("not allowed with argument %s", other.name())
			}
		}
	}
	st.ns.values[o.Dest] = v
	st.ns.given[o.Dest] = true
	return nil
}

func convert(o *opt, s string) (any, error) {
	x, err := o.Type.Convert(s)
	if err == nil {
		return x, nil
	}
	var te *ArgumentTypeError
	if errors.As(err, &te) {
		return nil, o.errorf("%s", te.Msg)
	}
	return nil, o.errorf("invalid %s value: %s", o.Type.Name, Repr(s))
}

func checkChoice(o *opt, x any) error {
	if o.Choices == nil {
		return nil
	}
	s, ok := x.(string)
	if ok {
		for _, c := range o.Choices {
			if c == s {
				return nil
			}
		}
	}
	list := ""
	for i, c := range o.Choices {
		if i > 0 {
			list += ", "
		}
		list += Repr(c)
	}
	return o.errorf("invalid choice: %s (choose from %s)", ReprValue(x), list)
}
