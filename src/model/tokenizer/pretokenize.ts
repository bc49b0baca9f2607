/**
 * Byte-level BPE pre-tokenizers: the regexes that cut text into words before merges run,
 * chosen by `tokenizer.ggml.pre` as llama.cpp does (llama-vocab.cpp). `(?i:…)` groups of the
 * originals are spelled out as character classes, since JS regexes have no inline flags, and
 * `\s` is Unicode's White_Space as in llama.cpp and Hugging Face (JS's `\s` adds U+FEFF, the
 * byte-order mark, and leaves out U+0085). Each regex matches in linear time: the global scan
 * resumes after each match, and no pattern nests quantifiers.
 */
import { TokenscopeError } from '../../errors.ts';

const GPT2 = /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\p{White_Space}\p{L}\p{N}]+|\p{White_Space}+(?!\P{White_Space})|\p{White_Space}+/gu;
const CONTRACTIONS = String.raw`(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])`;
const llama3Like = (digits: string) =>
  new RegExp(
    String.raw`${CONTRACTIONS}|[^\r\n\p{L}\p{N}]?\p{L}+|${digits}| ?[^\p{White_Space}\p{L}\p{N}]+[\r\n]*|\p{White_Space}*[\r\n]+|\p{White_Space}+(?!\P{White_Space})|\p{White_Space}+`,
    'gu',
  );

/** Each stage splits every piece of the previous one; text between matches stays a piece of its own. */
const PRE_TOKENIZERS: Record<string, readonly RegExp[]> = {
  default: [GPT2],
  gpt2: [GPT2],
  'gpt-2': [GPT2],
  // Llama 3: numbers in groups of up to three digits.
  'llama-bpe': [llama3Like(String.raw`\p{N}{1,3}`)],
  llama3: [llama3Like(String.raw`\p{N}{1,3}`)],
  // Qwen2: every digit on its own.
  qwen2: [llama3Like(String.raw`\p{N}`)],
  // SmolLM (starcoder family): digits first, then GPT-2's rule.
  smollm: [/\p{N}/gu, /'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\p{White_Space}\p{L}\p{N}]+|\p{White_Space}+(?!\P{White_Space})/gu],
};

export function preTokenizer(name = 'default'): (text: string) => string[] {
  const stages = PRE_TOKENIZERS[name];
  if (!stages) {
    throw new TokenscopeError(
      'model-unsupported',
      `tokenizer.ggml.pre '${name}' is not a pre-tokenizer tokenscope knows`,
      `Known: ${Object.keys(PRE_TOKENIZERS).join(', ')}.`,
    );
  }
  return (text) => stages.reduce((pieces, regex) => pieces.flatMap((p) => split(p, regex)), [text]);
}

function split(text: string, regex: RegExp): string[] {
  const pieces: string[] = [];
  let end = 0;
  for (const m of text.matchAll(regex)) {
    if (m.index > end) pieces.push(text.slice(end, m.index));
    pieces.push(m[0]);
    end = m.index + m[0].length;
  }
  if (end < text.length) pieces.push(text.slice(end));
  return pieces;
}
