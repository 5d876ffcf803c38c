package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// turnRec is what the session tests read of a record line.
type turnRec struct {
	ID                       string
	Start, Latency, Intended float64
	Session, Turn            int
	PlannedDelay             float64 `json:"planned_delay"`
	SessionTurns             int     `json:"session_turns"`
	OutputLen                int     `json:"output_len"`
	Success                  bool
}

// sessionRecords reads a multi-turn run's record file: each session's
// records in turn order, and how many lines it had. Every line must be a
// successful turn.
func sessionRecords(t *testing.T, path string) (map[int][]turnRec, int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	by := map[int][]turnRec{}
	n := 0
	for sc := bufio.NewScanner(f); sc.Scan(); n++ {
		var r turnRec
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || !r.Success || !strings.Contains(sc.Text(), `"turn": `) {
			t.Fatalf("record %s: %v", sc.Text(), err)
		}
		by[r.Session] = append(by[r.Session], r)
	}
	for _, rs := range by {
		slices.SortFunc(rs, func(a, b turnRec) int { return a.Turn - b.Turn })
	}
	return by, n
}
