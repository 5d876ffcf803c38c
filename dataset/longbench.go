package dataset

import (
	"context"
	"fmt"
)

// loadLongBench is not written yet.
func loadLongBench(ctx context.Context, p Params, env Env) ([]Row, error) {
	return nil, fmt.Errorf("--dataset-name %s: not supported yet", p.Name)
}
