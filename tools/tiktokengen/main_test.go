package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"benchserve/internal/testenv"
)

// The committed files are what the pinned package makes, and making them
// twice gives the same bytes.
func TestCommittedFilesAreGenerated(t *testing.T) {
	src := filepath.Dir(testenv.TokGolden.File(t, "tiktoken/package.json"))
	a, b := t.TempDir(), t.TempDir()
	for _, dir := range []string{a, b} {
		if err := generate(src, dir); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range encodings {
		name := e.name + ".ranks"
		first, _ := os.ReadFile(filepath.Join(a, name))
		second, _ := os.ReadFile(filepath.Join(b, name))
		committed, err := os.ReadFile(filepath.Join("..", "..", "tokenizer", "ranks", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, second) {
			t.Errorf("%s: two runs wrote different bytes", name)
		}
		if !bytes.Equal(first, committed) {
			t.Errorf("tokenizer/ranks/%s is not what the generator writes: run `go generate ./tokenizer`", name)
		}
	}
}

func TestRanks(t *testing.T) {
	// The SHA-256 of "YQ== 0\nYg== 1\nYw== 2\n", a b c as a .tiktoken file.
	const abc = "e1e8ffd47588d2d0a41b0a1474834d2e54e41cf9939995835780f5470ede5473"
	got, err := ranks("a 0 YQ== Yg== Yw==", 3, abc)
	if err != nil || string(got) != "\x01\x01\x01abc" {
		t.Errorf("ranks of a b c = %q, %v", got, err)
	}
	for _, tt := range []struct {
		bpe, err string
		n        int
	}{
		{"a 1 YQ==", "not one run of ids from 0", 1},
		{"a 0 YQ==\nb 1 Yg==", "not one run of ids from 0", 2},
		{"a 0 YQ== Yg==", "2 tokens, want 3", 3},
		{"a 0 YQ== !!", "token 1: illegal base64", 2},
		{"a 0 YQ== ", "token 1 is 0 bytes", 2},
		{"a 0 YQ== Yw== Yg==", "hash to", 3},
	} {
		if _, err := ranks(tt.bpe, tt.n, abc); err == nil || !strings.Contains(err.Error(), tt.err) {
			t.Errorf("ranks(%q) error = %v, want one saying %q", tt.bpe, err, tt.err)
		}
	}
}

func TestGenerateChecksPackage(t *testing.T) {
	dir := t.TempDir()
	if err := generate(dir, dir); err == nil || !strings.Contains(err.Error(), "npm ci --prefix tools/tokgolden") {
		t.Errorf("no package: error = %v, want one saying how to install it", err)
	}
	os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"version": "1.0.21"}`), 0o644)
	if err := generate(dir, dir); err == nil || !strings.Contains(err.Error(), "tiktoken 1.0.21, want 1.0.22") {
		t.Errorf("another version: error = %v", err)
	}
}
