package record

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A conversation's round carries its session, turn, planned delay and
// its session's planned turns in its line, which read back; a request
// that is no round writes none of these keys, so single-turn record files
// keep their lines.
func TestRecordFileRound(t *testing.T) {
	path := filepath.Join(t.TempDir(), "r.jsonl")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	single := Record{Seq: 0, Sent: true, Success: true}
	round := Record{Seq: 1, Sent: true, Success: true, Intended: 1.5, Round: true, Session: 4, Turn: 2, PlannedDelay: 0.05, SessionTurns: 3}
	w.Write(&single)
	w.Write(&round)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	for _, k := range []string{`"session"`, `"turn"`, `"planned_delay"`, `"session_turns"`} {
		if strings.Contains(lines[0], k) {
			t.Errorf("a single-turn line has %s: %s", k, lines[0])
		}
	}
	if !strings.Contains(lines[1], `"session": 4, "turn": 2, "planned_delay": 0.05, "session_turns": 3`) {
		t.Errorf("the round's line: %s", lines[1])
	}
	f, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.Records[1]; !got.Round || got.Session != 4 || got.Turn != 2 || got.PlannedDelay != 0.05 || got.SessionTurns != 3 {
		t.Errorf("the round reads back as %+v", got)
	}
	if f.Records[0].Round {
		t.Errorf("the single-turn request reads back as a round")
	}
}
