package cli

import "benchserve/bench"

// binding moves one parsed value into its Config field and back out for
// Namespace. Values are argparse's: nil, string, int, float64, bool, []any.
type binding struct {
	set func(c *bench.Config, v any)
	get func(c *bench.Config) any
}

// val binds a plain field (string, int, float64 or bool).
func val[T any](field func(*bench.Config) *T) binding {
	return binding{
		set: func(c *bench.Config, v any) { *field(c) = v.(T) },
		get: func(c *bench.Config) any { return *field(c) },
	}
}

// ptr binds a field where nil stands for Python's None.
func ptr[T any](field func(*bench.Config) **T) binding {
	return binding{
		set: func(c *bench.Config, v any) {
			if v == nil {
				*field(c) = nil
				return
			}
			x := v.(T)
			*field(c) = &x
		},
		get: func(c *bench.Config) any {
			if p := *field(c); p != nil {
				return *p
			}
			return nil
		},
	}
}

// list binds a slice field; nil is None and a flag given with no values
// ("--lora-name" alone) gives an empty, non-nil slice.
func list[T any](field func(*bench.Config) *[]T) binding {
	return binding{
		set: func(c *bench.Config, v any) {
			if v == nil {
				*field(c) = nil
				return
			}
			items := v.([]any)
			out := make([]T, len(items))
			for i, x := range items {
				out[i] = x.(T)
			}
			*field(c) = out
		},
		get: func(c *bench.Config) any {
			if s := *field(c); s != nil {
				return s
			}
			return nil
		},
	}
}
