package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The module itself follows docs/architecture.md.
func TestModuleFollowsTheTable(t *testing.T) {
	problems, err := Check("../..")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

const table = "# A\n\n## Layers\n\n| layer | name | packages |\n|---|---|---|\n" +
	"| 3 | top (process) | `cmd/...` |\n| 2 | middle | `mid`, `wire` |\n| 1 | low | `wire/...`, `low` |\n\n## Other\n\n| 9 | not | `x` |\n"

func TestReadLayers(t *testing.T) {
	ls, err := ReadLayers([]byte(table))
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 3 || !ls[0].Process || ls[1].Process || ls[0].Name != "top" || strings.Join(ls[1].Patterns, ",") != "mid,wire" {
		t.Fatalf("layers %+v", ls)
	}
	for pkg, want := range map[string]int{"cmd/x": 3, "cmd": 3, "wire": 2, "wire/sse": 1, "low": 1, "mid": 2, "x": 0, "lowest": 0} {
		l, ok := layerOf(ls, pkg)
		if got := map[bool]int{true: l.N}[ok]; got != want {
			t.Errorf("layerOf(%q) = %d, want %d", pkg, got, want)
		}
	}
	if _, err := ReadLayers([]byte("# no table\n")); err == nil {
		t.Error("a document without the table was accepted")
	}
}

// Each kind of departure is found: an import of the same or a higher layer,
// a package in no layer, and the process's environment or standard output
// used below the command line.
func TestProblems(t *testing.T) {
	ls, err := ReadLayers([]byte(table))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	src := "package low\n\nimport (\n\tstdos \"os\"\n\t\"fmt\"\n)\n\nfunc f() { fmt.Fprintln(stdos.Stdout, stdos.Getenv(\"HOME\")) }\n"
	if err := os.WriteFile(filepath.Join(dir, "low.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	top := "package main\n\nimport \"os\"\n\nvar _ = os.Getenv(\"X\")\n"
	if err := os.WriteFile(filepath.Join(dir, "top.go"), []byte(top), 0o644); err != nil {
		t.Fatal(err)
	}
	pkgs := []Package{
		{ImportPath: "m/cmd/b", Dir: dir, GoFiles: []string{"top.go"}, Imports: []string{"m/mid", "os"}},
		{ImportPath: "m/mid", Imports: []string{"m/wire", "m/low"}},
		{ImportPath: "m/wire/sse", Imports: []string{"m/cmd/b"}},
		{ImportPath: "m/low", Dir: dir, GoFiles: []string{"low.go"}, Imports: []string{"fmt", "os"}},
		{ImportPath: "m/stray"},
	}
	got, err := problemsOf("m", ls, pkgs)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"low/low.go:8: os.Getenv reads the environment outside the command line (take it from the caller)",
		"low/low.go:8: os.Stdout writes to the process's standard output outside the command line (take it from the caller)",
		"mid (layer 2, middle) imports wire (layer 2, middle): only lower layers may be imported",
		"stray: in no layer of docs/architecture.md's table",
		"wire/sse (layer 1, low) imports cmd/b (layer 3, top): only lower layers may be imported",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("problems:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
