package bench

import (
	"context"
	"errors"

	"benchserve/hub"
	"benchserve/serverctl"
)

// Where the tokenizer's name came from, for its load error.
const (
	fromFlag      = iota // --tokenizer
	fromModelInfo        // the server's /model_info
	fromModel            // --model
	fromDetected         // the model /v1/models listed
)

// tokenizerID is the reference's choice of tokenizer: --tokenizer, else
// the server's /model_info, else the model (detected: found at
// /v1/models).
func tokenizerID(ctx context.Context, cfg *Config, srv *serverctl.Server, model string, detected bool) (string, int) {
	if cfg.Tokenizer != nil {
		return *cfg.Tokenizer, fromFlag
	}
	if p := srv.TokenizerPath(ctx); p != "" {
		return p, fromModelInfo
	}
	if detected {
		return model, fromDetected
	}
	return model, fromModel
}

// tokenizerError says where a tokenizer that does not load was named: a
// name the user never typed is no use without its source.
func tokenizerError(from int, err error) error {
	const pass = "; pass --tokenizer with a Hub id, a local directory or tokenizer.json, or a built-in encoding such as o200k_base"
	switch from {
	case fromModelInfo:
		return failure("tokenizer named by the server's /model_info: %v%s", err, pass)
	case fromDetected:
		return failure("tokenizer of the model the server lists at /v1/models (--model was not given): %v%s", err, pass)
	case fromModel:
		return failure("--model: %v%s", err, pass)
	}
	if errors.Is(err, hub.ErrUnreachable) || errors.Is(err, hub.ErrNotCached) {
		return failure("--tokenizer: %v; pass --tokenizer a local directory or tokenizer.json, or a built-in encoding such as o200k_base", err)
	}
	return failure("--tokenizer: %v", err)
}
