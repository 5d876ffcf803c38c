package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Layer is one row of the table: its number (higher is nearer main) and
// the package patterns in it ("tools/..." matches tools and below).
type Layer struct {
	N        int
	Name     string
	Patterns []string
	// Process marks the layers whose code may read the environment and
	// write to the process's standard output: the command line's.
	Process bool
}

var (
	rowRE  = regexp.MustCompile(`^\|\s*(\d+)\s*\|\s*([^|]+?)\s*\|\s*([^|]+?)\s*\|`)
	codeRE = regexp.MustCompile("`([^`]+)`")
)

// ReadLayers reads the table under "## Layers" in docs/architecture.md:
// rows "| N | name | `pkg`, `pkg/...` | ...". A name ending in "(process)"
// marks a layer allowed the process's environment and standard output.
func ReadLayers(doc []byte) ([]Layer, error) {
	var ls []Layer
	in := false
	sc := bufio.NewScanner(bytes.NewReader(doc))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = strings.TrimSpace(line[3:]) == "Layers"
			continue
		}
		m := rowRE.FindStringSubmatch(line)
		if !in || m == nil {
			continue
		}
		n, _ := strconv.Atoi(m[1])
		l := Layer{N: n, Name: m[2]}
		if name, ok := strings.CutSuffix(l.Name, "(process)"); ok {
			l.Name, l.Process = strings.TrimSpace(name), true
		}
		for _, c := range codeRE.FindAllStringSubmatch(m[3], -1) {
			l.Patterns = append(l.Patterns, c[1])
		}
		if len(l.Patterns) == 0 {
			return nil, fmt.Errorf("docs/architecture.md: layer %d (%s) names no package", n, l.Name)
		}
		ls = append(ls, l)
	}
	if len(ls) == 0 {
		return nil, fmt.Errorf("docs/architecture.md: no table of layers under \"## Layers\"")
	}
	return ls, nil
}

// closeness is how closely pattern names pkg: 0 not at all, more for a
// longer match, and an exact name before a "/..." that covers it too.
func closeness(pattern, pkg string) int {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		if pkg == base || strings.HasPrefix(pkg, base+"/") {
			return 2 * len(base)
		}
		return 0
	}
	if pkg == pattern {
		return 2*len(pattern) + 1
	}
	return 0
}

// layerOf is the layer of pkg (a path inside the module): the one whose
// pattern names it most closely, so `wire` can sit above `wire/...`.
func layerOf(ls []Layer, pkg string) (Layer, bool) {
	best, bestScore := Layer{}, 0
	for _, l := range ls {
		for _, p := range l.Patterns {
			if c := closeness(p, pkg); c > bestScore {
				best, bestScore = l, c
			}
		}
	}
	return best, bestScore > 0
}

// Package is what go list says of one package of the module.
type Package struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	Imports    []string
}

// Check lists the module's packages in dir and returns every way they
// depart from the table.
func Check(dir string) ([]string, error) {
	doc, err := os.ReadFile(filepath.Join(dir, "docs", "architecture.md"))
	if err != nil {
		return nil, err
	}
	ls, err := ReadLayers(doc)
	if err != nil {
		return nil, err
	}
	module, pkgs, err := list(dir)
	if err != nil {
		return nil, err
	}
	return problemsOf(module, ls, pkgs)
}

// problemsOf checks pkgs, the packages of module, against the layers ls.
func problemsOf(module string, ls []Layer, pkgs []Package) ([]string, error) {
	var problems []string
	for _, p := range pkgs {
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		l, ok := layerOf(ls, rel)
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: in no layer of docs/architecture.md's table", rel))
			continue
		}
		for _, imp := range p.Imports {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			irel := strings.TrimPrefix(strings.TrimPrefix(imp, module), "/")
			il, ok := layerOf(ls, irel)
			if ok && il.N >= l.N {
				problems = append(problems, fmt.Sprintf("%s (layer %d, %s) imports %s (layer %d, %s): only lower layers may be imported", rel, l.N, l.Name, irel, il.N, il.Name))
			}
		}
		if !l.Process {
			ps, err := processUse(p, rel)
			if err != nil {
				return nil, err
			}
			problems = append(problems, ps...)
		}
	}
	sort.Strings(problems)
	return problems, nil
}

func list(dir string) (module string, pkgs []Package, err error) {
	cmd := exec.Command("go", "list", "-m")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", nil, fmt.Errorf("go list -m: %v", err)
	}
	module = strings.TrimSpace(string(out))
	cmd = exec.Command("go", "list", "-json=ImportPath,Dir,GoFiles,Imports", "./...")
	cmd.Dir = dir
	// Every platform's files count: list for the one that has the most.
	cmd.Env = append(os.Environ(), "GOOS=linux", "CGO_ENABLED=0")
	if out, err = cmd.Output(); err != nil {
		return "", nil, fmt.Errorf("go list ./...: %v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p Package
		if err := dec.Decode(&p); err != nil {
			return "", nil, err
		}
		pkgs = append(pkgs, p)
	}
	return module, pkgs, nil
}

// processWide are the calls and variables that reach the process's own
// environment or standard streams.
var processWide = map[string]string{
	"Getenv": "reads the environment", "LookupEnv": "reads the environment", "Environ": "reads the environment",
	"Setenv": "changes the environment", "Unsetenv": "changes the environment", "Clearenv": "changes the environment",
	"UserHomeDir": "reads the environment ($HOME)", "UserCacheDir": "reads the environment ($XDG_CACHE_HOME, $HOME)",
	"UserConfigDir": "reads the environment ($XDG_CONFIG_HOME, $HOME)", "TempDir": "reads the environment ($TMPDIR)",
	"Stdout": "writes to the process's standard output",
}

// processUse finds the uses of os's process-wide names in p's non-test
// files.
func processUse(p Package, rel string) ([]string, error) {
	var problems []string
	fset := token.NewFileSet()
	for _, name := range p.GoFiles {
		file := filepath.Join(p.Dir, name)
		f, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		osName := ""
		for _, imp := range f.Imports {
			if imp.Path.Value == `"os"` {
				osName = "os"
				if imp.Name != nil {
					osName = imp.Name.Name
				}
			}
		}
		if osName == "" {
			continue
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && id.Name == osName {
				if what, bad := processWide[sel.Sel.Name]; bad {
					pos := fset.Position(sel.Pos())
					problems = append(problems, fmt.Sprintf("%s:%d: os.%s %s outside the command line (take it from the caller)",
						path.Join(rel, name), pos.Line, sel.Sel.Name, what))
				}
			}
			return true
		})
	}
	return problems, nil
}
