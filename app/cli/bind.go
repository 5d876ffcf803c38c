package cli

import (
	"benchserve/bench"
	"benchserve/internal/py/argparse"
)

// binding moves one parsed value into its Config field and back out for
// Namespace. Values are argparse's: nil, string, int, float64, bool, []any.
type binding struct {
	set func(c *bench.Config, v any)
	get func(c *bench.Config) any
}

func bound(b argparse.Binding[bench.Config]) binding { return binding{set: b.Set, get: b.Get} }

// val binds a plain field (string, int, float64 or bool).
func val[T any](field func(*bench.Config) *T) binding { return bound(argparse.Val(field)) }

// ptr binds a field where nil stands for Python's None.
func ptr[T any](field func(*bench.Config) **T) binding { return bound(argparse.Ptr(field)) }

// list binds a slice field; nil is None and a flag given with no values
// ("--lora-name" alone) gives an empty, non-nil slice.
func list[T any](field func(*bench.Config) *[]T) binding { return bound(argparse.List(field)) }
