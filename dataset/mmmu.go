package dataset

import (
	"context"
	"fmt"
)

// loadMMMU is not written yet.
func loadMMMU(ctx context.Context, p Params, env Env) ([]Row, error) {
	return nil, fmt.Errorf("--dataset-name %s: not supported yet", p.Name)
}
