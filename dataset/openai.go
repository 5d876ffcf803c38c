package dataset

import (
	"context"
	"fmt"
)

// loadOpenAI is not written yet.
func loadOpenAI(ctx context.Context, p Params, env Env) ([]Row, error) {
	return nil, fmt.Errorf("--dataset-name %s: not supported yet", p.Name)
}
