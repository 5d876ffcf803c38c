package dataset

import (
	"context"
	"fmt"
)

// loadAgentic is not written yet.
func loadAgentic(ctx context.Context, p Params, env Env) ([]Row, error) {
	return nil, fmt.Errorf("--dataset-name %s: not supported yet", p.Name)
}
