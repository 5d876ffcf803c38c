package argparse

import "benchserve/internal/py/pyfmt"

// Type converts one command-line string into a value, as the type= of an
// argparse argument does.
type Type struct {
	// Name is Python's type.__name__, used in "invalid <Name> value: 'x'".
	Name string
	// Convert returns the value. An *ArgumentTypeError gives its message
	// verbatim; any other error gives "invalid <Name> value: <repr>".
	Convert func(s string) (any, error)
}

// ArgumentTypeError is a conversion error whose message is shown as is, as
// Python's argparse.ArgumentTypeError is.
type ArgumentTypeError struct{ Msg string }

func (e *ArgumentTypeError) Error() string { return e.Msg }

// The built-in types. Str is the default when an Option has no Type.
var (
	Str   = Type{Name: "str", Convert: func(s string) (any, error) { return s, nil }}
	Int   = Type{Name: "int", Convert: func(s string) (any, error) { return pyfmt.ParseInt(s) }}
	Float = Type{Name: "float", Convert: func(s string) (any, error) { return pyfmt.ParseFloat(s) }}
)
