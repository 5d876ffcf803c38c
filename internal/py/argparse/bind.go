package argparse

// Binding moves one parsed value into a field of S and back out, for a
// Namespace repr. Values are the parser's: nil, string, int, float64,
// bool, []any.
type Binding[S any] struct {
	Set func(s *S, v any)
	Get func(s *S) any
}

// Val binds a plain field (string, int, float64 or bool).
func Val[S, T any](field func(*S) *T) Binding[S] {
	return Binding[S]{
		Set: func(s *S, v any) { *field(s) = v.(T) },
		Get: func(s *S) any { return *field(s) },
	}
}

// Ptr binds a field where nil stands for Python's None.
func Ptr[S, T any](field func(*S) **T) Binding[S] {
	return Binding[S]{
		Set: func(s *S, v any) {
			if v == nil {
				*field(s) = nil
				return
			}
			x := v.(T)
			*field(s) = &x
		},
		Get: func(s *S) any {
			if p := *field(s); p != nil {
				return *p
			}
			return nil
		},
	}
}

// List binds a slice field; nil is None and a flag given with no values
// ("--lora-name" alone) gives an empty, non-nil slice.
func List[S, T any](field func(*S) *[]T) Binding[S] {
	return Binding[S]{
		Set: func(s *S, v any) {
			if v == nil {
				*field(s) = nil
				return
			}
			items := v.([]any)
			out := make([]T, len(items))
			for i, x := range items {
				out[i] = x.(T)
			}
			*field(s) = out
		},
		Get: func(s *S) any {
			if l := *field(s); l != nil {
				return l
			}
			return nil
		},
	}
}

// Within binds the field of an inner struct U of S (an embedded one).
func Within[S, U any](b Binding[U], inner func(*S) *U) Binding[S] {
	return Binding[S]{
		Set: func(s *S, v any) { b.Set(inner(s), v) },
		Get: func(s *S) any { return b.Get(inner(s)) },
	}
}
