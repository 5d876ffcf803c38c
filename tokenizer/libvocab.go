package tokenizer

import (
	_ "unsafe" // go:linkname

	_ "github.com/tiktoken-go/tokenizer/codec"
)

// The library builds each encoding's token → id table once, in a package
// variable it keeps for the process's life: 6 MB for o200k_base, twice
// what our own compact table of the same tokens takes. Once ours is built
// from it (encoding.init), nothing calls the library again, so the
// variable is cleared and the table freed. The names are tiktoken-go
// v0.10.0's (go.mod pins it): a version that renames them fails to link,
// loudly, rather than keeping the memory quietly.

//go:linkname o200kLibVocab github.com/tiktoken-go/tokenizer/codec.o200kBaseVocab
var o200kLibVocab map[string]uint

//go:linkname cl100kLibVocab github.com/tiktoken-go/tokenizer/codec.cl100kBaseVocab
var cl100kLibVocab map[string]uint

// keepLibrary keeps the library's tables (tests that compare with it).
var keepLibrary bool
