package dataset

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	_ "image/gif" // image sizes for the vision token counts
	_ "image/jpeg"
	_ "image/png"
	"os"
	"path/filepath"
	"strings"

	"benchserve/internal/syncio"
)

// customPair is one conversation of a custom file: its first two turns
// and its image path ("" for none), resolved against the file's directory.
type customPair struct {
	prompt, completion string
	image              string
}

// loadCustom is sample_custom_requests: a JSONL file of ShareGPT-like
// conversations (turns keyed "content" or "value"), each optionally with an
// "image" path. The pairs are shuffled and walked as sharegpt's are; a
// text pair follows sharegpt's rules, an image pair is sent with its image
// as a base64 data URI and counted as the image datasets count.
func loadCustom(ctx context.Context, p Params, env Env) ([]Row, error) {
	rules, err := newTextRules(p, env)
	if err != nil {
		return nil, err
	}
	if p.Path == "" {
		return nil, fmt.Errorf("--dataset-name custom: --dataset-path must name a JSONL file of conversations")
	}
	label := "--dataset-path " + p.Path
	// The image rows are built ahead of the walk and may print (a template
	// fallback) while the walk does.
	env.Out = syncio.Locked(env.Out)
	pairs, err := readCustom(ctx, p.Path, label, env)
	if err != nil {
		return nil, err
	}
	env.Py.Shuffle(len(pairs), func(i, j int) { pairs[i], pairs[j] = pairs[j], pairs[i] })

	var mm *mmRows
	var mmErr error // the backend takes no images: every image row fails
	for _, pr := range pairs {
		if pr.image == "" {
			continue
		}
		raw, err := mmRawText("custom", p.Backend)
		if err != nil {
			mmErr = err
			break
		}
		vision, err := loadVision(ctx, p, env)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(env.Out, "Vision tokens: %s.\n", vision.desc)
		mm = newMMRows(env.Tok, vision, raw, env.Out)
		break
	}

	type built struct {
		m      measured
		row    Row
		imgErr error
	}
	build := func(i int) built {
		pr := pairs[i]
		if pr.image == "" {
			m := rules.measure(pr.prompt, func() (string, error) { return pr.completion, nil })
			return built{m: m, row: Row{Text: m.prompt, PromptLen: m.promptLen, OutputLen: m.outLen, TextPromptLen: m.promptLen}}
		}
		if mmErr != nil {
			return built{imgErr: mmErr}
		}
		img, err := customImage(pr.image)
		if err != nil {
			return built{imgErr: err}
		}
		prompt := strings.TrimSpace(strings.ReplaceAll(pr.prompt, "<image 1>", ""))
		if rules.suffix != "" {
			prompt = strings.TrimSuffix(prompt, assistantSuffix) + rules.suffix + assistantSuffix
		}
		outLen := 0
		if rules.fixedOut != nil {
			outLen = *rules.fixedOut
		} else {
			outLen = env.Tok.Count(pr.completion) + rules.special
		}
		row := mm.row(prompt, []mmImage{img}, outLen)
		return built{m: measured{promptLen: row.PromptLen, outLen: row.OutputLen}, row: row}
	}

	var rows []Row
	var walkErr error
	if p.NumPrompts > 0 {
		err = ahead(ctx, len(pairs), workers, build, func(_ int, b built) bool {
			switch {
			case b.imgErr != nil:
				fmt.Fprintf(env.Out, "Error handling multimodal row: %v\n", b.imgErr)
			case b.m.err != nil:
				walkErr = b.m.err
				return false
			case rules.keep(b.m):
				rows = append(rows, b.row)
			}
			return len(rows) < p.NumPrompts
		})
	}
	if err == nil {
		err = walkErr
	}
	if err != nil {
		return nil, err
	}
	shortfall(env.Out, label, len(rows), p.NumPrompts)
	printRowSums(env.Out, rows)
	return rows, nil
}

