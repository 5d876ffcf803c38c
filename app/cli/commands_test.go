package cli

import (
	"strings"
	"testing"
)

// One row gives a command its dispatch, its place in the main help and in
// the unknown-command message.
func TestCommandTable(t *testing.T) {
	desc, unknown := description(), unknownCommand("swep")
	seen := map[string]bool{}
	for _, c := range commands {
		if seen[c.name] || c.run == nil {
			t.Errorf("%s: repeated or without a run function", c.name)
		}
		seen[c.name] = true
		if got, ok := lookupCommand(c.name); !ok || got.name != c.name {
			t.Errorf("lookupCommand(%s) = %v, %v", c.name, got.name, ok)
		}
		if !strings.Contains(desc, `"benchserve `+c.name+`"`) {
			t.Errorf("the help does not name %s: %s", c.name, desc)
		}
		if !strings.Contains(unknown, " "+c.name+",") && !strings.Contains(unknown, " "+c.name+";") {
			t.Errorf("the unknown-command message does not name %s: %s", c.name, unknown)
		}
	}
	if c := commands[len(commands)-1]; c.help == "" {
		t.Errorf("the last command, %s, has no help to share", c.name)
	}
	if _, ok := lookupCommand("--help"); ok {
		t.Error("a flag is a command")
	}
}
