package report

import (
	"strings"
	"testing"

	"benchserve/internal/py/pyjson"
)

// Conversation rounds not sent after a failed round have their own line
// and key, with the reason, and none when there are none.
func TestLoadRoundsNotSent(t *testing.T) {
	rows := Load{RoundsNotSent: 4}.rows()
	if len(rows) != 1 || rows[0] != (Row{"Rounds not sent (a round before failed):", "4"}) {
		t.Errorf("rows %v", rows)
	}
	o := &pyjson.Object{}
	Load{RoundsNotSent: 4}.keys(o)
	if b := string(o.Bytes()); !strings.Contains(b, `"rounds_not_sent": 4`) {
		t.Errorf("keys %s", b)
	}
	if rows := (Load{}).rows(); len(rows) != 0 {
		t.Errorf("no rounds: rows %v", rows)
	}
}
