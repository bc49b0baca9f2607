/**
 * Prompt tokenization off a page's main thread (issue 25): in Chromium the job encodes prompts in
 * a module worker (src/model/tokenizer/off-thread.ts). The worker's ids are the in-thread ids (the
 * real stories260K SentencePiece vocabulary and byte-level BPE, plain and through a chat template),
 * the main thread keeps running while 1 MB is tokenized, and a cancelled run, a time limit, a
 * hostile template and an over-long prompt each end with their typed error. Node has no page to
 * keep responsive (the CLI tokenizes in process, bounded by the tokenizers and the chat budget), so
 * in the gpu-node project this file is skipped, saying so.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { isTokenscopeError } from '../../src/errors.ts';
import { meta, type GGUFMetadata } from '../../src/model/gguf/types.ts';
import { createTokenizer } from '../../src/model/tokenizer/index.ts';
import { canEncodeOffThread, encodeOffThread } from '../../src/model/tokenizer/off-thread.ts';
import { encodePromptWith } from '../../src/model/tokenizer/prompt.ts';
import { MAX_PROMPT_CHARS } from '../../src/model/tokenizer/vocab.ts';
import { mulberry32 } from '../../src/random.ts';
import { smallVocab } from '../oracle/tiny-models.ts';
import { HAVE_MODEL, openStories } from './models.ts';

const PAGE = canEncodeOffThread();
const TEMPLATE =
  '{{ bos_token }}{% for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>\n\n{{ m.content | trim }}<|eot_id|>{% endfor %}{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n{% endif %}';
const withTemplate = (m: GGUFMetadata, template = TEMPLATE): GGUFMetadata => new Map([...m, ['tokenizer.chat_template', meta.str(template)]]);

const TEXTS = ['Once upon a time, there was a little girl.', '  leading spaces\n\tand tabs — ünïcödé ✓ 🙂', '<|eot_id|> special-looking text', ''];

/** Why a promise rejected: its TokenscopeError code and message. */
async function failure(p: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await p;
  } catch (e) {
    if (isTokenscopeError(e)) return { code: e.code, message: e.message };
    throw e;
  }
  throw new Error('expected a rejection');
}

function printable(chars: number, seed = 25): string {
  const random = mulberry32(seed);
  return Array.from({ length: chars }, () => String.fromCharCode(32 + Math.floor(random() * 95))).join('');
}

describe.skipIf(!PAGE)(`prompt tokenization in a worker${PAGE ? '' : ' — SKIPPED: pages only (Node tokenizes in process)'}`, () => {
  const vocabs: [string, () => Promise<GGUFMetadata>][] = [
    ['byte-level BPE (llama-bpe)', async () => new Map(smallVocab('llama3').metadata)],
    ['SentencePiece (gemma3-like)', async () => new Map(smallVocab('gemma3').metadata)],
  ];
  if (HAVE_MODEL) vocabs.push(['stories260K (real SentencePiece)', async () => (await openStories()).gguf.metadata]);

  describe.each(vocabs)('%s', (_, load) => {
    let metadata: GGUFMetadata;
    beforeAll(async () => {
      metadata = withTemplate(await load());
    });

    it.each(TEXTS.map((t) => [JSON.stringify(t).slice(0, 30), t]))('%s: the same ids as in-thread, plain and as chat', async (_, text) => {
      const tokenizer = createTokenizer(metadata);
      expect(await encodeOffThread(metadata, text, false)).toEqual(await encodePromptWith(tokenizer, metadata, text, false));
      const chat = await encodeOffThread(metadata, text, true);
      expect(chat).toEqual(await encodePromptWith(tokenizer, metadata, text, true));
      expect(chat.length).toBeGreaterThan(text.length === 0 ? 0 : 1);
    });
  });

  it('1 MB of text: the main thread keeps running while the worker tokenizes it', { timeout: 60_000 }, async () => {
    const metadata = new Map(smallVocab('llama3').metadata);
    const text = printable(1_000_000);
    let last = performance.now();
    let longestGap = 0;
    let ticks = 0;
    const ticker = setInterval(() => {
      const now = performance.now();
      longestGap = Math.max(longestGap, now - last);
      last = now;
      ticks++;
    }, 10);
    const start = performance.now();
    const ids = await encodeOffThread(metadata, text, false);
    const took = performance.now() - start;
    clearInterval(ticker);
    longestGap = Math.max(longestGap, performance.now() - last);
    expect(createTokenizer(metadata).decode(ids)).toBe(text);
    // In-thread this is one synchronous call (1.0–1.4 s in Node here): no timer fires until it returns,
    // so the longest gap is the whole encode. Off-thread the timer keeps firing while the worker works;
    // on a loaded 2-core machine a tick may still wait a few hundred ms for a core, never half the encode.
    expect(ticks).toBeGreaterThanOrEqual(3);
    expect(longestGap).toBeLessThan(took / 2);
  });

  it('a cancelled run stops the worker at once', async () => {
    const abort = new AbortController();
    const started = performance.now();
    const running = encodeOffThread(new Map(smallVocab('llama3').metadata), printable(1_000_000), false, { signal: abort.signal });
    setTimeout(() => abort.abort(), 100);
    // Without the cancel the encode would answer with ids (about 2 s in); cancelled, it rejects at once.
    expect((await failure(running)).code).toBe('cancelled');
    expect(performance.now() - started).toBeLessThan(5_000);
  });

  it('past its time limit the worker is stopped with a message that says so', async () => {
    const f = await failure(encodeOffThread(new Map(smallVocab('gemma3').metadata), printable(1_000_000), false, { limitMs: 50 }));
    expect(f).toEqual({ code: 'bad-input', message: 'tokenizing the prompt took longer than 0.05 s and was stopped' });
  });

  it('a hostile chat template ends within the render budget, its typed error carried out of the worker', async () => {
    const hostile = withTemplate(new Map(smallVocab('llama3').metadata), '{% for i in range(100000000) %}{% endfor %}');
    const f = await failure(encodeOffThread(hostile, 'hi', true));
    expect(f.message).toMatch(/list of more than 100,000 items/);
  });

  it('a chat prompt for a file with no template, and a prompt past MAX_PROMPT_CHARS, are refused', async () => {
    const plain = new Map(smallVocab('llama3').metadata);
    expect(await failure(encodeOffThread(plain, 'hi', true))).toEqual({
      code: 'bad-input',
      message: 'A chat prompt needs the chat template of a model file, and this model has none.',
    });
    const f = await failure(encodeOffThread(plain, 'x'.repeat(MAX_PROMPT_CHARS + 1), false));
    expect(f.message).toMatch(/1,000,001 characters; tokenscope tokenizes at most 1,000,000/);
  });
});
