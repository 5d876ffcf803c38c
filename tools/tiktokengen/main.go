// Command tiktokengen writes tokenizer/ranks/<encoding>.ranks, the
// vocabularies of the built-in encodings, from the npm package tiktoken
// (pinned by tools/tokgolden's lock file), whose encoders/<encoding>.json
// carries OpenAI's ranks as base64. Run it from the tokenizer folder:
//
//	npm ci --prefix tools/tokgolden
//	go generate ./tokenizer
//
// A .ranks file is the length of each token's bytes, one byte each in id
// order, then all the tokens' bytes end to end. Before writing, the ranks
// are checked to be OpenAI's own: written out as a .tiktoken file (base64,
// space, id, newline), they must hash to the SHA-256 tiktoken's
// openai_public.py expects of the file it downloads.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// version is the npm package tiktoken's version the files are made from.
const version = "1.0.22"

// encodings are the files written, with the number of ordinary tokens and
// the SHA-256 of the .tiktoken file (tiktoken_ext/openai_public.py).
var encodings = []struct {
	name   string
	n      int
	sha256 string
}{
	{"o200k_base", 199998, "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"},
	{"cl100k_base", 100256, "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"},
}

func main() {
	src := flag.String("src", "../tools/tokgolden/node_modules/tiktoken", "the npm package tiktoken's folder")
	out := flag.String("out", "ranks", "the folder to write the .ranks files in")
	flag.Parse()
	if err := generate(*src, *out); err != nil {
		fmt.Fprintln(os.Stderr, "tiktokengen:", err)
		os.Exit(1)
	}
}

// generate writes every encoding's .ranks file from the package in src
// into the folder out.
func generate(src, out string) error {
	var pkg struct{ Version string }
	if err := readJSON(filepath.Join(src, "package.json"), &pkg); err != nil {
		return fmt.Errorf("%v (run `npm ci --prefix tools/tokgolden` first)", err)
	}
	if pkg.Version != version {
		return fmt.Errorf("%s: tiktoken %s, want %s (the version tools/tokgolden pins)", src, pkg.Version, version)
	}
	for _, e := range encodings {
		file := filepath.Join(src, "encoders", e.name+".json")
		var enc struct {
			BPERanks string `json:"bpe_ranks"`
		}
		if err := readJSON(file, &enc); err != nil {
			return err
		}
		data, err := ranks(enc.BPERanks, e.n, e.sha256)
		if err != nil {
			return fmt.Errorf("%s: %v", file, err)
		}
		if err := os.WriteFile(filepath.Join(out, e.name+".ranks"), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func readJSON(file string, v any) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	return nil
}

// ranks turns the package's bpe_ranks ("! 0" then each token's base64, in
// id order, space-separated) into a .ranks file of n tokens, checking the
// tokens against the .tiktoken file's SHA-256.
func ranks(bpe string, n int, want string) ([]byte, error) {
	fields := strings.Split(bpe, " ")
	// The package writes each run of consecutive ids as its first token's
	// text and its first id; OpenAI's encodings are one run from 0.
	if strings.Contains(bpe, "\n") || len(fields) < 2 || fields[1] != "0" {
		return nil, fmt.Errorf("bpe_ranks is not one run of ids from 0")
	}
	toks := fields[2:]
	if len(toks) != n {
		return nil, fmt.Errorf("%d tokens, want %d", len(toks), n)
	}
	lens := make([]byte, 0, n)
	var all, tiktoken bytes.Buffer
	for id, t := range toks {
		piece, err := base64.StdEncoding.DecodeString(t)
		if err != nil {
			return nil, fmt.Errorf("token %d: %v", id, err)
		}
		if len(piece) == 0 || len(piece) > 255 {
			return nil, fmt.Errorf("token %d is %d bytes, not 1 to 255", id, len(piece))
		}
		lens = append(lens, byte(len(piece)))
		all.Write(piece)
		tiktoken.WriteString(base64.StdEncoding.EncodeToString(piece) + " " + strconv.Itoa(id) + "\n")
	}
	if sum := sha256.Sum256(tiktoken.Bytes()); hex.EncodeToString(sum[:]) != want {
		return nil, fmt.Errorf("as a .tiktoken file the tokens hash to %x, not to OpenAI's %s", sum, want)
	}
	return append(lens, all.Bytes()...), nil
}
