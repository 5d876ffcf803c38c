package dataset

import (
	"context"
	"fmt"
)

// loadSpeedBench is not written yet.
func loadSpeedBench(ctx context.Context, p Params, env Env) ([]Row, error) {
	return nil, fmt.Errorf("--dataset-name %s: not supported yet", p.Name)
}
