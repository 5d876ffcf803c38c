package argparse

import (
	"math"

	"benchserve/internal/py/pyfmt"
)

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

// FinitePositive is the reference's _finite_positive_float, the type of
// --flush-cache-timeout and --gsp-zipf-alpha.
var FinitePositive = Type{Name: "_finite_positive_float", Convert: func(s string) (any, error) {
	f, err := pyfmt.ParseFloat(s)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || f <= 0 {
		return nil, &ArgumentTypeError{Msg: "expected a finite float > 0, got " + Repr(s)}
	}
	return f, nil
}}