// readCustom reads the conversations with two turns or more. Lines that
// are not JSON are skipped, as the reference does, with a warning; other
// malformed lines are errors.
func readCustom(ctx context.Context, path, label string, env Env) ([]customPair, error) {
	dir, err := filepath.Abs(filepath.Dir(path))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", label, err)
	}
	skipped := &skipReport{w: env.Out, label: label}
	var pairs []customPair
	err = jsonlLines(ctx, path, label, func(n int, line []byte) (bool, error) {
		if blankLine(line) {
			return true, nil
		}
		if !json.Valid(line) {
			skipped.add(n, "invalid JSON")
			return true, nil
		}
		pr, ok, err := customLine(line, dir)
		if err != nil {
			return false, fmt.Errorf("%s: line %d: %v", label, n, err)
		}
		if ok {
			pairs = append(pairs, pr)
		}
		return true, nil
	})
	skipped.done()
	return pairs, err
}

// customLine reads one conversation: data.get("conversations",
// data.get("conversation", [])), kept when it has two turns or more.
func customLine(line []byte, dir string) (pr customPair, ok bool, err error) {
	if err := checkObjectLine(line); err != nil {
		return pr, false, err
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		return pr, false, err
	}
	name := "conversations"
	convs, has := obj[name]
	if !has {
		name = "conversation"
		if convs, has = obj[name]; !has {
			return pr, false, nil
		}
	}
	var turns []json.RawMessage
	if err := json.Unmarshal(convs, &turns); err != nil || convs[0] != '[' {
		return pr, false, fmt.Errorf("%s: want a list of turns, got %s", name, pyTypeName(convs))
	}
	if len(turns) < 2 {
		return pr, false, nil
	}
	texts := [2]string{}
	for t := range texts {
		var turn map[string]json.RawMessage
		if err := json.Unmarshal(turns[t], &turn); err != nil || turns[t][0] != '{' {
			return pr, false, fmt.Errorf("%s[%d]: want an object, got %s", name, t, pyTypeName(turns[t]))
		}
		key := "content"
		v, has := turn[key]
		if !has {
			key = "value"
			v, has = turn[key]
		}
		if !has {
			continue // ""
		}
		if err := json.Unmarshal(v, &texts[t]); err != nil || v[0] != '"' {
			return pr, false, fmt.Errorf("%s[%d].%s: want a string, got %s", name, t, key, pyTypeName(v))
		}
	}
	pr.prompt, pr.completion = texts[0], texts[1]
	if img, has := obj["image"]; has && !falsy(img) {
		var s string
		if err := json.Unmarshal(img, &s); err != nil || img[0] != '"' {
			return pr, false, fmt.Errorf("image: want a file path, got %s", pyTypeName(img))
		}
		if !filepath.IsAbs(s) {
			s = filepath.Join(dir, s)
		}
		pr.image = s
	}
	return pr, true, nil
}

// customImage reads an image file into a data URI, its MIME type guessed
// from the name as Python's mimetypes does (image/jpeg when unknown), and
// reads its size, which needs a JPEG, PNG or GIF file.
func customImage(path string) (mmImage, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return mmImage{}, err
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return mmImage{}, fmt.Errorf("%s: cannot identify image file (JPEG, PNG and GIF are read): %v", path, err)
	}
	mime := imageMIME[strings.ToLower(filepath.Ext(path))]
	if mime == "" {
		mime = "image/jpeg"
	}
	return mmImage{uri: "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data), w: cfg.Width, h: cfg.Height}, nil
}

// imageMIME is Python's mimetypes table for image files (plus .webp,
// which most systems' mime.types add).
var imageMIME = map[string]string{
	".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".jpe": "image/jpeg", ".png": "image/png", ".gif": "image/gif",
	".webp": "image/webp", ".bmp": "image/bmp", ".tif": "image/tiff", ".tiff": "image/tiff", ".svg": "image/svg+xml",
	".ico": "image/vnd.microsoft.icon", ".heic": "image/heic", ".heif": "image/heif", ".avif": "image/avif",
	".ief": "image/ief", ".ras": "image/x-cmu-raster", ".pnm": "image/x-portable-anymap", ".pbm": "image/x-portable-bitmap",
	".pgm": "image/x-portable-graymap", ".ppm": "image/x-portable-pixmap", ".rgb": "image/x-rgb", ".xbm": "image/x-xbitmap",
	".xpm": "image/x-xpixmap", ".xwd": "image/x-xwindowdump",
}

func preflightCustom(p Params) error {
	if err := checkShareGPTOutputLen(p); err != nil {
		return err
	}
	if p.Path == "" {
		return fmt.Errorf("--dataset-name custom: --dataset-path must name a JSONL file of conversations")
	}
	return nil
}
